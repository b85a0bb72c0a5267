// Colour kernels: the vectorised loops (baseline and AVX2) against a plain double-precision
// per-pixel reference, and the matrices against DALI's formulas.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "core/convert.h"
#include "core/cast_value.h"  // round half away from zero, saturate: DALI's colour rounding
#include "kernels/cpu/color/color_affine.h"
#include "kernels/cpu/color/color_affine_isa.h"

using namespace stoker;
using namespace stoker::kernels;

namespace {

template <typename Out, typename In>
std::vector<Out> reference(const std::vector<In>& in, int64_t n, const ColorAffine& t) {
  std::vector<Out> out(n * t.out_channels);
  for (int64_t p = 0; p < n; ++p)
    for (int c = 0; c < t.out_channels; ++c) {
      double v = t.offset[c];
      for (int k = 0; k < t.in_channels; ++k)
        v += double(t.m[c][k]) * double(static_cast<float>(in[p * t.in_channels + k]));
      out[p * t.out_channels + c] = convert_sat<Out>(v);
    }
  return out;
}

template <typename T>
std::vector<T> random_pixels(int64_t count, double lo, double hi, uint32_t seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<T> v(count);
  for (auto& x : v) x = convert_sat<T>(d(g));
  return v;
}

ColorAffine some_affine(int ci, int co) {
  ColorAffine t = color_twist_affine(1.3f, 0.8f, 40.0f, 1.4f, 0.9f, 128.0f);
  t.in_channels = ci;
  t.out_channels = co;
  return t;
}

// Runs both instruction-set builds and the dispatcher; all must agree to within one unit of
// rounding with the reference (float vs double sums), and exactly with each other.
template <typename Out, typename In>
void check_all(int ci, int co, double lo, double hi, double tol) {
  const int64_t h = 7, w = 301;  // odd sizes: partial blocks and vector tails
  auto in = random_pixels<In>(h * w * ci, lo, hi, 42 + ci * 3 + co);
  ColorAffine t = some_affine(ci, co);
  auto ref = reference<Out>(in, h * w, t);
  std::vector<Out> a(ref.size()), b(ref.size()), c(ref.size());
  ImageView<const In> iv(in.data(), h, w, ci);
  color_base::affine(ImageView<Out>(a.data(), h, w, co), iv, t);
  color_avx2::affine(ImageView<Out>(b.data(), h, w, co), iv, t);
  apply_color_affine(ImageView<Out>(c.data(), h, w, co), iv, t);
  for (size_t k = 0; k < ref.size(); ++k) {
    ASSERT_NEAR(double(a[k]), double(ref[k]), tol) << "element " << k;
    ASSERT_EQ(double(a[k]), double(b[k])) << "element " << k;
    ASSERT_EQ(double(a[k]), double(c[k])) << "element " << k;
  }
}

}  // namespace

TEST(ColorAffine, Uint8AllChannelCounts) {
  for (int ci : {1, 3})
    for (int co : {1, 3}) check_all<uint8_t, uint8_t>(ci, co, 0, 255, 1);
}

TEST(ColorAffine, MixedTypes) {
  check_all<float, uint8_t>(3, 3, 0, 255, 1e-3);
  check_all<uint8_t, float>(3, 3, -10, 300, 1);
  check_all<int16_t, int16_t>(3, 3, -30000, 30000, 1);
  check_all<uint16_t, uint16_t>(3, 3, 0, 65535, 1);
  check_all<int32_t, int32_t>(3, 3, -1e6, 1e6, 1);
  check_all<float16, float>(3, 3, 0, 1, 1e-3);
  check_all<float, float16>(3, 1, 0, 1, 1e-3);
}

TEST(ColorAffine, SaturatesRoundsHalfAwayFromZeroAndMapsNaNToZero) {
  ColorAffine t;
  t.in_channels = t.out_channels = 1;
  t.m[0][0] = 1;
  std::vector<float> in = {2.5f, 3.5f, -7.0f, 300.0f, NAN, 1e30f, -1e30f, INFINITY, -2.5f, 0.49999997f};
  std::vector<uint8_t> out(in.size());
  std::vector<int16_t> out16(in.size());
  std::vector<int32_t> out32(in.size());
  apply_color_affine(ImageView<uint8_t>(out.data(), 1, in.size(), 1),
                     ImageView<const float>(in.data(), 1, in.size(), 1), t);
  apply_color_affine(ImageView<int16_t>(out16.data(), 1, in.size(), 1),
                     ImageView<const float>(in.data(), 1, in.size(), 1), t);
  apply_color_affine(ImageView<int32_t>(out32.data(), 1, in.size(), 1),
                     ImageView<const float>(in.data(), 1, in.size(), 1), t);
  EXPECT_EQ(out, (std::vector<uint8_t>{3, 4, 0, 255, 0, 255, 0, 255, 0, 0}));
  EXPECT_EQ(out16, (std::vector<int16_t>{3, 4, -7, 300, 0, 32767, -32768, 32767, -3, 0}));
  EXPECT_EQ(out32, (std::vector<int32_t>{3, 4, -7, 300, 0, 2147483647, -2147483647 - 1, 2147483647, -3, 0}));
}

