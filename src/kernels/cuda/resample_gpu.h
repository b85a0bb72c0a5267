// The GPU twin of kernels::resample (cpu/imgproc/resample.h): a batch of images, each with its
// own sizes, source window and filter, in one launch. The weight tables come from the CPU code
// (resample_weights) and the arithmetic is the CPU kernel's, operation for operation, so the
// results equal the CPU's bit for bit.
#pragma once
#include <cstdint>
#include <vector>

#include "core/dtype.h"
#include "kernels/cpu/imgproc/resample.h"

namespace stoker {
class Workspace;
namespace kernels::cuda {

struct ResampleJob {
  const void* in = nullptr;  // device memory, HWC (pixels in_pixel_stride elements apart)
  int64_t in_h = 0, in_w = 0, in_row_stride = 0, in_pixel_stride = 0;
  void* out = nullptr;       // device memory, packed HWC
  int64_t out_h = 0, out_w = 0;
  int64_t channels = 0;
  ResampleParams params;     // with the source window in params.roi
};

// In and Out: uint8, int16, uint16 or float32 (as on the CPU).
bool resample_gpu_supports(DType out, DType in);

// Queues the jobs on the pipeline's stream.
void resample_gpu(Workspace& ws, DType out_type, DType in_type, const std::vector<ResampleJob>& jobs);

// A packed DHWC volume resampled as resample_volume does on the CPU (plan_volume's order, float
// intermediates in device scratch, the same sums), so that the results equal the CPU's.
struct VolumeJob {
  const void* in = nullptr;  // device memory, packed DHWC
  int64_t in_d = 0, in_h = 0, in_w = 0;
  void* out = nullptr;       // device memory, packed DHWC
  int64_t out_d = 0, out_h = 0, out_w = 0;
  int64_t channels = 0;
  ResampleParams params;     // the window in height and width in params.roi
  double z0 = 0, z1 = 0;     // the window in depth
};
void resample_volume_gpu(Workspace& ws, DType out_type, DType in_type,
                         const std::vector<VolumeJob>& jobs);

}  // namespace kernels::cuda
}  // namespace stoker
