// Colour arithmetic on interleaved pixels: every colour operator stoker has (brightness and
// contrast, colour space conversion, hsv, hue, saturation, colour twist) is a per-pixel affine map
// out = M * in + offset with at most 3 channels on either side. The operator folds its arguments
// into one ColorAffine per sample, once; the pixel loop then does one pass of float FMAs and a
// saturating round (halves away from zero, as DALI's colour operators round) into the output type.
//
// The matrices follow DALI: YCbCr is ITU-R BT.601 with studio range (Y in 16..235), grey is the
// full-range luma 0.299 R + 0.587 G + 0.114 B, and hue/saturation/value are the linear
// approximation in YIQ space (rotate IQ by the hue, scale IQ by the saturation, scale all by
// the value), with DALI's 3-decimal YIQ matrices so that results match DALI's.
#pragma once
#include <cstdint>
#include <optional>

#include "core/shape.h"

namespace stoker {
namespace kernels {

struct ColorAffine {
  int in_channels = 3, out_channels = 3;  // 1 or 3 each
  float m[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  float offset[3] = {0, 0, 0};
};

// Reverses the channel order of the input and/or the output (RGB <-> BGR).
ColorAffine swap_input_rb(ColorAffine t);
ColorAffine swap_output_rb(ColorAffine t);

// DALI's colour twist on RGB pixels, in this order: value, saturation, hue (degrees), back to
// RGB, then contrast around `half_range` and brightness, as one matrix and offset:
//   out = brightness * (contrast * Yiq2Rgb * Hue * Sat * Value * Rgb2Yiq * in
//                       + half_range * (1 - contrast))
ColorAffine color_twist_affine(float brightness, float contrast, float hue_degrees,
                               float saturation, float value, float half_range);

enum class ColorSpace { kRGB, kBGR, kYCbCr, kGray };

// The conversion `from` -> `to` (nullopt where there is none). `eight_bit` picks DALI's 8-bit
// offsets (16 and 128 levels); otherwise data is normalised to [0, range] (range 1 for floats,
// the type's maximum for 16-bit integers) with offsets 0.0625 and 0.5 of the range, as DALI's
// normalised formulas have them.
std::optional<ColorAffine> color_space_affine(ColorSpace from, ColorSpace to, bool eight_bit,
                                              float range);

// Applies `t` to every pixel. `in.channels` must be t.in_channels and `out.channels`
// t.out_channels; the views have the same height and width. Instantiated for Out and In among
// uint8_t, uint16_t, int16_t, int32_t, float16 and float.
template <typename Out, typename In>
void apply_color_affine(const ImageView<Out>& out, const ImageView<const In>& in,
                        const ColorAffine& t);

// out[k] = in[k] * mul + add for n elements, saturating and rounding into Out. Same types.
template <typename Out, typename In>
void multiply_add(Out* out, const In* in, int64_t n, float mul, float add);

}  // namespace kernels
}  // namespace stoker