TEST(ColorAffine, NonFiniteValuesStayInTheirPixel) {
  ColorAffine t = some_affine(3, 3);
  std::vector<float> in(3 * 20, 0.5f), out(in.size());
  in[3 * 7] = NAN;
  apply_color_affine(ImageView<float>(out.data(), 4, 5, 3), ImageView<const float>(in.data(), 4, 5, 3), t);
  for (int p = 0; p < 20; ++p)
    for (int c = 0; c < 3; ++c) EXPECT_EQ(std::isnan(out[p * 3 + c]), p == 7) << p;
}

TEST(ColorAffine, StridedViews) {
  // A 3-channel view into 4-channel pixels (pixel_stride 4) and rows with padding.
  const int h = 3, w = 5;
  std::vector<uint8_t> in(h * 24), out(h * 24, 7);
  for (size_t k = 0; k < in.size(); ++k) in[k] = uint8_t(k * 13);
  ImageView<const uint8_t> iv(in.data(), h, w, 3);
  iv.pixel_stride = 4;
  iv.row_stride = 24;
  ImageView<uint8_t> ov(out.data(), h, w, 3);
  ov.pixel_stride = 4;
  ov.row_stride = 24;
  ColorAffine t = some_affine(3, 3);
  apply_color_affine(ov, iv, t);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      for (int c = 0; c < 3; ++c) {
        double v = t.offset[c];
        for (int k = 0; k < 3; ++k) v += double(t.m[c][k]) * iv.at(y, x)[k];
        EXPECT_NEAR(ov.at(y, x)[c], convert_sat<uint8_t>(v), 1);
      }
      EXPECT_EQ(ov.at(y, x)[3], 7);  // the fourth channel is left alone
    }
}

TEST(ColorAffine, MultiplyAdd) {
  auto in = random_pixels<uint8_t>(1001, 0, 255, 3);
  std::vector<uint8_t> a(in.size()), b(in.size());
  std::vector<float> f(in.size());
  color_base::multiply_add(a.data(), in.data(), in.size(), 1.7f, -20.5f);
  color_avx2::multiply_add(b.data(), in.data(), in.size(), 1.7f, -20.5f);
  multiply_add(f.data(), in.data(), in.size(), 1.7f, -20.5f);
  for (size_t k = 0; k < in.size(); ++k) {
    float v = in[k] * 1.7f - 20.5f;
    EXPECT_EQ(a[k], cast_value<uint8_t>(v));
    EXPECT_EQ(b[k], a[k]);
    EXPECT_EQ(f[k], v);
  }
}

