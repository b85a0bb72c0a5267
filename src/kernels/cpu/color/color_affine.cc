#include "kernels/cpu/color/color_affine.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>
#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "kernels/cpu/color/color_affine_isa.h"

// The x86-64 baseline build of the pixel loops. The loops clamp with float compares, which GCC
// keeps as branches (they might raise FP exception flags) unless trapping math is off, and then
// nothing vectorises; nobody reads the flags. (Clang does this by default.)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("no-trapping-math")
#endif
#define STOKER_COLOR_ISA color_base
#include "kernels/cpu/color/color_affine_impl.inc"

namespace stoker {
namespace kernels {

ColorAffine swap_input_rb(ColorAffine t) {
  for (auto& row : t.m) std::swap(row[0], row[2]);
  return t;
}

ColorAffine swap_output_rb(ColorAffine t) {
  for (int k = 0; k < 3; ++k) std::swap(t.m[0][k], t.m[2][k]);
  std::swap(t.offset[0], t.offset[2]);
  return t;
}

namespace {

using Mat = double[3][3];

void mat_mul(const Mat& a, const Mat& b, Mat& out) {
  Mat r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) r[i][j] = a[i][0] * b[0][j] + a[i][1] * b[1][j] + a[i][2] * b[2][j];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) out[i][j] = r[i][j];
}

// DALI's matrices, with their 3-decimal precision (the product of the two is not exactly the
// identity, and DALI's results carry that).
constexpr Mat kRgb2Yiq = {{.299, .587, .114}, {.596, -.274, -.321}, {.211, -.523, .311}};
constexpr Mat kYiq2Rgb = {{1, .956, .621}, {1, -.272, -.647}, {1, -1.107, 1.705}};

ColorAffine from_rows(int in_c, int out_c, std::initializer_list<std::initializer_list<double>> m,
                      std::initializer_list<double> offset) {
  ColorAffine t;
  t.in_channels = in_c;
  t.out_channels = out_c;
  for (auto& row : t.m) row[0] = row[1] = row[2] = 0;
  int i = 0;
  for (const auto& row : m) {
    int j = 0;
    for (double v : row) t.m[i][j++] = static_cast<float>(v);
    ++i;
  }
  i = 0;
  for (double v : offset) t.offset[i++] = static_cast<float>(v);
  return t;
}

}  // namespace

ColorAffine color_twist_affine(float brightness, float contrast, float hue_degrees,
                               float saturation, float value, float half_range) {
  // Hue is a rotation of the IQ plane about the Y (luma) axis; saturation scales IQ; value
  // scales all three.
  double h = double(hue_degrees) * M_PI / 180.0;
  double c = std::cos(h), s = std::sin(h);
  Mat hsv = {{double(value), 0, 0},
             {0, c * saturation * value, s * saturation * value},
             {0, -s * saturation * value, c * saturation * value}};
  Mat m;
  mat_mul(hsv, kRgb2Yiq, m);
  mat_mul(kYiq2Rgb, m, m);
  double scale = double(brightness) * contrast;
  double off = (double(half_range) - double(half_range) * contrast) * brightness;
  ColorAffine t;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) t.m[i][j] = static_cast<float>(m[i][j] * scale);
    t.offset[i] = static_cast<float>(off);
  }
  return t;
}

std::optional<ColorAffine> color_space_affine(ColorSpace from, ColorSpace to, bool eight_bit,
                                              float range) {
  using CS = ColorSpace;
  if (from == CS::kBGR && to == CS::kBGR) return ColorAffine{};
  if (from == CS::kBGR) {
    auto t = color_space_affine(CS::kRGB, to, eight_bit, range);
    if (t) *t = swap_input_rb(*t);
    return t;
  }
  if (to == CS::kBGR) {
    auto t = color_space_affine(from, CS::kRGB, eight_bit, range);
    if (t) *t = swap_output_rb(*t);
    return t;
  }
  // From here on only RGB, YCbCr and GRAY.
  const double y0 = eight_bit ? 16.0 : 0.0625 * range;   // luma foot room
  const double c0 = eight_bit ? 128.0 : 0.5 * range;     // chroma zero
  const double kYSum = 0.257 + 0.504 + 0.098;            // studio-range luma gain (219/255)
  if (from == to) {
    ColorAffine t;
    t.in_channels = t.out_channels = (from == CS::kGray ? 1 : 3);
    return t;
  }
  switch (from) {
    case CS::kRGB:
      if (to == CS::kGray) return from_rows(3, 1, {{0.299, 0.587, 0.114}}, {0});
      if (to == CS::kYCbCr)
        return from_rows(3, 3,
                         {{0.257, 0.504, 0.098}, {-0.148, -0.291, 0.439}, {0.439, -0.368, -0.071}},
                         {y0, c0, c0});
      break;
    case CS::kYCbCr:
      if (to == CS::kRGB)
        return from_rows(3, 3, {{1.164, 0, 1.596}, {1.164, -0.392, -0.813}, {1.164, 2.017, 0}},
                         {-1.164 * y0 - 1.596 * c0, -1.164 * y0 + (0.392 + 0.813) * c0,
                          -1.164 * y0 - 2.017 * c0});
      if (to == CS::kGray) return from_rows(3, 1, {{1.0 / kYSum, 0, 0}}, {-y0 / kYSum});
      break;
    case CS::kGray:
      if (to == CS::kRGB) return from_rows(1, 3, {{1}, {1}, {1}}, {0, 0, 0});
      // DALI's 8-bit kernel adds 0.0625 here instead of 16 (its normalised offset, a slip);
      // this follows the formula, as DALI's other types do.
      if (to == CS::kYCbCr) return from_rows(1, 3, {{kYSum}, {0}, {0}}, {y0, c0, c0});
      break;
    default:
      break;
  }
  return std::nullopt;
}

template <typename Out, typename In>
void apply_color_affine(const ImageView<Out>& out, const ImageView<const In>& in,
                        const ColorAffine& t) {
  if (color_use_avx2())
    color_avx2::affine(out, in, t);
  else
    color_base::affine(out, in, t);
}

template <typename Out, typename In>
void multiply_add(Out* out, const In* in, int64_t n, float mul, float add) {
  if (color_use_avx2())
    color_avx2::multiply_add(out, in, n, mul, add);
  else
    color_base::multiply_add(out, in, n, mul, add);
}

#define STOKER_COLOR_INSTANTIATE(Out, In)                                                    \
  template void apply_color_affine<Out, In>(const ImageView<Out>&, const ImageView<const In>&, \
                                            const ColorAffine&);                           \
  template void multiply_add<Out, In>(Out*, const In*, int64_t, float, float);
STOKER_COLOR_TYPE_PAIRS(STOKER_COLOR_INSTANTIATE)
#undef STOKER_COLOR_INSTANTIATE

}  // namespace kernels
}  // namespace stoker
