#include "kernels/cpu/color/histogram.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

namespace stoker {
namespace kernels {
namespace {

constexpr int kLevels = 256;

// OpenCV's saturate_cast<uchar>(float): round half to even, then clamp.
inline uint8_t round_u8(float v) {
  float r = std::nearbyint(v);
  return static_cast<uint8_t>(r <= 0.0f ? 0.0f : r >= 255.0f ? 255.0f : r);
}
inline uint8_t round_u8(double v) {
  double r = std::nearbyint(v);
  return static_cast<uint8_t>(r <= 0.0 ? 0.0 : r >= 255.0 ? 255.0 : r);
}

// OpenCV's borderInterpolate for BORDER_REFLECT_101 ("gfedcb|abcdefgh|gfedcba").
inline int64_t reflect101(int64_t p, int64_t len) {
  if (len == 1) return 0;
  while (p < 0 || p >= len) p = p < 0 ? -p : 2 * len - 2 - p;
  return p;
}

// CLAHE of one plane: pixel (y, x) at (y * w + x) * stride.
void clahe_plane(uint8_t* out, int64_t out_stride, const uint8_t* in, int64_t in_stride,
                 int64_t h, int64_t w, int64_t tiles_x, int64_t tiles_y, double clip_limit) {
  if (h == 0 || w == 0) return;
  // The histograms see the image extended to a multiple of the grid. As in OpenCV, once either
  // side needs it both are extended, a side that already fits by a whole row (column) of tiles.
  const bool fits = w % tiles_x == 0 && h % tiles_y == 0;
  const int64_t ew = fits ? w : w + tiles_x - w % tiles_x;
  const int64_t eh = fits ? h : h + tiles_y - h % tiles_y;
  const int64_t tw = ew / tiles_x, th = eh / tiles_y, area = tw * th;
  int64_t limit = 0;
  if (clip_limit > 0.0) limit = std::max<int64_t>(static_cast<int64_t>(clip_limit * area / kLevels), 1);
  const float lut_scale = static_cast<float>(kLevels - 1) / static_cast<float>(area);

  std::vector<int64_t> col(ew), row(eh);
  for (int64_t x = 0; x < ew; ++x) col[x] = reflect101(x, w);
  for (int64_t y = 0; y < eh; ++y) row[y] = reflect101(y, h);

  std::vector<uint8_t> luts(static_cast<size_t>(tiles_x * tiles_y * kLevels));
  std::array<int64_t, kLevels> hist;
  for (int64_t ty = 0; ty < tiles_y; ++ty) {
    for (int64_t tx = 0; tx < tiles_x; ++tx) {
      hist.fill(0);
      for (int64_t y = ty * th; y < (ty + 1) * th; ++y) {
        const uint8_t* r = in + row[y] * w * in_stride;
        for (int64_t x = tx * tw; x < (tx + 1) * tw; ++x) ++hist[r[col[x] * in_stride]];
      }
      if (limit > 0) {
        int64_t clipped = 0;
        for (int64_t& c : hist)
          if (c > limit) { clipped += c - limit; c = limit; }
        const int64_t batch = clipped / kLevels;
        int64_t residual = clipped - batch * kLevels;
        for (int64_t& c : hist) c += batch;
        if (residual != 0) {
          const int64_t step = std::max<int64_t>(kLevels / residual, 1);
          for (int64_t i = 0; i < kLevels && residual > 0; i += step, --residual) ++hist[i];
        }
      }
      uint8_t* lut = &luts[static_cast<size_t>((ty * tiles_x + tx) * kLevels)];
      int64_t sum = 0;
      for (int i = 0; i < kLevels; ++i) {
        sum += hist[i];
        lut[i] = round_u8(static_cast<float>(sum) * lut_scale);
      }
    }
  }

  // Bilinear blend of the four nearest tiles' tables, in float32 as OpenCV does it.
  const float inv_tw = 1.0f / static_cast<float>(tw), inv_th = 1.0f / static_cast<float>(th);
  std::vector<int64_t> x1(w), x2(w);
  std::vector<float> xa(w), xa1(w);
  for (int64_t x = 0; x < w; ++x) {
    float txf = static_cast<float>(x) * inv_tw - 0.5f;
    int64_t t1 = static_cast<int64_t>(std::floor(txf));
    xa[x] = txf - static_cast<float>(t1);
    xa1[x] = 1.0f - xa[x];
    x1[x] = std::max<int64_t>(t1, 0) * kLevels;
    x2[x] = std::min<int64_t>(t1 + 1, tiles_x - 1) * kLevels;
  }
  for (int64_t y = 0; y < h; ++y) {
    float tyf = static_cast<float>(y) * inv_th - 0.5f;
    int64_t t1 = static_cast<int64_t>(std::floor(tyf));
    const float ya = tyf - static_cast<float>(t1), ya1 = 1.0f - ya;
    const uint8_t* lut1 = &luts[static_cast<size_t>(std::max<int64_t>(t1, 0) * tiles_x * kLevels)];
    const uint8_t* lut2 =
        &luts[static_cast<size_t>(std::min<int64_t>(t1 + 1, tiles_y - 1) * tiles_x * kLevels)];
    const uint8_t* src = in + y * w * in_stride;
    uint8_t* dst = out + y * w * out_stride;
    for (int64_t x = 0; x < w; ++x) {
      const int v = src[x * in_stride];
      float top = static_cast<float>(lut1[x1[x] + v]) * xa1[x] + static_cast<float>(lut1[x2[x] + v]) * xa[x];
      float bottom = static_cast<float>(lut2[x1[x] + v]) * xa1[x] + static_cast<float>(lut2[x2[x] + v]) * xa[x];
      dst[x * out_stride] = round_u8(top * ya1 + bottom * ya);
    }
  }
}

// CIE Lab (D65, sRGB primaries and gamma) on OpenCV's 8-bit scale: L * 255 / 100, a + 128,
// b + 128, with OpenCV's constants and thresholds.
constexpr double kXn = 0.950456, kZn = 1.088754;
constexpr double kRgb2Xyz[9] = {0.412453, 0.357580, 0.180423, 0.212671, 0.715160,
                                0.072169, 0.019334, 0.119193, 0.950227};
constexpr double kXyz2Rgb[9] = {3.240479, -1.53715, -0.498535, -0.969256, 1.875991,
                                0.041556, 0.055648, -0.204043, 1.057311};

inline double lab_f(double t) { return t > 0.008856 ? std::cbrt(t) : 7.787 * t + 16.0 / 116.0; }
inline double srgb_gamma(double c) {
  return c <= 0.0031308 ? 12.92 * c : 1.055 * std::pow(c, 1.0 / 2.4) - 0.055;
}

void clahe_luma(const ImageView<uint8_t>& out, const ImageView<const uint8_t>& in, const ClaheParams& p) {
  const int64_t n = in.height * in.width;
  std::array<double, kLevels> linear;
  for (int i = 0; i < kLevels; ++i) {
    double c = i / 255.0;
    linear[i] = c <= 0.04045 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4);
  }
  std::vector<uint8_t> l(n), l_eq(n), a(n), b(n);
  for (int64_t k = 0; k < n; ++k) {
    const uint8_t* px = in.data + k * 3;
    double r = linear[px[0]], g = linear[px[1]], bl = linear[px[2]];
    double x = (kRgb2Xyz[0] * r + kRgb2Xyz[1] * g + kRgb2Xyz[2] * bl) / kXn;
    double y = kRgb2Xyz[3] * r + kRgb2Xyz[4] * g + kRgb2Xyz[5] * bl;
    double z = (kRgb2Xyz[6] * r + kRgb2Xyz[7] * g + kRgb2Xyz[8] * bl) / kZn;
    double fx = lab_f(x), fy = lab_f(y), fz = lab_f(z);
    // L * 255 / 100 = (116 fy - 16) * 2.55, with OpenCV's integer-rounded 116 * 2.55 (296): its
    // 8-bit L is ~0.07% steeper than the exact one, and this rounds like it 19 times in 20.
    l[k] = round_u8(296.0 * fy - 40.8);
    a[k] = round_u8(500.0 * (fx - fy) + 128.0);
    b[k] = round_u8(200.0 * (fy - fz) + 128.0);
  }
  clahe_plane(l_eq.data(), 1, l.data(), 1, in.height, in.width, p.tiles_x, p.tiles_y, p.clip_limit);
  for (int64_t k = 0; k < n; ++k) {
    double lv = l_eq[k] * 100.0 / 255.0, av = a[k] - 128.0, bv = b[k] - 128.0;
    double y, fy;
    if (lv <= 0.008856 * 903.3) {
      y = lv / 903.3;
      fy = 7.787 * y + 16.0 / 116.0;
    } else {
      fy = (lv + 16.0) / 116.0;
      y = fy * fy * fy;
    }
    double f[2] = {fy + av / 500.0, fy - bv / 200.0};
    for (double& v : f) v = v <= 7.787 * 0.008856 + 16.0 / 116.0 ? (v - 16.0 / 116.0) / 7.787 : v * v * v;
    double x = f[0] * kXn, z = f[1] * kZn;
    uint8_t* px = out.data + k * 3;
    for (int c = 0; c < 3; ++c) {
      double v = kXyz2Rgb[3 * c] * x + kXyz2Rgb[3 * c + 1] * y + kXyz2Rgb[3 * c + 2] * z;
      v = std::min(std::max(v, 0.0), 1.0);
      px[c] = round_u8(srgb_gamma(v) * 255.0);
    }
  }
}

}  // namespace

void equalize_hist(uint8_t* out, const uint8_t* in, int64_t pixels, int64_t channels,
                   int64_t channel_stride, int64_t pixel_stride) {
  if (pixels == 0) return;
  for (int64_t c = 0; c < channels; ++c) {
    const uint8_t* src = in + c * channel_stride;
    uint8_t* dst = out + c * channel_stride;
    std::array<int64_t, kLevels> hist{};
    for (int64_t p = 0; p < pixels; ++p) ++hist[src[p * pixel_stride]];
    int first = 0;
    while (hist[first] == 0) ++first;
    std::array<uint8_t, kLevels> lut{};
    if (hist[first] == pixels) {
      // One level only: OpenCV leaves it as it is.
      for (int64_t p = 0; p < pixels; ++p) dst[p * pixel_stride] = static_cast<uint8_t>(first);
      continue;
    }
    const float scale = 255.0f / static_cast<float>(pixels - hist[first]);
    int64_t sum = 0;
    for (int i = first + 1; i < kLevels; ++i) {
      sum += hist[i];
      lut[i] = round_u8(static_cast<float>(sum) * scale);
    }
    for (int64_t p = 0; p < pixels; ++p) dst[p * pixel_stride] = lut[src[p * pixel_stride]];
  }
}

void clahe(const ImageView<uint8_t>& out, const ImageView<const uint8_t>& in, const ClaheParams& p) {
  if (in.height == 0 || in.width == 0) return;
  if (in.channels == 3 && p.luma_only) {
    clahe_luma(out, in, p);
    return;
  }
  for (int64_t c = 0; c < in.channels; ++c)
    clahe_plane(out.data + c, in.channels, in.data + c, in.channels, in.height, in.width,
                p.tiles_x, p.tiles_y, p.clip_limit);
}

}  // namespace kernels
}  // namespace stoker
