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

// A sample as `planes` HWC images of ih x iw x c resampled to oh x ow x c; with `volume`, as
// `planes` DHWC volumes of id such images resampled to od of them over the depth window [z0, z1).
struct ResampleGeometry {
  int64_t planes = 1, ih = 0, iw = 0, oh = 0, ow = 0, c = 1;
  bool volume = false;
  int64_t id = 1, od = 1;
  double z0 = 0, z1 = 1;
};

// `geometry`: sample i's images (empty: the input's layout says, resize_layout.h).
void run_resample_gpu(Workspace& ws, const std::vector<OutputDesc>& descs,
                      const std::vector<std::optional<kernels::ResampleParams>>& params,
                      const std::vector<ResampleGeometry>& geometry);

// An operator whose samples are not plain images (volumes, tensor_resize's tensors) provides
// `ResampleGeometry sample_geometry(int64_t i) const` too.
template <class Op>
class ResampleGpu final : public Op {
 public:
  using Op::Op;
  bool sample_wise() const override { return false; }
  void run_batch(Workspace& ws) override {
    std::vector<OutputDesc> descs = this->setup(ws);
    const size_t n = ws.input(0).size();
    std::vector<std::optional<kernels::ResampleParams>> params(n);
    std::vector<ResampleGeometry> geometry;
    for (size_t i = 0; i < n; ++i) {
      params[i] = this->sample_params(static_cast<int64_t>(i));
      if constexpr (requires(const Op& op) { op.sample_geometry(int64_t{0}); })
        geometry.push_back(this->sample_geometry(static_cast<int64_t>(i)));
    }
    run_resample_gpu(ws, descs, params, geometry);
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
