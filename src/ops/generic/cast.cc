// cast: converts element types, rounding and saturating as DALI does (core/cast_value.h).
#include "kernels/cuda/cast_gpu.h"
#include "core/cast_value.h"
#include "ops/generic/gpu_twin.h"
#include "pipeline/gpu_batch.h"
#include "pipeline/operator.h"

namespace stoker {
namespace {

class Cast : public Operator {
 public:
  explicit Cast(const OpSpec& spec) : Operator(spec), dtype_(static_cast<DType>(spec.get<int64_t>("dtype"))) {}

  std::vector<OutputDesc> setup(Workspace& ws) override {
    return {OutputDesc{dtype_, ws.input(0).layout(), ws.input(0).shapes()}};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const Batch& in = ws.input(0);
    Batch& out = ws.output(0);
    int64_t n = volume(in.shape(i));
    visit_dtype(in.dtype(), [&](auto ti) {
      using In = decltype(ti);
      visit_dtype(dtype_, [&](auto to) {
        using Out = decltype(to);
        const In* src = in.data<In>(i);
        Out* dst = out.data<Out>(i);
        for (int64_t k = 0; k < n; ++k) dst[k] = cast_value<Out>(src[k]);
      });
    });
  }

  void run_gpu(Workspace& ws, const std::vector<OutputDesc>& descs) {
    require_device_input(ws);
    const Batch& in = ws.input(0);
    const OutputDesc& d = descs[0];
    ws.outputs.assign(1, allocate_device_batch(ws, d.dtype, d.shapes, d.layout));
    Batch& out = ws.outputs[0];
    std::vector<kernels::cuda::CastJob> jobs(in.size());
    for (size_t i = 0; i < in.size(); ++i) jobs[i] = {in[i].data, out[i].data, volume(in.shape(i))};
    kernels::cuda::cast_gpu(ws, d.dtype, in.dtype(), jobs);
  }

 private:
  DType dtype_;
};

}  // namespace

STOKER_REGISTER_OP_NAMED(cast, "cast") {
  schema.doc("Converts the input to another element type. Floats going to integers are rounded to "
             "nearest, ties away from zero (2.5 -> 3, -0.5 -> -1), NaN gives 0, and values saturate "
             "at the limits of the output type.")
      .inputs(1, 1, {"input"}).outputs(1)
      .arg({.name = "dtype", .type = ArgType::kDType, .doc = "The output element type."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<Cast>(s); })
      STOKER_GPU_TWIN(Cast);
}

}  // namespace stoker
