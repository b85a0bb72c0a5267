// The GPU twin of kernels::separable_convolution (cpu/warp/gaussian_blur.h): gaussian_blur's
// separable convolution with a reflect-101 border, innermost axis first through a float
// intermediate. One batched launch per data axis (each sample with its own extents and
// windows), each output the CPU's sum in the CPU's order without fused multiply-adds, so
// results equal the CPU's bit for bit.
#pragma once
#include <cstdint>
#include <vector>

#include "core/dtype.h"

namespace stoker {
class Workspace;
namespace kernels::cuda {

struct BlurJob {
  const void* in = nullptr;  // device memory: planes x spatial... x channels, dense
  void* out = nullptr;       // device memory, the same shape
  int64_t planes = 1;        // leading independent planes (F, C first)
  std::vector<int64_t> spatial;  // the data axes, outermost first (1 to 3; the same count for all jobs)
  int64_t channels = 1;          // trailing interleaved channels
  std::vector<std::vector<float>> windows;  // per data axis, odd lengths
};

// Out is In or float; In any type but bool.
bool blur_gpu_supports(DType out, DType in);

void gaussian_blur_gpu(Workspace& ws, DType out_type, DType in_type, const std::vector<BlurJob>& jobs);

}  // namespace kernels::cuda
}  // namespace stoker
