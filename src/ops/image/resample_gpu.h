// The GPU twin of the resampling operators (resize, random_resized_crop): the CPU operator's
// setup (arguments, output sizes, random windows), then the whole batch in one launch of the GPU
// resampling kernel, which computes what the CPU kernel computes, bit for bit.
//
// The operator provides `std::optional<kernels::ResampleParams> sample_params(int64_t i) const`
// after setup(): the filter and source window of sample i (every frame of a sequence gets the
// same), or nullopt for an output of zeros.
#pragma once
#include <optional>
#include <vector>

#include "kernels/cpu/imgproc/resample.h"
#include "pipeline/operator.h"

namespace stoker {

void run_resample_gpu(Workspace& ws, const std::vector<OutputDesc>& descs,
                      const std::vector<std::optional<kernels::ResampleParams>>& params);

template <class Op>
class ResampleGpu final : public Op {
 public:
  using Op::Op;
  bool sample_wise() const override { return false; }
  void run_batch(Workspace& ws) override {
    std::vector<OutputDesc> descs = this->setup(ws);
    std::vector<std::optional<kernels::ResampleParams>> params(ws.input(0).size());
    for (size_t i = 0; i < params.size(); ++i) params[i] = this->sample_params(static_cast<int64_t>(i));
    run_resample_gpu(ws, descs, params);
  }
};

}  // namespace stoker

// Chained after a resampling operator's CPU backend.
#ifdef STOKER_WITH_CUDA
#define STOKER_RESAMPLE_GPU_BACKEND(Op)                                   \
  .backend(::stoker::Backend::kGPU, [](const ::stoker::OpSpec& s) {       \
    return std::make_unique<::stoker::ResampleGpu<Op>>(s);                \
  })
#else
#define STOKER_RESAMPLE_GPU_BACKEND(Op)
#endif
