// Kernel-level checks of kernels/cpu/filter/convolution: border rules, correlation against a
// direct sum, anchors, valid extents, rounding, and the Laplacian's windows and sum of separable
// terms against the same direct sum.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/cpu/filter/convolution.h"

namespace stoker {
namespace kernels {
namespace {

std::vector<float> pseudo_random(int64_t n, uint32_t seed, float lo, float hi) {
  std::vector<float> v(n);
  uint32_t x = seed * 2654435761u + 1;
  for (auto& e : v) {
    x = x * 1664525u + 1013904223u;
    e = lo + (hi - lo) * static_cast<float>(x >> 8) / static_cast<float>(1u << 24);
  }
  return v;
}

// The direct sum in double, any border, 1 to 3 axes, interleaved channels.
std::vector<double> reference(const std::vector<float>& in, const std::vector<int64_t>& spatial, int64_t C,
                              const std::vector<float>& k, const CorrelateArgs& a) {
  const int nd = static_cast<int>(spatial.size());
  std::vector<int64_t> os = correlate_output_extents(spatial, a);
  int64_t ovol = 1;
  for (int64_t e : os) ovol *= e;
  int64_t kvol = 1;
  for (int64_t e : a.kernel_shape) kvol *= e;
  std::vector<double> out(ovol * C, 0.0);
  std::vector<int64_t> o(nd), kk(nd);
  for (int64_t oi = 0; oi < ovol; ++oi) {
    int64_t r = oi;
    for (int d = nd - 1; d >= 0; --d) { o[d] = r % os[d]; r /= os[d]; }
    for (int64_t ki = 0; ki < kvol; ++ki) {
      int64_t q = ki;
      for (int d = nd - 1; d >= 0; --d) { kk[d] = q % a.kernel_shape[d]; q /= a.kernel_shape[d]; }
      int64_t idx = 0;
      bool fill = false;
      for (int d = 0; d < nd; ++d) {
        int64_t p = a.valid ? o[d] + kk[d] : o[d] - a.anchor[d] + kk[d];
        int64_t m = filter_border_index(p, spatial[d], a.border);
        if (m < 0) fill = true;
        idx = idx * spatial[d] + (m < 0 ? 0 : m);
      }
      for (int64_t c = 0; c < C; ++c)
        out[oi * C + c] += static_cast<double>(k[ki]) * (fill ? a.fill : in[idx * C + c]);
    }
  }
  return out;
}

TEST(FilterConvolution, BorderIndexFollowsEachRule) {
  // n = 4: abcd; positions -5..8
  const int64_t n = 4;
  std::vector<int64_t> r101, r1001, wrap, clamp, cst;
  for (int64_t i = -5; i <= 8; ++i) {
    r101.push_back(filter_border_index(i, n, FilterBorder::kReflect101));
    r1001.push_back(filter_border_index(i, n, FilterBorder::kReflect1001));
    wrap.push_back(filter_border_index(i, n, FilterBorder::kWrap));
    clamp.push_back(filter_border_index(i, n, FilterBorder::kClamp));
    cst.push_back(filter_border_index(i, n, FilterBorder::kConstant));
  }
  EXPECT_EQ(r101, (std::vector<int64_t>{1, 2, 3, 2, 1, 0, 1, 2, 3, 2, 1, 0, 1, 2}));
  EXPECT_EQ(r1001, (std::vector<int64_t>{3, 3, 2, 1, 0, 0, 1, 2, 3, 3, 2, 1, 0, 0}));
  EXPECT_EQ(wrap, (std::vector<int64_t>{3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0}));
  EXPECT_EQ(clamp, (std::vector<int64_t>{0, 0, 0, 0, 0, 0, 1, 2, 3, 3, 3, 3, 3, 3}));
  EXPECT_EQ(cst, (std::vector<int64_t>{-1, -1, -1, -1, -1, 0, 1, 2, 3, -1, -1, -1, -1, -1}));
  EXPECT_EQ(filter_border_index(-3, 1, FilterBorder::kReflect101), 0);
  EXPECT_EQ(filter_border_index(7, 1, FilterBorder::kReflect1001), 0);
}

TEST(FilterConvolution, CorrelationIsNotFlipped) {
  // A kernel [1, 0, 0] centred reads the left neighbour: out[x] = in[x - 1].
  std::vector<float> in{10, 20, 30, 40};
  std::vector<float> k{1, 0, 0};
  CorrelateArgs a;
  a.kernel_shape = {1, 3};
  a.anchor = {0, 1};
  a.border = FilterBorder::kConstant;
  std::vector<float> out(4), scratch;
  correlate(out.data(), in.data(), {1, 4}, 1, k.data(), a, &scratch);
  EXPECT_EQ(out, (std::vector<float>{0, 10, 20, 30}));
}

TEST(FilterConvolution, MatchesTheDirectSumForEveryBorderAnchorAndMode) {
  const std::vector<int64_t> spatial{5, 7};
  const int64_t C = 3;
  auto in = pseudo_random(5 * 7 * C, 1, -50, 200);
  for (auto shape : {std::vector<int64_t>{3, 3}, {2, 4}, {1, 5}, {9, 12}, {5, 7}}) {
    auto k = pseudo_random(shape[0] * shape[1], 2, -1, 1);
    for (FilterBorder b : {FilterBorder::kReflect101, FilterBorder::kReflect1001, FilterBorder::kWrap,
                           FilterBorder::kClamp, FilterBorder::kConstant}) {
      for (int anchor_kind = 0; anchor_kind < 3; ++anchor_kind) {
        for (bool valid : {false, true}) {
          CorrelateArgs a;
          a.kernel_shape = shape;
          a.anchor = anchor_kind == 0 ? std::vector<int64_t>{shape[0] / 2, shape[1] / 2}
                     : anchor_kind == 1 ? std::vector<int64_t>{0, 0}
                                        : std::vector<int64_t>{shape[0] - 1, shape[1] - 1};
          a.valid = valid;
          a.border = b;
          a.fill = 7.5f;
          auto os = correlate_output_extents(spatial, a);
          if (os[0] < 1 || os[1] < 1) continue;
          auto ref = reference(in, spatial, C, k, a);
          std::vector<float> out(ref.size()), scratch;
          correlate(out.data(), in.data(), spatial, C, k.data(), a, &scratch);
          for (size_t i = 0; i < ref.size(); ++i)
            ASSERT_NEAR(out[i], ref[i], 1e-3) << "border " << static_cast<int>(b) << " anchor " << anchor_kind
                                              << " valid " << valid << " at " << i;
        }
      }
    }
  }
}

TEST(FilterConvolution, VolumesWithThreeDimensionalKernels) {
  const std::vector<int64_t> spatial{4, 5, 6};
  auto in = pseudo_random(4 * 5 * 6 * 2, 3, 0, 1);
  auto k = pseudo_random(3 * 2 * 3, 4, -1, 1);
  for (FilterBorder b : {FilterBorder::kReflect101, FilterBorder::kWrap, FilterBorder::kConstant}) {
    CorrelateArgs a;
    a.kernel_shape = {3, 2, 3};
    a.anchor = {1, 0, 2};
    a.border = b;
    auto ref = reference(in, spatial, 2, k, a);
    std::vector<float> out(ref.size()), scratch;
    correlate(out.data(), in.data(), spatial, 2, k.data(), a, &scratch);
    for (size_t i = 0; i < ref.size(); ++i) ASSERT_NEAR(out[i], ref[i], 1e-5) << i;
  }
}

TEST(FilterConvolution, IntegerOutputsRoundHalfToEvenAndSaturate) {
  std::vector<uint8_t> in{0, 1, 2, 3, 4, 5, 250, 255};
  std::vector<float> half{0.5f}, big{1.5f};
  CorrelateArgs a;
  a.kernel_shape = {1, 1};
  a.anchor = {0, 0};
  std::vector<uint8_t> out(8);
  std::vector<float> scratch;
  correlate(out.data(), in.data(), {1, 8}, 1, half.data(), a, &scratch);
  EXPECT_EQ(out, (std::vector<uint8_t>{0, 0, 1, 2, 2, 2, 125, 128}));
  correlate(out.data(), in.data(), {1, 8}, 1, big.data(), a, &scratch);
  EXPECT_EQ(out, (std::vector<uint8_t>{0, 2, 3, 4, 6, 8, 255, 255}));
  std::vector<int16_t> s{-5, -3, -1, 1, 3, 5}, so(6);
  correlate(so.data(), s.data(), {1, 6}, 1, half.data(), a, &scratch);
  EXPECT_EQ(so, (std::vector<int16_t>{-2, -2, 0, 0, 2, 2}));
}

TEST(FilterConvolution, WideKernelsOnNarrowImagesTakeTheLowMemoryPath) {
  // 2000 x 1 image, 1 x 4001 kernel: widening every row at once would need 2000 * 4001 floats.
  const std::vector<int64_t> spatial{2000, 1};
  auto in = pseudo_random(2000, 5, 0, 10);
  auto k = pseudo_random(4001, 6, -1, 1);
  CorrelateArgs a;
  a.kernel_shape = {1, 4001};
  a.anchor = {0, 2000};
  auto ref = reference(in, spatial, 1, k, a);
  std::vector<float> out(2000), scratch;
  correlate(out.data(), in.data(), spatial, 1, k.data(), a, &scratch);
  EXPECT_LT(scratch.size(), 20000u);
  for (size_t i = 0; i < ref.size(); ++i) ASSERT_NEAR(out[i], ref[i], 1e-2) << i;
}

TEST(FilterConvolution, LaplacianWindowsAreOpenCVs) {
  EXPECT_EQ(binomial_window(1), (std::vector<float>{1}));
  EXPECT_EQ(binomial_window(5), (std::vector<float>{1, 4, 6, 4, 1}));
  EXPECT_EQ(second_derivative_window(3), (std::vector<float>{1, -2, 1}));
  EXPECT_EQ(second_derivative_window(5), (std::vector<float>{1, 0, -2, 0, 1}));
  EXPECT_EQ(second_derivative_window(7), (std::vector<float>{1, 2, -1, -4, -1, 2, 1}));
}

TEST(FilterConvolution, SeparableSumEqualsTheSumOfFullKernels) {
  const std::vector<int64_t> spatial{6, 5, 7};
  const int64_t C = 2;
  auto in = pseudo_random(6 * 5 * 7 * C, 7, -3, 3);
  std::vector<SeparableTerm> terms(3);
  const int sizes[3][3] = {{5, 3, 1}, {3, 3, 3}, {1, 5, 7}};
  std::vector<double> ref(in.size(), 0.0);
  for (int d = 0; d < 3; ++d) {
    terms[d].windows.resize(3);
    for (int a = 0; a < 3; ++a)
      terms[d].windows[a] = a == d ? second_derivative_window(sizes[d][a] < 3 ? 3 : sizes[d][a])
                                   : binomial_window(sizes[d][a]);
    terms[d].scale = 0.25f * (d + 1);
    // The term as one full 3-D kernel through the direct sum.
    CorrelateArgs a;
    std::vector<float> full;
    a.kernel_shape = {static_cast<int64_t>(terms[d].windows[0].size()),
                      static_cast<int64_t>(terms[d].windows[1].size()),
                      static_cast<int64_t>(terms[d].windows[2].size())};
    a.anchor = {a.kernel_shape[0] / 2, a.kernel_shape[1] / 2, a.kernel_shape[2] / 2};
    for (float wz : terms[d].windows[0])
      for (float wy : terms[d].windows[1])
        for (float wx : terms[d].windows[2]) full.push_back(wz * wy * wx * terms[d].scale);
    auto r = reference(in, spatial, C, full, a);
    for (size_t i = 0; i < r.size(); ++i) ref[i] += r[i];
  }
  std::vector<float> out(in.size()), scratch;
  separable_sum(out.data(), in.data(), spatial, C, terms, &scratch);
  for (size_t i = 0; i < ref.size(); ++i) ASSERT_NEAR(out[i], ref[i], 1e-3) << i;
}

TEST(FilterConvolution, SeparableSumRoundsHalfAwayFromZeroAndSaturates) {
  // One 1-D term with window [0.5] scaled by 1: out = round(in / 2), halves away from zero.
  std::vector<SeparableTerm> terms(1);
  terms[0].windows = {{0.0f, 0.5f, 0.0f}};
  std::vector<int16_t> in{-5, -3, -1, 1, 3, 5}, out(6);
  std::vector<float> scratch;
  separable_sum(out.data(), in.data(), {6}, 1, terms, &scratch);
  EXPECT_EQ(out, (std::vector<int16_t>{-3, -2, -1, 1, 2, 3}));
  terms[0].scale = -2;  // negative results saturate at 0 for uint8
  std::vector<uint8_t> u{0, 10, 200}, uo(3);
  separable_sum(uo.data(), u.data(), {3}, 1, terms, &scratch);
  EXPECT_EQ(uo, (std::vector<uint8_t>{0, 0, 0}));
  terms[0].scale = 4;
  separable_sum(uo.data(), u.data(), {3}, 1, terms, &scratch);
  EXPECT_EQ(uo, (std::vector<uint8_t>{0, 20, 255}));
}

TEST(FilterConvolution, LaplacianOfAnImpulseIsOpenCVsKernel) {
  // window 3 in 2-D: [[2, 0, 2], [0, -8, 0], [2, 0, 2]] (cv2.Laplacian ksize=3).
  std::vector<float> in(25, 0.0f);
  in[12] = 1;
  std::vector<SeparableTerm> terms(2);
  terms[0].windows = {second_derivative_window(3), binomial_window(3)};
  terms[1].windows = {binomial_window(3), second_derivative_window(3)};
  std::vector<float> out(25), scratch;
  separable_sum(out.data(), in.data(), {5, 5}, 1, terms, &scratch);
  const float want[9] = {2, 0, 2, 0, -8, 0, 2, 0, 2};
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 3; ++x) EXPECT_EQ(out[(y + 1) * 5 + x + 1], want[y * 3 + x]) << y << "," << x;
  EXPECT_EQ(out[0], 0.0f);
}

}  // namespace
}  // namespace kernels
}  // namespace stoker
