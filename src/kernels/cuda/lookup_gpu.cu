#include "kernels/cuda/lookup_gpu.h"

#include "kernels/cuda/elementwise.cuh"
#include "kernels/cuda/launch_plan.h"
#include "pipeline/gpu_batch.h"
#include "pipeline/gpu_context.h"

namespace stoker::kernels::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kItems = 4;
constexpr int64_t kChunk = int64_t(kThreads) * kItems;

template <int kBytes> struct Bits;
template <> struct Bits<1> { using type = uint8_t; };
template <> struct Bits<2> { using type = uint16_t; };
template <> struct Bits<4> { using type = uint32_t; };
template <> struct Bits<8> { using type = uint64_t; };

template <typename In>
__device__ __forceinline__ double as_double(In v) {
  if constexpr (std::is_same_v<In, __half>) return static_cast<double>(__half2float(v));
  else if constexpr (std::is_same_v<In, BoolByte>) return v.v != 0 ? 1.0 : 0.0;
  else return static_cast<double>(v);
}

template <typename In, typename O>
__global__ void one_hot_kernel(const OneHotJob* jobs, const int* block_start, int n, int64_t classes,
                               O on, O off) {
  const int s = sample_of_block(block_start, n, blockIdx.x);
  const OneHotJob& j = jobs[s];
  const int64_t total = j.outer * classes * j.inner;
  const int64_t base = int64_t(blockIdx.x - block_start[s]) * kChunk;
  for (int it = 0; it < kItems; ++it) {
    const int64_t k = base + it * kThreads + threadIdx.x;
    if (k >= total) return;
    const int64_t x = k % j.inner, rest = k / j.inner;
    const int64_t c = rest % classes, o = rest / classes;
    const double v = as_double(static_cast<const In*>(j.in)[o * j.inner + x]);
    const bool hit = v > -1.0 && v < static_cast<double>(classes) && static_cast<int64_t>(v) == c;
    static_cast<O*>(j.out)[k] = hit ? on : off;
  }
}

template <typename In, typename O>
__global__ void lookup_kernel(const LookupJob* jobs, const int* block_start, int n, const O* table,
                              uint64_t size, O dflt) {
  const int s = sample_of_block(block_start, n, blockIdx.x);
  const LookupJob& j = jobs[s];
  const int64_t base = int64_t(blockIdx.x - block_start[s]) * kChunk;
  for (int it = 0; it < kItems; ++it) {
    const int64_t k = base + it * kThreads + threadIdx.x;
    if (k >= j.n) return;
    const In key = static_cast<const In*>(j.in)[k];
    bool inside;
    if constexpr (std::is_signed_v<In>) inside = key >= 0 && static_cast<uint64_t>(key) < size;
    else inside = static_cast<uint64_t>(key) < size;
    static_cast<O*>(j.out)[k] = inside ? table[static_cast<uint64_t>(key)] : dflt;
  }
}

template <typename F>
void visit_bits(size_t bytes, F&& f) {
  switch (bytes) {
    case 1: return f(Tag<uint8_t>{});
    case 2: return f(Tag<uint16_t>{});
    case 4: return f(Tag<uint32_t>{});
    default: return f(Tag<uint64_t>{});
  }
}

}  // namespace

void one_hot_gpu(Workspace& ws, DType in_type, size_t out_size, int64_t classes, uint64_t on_bits,
                 uint64_t off_bits, const std::vector<OneHotJob>& jobs) {
  LaunchPlan plan(kChunk);
  for (const OneHotJob& j : jobs) plan.add(j.outer * classes * j.inner);
  if (plan.blocks() == 0) return;
  DeviceParams params(ws);
  const size_t starts_off = params.add(plan.block_start());
  const size_t jobs_off = params.add(jobs);
  params.upload();
  auto stream = static_cast<cudaStream_t>(ws.gpu->stream());
  visit_dev_type(in_type, [&](auto ti) {
    using In = typename decltype(ti)::type;
    visit_bits(out_size, [&](auto to) {
      using O = typename decltype(to)::type;
      one_hot_kernel<In, O><<<static_cast<unsigned>(plan.blocks()), kThreads, 0, stream>>>(
          params.device<OneHotJob>(jobs_off), params.device<int>(starts_off), plan.jobs(), classes,
          static_cast<O>(on_bits), static_cast<O>(off_bits));
    });
  });
  check_launch("one_hot_gpu");
}

void lookup_gpu(Workspace& ws, DType in_type, size_t out_size, const std::vector<uint64_t>& table,
                uint64_t default_bits, const std::vector<LookupJob>& jobs) {
  LaunchPlan plan(kChunk);
  for (const LookupJob& j : jobs) plan.add(j.n);
  if (plan.blocks() == 0) return;
  auto stream = static_cast<cudaStream_t>(ws.gpu->stream());
  visit_bits(out_size, [&](auto to) {
    using O = typename decltype(to)::type;
    std::vector<O> narrow(table.begin(), table.end());
    DeviceParams params(ws);
    const size_t starts_off = params.add(plan.block_start());
    const size_t jobs_off = params.add(jobs);
    const size_t table_off = params.add(narrow);
    params.upload();
    auto launch = [&](auto tag) {
      using In = typename decltype(tag)::type;
      lookup_kernel<In, O><<<static_cast<unsigned>(plan.blocks()), kThreads, 0, stream>>>(
          params.device<LookupJob>(jobs_off), params.device<int>(starts_off), plan.jobs(),
          params.device<O>(table_off), narrow.size(), static_cast<O>(default_bits));
    };
    switch (in_type) {
      case DType::kUInt8: return launch(Tag<uint8_t>{});
      case DType::kUInt16: return launch(Tag<uint16_t>{});
      case DType::kUInt32: return launch(Tag<uint32_t>{});
      case DType::kUInt64: return launch(Tag<uint64_t>{});
      case DType::kInt8: return launch(Tag<int8_t>{});
      case DType::kInt16: return launch(Tag<int16_t>{});
      case DType::kInt32: return launch(Tag<int32_t>{});
      case DType::kInt64: return launch(Tag<int64_t>{});
      default: STOKER_ASSERT(false, "lookup_gpu: the keys must be integers");
    }
  });
  check_launch("lookup_gpu");
}

}  // namespace stoker::kernels::cuda
