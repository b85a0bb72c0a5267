// The GPU twins of the rank filters (kernels/cpu/filter/morphology.h: experimental.erode,
// dilate, median_blur) and of noise.gaussian, noise.salt_and_pepper, grid_mask and jitter
// (kernels/cpu/augment/augment.h), a whole batch per launch.
//
// - Erosion and dilation: a row pass then a column pass per iteration, each the extreme of the
//   window's pixels read through the border (a constant border reads none), as the CPU's
//   separable passes; minimum and maximum are exact, so the results are the CPU's bit for bit
//   for every value but NaN (whose fate depends on the order of comparisons) and the sign of a
//   zero where -0 and +0 tie.
// - Median: each output element selects the middle of its window (edges replicated) by a radix
//   select over order-preserving integer keys of the values, one bit per pass over the window
//   (held in registers up to 64 pixels): the value of rank area / 2, the CPU's, with the same
//   exceptions (NaN, and -0 against +0, which the keys order).
#pragma once
#include <cstdint>
#include <vector>

#include "core/dtype.h"
#include "kernels/cpu/augment/augment.h"
#include "kernels/cpu/filter/morphology.h"

namespace stoker {
class Workspace;
namespace kernels::cuda {

// One plane of a sample: h x w pixels of `channels` interleaved channels, dense.
struct RankJob {
  const void* in = nullptr;  // device memory
  void* out = nullptr;       // device memory, same extents
  int64_t h = 0, w = 0, channels = 1;
  FilterWindow window;       // the median's is centred, odd
};
// Types uint8, uint16, int16, float32.
void morphology_gpu(Workspace& ws, DType type, MorphOp op, FilterBorder border, int64_t iterations,
                    const std::vector<RankJob>& jobs);
void median_blur_gpu(Workspace& ws, DType type, const std::vector<RankJob>& jobs);

// The noise operators' twins (kernels/cpu/augment/augment.h). Each element regenerates the
// Philox block (core/random.h) that the CPU's sequential draws reach it with: gaussian noise
// takes one block of four numbers per value (Box-Muller on two 53-bit uniforms), salt and pepper
// one number per draw. The stream is the sample's, as Workspace::rng() keys it. Shot noise draws
// each element from a stream of its own (kernels/cpu/augment/poisson.h), as the CPU does.
struct NoiseJob {
  const void* in = nullptr;  // device memory, n values
  void* out = nullptr;
  int64_t n = 0;
  uint64_t key = 0, iteration = 0;  // the Philox stream
  uint32_t sample = 0;
  double mean = 0, stddev = 1;      // gaussian
  double factor = 0;                // shot
  SaltAndPepper sp;                 // salt and pepper, and how values share draws:
  int64_t channels = 1;             // values per draw (1: one draw per value)
  bool channel_first = false;       // planar channels share a draw per position
};
// Types uint8, int8, uint16, int16, uint32, int32, uint64, int64, float32, float64. Gaussian
// noise computes the normal deviate in double with CUDA's log and cos, which may differ from the
// host's by an ulp: the sum then rounds to the CPU's value but for rare ties (see the tests).
void gaussian_noise_gpu(Workspace& ws, DType type, const std::vector<NoiseJob>& jobs);
void salt_and_pepper_gpu(Workspace& ws, DType type, const std::vector<NoiseJob>& jobs);
// The device's exp, log and lgamma may differ from the host's by an ulp: a draw differs only
// where a uniform falls within an ulp of a boundary (see the tests).
void shot_noise_gpu(Workspace& ws, DType type, const std::vector<NoiseJob>& jobs);

// grid_mask's twin: kernels::grid_mask's float operations in their order, without fused
// multiply-adds (bit for bit). ca, sa, sx, sy as the CPU kernel derives them from GridMask.
struct GridMaskJob {
  const void* in = nullptr;
  void* out = nullptr;
  int64_t h = 0, w = 0, channels = 1;
  float ca = 0, sa = 0, sx = 0, sy = 0, ratio = 0.5f;
};
// Types as the noise operators'.
void grid_mask_gpu(Workspace& ws, DType type, const std::vector<GridMaskJob>& jobs);

// jitter's twin. The CPU draws two Philox::below(degree) per pixel, frame after frame, row after
// row; below() skips a number when (number * degree) mod 2^32 < (2^32 mod degree), a test of the
// number alone. A first launch lists each sample's skipped positions in the stream (rare: at
// most degree / 2^32 of them), a second gives each draw the position of its number past the
// skipped ones, so every pixel takes the CPU's offsets. The list holds up to `max_skips`
// positions (the launcher sizes it far beyond the expected count: exceeding it has a probability
// below 1e-30; the draws past the overflow would then differ).
struct JitterJob {
  const void* in = nullptr;  // device memory: frames x h x w x channels
  void* out = nullptr;
  int64_t frames = 1, h = 0, w = 0, channels = 1;
  uint64_t key = 0, iteration = 0;  // the Philox stream
  uint32_t sample = 0;
  int64_t degree = 2;  // 0 or 1: a copy
  bool apply = true;   // false: a copy (mask = 0)
  double fill = 0;     // the CPU's fill_value, rounded on the device as round_away_sat
};
void jitter_gpu(Workspace& ws, DType type, const std::vector<JitterJob>& jobs);

}  // namespace kernels::cuda
}  // namespace stoker
