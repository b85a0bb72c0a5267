// The random crop window generator: DALI's rules (random_crop_attr.h), checked on cases whose
// answer follows from the rules by hand, and statistically on many draws.
#include "ops/image/random_crop_attr.h"
#include "ops/image/decoder.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace stoker {
namespace {

Philox stream(uint32_t sample, uint64_t key = 1234) { return Philox(key, 0, sample); }

void expect_inside(const CropWindow2D& c, int64_t h, int64_t w) {
  EXPECT_GE(c.h, 1);
  EXPECT_GE(c.w, 1);
  EXPECT_GE(c.y, 0);
  EXPECT_GE(c.x, 0);
  EXPECT_LE(c.y + c.h, h);
  EXPECT_LE(c.x + c.w, w);
}

TEST(RandomCropWindow, SameStreamSameWindow) {
  RandomCropArgs a;
  for (uint32_t s = 0; s < 50; ++s) {
    Philox r1 = stream(s), r2 = stream(s);
    EXPECT_EQ(random_crop_window(375, 500, a, r1), random_crop_window(375, 500, a, r2));
  }
  Philox r1 = stream(0), r2 = stream(1);
  EXPECT_NE(random_crop_window(375, 500, a, r1), random_crop_window(375, 500, a, r2));
}

TEST(RandomCropWindow, AlwaysInsideTheImage) {
  RandomCropArgs a;
  const int64_t sizes[][2] = {{1, 1}, {1, 7}, {7, 1}, {2, 3}, {375, 500}, {500, 375}, {10, 1000},
                              {1000, 10}, {33, 34}};
  for (auto& s : sizes)
    for (uint32_t i = 0; i < 200; ++i) {
      Philox r = stream(i);
      expect_inside(random_crop_window(s[0], s[1], a, r), s[0], s[1]);
    }
}

TEST(RandomCropWindow, EmptyImageGivesEmptyWindow) {
  Philox r = stream(0);
  EXPECT_EQ(random_crop_window(0, 10, RandomCropArgs{}, r), CropWindow2D{});
}

TEST(RandomCropWindow, FixedAreaAndRatio) {
  RandomCropArgs a;
  a.area_min = a.area_max = 0.25f;
  a.aspect_min = a.aspect_max = 1.0f;
  std::vector<int> seen_y(51, 0);
  for (uint32_t i = 0; i < 2000; ++i) {
    Philox r = stream(i);
    CropWindow2D c = random_crop_window(100, 100, a, r);
    ASSERT_EQ(c.h, 50);
    ASSERT_EQ(c.w, 50);
    seen_y[c.y]++;
  }
  for (int y = 0; y <= 50; ++y) EXPECT_GT(seen_y[y], 10) << "position " << y << " never/rarely drawn";
}

TEST(RandomCropWindow, WholeImageWhenAreaIsOneAndRatioMatches) {
  RandomCropArgs a;
  a.area_min = a.area_max = 1.0f;
  a.aspect_min = a.aspect_max = 500.0f / 375.0f;
  Philox r = stream(3);
  EXPECT_EQ(random_crop_window(375, 500, a, r), (CropWindow2D{0, 0, 375, 500}));
}

TEST(RandomCropWindow, TooWideAndTooTallSkipTheAttempts) {
  RandomCropArgs a;  // 3/4 .. 4/3, area from 0.08
  // 10 x 1000: the widest allowed window of full height is int(10 * 4/3) = 13 wide, whose area
  // 130 is under 8% of 10000, so no attempt can succeed.
  Philox r = stream(0);
  CropWindow2D c = random_crop_window(10, 1000, a, r);
  EXPECT_EQ(c.h, 10);
  EXPECT_EQ(c.w, 13);
  r = stream(0);
  c = random_crop_window(1000, 10, a, r);
  EXPECT_EQ(c.h, 13);
  EXPECT_EQ(c.w, 10);
}

TEST(RandomCropWindow, FallbackClampsTheRatioAndTheArea) {
  RandomCropArgs a;
  a.num_attempts = 0;  // straight to the fallback
  Philox r = stream(0);
  CropWindow2D c = random_crop_window(100, 200, a, r);  // ratio 2 -> clamped to 4/3
  EXPECT_EQ(c.h, 100);
  EXPECT_EQ(c.w, 133);
  a.area_min = a.area_max = 0.25f;
  r = stream(0);
  c = random_crop_window(100, 100, a, r);  // ratio 1 kept, area 1 -> 0.25: half of each side
  EXPECT_EQ(c.h, 50);
  EXPECT_EQ(c.w, 50);
  // A window that cannot be found by chance: area exactly 1 with a ratio that the image does
  // not have falls back after the attempts.
  a = RandomCropArgs{};
  a.area_min = a.area_max = 1.0f;
  a.aspect_min = a.aspect_max = 1.0f;
  r = stream(0);
  c = random_crop_window(300, 400, a, r);  // ratio 4/3 clamped to 1, area 1: 300 x 300
  EXPECT_EQ(c.h, 300);
  EXPECT_EQ(c.w, 300);
  EXPECT_EQ(c.y, 0);
}

TEST(RandomCropWindow, Distributions) {
  // On a large square image every draw with area <= 3/4 fits, so accepted areas below 3/4 are
  // uniform and log(aspect) is symmetric about 0 for the reciprocal default range.
  RandomCropArgs a;
  const int n = 20000;
  int low = 0, high = 0;
  double log_ratio_sum = 0;
  int wide = 0, tall = 0;
  for (int i = 0; i < n; ++i) {
    Philox r = stream(static_cast<uint32_t>(i), 99);
    CropWindow2D c = random_crop_window(1000, 1000, a, r);
    double area = static_cast<double>(c.h * c.w) / 1e6;
    double ratio = static_cast<double>(c.w) / c.h;
    ASSERT_GE(area, 0.079);
    ASSERT_LE(area, 1.0);
    ASSERT_GE(ratio, 0.75 - 1e-6);
    ASSERT_LE(ratio, 4.0 / 3.0 + 1e-6);
    if (area >= 0.08 && area < 0.40) low++;
    else if (area >= 0.40 && area < 0.72) high++;
    log_ratio_sum += std::log(ratio);
    (ratio > 1.0 ? wide : tall) += ratio != 1.0;
  }
  EXPECT_NEAR(static_cast<double>(low) / high, 1.0, 0.06);
  EXPECT_NEAR(log_ratio_sum / n, 0.0, 0.01);
  EXPECT_NEAR(static_cast<double>(wide) / tall, 1.0, 0.06);
}

TEST(DctScaleFor, LargestScaleThatKeepsTheOutputResolution) {
  EXPECT_EQ(dct_scale_for(300, 300, 100, 100), 2);    // 150 >= 100, 75 < 100
  EXPECT_EQ(dct_scale_for(400, 400, 100, 100), 4);
  EXPECT_EQ(dct_scale_for(1792, 1800, 224, 224), 8);
  EXPECT_EQ(dct_scale_for(1791, 1800, 224, 224), 4);  // height decides
  EXPECT_EQ(dct_scale_for(199, 1000, 100, 100), 1);
  EXPECT_EQ(dct_scale_for(50, 50, 224, 224), 1);      // upscaling
}

}  // namespace
}  // namespace stoker
