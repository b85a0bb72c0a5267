// The GPU twin of kernels::slice_flip_normalize (cpu/geometry/slice.h): one launch for a whole
// batch, each sample with its own window, flips, permutation, fill and per-channel affine map.
// Behind the GPU crop, slice, flip, transpose, pad, paste and crop_mirror_normalize. Results are
// the CPU kernel's exactly (the same float32 operations, no fused multiply-add).
#pragma once
#include <cstdint>
#include <vector>

#include "core/dtype.h"
#include "kernels/cpu/geometry/slice.h"

namespace stoker {
class Workspace;
namespace kernels::cuda {

// Whether the GPU kernel converts In to Out (the CPU kernel's set: same type, or to float,
// float16, uint8, int8), for up to kMaxSliceDims dimensions.
inline constexpr int kMaxSliceDims = 6;
bool slice_gpu_supports(DType out, DType in, int ndim);

// Runs the slices on the pipeline's stream: samples[i] reads `in[i]` and writes `out[i]`
// (device pointers), with `args[i]` as for the CPU kernel.
void slice_flip_normalize_gpu(Workspace& ws, DType out_type, DType in_type,
                              const std::vector<void*>& out, const std::vector<const void*>& in,
                              const std::vector<SliceArgs>& args);

}  // namespace kernels::cuda
}  // namespace stoker
