#include "core/dlpack.h"

#include <vector>

#ifdef STOKER_WITH_CUDA
#include "core/cuda/cuda_util.h"
#endif

namespace stoker {

DLDataType dl_dtype(DType t) {
  DLDataType d;
  d.lanes = 1;
  d.bits = static_cast<uint8_t>(dtype_size(t) * 8);
  d.code = is_float(t) ? kDLFloat : (t == DType::kBool ? kDLUInt : (is_signed(t) ? kDLInt : kDLUInt));
  return d;
}

DType dtype_from_dl(DLDataType t) {
  if (t.lanes != 1) return DType::kNone;
  switch (t.code) {
    case kDLUInt:
      return t.bits == 8 ? DType::kUInt8 : t.bits == 16 ? DType::kUInt16
           : t.bits == 32 ? DType::kUInt32 : t.bits == 64 ? DType::kUInt64 : DType::kNone;
    case kDLInt:
      return t.bits == 8 ? DType::kInt8 : t.bits == 16 ? DType::kInt16
           : t.bits == 32 ? DType::kInt32 : t.bits == 64 ? DType::kInt64 : DType::kNone;
    case kDLFloat:
      return t.bits == 16 ? DType::kFloat16 : t.bits == 32 ? DType::kFloat32
           : t.bits == 64 ? DType::kFloat64 : DType::kNone;
    default:
      return DType::kNone;
  }
}

void check_dense(const Batch& b, const char* what) {
  if (b.empty() || b.is_uniform()) return;
  std::string shapes;
  for (size_t i = 0; i < b.size() && i < 4; ++i) shapes += (i ? ", " : "") + to_string(b.shape(i));
  if (b.size() > 4) shapes += ", ...";
  throw Error(ErrorKind::kInvalidArgument,
              std::string(what) + ": the samples of this batch have different shapes (" + shapes +
                  "), so they do not form one tensor. Take them one by one (batch[i]; "
                  "stoker_outputs_sample in C), or make them equal (fn.resize, fn.crop, fn.pad).");
}

namespace {
struct DLPackHolder {
  std::shared_ptr<void> owner;
  std::vector<int64_t> shape;
  DLManagedTensor managed;
};
}  // namespace

DLManagedTensor* to_dlpack(const Batch& b, int64_t sample, const char* what) {
  auto h = std::make_unique<DLPackHolder>();
  if (sample >= 0) {
    h->owner = b[sample].owner;
    h->shape.assign(b.shape(sample).begin(), b.shape(sample).end());
  } else {
    check_dense(b, what);
    if (!b.empty() && !b.is_contiguous())
      throw Error(ErrorKind::kInvalidArgument,
                  std::string(what) + ": the batch's samples are not contiguous in memory; "
                  "take a dense copy (as_array()) or the samples one by one (batch[i]; "
                  "stoker_outputs_sample in C).");
    h->shape.push_back(static_cast<int64_t>(b.size()));
    if (!b.empty()) {
      h->owner = b[0].owner;
      h->shape.insert(h->shape.end(), b.shape(0).begin(), b.shape(0).end());
    }
  }
  DLTensor& t = h->managed.dl_tensor;
  t.data = sample >= 0 ? b[sample].data : b.empty() ? nullptr : b[0].data;
  t.device = {b.memory() == MemoryKind::kDevice ? kDLCUDA
              : b.memory() == MemoryKind::kPinned ? kDLCUDAHost : kDLCPU,
              b.memory() == MemoryKind::kDevice ? b.device() : 0};
  t.ndim = static_cast<int>(h->shape.size());
  t.dtype = dl_dtype(b.dtype());
  t.shape = h->shape.data();
  t.strides = nullptr;
  t.byte_offset = 0;
  h->managed.manager_ctx = h.get();
  h->managed.deleter = [](DLManagedTensor* m) { delete static_cast<DLPackHolder*>(m->manager_ctx); };
  return &h.release()->managed;
}

void order_for_consumer(const Batch& b, int64_t stream) {
  if (b.memory() != MemoryKind::kDevice) return;
#ifdef STOKER_WITH_CUDA
  if (stream == -1) return;
  void* handle = stream == 1 ? nullptr : reinterpret_cast<void*>(static_cast<intptr_t>(stream));
  if (b.ready_event()) cuda_stream_wait_event(handle, b.ready_event());
  if (b.on_export && !b.empty()) b.on_export(b[0].data, handle);
#else
  (void)stream;
#endif
}

}  // namespace stoker
