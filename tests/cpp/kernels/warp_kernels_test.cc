// Kernel-level checks of the warp family: sampling conventions, borders, rotation geometry,
// reflect-101 convolution and the JPEG round trip.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "kernels/cpu/warp/gaussian_blur.h"
#include "kernels/cpu/warp/jpeg_distortion.h"
#include "kernels/cpu/warp/warp.h"

namespace stoker {
namespace kernels {
namespace {

std::vector<uint8_t> ramp(int64_t h, int64_t w, int64_t c) {
  std::vector<uint8_t> v(h * w * c);
  for (size_t k = 0; k < v.size(); ++k) v[k] = static_cast<uint8_t>((k * 37) % 251);
  return v;
}

TEST(WarpKernels, IdentityIsExactForEveryInterpolation) {
  auto src = ramp(7, 9, 3);
  for (WarpInterp interp : {WarpInterp::kNearest, WarpInterp::kLinear, WarpInterp::kCubic}) {
    std::vector<uint8_t> dst(src.size());
    warp_affine(ImageView<uint8_t>(dst.data(), 7, 9, 3), ImageView<const uint8_t>(src.data(), 7, 9, 3),
                AffineMap2D{}, interp, WarpBorder{});
    EXPECT_EQ(dst, src) << static_cast<int>(interp);
  }
}

TEST(WarpKernels, IntegerShiftFillsOutsideAndClampRepeatsTheEdge) {
  auto src = ramp(4, 5, 1);
  AffineMap2D m;
  m.m[2] = 2;  // dst(x, y) = src(x + 2, y)
  std::vector<float> dst(20);
  warp_affine(ImageView<float>(dst.data(), 4, 5, 1), ImageView<const uint8_t>(src.data(), 4, 5, 1), m,
              WarpInterp::kLinear, WarpBorder{false, -1.0f});
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 5; ++x) EXPECT_EQ(dst[y * 5 + x], x + 2 < 5 ? src[y * 5 + x + 2] : -1.0f);
  warp_affine(ImageView<float>(dst.data(), 4, 5, 1), ImageView<const uint8_t>(src.data(), 4, 5, 1), m,
              WarpInterp::kNearest, WarpBorder{});
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 5; ++x) EXPECT_EQ(dst[y * 5 + x], src[y * 5 + std::min(x + 2, 4)]);
}

TEST(WarpKernels, LinearSamplesBetweenPixelCentres) {
  std::vector<float> src = {0, 10, 20, 30};  // one row
  AffineMap2D m;
  m.m[2] = 0.25;
  std::vector<float> dst(4);
  warp_affine(ImageView<float>(dst.data(), 1, 4, 1), ImageView<const float>(src.data(), 1, 4, 1), m,
              WarpInterp::kLinear, WarpBorder{});
  EXPECT_FLOAT_EQ(dst[0], 2.5f);
  EXPECT_FLOAT_EQ(dst[2], 22.5f);
  EXPECT_FLOAT_EQ(dst[3], 30.0f);  // the right tap clamps to the edge
  // With a fill, the outside tap reads the fill value: 30 * 0.75 + 100 * 0.25.
  warp_affine(ImageView<float>(dst.data(), 1, 4, 1), ImageView<const float>(src.data(), 1, 4, 1), m,
              WarpInterp::kLinear, WarpBorder{false, 100.0f});
  EXPECT_FLOAT_EQ(dst[3], 47.5f);
}

TEST(WarpKernels, NearestTakesThePixelContainingThePoint) {
  std::vector<uint8_t> src = {1, 2, 3, 4};
  AffineMap2D m;
  m.m[0] = 0.5;  // dst x -> src x / 2: centres 0.25, 0.75, 1.25, 1.75 -> pixels 0, 0, 1, 1
  std::vector<uint8_t> dst(4);
  warp_affine(ImageView<uint8_t>(dst.data(), 1, 4, 1), ImageView<const uint8_t>(src.data(), 1, 4, 1), m,
              WarpInterp::kNearest, WarpBorder{});
  EXPECT_EQ(dst, (std::vector<uint8_t>{1, 1, 2, 2}));
}

TEST(WarpKernels, InvertAffine) {
  AffineMap2D a;
  double v[6] = {0.8, -0.3, 5, 0.2, 1.1, -7};
  std::copy(v, v + 6, a.m);
  AffineMap2D inv;
  ASSERT_TRUE(invert_affine(a, &inv));
  double x = 3, y = 4;
  double u = a.m[0] * x + a.m[1] * y + a.m[2], w = a.m[3] * x + a.m[4] * y + a.m[5];
  EXPECT_NEAR(inv.m[0] * u + inv.m[1] * w + inv.m[2], x, 1e-12);
  EXPECT_NEAR(inv.m[3] * u + inv.m[4] * w + inv.m[5], y, 1e-12);
  AffineMap2D singular;
  singular.m[0] = 1; singular.m[1] = 2; singular.m[3] = 2; singular.m[4] = 4;
  EXPECT_FALSE(invert_affine(singular, &inv));
}

TEST(WarpKernels, RotatedCanvasFollowsDali) {
  int64_t h, w;
  rotated_canvas_size(375, 500, 90, &h, &w);
  EXPECT_EQ(h, 500); EXPECT_EQ(w, 375);
  rotated_canvas_size(375, 500, 0, &h, &w);
  EXPECT_EQ(h, 375); EXPECT_EQ(w, 500);
  rotated_canvas_size(375, 500, 180, &h, &w);
  EXPECT_EQ(h, 375); EXPECT_EQ(w, 500);
  // 10 degrees: ceil(cos*500 + sin*375 - 0.01) = 558 (even, like 500) and
  // ceil(cos*375 + sin*500 - 0.01) = 457 (odd, like 375).
  rotated_canvas_size(375, 500, 10, &h, &w);
  EXPECT_EQ(w, 558); EXPECT_EQ(h, 457);
  // 30 degrees: 620.5.. -> 621, made even -> 622; 574.7.. -> 575 (odd, kept).
  rotated_canvas_size(375, 500, 30, &h, &w);
  EXPECT_EQ(w, 622); EXPECT_EQ(h, 575);
  // Beyond 45 degrees the parities swap: 60 degrees, w from h (odd), h from w (even).
  rotated_canvas_size(375, 500, 60, &h, &w);
  EXPECT_EQ(w % 2, 1); EXPECT_EQ(h % 2, 0);
}

TEST(WarpKernels, Rotate180MapsCornerToCorner) {
  AffineMap2D m = rotation_map(4, 6, 4, 6, 180);
  // Output centre of pixel (0, 0) is (0.5, 0.5); it must read the last pixel's centre.
  EXPECT_NEAR(m.m[0] * 0.5 + m.m[1] * 0.5 + m.m[2], 5.5, 1e-9);
  EXPECT_NEAR(m.m[3] * 0.5 + m.m[4] * 0.5 + m.m[5], 3.5, 1e-9);
}

TEST(WarpKernels, Reflect101) {
  std::vector<int64_t> got;
  for (int i = -5; i < 9; ++i) got.push_back(reflect101(i, 4));
  EXPECT_EQ(got, (std::vector<int64_t>{1, 2, 3, 2, 1, 0, 1, 2, 3, 2, 1, 0, 1, 2}));
  EXPECT_EQ(reflect101(-7, 1), 0);
}

TEST(WarpKernels, GaussianWindowRules) {
  EXPECT_EQ(gaussian_window_size(1.0), 7);
  EXPECT_EQ(gaussian_window_size(0.5), 5);
  EXPECT_NEAR(gaussian_sigma_for_window(7), 1.4, 1e-12);
  auto w = gaussian_window(7, 1.0);
  EXPECT_NEAR(std::accumulate(w.begin(), w.end(), 0.0), 1.0, 1e-6);
  EXPECT_FLOAT_EQ(w[0], w[6]);
  EXPECT_GT(w[3], w[2]);
}

TEST(WarpKernels, ConvolutionKeepsConstantsAndSpreadsADelta) {
  std::vector<int64_t> spatial = {5, 6};
  std::vector<std::vector<float>> windows = {gaussian_window(3, 0.8), gaussian_window(5, 1.0)};
  std::vector<float> scratch;
  std::vector<uint8_t> flat(5 * 6 * 2, 77), out(flat.size());
  separable_convolution(out.data(), flat.data(), spatial, 2, windows, &scratch);
  EXPECT_EQ(out, flat);
  std::vector<float> delta(5 * 6, 0.0f), res(delta.size());
  delta[2 * 6 + 3] = 1.0f;
  separable_convolution(res.data(), delta.data(), spatial, 1, windows, &scratch);
  // Brute force: every output sums window products over reflected taps.
  for (int y = 0; y < 5; ++y)
    for (int x = 0; x < 6; ++x) {
      double want = 0;
      for (int j = 0; j < 3; ++j)
        for (int i = 0; i < 5; ++i)
          want += windows[0][j] * windows[1][i] * delta[reflect101(y + j - 1, 5) * 6 + reflect101(x + i - 2, 6)];
      EXPECT_NEAR(res[y * 6 + x], want, 1e-6) << y << "," << x;
    }
}

TEST(WarpKernels, ConvolutionReflectsWithoutRepeatingTheEdge) {
  std::vector<float> in = {10, 0, 0, 0}, out(4);
  std::vector<std::vector<float>> windows = {{0.25f, 0.5f, 0.25f}};
  std::vector<float> scratch;
  separable_convolution(out.data(), in.data(), {4}, 1, windows, &scratch);
  // Index -1 reflects to 1 (value 0): out[0] = 0.25*0 + 0.5*10 + 0.25*0.
  EXPECT_FLOAT_EQ(out[0], 5.0f);
  EXPECT_FLOAT_EQ(out[1], 2.5f);
  EXPECT_FLOAT_EQ(out[2], 0.0f);
}

TEST(WarpKernels, JpegRoundTripIsCloseAtHighQualityAndWorseAtLow) {
  const int64_t h = 48, w = 64;
  std::vector<uint8_t> src(h * w * 3);
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x)
      for (int c = 0; c < 3; ++c) src[(y * w + x) * 3 + c] = static_cast<uint8_t>(x * 2 + y + c * 20);
  auto err = [&](int q) {
    std::vector<uint8_t> dst(src.size());
    EXPECT_EQ(jpeg_compression_distortion(ImageView<uint8_t>(dst.data(), h, w, 3),
                                          ImageView<const uint8_t>(src.data(), h, w, 3), q), "");
    double e = 0;
    for (size_t k = 0; k < src.size(); ++k) e += std::abs(int(dst[k]) - int(src[k]));
    return e / src.size();
  };
  double hi = err(100), lo = err(5);
  EXPECT_LT(hi, 3.0);
  EXPECT_GT(lo, hi);
  std::vector<uint8_t> two(h * w * 2), out2(two.size());
  EXPECT_NE(jpeg_compression_distortion(ImageView<uint8_t>(out2.data(), h, w, 2),
                                        ImageView<const uint8_t>(two.data(), h, w, 2), 50), "");
}

}  // namespace
}  // namespace kernels
}  // namespace stoker
