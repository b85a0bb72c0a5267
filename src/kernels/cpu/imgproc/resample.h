// Separable resampling of interleaved (HWC) images on the CPU: resize, crop+resize and flips in
// one call, following PIL's, OpenCV's or DALI's conventions by choice.
//
// Geometry: output pixel i (of n) samples the source at  x0 + (i + 0.5) * (x1 - x0) / n,  with
// pixel centres at k + 0.5 (PIL, OpenCV, DALI and torchvision all agree on this). The source
// window [x0, x1) defaults to the whole image; x1 < x0 flips the axis.
//
// Each axis gets a weight table (per output pixel: first source pixel and `taps` weights) built
// once per call; then two passes, horizontal and vertical, in the order that costs less for the
// shapes, through a float intermediate (so no double rounding for 8-bit data).
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/shape.h"

namespace stoker {
namespace kernels {

enum class ResampleFilter : int8_t {
  kNearest,     // the source pixel under the sample point (see NearestMode); never widened
  kLinear,      // triangle of radius 1; widened when shrinking only with `antialias`
  kCubic,       // Keys cubic convolution, parameter ResampleParams::cubic_a, radius 2
  kLanczos3,    // sinc(x) sinc(x / 3), radius 3
  kGaussian,    // exp(-4 x^2) truncated at radius 1 (DALI's window); always widened when shrinking
  kTriangular,  // triangle; always widened when shrinking (DALI's INTERP_TRIANGULAR)
};

// What taps that fall outside the image read.
enum class ResampleBorder : int8_t {
  kClamp,        // the nearest edge pixel (OpenCV's BORDER_REPLICATE, DALI, torch)
  kRenormalize,  // nothing: they are dropped and the other weights rescaled to sum 1 (PIL)
};

enum class NearestMode : int8_t {
  kCenter,  // floor(x0 + (i + 0.5) * scale): PIL, DALI, OpenCV INTER_NEAREST_EXACT
  kCorner,  // floor(x0 + i * scale): OpenCV INTER_NEAREST (shifts the image by half a pixel)
  kPil,     // kCenter with PIL's arithmetic (the position accumulated step by step in double),
            // which picks the other neighbour where a sample lands within rounding of an edge
};

// Source window in source pixels (pixel edges, not centres). May reach outside the image, where
// the border rule applies, and may be flipped (y1 < y0 and/or x1 < x0).
struct ResampleRoi {
  double y0 = 0, x0 = 0, y1 = 0, x1 = 0;
};

struct ResampleParams {
  ResampleFilter min_filter = ResampleFilter::kLinear;  // for an axis that shrinks
  ResampleFilter mag_filter = ResampleFilter::kLinear;  // for an axis that grows or keeps its size
  // When an axis shrinks by s > 1, widen linear, cubic and lanczos filters by s (PIL's resize,
  // torchvision antialias=True, DALI antialias=True). Without it they only interpolate, so
  // shrinking aliases (OpenCV's INTER_LINEAR / INTER_CUBIC).
  bool antialias = true;
  ResampleBorder border = ResampleBorder::kClamp;
  NearestMode nearest = NearestMode::kCenter;
  // Keys' a. -0.5 is PIL's BICUBIC, DALI's INTERP_CUBIC and the interpolating spline that keeps
  // linear ramps exact; OpenCV's INTER_CUBIC and torch's bicubic use -0.75.
  double cubic_a = -0.5;
  std::optional<ResampleRoi> roi;  // absent: the whole input
  // Do as PIL does with 8-bit images: the horizontal pass first, its result rounded and
  // saturated to the output type before the vertical pass (so cubic and lanczos overshoot is
  // clipped twice, as there). Only matters for integer outputs. With it, PIL's algorithm is
  // reproduced except for rare rounding ties (off by 1); Pillow 13's SIMD build itself strays
  // from that algorithm in ~1% of pixels, so vs Pillow 13: mean |diff| ~0.013.
  bool pil_rounding = false;

