// Kernel-level checks of the rank filters: erosion / dilation and the median against a direct
// per-pixel reference, for every border, anchors, iterations, window lengths on both sides of the
// direct / van Herk switch, and the 3x3 median network on every binary window.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/cpu/filter/morphology.h"

namespace stoker {
namespace kernels {
namespace {

// The source index for the reference, written out plainly (OpenCV's borderInterpolate).
int64_t ref_index(int64_t i, int64_t n, FilterBorder b) {
  if (i >= 0 && i < n) return i;
  if (b == FilterBorder::kConstant) return -1;
  if (b == FilterBorder::kReplicate) return i < 0 ? 0 : n - 1;
  if (n == 1) return 0;
  if (b == FilterBorder::kWrap) return ((i % n) + n) % n;
  const int64_t delta = b == FilterBorder::kReflect101 ? 1 : 0;
  do {
    if (i < 0) i = -i - 1 + delta;
    else i = n - 1 - (i - n) - delta;
  } while (i < 0 || i >= n);
  return i;
}

template <typename T>
std::vector<T> random_image(int64_t n, uint32_t seed, int levels) {
  std::mt19937 rng(seed);
  std::vector<T> v(static_cast<size_t>(n));
  for (auto& e : v) e = static_cast<T>(static_cast<int>(rng() % levels) - (std::is_signed_v<T> ? levels / 2 : 0));
  return v;
}

template <typename T>
std::vector<T> ref_morph(const std::vector<T>& in, int64_t H, int64_t W, int64_t C, bool dilate,
                         const FilterWindow& w, int64_t iterations, FilterBorder b) {
  std::vector<T> cur = in, out(in.size());
  for (int64_t it = 0; it < iterations; ++it) {
    for (int64_t y = 0; y < H; ++y)
      for (int64_t x = 0; x < W; ++x)
        for (int64_t c = 0; c < C; ++c) {
          bool any = false;
          T best{};
          for (int64_t i = 0; i < w.height; ++i)
            for (int64_t j = 0; j < w.width; ++j) {
              int64_t sy = ref_index(y - w.anchor_y + i, H, b), sx = ref_index(x - w.anchor_x + j, W, b);
              if (sy < 0 || sx < 0) continue;
              T v = cur[(sy * W + sx) * C + c];
              if (!any || (dilate ? v > best : v < best)) best = v;
              any = true;
            }
          out[(y * W + x) * C + c] = best;
        }
    cur = out;
  }
  return cur;
}

template <typename T>
std::vector<T> ref_median(const std::vector<T>& in, int64_t H, int64_t W, int64_t C, int64_t kw, int64_t kh) {
  std::vector<T> out(in.size()), buf;
  for (int64_t y = 0; y < H; ++y)
    for (int64_t x = 0; x < W; ++x)
      for (int64_t c = 0; c < C; ++c) {
        buf.clear();
        for (int64_t i = -kh / 2; i <= kh / 2; ++i)
          for (int64_t j = -kw / 2; j <= kw / 2; ++j) {
            int64_t sy = std::clamp<int64_t>(y + i, 0, H - 1), sx = std::clamp<int64_t>(x + j, 0, W - 1);
            buf.push_back(in[(sy * W + sx) * C + c]);
          }
        std::sort(buf.begin(), buf.end());
        out[(y * W + x) * C + c] = buf[buf.size() / 2];
      }
  return out;
}

template <typename T>
void check_morphology() {
  const FilterBorder borders[] = {FilterBorder::kConstant, FilterBorder::kReplicate, FilterBorder::kReflect,
                                  FilterBorder::kReflect101, FilterBorder::kWrap};
  struct Case {
    int64_t H, W, C, kw, kh, ax, ay, it;
  };
  const Case cases[] = {{9, 11, 3, 3, 3, 1, 1, 1},  {9, 11, 1, 5, 3, 0, 2, 2},   {7, 13, 2, 11, 9, 10, 3, 1},
                        {20, 17, 3, 1, 12, 0, 5, 3}, {4, 3, 1, 9, 9, 4, 4, 1},    {1, 1, 3, 3, 3, 1, 1, 2},
                        {6, 25, 4, 17, 1, 16, 0, 2}, {12, 12, 1, 30, 30, 7, 22, 1}};
  uint32_t seed = 1;
  for (const Case& k : cases)
    for (FilterBorder b : borders)
      for (bool dilate : {false, true}) {
        auto in = random_image<T>(k.H * k.W * k.C, seed++, 200);
        FilterWindow w{k.kw, k.kh, k.ax, k.ay};
        std::vector<T> out(in.size());
        morphology(ImageView<T>(out.data(), k.H, k.W, k.C), ImageView<const T>(in.data(), k.H, k.W, k.C),
                   dilate ? MorphOp::kDilate : MorphOp::kErode, w, k.it, b);
        EXPECT_EQ(out, ref_morph(in, k.H, k.W, k.C, dilate, w, k.it, b))
            << k.H << "x" << k.W << "x" << k.C << " mask " << k.kw << "x" << k.kh << " border "
            << static_cast<int>(b) << " dilate " << dilate;
      }
}

TEST(FilterMorphology, ErodeDilateMatchTheDirectReference) {
  check_morphology<uint8_t>();
  check_morphology<int16_t>();
  check_morphology<uint16_t>();
  check_morphology<float>();
}

TEST(FilterMorphology, ManyIterationsStopWhereTheImageStopsChanging) {
  auto in = random_image<uint8_t>(5 * 6, 3, 256);
  std::vector<uint8_t> out(in.size());
  morphology(ImageView<uint8_t>(out.data(), 5, 6, 1), ImageView<const uint8_t>(in.data(), 5, 6, 1),
             MorphOp::kErode, FilterWindow{}, int64_t{1} << 40, FilterBorder::kReflect);
  EXPECT_EQ(out, std::vector<uint8_t>(in.size(), *std::min_element(in.begin(), in.end())));
}

template <typename T>
void check_median(int levels) {
  struct Case {
    int64_t H, W, C, kw, kh;
  };
  const Case cases[] = {{9, 11, 3, 3, 3}, {9, 11, 1, 5, 5}, {7, 13, 4, 3, 7},   {20, 17, 3, 1, 9},
                        {2, 3, 1, 7, 7},  {1, 1, 3, 3, 3},  {1, 9, 2, 5, 3},    {12, 12, 3, 15, 11},
                        {8, 8, 1, 1, 1},  {5, 30, 3, 9, 1},  {10, 9, 2, 7, 7},   {300, 3, 3, 5, 5}};
  uint32_t seed = 100;
  for (const Case& k : cases) {
    auto in = random_image<T>(k.H * k.W * k.C, seed++, levels);
    std::vector<T> out(in.size());
    median_blur(ImageView<T>(out.data(), k.H, k.W, k.C), ImageView<const T>(in.data(), k.H, k.W, k.C), k.kw, k.kh);
    EXPECT_EQ(out, ref_median(in, k.H, k.W, k.C, k.kw, k.kh))
        << k.H << "x" << k.W << "x" << k.C << " window " << k.kw << "x" << k.kh;
  }
}

TEST(FilterMorphology, MedianMatchesTheSortedWindow) {
  check_median<uint8_t>(256);
  check_median<uint8_t>(3);  // many equal values
  check_median<int16_t>(2000);
  check_median<uint16_t>(60000);
  check_median<float>(1000);
}

// The 3x3 network is made of min and max only, so being right on every 0/1 window (the 0-1
// principle) makes it right on every window.
TEST(FilterMorphology, Median3x3NetworkIsRightOnEveryBinaryWindow) {
  for (int bits = 0; bits < 512; ++bits) {
    std::vector<uint8_t> in(9), out(9);
    for (int k = 0; k < 9; ++k) in[k] = (bits >> k) & 1;
    median_blur(ImageView<uint8_t>(out.data(), 3, 3, 1), ImageView<const uint8_t>(in.data(), 3, 3, 1), 3, 3);
    EXPECT_EQ(out[4], __builtin_popcount(bits) >= 5 ? 1 : 0) << bits;
  }
}

TEST(FilterMorphology, EmptyImagesAreLeftAlone) {
  std::vector<float> none;
  median_blur(ImageView<float>(none.data(), 0, 5, 3), ImageView<const float>(none.data(), 0, 5, 3), 3, 3);
  morphology(ImageView<float>(none.data(), 4, 0, 1), ImageView<const float>(none.data(), 4, 0, 1), MorphOp::kDilate,
             FilterWindow{}, 2, FilterBorder::kWrap);
  SUCCEED();
}

}  // namespace
}  // namespace kernels
}  // namespace stoker
