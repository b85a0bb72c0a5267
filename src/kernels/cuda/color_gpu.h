// The GPU twins of kernels/cpu/color: the per-pixel affine colour map (apply_color_affine and
// multiply_add: brightness_contrast, hsv, hue, saturation, color_twist, color_space_conversion)
// and OpenCV's RGB <-> HSV (hsv_convert.h), each a whole batch in one launch with a map per
// sample. The float32 operations are the CPU loops', in their order and without fused
// multiply-adds, so results equal the CPU's bit for bit.
#pragma once
#include <cstdint>
#include <vector>

#include "core/dtype.h"
#include "kernels/cpu/color/color_affine.h"

namespace stoker {
class Workspace;
namespace kernels::cuda {

// The colour kernels' element types (color_affine.h): uint8, uint16, int16, int32, float16, float.
bool color_gpu_type(DType t);

struct ColorAffineJob {
  const void* in = nullptr;  // device memory, packed pixels of t.in_channels
  void* out = nullptr;       // device memory, packed pixels of t.out_channels
  int64_t pixels = 0;
  ColorAffine t;             // every job of a launch has the same channel counts
};

// apply_color_affine for every job, on the pipeline's stream. multiply_add(out, in, n, mul, add)
// is the job {in, out, n, 1x1 map m = mul, offset = add}.
void color_affine_gpu(Workspace& ws, DType out_type, DType in_type,
                      const std::vector<ColorAffineJob>& jobs);

struct HsvJob {
  const void* in = nullptr;
  void* out = nullptr;
  int64_t pixels = 0;
};

// color_space_conversion's HSV path on `type` data (uint8, float16 or float), for every job:
//   to_hsv:  [leg: affine to RGB, rounded to `type`] then rgb_to_hsv(bgr)
//   !to_hsv: hsv_to_rgb(bgr) then [leg: affine from RGB, from the RGB rounded to `type`]
// `leg` is null for a direct RGB/BGR conversion (then bgr says which); with a leg, bgr is false.
void hsv_gpu(Workspace& ws, DType type, const std::vector<HsvJob>& jobs, bool to_hsv, bool bgr,
             const ColorAffine* leg);

}  // namespace kernels::cuda
}  // namespace stoker
