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

// debayer's twin (kernels/cpu/color/debayer.h, OpenCV's bilinear and gray demosaicing): one
// thread per output pixel, the CPU's integer arithmetic; a border pixel is its clamped interior
// neighbour's, as the CPU's row and column copies make it.
struct DebayerJob {
  const void* in = nullptr;  // device memory, frames x h x w
  void* out = nullptr;       // frames x h x w x (3, or 1 for gray)
  int64_t frames = 1, h = 0, w = 0;
  int blue_y = 0, blue_x = 0;
};
// type: uint8 or uint16.
void debayer_gpu(Workspace& ws, DType type, bool gray, const std::vector<DebayerJob>& jobs);

// clahe's twin (kernels/cpu/color/histogram.h): per plane, one block per tile builds the tile's
// clipped histogram and lookup table, then one thread per pixel blends the four nearest tables
// in float32 in the CPU's order (no fused multiply-adds): bit for bit. luma_only RGB images go
// through CIE Lab in double, where CUDA's cbrt and pow may differ from the host's by an ulp: a
// level may then round the other way (rarely; see the tests).
struct ClaheJob {
  const uint8_t* in = nullptr;  // device memory, h x w x c (c: 1 or 3)
  uint8_t* out = nullptr;
  int64_t h = 0, w = 0, c = 1;
};
void clahe_gpu(Workspace& ws, const std::vector<ClaheJob>& jobs, int64_t tiles_x, int64_t tiles_y,
               double clip_limit, bool luma_only);

}  // namespace kernels::cuda
}  // namespace stoker
