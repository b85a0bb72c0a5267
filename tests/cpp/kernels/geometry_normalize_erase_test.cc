#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels/cpu/geometry/erase.h"
#include "kernels/cpu/geometry/normalize.h"

using namespace stoker;
using namespace stoker::kernels;

TEST(GeometryNormalize, PerChannelStatisticsOfHwc) {
  const Shape shape{2, 3, 2};  // H, W, C
  std::vector<float> in(12);
  for (int i = 0; i < 12; ++i) in[i] = static_cast<float>(i * (i % 2 ? 3 : 1));
  std::vector<bool> reduce{true, true, false};
  ASSERT_EQ(reduced_shape(shape, reduce), (Shape{1, 1, 2}));
  std::vector<double> sum(2, 0.0), sq(2, 0.0), mean(2);
  add_sums(sum.data(), in.data(), shape, reduce);
  for (int c = 0; c < 2; ++c) mean[c] = sum[c] / 6;
  add_squared_deviations(sq.data(), in.data(), shape, reduce, mean.data());
  for (int c = 0; c < 2; ++c) {
    double m = 0, v = 0;
    for (int k = c; k < 12; k += 2) m += in[k] / 6.0;
    for (int k = c; k < 12; k += 2) v += (in[k] - m) * (in[k] - m);
    EXPECT_DOUBLE_EQ(mean[c], m);
    EXPECT_NEAR(sq[c], v, 1e-9);
  }
  std::vector<float> mf{static_cast<float>(mean[0]), static_cast<float>(mean[1])};
  std::vector<float> factor{2.0f, 0.5f};
  std::vector<uint8_t> out(12);
  normalize_apply<uint8_t, float>(out.data(), in.data(), shape, reduce, mf.data(), factor.data(), 100.0f);
  for (int k = 0; k < 12; ++k) {
    float v = (in[k] - mf[k % 2]) * factor[k % 2] + 100.0f;
    EXPECT_EQ(out[k], static_cast<uint8_t>(std::clamp(std::nearbyint(v), 0.0f, 255.0f))) << k;
  }
}

TEST(GeometryErase, BoxesArePerChannelAndClippedByTheCaller) {
  const Shape shape{3, 4, 2};
  std::vector<int16_t> in(24);
  for (int i = 0; i < 24; ++i) in[i] = static_cast<int16_t>(i);
  std::vector<int16_t> out(24);
  EraseBox box{{1, 1, 0}, {3, 3, 2}};
  erase<int16_t>(out.data(), in.data(), shape, {box}, 2, {-1, -2});
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 4; ++x)
      for (int c = 0; c < 2; ++c) {
        int k = (y * 4 + x) * 2 + c;
        bool inside = y >= 1 && y < 3 && x >= 1 && x < 3;
        EXPECT_EQ(out[k], inside ? (c ? -2 : -1) : k);
      }
}