  // PIL's Image.resize(size, filter, box=roi) (NEAREST, BILINEAR, BICUBIC, LANCZOS).
  static ResampleParams pil(ResampleFilter filter);
  // cv2.resize(interpolation=INTER_NEAREST / INTER_LINEAR / INTER_CUBIC). Other filters get
  // OpenCV's geometry and border but have no OpenCV twin (INTER_LANCZOS4 is lanczos with a = 4).
  static ResampleParams opencv(ResampleFilter filter);
};

// Bytes of scratch memory resample() needs for these shapes and parameters (weight tables and
// the intermediate image). Depends only on its arguments, never on the data.
size_t resample_scratch_bytes(int64_t out_h, int64_t out_w, int64_t in_h, int64_t in_w,
                              int64_t channels, const ResampleParams& params);

// The weight tables and the pass order resample() uses, for other implementations of the same
// arithmetic (the GPU kernel): output pixel o of an axis reads `taps` source pixels from start[o]
// on, with weights w[o * taps + k] (short windows are padded with zero weights and every window
// lies inside the source). resample() computes, in float32 without fused multiply-adds:
//   horizontal first: h_r = sum over k in order of wx[k] * src[r][xs + k]   (rounded to the
//                     output type in between with pil_rounding), then the vertical sum of h;
//   vertical first:   v_c = the vertical sum of src[.][c], then sum over k of wx[k] * v_(xs+k);
// where the vertical sum is w0*r0, then + (w_k*r_k + w_k+1*r_k+1) for each following pair, then
// + w_k*r_k for an odd last tap.
struct ResampleAxisWeights {
  std::vector<int32_t> start;
  std::vector<float> w;
  int taps = 0;
};
struct ResampleWeights {
  ResampleAxisWeights y, x;
  bool vertical_first = false;
};
ResampleWeights resample_weights(int64_t out_h, int64_t out_w, int64_t in_h, int64_t in_w,
                                 int64_t channels, const ResampleParams& params);

// Resamples `in` into the whole of `out` (which fixes the output size). Channels must match.
// In: uint8_t, int16_t, uint16_t, float. Out: the same set; integer outputs are rounded to
// nearest and saturated, float outputs are left unclamped (cubic and lanczos overshoot).
// `scratch` (any alignment) must hold resample_scratch_bytes(...) bytes.
template <typename Out, typename In>
void resample(const ImageView<Out>& out, const ImageView<const In>& in,
              const ResampleParams& params, void* scratch, size_t scratch_bytes);

// The same with scratch from a per-thread buffer that grows to the largest size seen.
template <typename Out, typename In>
void resample(const ImageView<Out>& out, const ImageView<const In>& in,
              const ResampleParams& params);

// Volumes: a packed DHWC volume (in_d slices of in_h x in_w pixels of `channels` values)
// resampled into a packed out_d x out_h x out_w one. The height and width axes are resample()'s
// own passes on each slice (params.roi the window in them, as there); depth is a third
// separable pass with the same filters, weight tables and rules, over the source window
// [z0, z1) (z1 < z0 flips). The depth pass goes first or last, whichever costs less; all
// intermediates are float, so values are rounded once, at the end. With depth unchanged (same
// extent, whole window) every slice is exactly resample() of that slice.
//
// plan_volume is that plan, which the GPU twin follows too: the depth weights (output slice z
// sums source slices start[z], start[z] + 1, ... with taps weights each, in resample()'s vertical
// order), the source slices read, and whether the depth pass is the identity (then each slice is
// resampled as it is) or goes first.
struct VolumePlan {
  ResampleAxisWeights z;
  int64_t used_lo = 0, used_hi = 0;
  bool identity = false, depth_first = false;
};
VolumePlan plan_volume(int64_t out_d, int64_t out_h, int64_t out_w, int64_t in_d, int64_t in_h,
                       int64_t in_w, int64_t channels, const ResampleParams& params, double z0,
                       double z1);
template <typename Out, typename In>
void resample_volume(Out* out, int64_t out_d, int64_t out_h, int64_t out_w, const In* in,
                     int64_t in_d, int64_t in_h, int64_t in_w, int64_t channels,
                     const ResampleParams& params, double z0, double z1);

}  // namespace kernels
}  // namespace stoker
