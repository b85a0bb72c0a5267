// fn.custom.invert: an example plugin operator (255 - x for uint8 images), CPU and GPU.
// Built as a user builds a plugin: find_package(stoker) and the stoker::plugin target
// (CMakeLists.txt beside this file); loaded with stoker.plugin_manager.load_library.
#include <cstdint>
#include <memory>

#include "pipeline/gpu_batch.h"
#include "pipeline/gpu_context.h"
#include "pipeline/operator.h"

#ifdef CUSTOM_INVERT_GPU
void custom_invert_u8_gpu(const uint8_t* in, uint8_t* out, int64_t n, void* stream);  // invert_gpu.cu
#endif

namespace {

using namespace stoker;

void check_input(const OpSpec& spec, const Batch& in) {
  if (in.dtype() != DType::kUInt8)
    throw Error(ErrorKind::kTypeMismatch, spec.display_name() + ": input 0 has type " +
                                              dtype_name(in.dtype()) + "; custom.invert takes uint8");
}

class Invert : public Operator {
 public:
  using Operator::Operator;
  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    check_input(spec_, in);
    return {OutputDesc{in.dtype(), in.layout(), in.shapes()}};
  }
  void run_sample(Workspace& ws, int64_t i, int) override {
    const Batch& in = ws.input(0);
    const uint8_t* src = in.data<uint8_t>(i);
    uint8_t* dst = ws.output(0).data<uint8_t>(i);
    for (int64_t k = 0, n = volume(in.shape(i)); k < n; ++k) dst[k] = static_cast<uint8_t>(255 - src[k]);
  }
};

#ifdef CUSTOM_INVERT_GPU
class InvertGpu : public Operator {
 public:
  using Operator::Operator;
  bool sample_wise() const override { return false; }
  void run_batch(Workspace& ws) override {
    const Batch& in = ws.input(0);
    check_input(spec_, in);
    if (in.memory() != MemoryKind::kDevice)
      throw Error(ErrorKind::kInvalidArgument, spec_.display_name() + ": device='gpu' needs GPU input");
    ws.outputs.assign(1, allocate_device_batch(ws, in.dtype(), in.shapes(), in.layout()));
    for (size_t k = 0; k < in.size(); ++k)
      custom_invert_u8_gpu(in.data<uint8_t>(k), ws.outputs[0].data<uint8_t>(k),
                           volume(in.shape(k)), ws.gpu->stream());
  }
};
#endif

}  // namespace

STOKER_REGISTER_OP_NAMED(custom_invert, "custom.invert") {
  schema.doc("Inverts uint8 images: 255 - x for every value (an example plugin operator).")
      .inputs(1, 1).outputs(1)
      .backend(stoker::Backend::kCPU, [](const stoker::OpSpec& s) { return std::make_unique<Invert>(s); });
}

#ifdef CUSTOM_INVERT_GPU
STOKER_REGISTER_BACKEND(custom_invert_gpu, "custom.invert", stoker::Backend::kGPU,
                        [](const stoker::OpSpec& s) { return std::make_unique<InvertGpu>(s); });
#endif