TEST(ColorSpaceAffine, MatchesDaliFormulas) {
  // uint8 RGB -> YCbCr, BT.601 studio range.
  auto t = *color_space_affine(ColorSpace::kRGB, ColorSpace::kYCbCr, true, 255);
  double r = 200, g = 100, b = 50;
  double y = 0.257 * r + 0.504 * g + 0.098 * b + 16;
  double cb = -0.148 * r - 0.291 * g + 0.439 * b + 128;
  double cr = 0.439 * r - 0.368 * g - 0.071 * b + 128;
  auto apply = [](const ColorAffine& t, int c, std::initializer_list<double> px) {
    double v = t.offset[c];
    int k = 0;
    for (double x : px) v += t.m[c][k++] * x;
    return v;
  };
  EXPECT_NEAR(apply(t, 0, {r, g, b}), y, 1e-4);
  EXPECT_NEAR(apply(t, 1, {r, g, b}), cb, 1e-4);
  EXPECT_NEAR(apply(t, 2, {r, g, b}), cr, 1e-4);
  // ... and back.
  auto inv = *color_space_affine(ColorSpace::kYCbCr, ColorSpace::kRGB, true, 255);
  EXPECT_NEAR(apply(inv, 0, {y, cb, cr}), 1.164 * (y - 16) + 1.596 * (cr - 128), 1e-3);
  EXPECT_NEAR(apply(inv, 1, {y, cb, cr}), 1.164 * (y - 16) - 0.813 * (cr - 128) - 0.392 * (cb - 128), 1e-3);
  EXPECT_NEAR(apply(inv, 2, {y, cb, cr}), 1.164 * (y - 16) + 2.017 * (cb - 128), 1e-3);
  // BGR input: the same with the channels reversed.
  auto tb = *color_space_affine(ColorSpace::kBGR, ColorSpace::kYCbCr, true, 255);
  EXPECT_NEAR(apply(tb, 0, {b, g, r}), y, 1e-4);
  // Float data: offsets 0.0625 and 0.5 of the range.
  auto tf = *color_space_affine(ColorSpace::kRGB, ColorSpace::kYCbCr, false, 1);
  EXPECT_NEAR(tf.offset[0], 0.0625, 1e-7);
  EXPECT_NEAR(tf.offset[1], 0.5, 1e-7);
  // Gray.
  auto tg = *color_space_affine(ColorSpace::kRGB, ColorSpace::kGray, true, 255);
  EXPECT_EQ(tg.out_channels, 1);
  EXPECT_NEAR(apply(tg, 0, {r, g, b}), 0.299 * r + 0.587 * g + 0.114 * b, 1e-4);
  // Every pair exists.
  for (auto a : {ColorSpace::kRGB, ColorSpace::kBGR, ColorSpace::kYCbCr, ColorSpace::kGray})
    for (auto z : {ColorSpace::kRGB, ColorSpace::kBGR, ColorSpace::kYCbCr, ColorSpace::kGray})
      EXPECT_TRUE(color_space_affine(a, z, true, 255).has_value());
}

TEST(ColorTwistAffine, IdentityAndGreyAxis) {
  // Neutral arguments give (almost: DALI's 3-decimal YIQ matrices) the identity.
  auto t = color_twist_affine(1, 1, 0, 1, 1, 128);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) EXPECT_NEAR(t.m[i][j], i == j ? 1.0 : 0.0, 2e-3);
    EXPECT_EQ(t.offset[i], 0.0f);
  }
  // Hue and saturation keep greys grey (up to the same precision).
  auto h = color_twist_affine(1, 1, 77, 1.5, 1, 128);
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(h.m[i][0] + h.m[i][1] + h.m[i][2], 1.0, 3e-3);
  // Contrast 0 gives uniform half_range * brightness.
  auto c = color_twist_affine(2, 0, 30, 1, 1, 128);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) EXPECT_EQ(c.m[i][j], 0.0f);
    EXPECT_FLOAT_EQ(c.offset[i], 256.0f);
  }
}

// Long enough for the vector paths of both builds: ties, limits, infinities and NaN.
template <typename Out>
void check_special_values() {
  const float specials[] = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, 254.5f, 255.5f, 256.0f, -7.0f,
                            0.49999997f, -0.49999997f, 1.4999999f, 2.5000002f,
                            32766.5f, 32767.5f, -32768.5f, -32769.0f, 65534.5f, 65535.5f, 70000.0f,
                            NAN, INFINITY, -INFINITY, 1e30f, -1e30f, 3e9f, -3e9f, 123.456f};
  std::vector<float> in;
  for (int r = 0; r < 5; ++r)
    for (float v : specials) in.push_back(v);
  ColorAffine t;
  t.in_channels = t.out_channels = 1;
  std::vector<Out> a(in.size()), b(in.size()), m(in.size());
  ImageView<const float> iv(in.data(), 1, in.size(), 1);
  color_base::affine(ImageView<Out>(a.data(), 1, in.size(), 1), iv, t);
  color_avx2::affine(ImageView<Out>(b.data(), 1, in.size(), 1), iv, t);
  color_avx2::multiply_add(m.data(), in.data(), in.size(), 1.0f, 0.0f);
  for (size_t k = 0; k < in.size(); ++k) {
    Out want = cast_value<Out>(in[k]);
    EXPECT_EQ(double(a[k]), double(want)) << "base, value " << in[k] << " at " << k;
    EXPECT_EQ(double(b[k]), double(want)) << "avx2, value " << in[k] << " at " << k;
    EXPECT_EQ(double(m[k]), double(want)) << "multiply_add, value " << in[k] << " at " << k;
  }
}

TEST(ColorAffine, VectorPathsSaturateRoundAndMapNaNLikeCastValue) {
  check_special_values<uint8_t>();
  check_special_values<int16_t>();
  check_special_values<uint16_t>();
  check_special_values<int32_t>();
}
