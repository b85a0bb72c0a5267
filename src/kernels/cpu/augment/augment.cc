#include "kernels/cpu/augment/augment.h"

#include <cmath>
#include <limits>
#include <type_traits>

#include "kernels/cpu/augment/poisson.h"

namespace stoker {
namespace kernels {

namespace {

// The lowest and highest values of T as doubles; for 64-bit integers the highest is rounded up
// to 2^63 / 2^64, so comparisons use >= against it.
template <typename T>
constexpr double lowest_d() { return static_cast<double>(std::numeric_limits<T>::lowest()); }
template <typename T>
constexpr double highest_d() { return static_cast<double>(std::numeric_limits<T>::max()); }

template <typename T>
T saturate_integral(double r) {
  if (r != r) return T(0);
  if (r <= lowest_d<T>()) return std::numeric_limits<T>::lowest();
  if (r >= highest_d<T>()) return std::numeric_limits<T>::max();
  return static_cast<T>(r);
}

// The arithmetic type DALI's gaussian noise uses for T.
template <typename T>
using NoiseFloat = std::conditional_t<((std::is_integral_v<T> && sizeof(T) >= 4) || sizeof(T) > 4),
                                      double, float>;

}  // namespace

template <typename T>
T round_away_sat(double v) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v);
  } else {
    return saturate_integral<T>(std::round(v));
  }
}

template <typename T>
double salt_pepper_value(double v) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<double>(static_cast<T>(v));
  } else {
    return static_cast<double>(saturate_integral<T>(std::trunc(v)));
  }
}

template <typename T>
void gaussian_noise(T* out, const T* in, int64_t n, double mean, double stddev, Philox& rng) {
  using F = NoiseFloat<T>;
  const F m = static_cast<F>(mean), s = static_cast<F>(stddev);
  for (int64_t k = 0; k < n; ++k) {
    F noise = m + s * static_cast<F>(rng.normal());
    F v = static_cast<F>(in[k]) + noise;
    out[k] = round_away_sat<T>(static_cast<double>(v));
  }
}

template <typename T>
void salt_and_pepper(T* out, const T* in, int64_t n, int64_t channels, bool channel_first,
                     const SaltAndPepper& p, Philox& rng) {
  const float salt_prob = p.prob * p.salt_vs_pepper;
  // Saturating: the uint64/int64 maxima are not doubles (2^64 - 1 rounds up to 2^64), and a
  // plain cast of the rounded value overflows; the GPU's conversion saturates the same way.
  const T salt = round_away_sat<T>(p.salt), pepper = round_away_sat<T>(p.pepper);
  if (channels < 1) channels = 1;
  // What a draw makes of a value: the value itself, salt or pepper.
  auto pick = [&](float u, T v) { return u < p.prob ? (u < salt_prob ? salt : pepper) : v; };
  if (channels == 1) {
    for (int64_t k = 0; k < n; ++k) out[k] = pick(rng.uniform(), in[k]);
  } else if (!channel_first) {
    for (int64_t k = 0; k < n; k += channels) {
      float u = rng.uniform();
      for (int64_t c = 0; c < channels; ++c) out[k + c] = pick(u, in[k + c]);
    }
  } else {
    const int64_t plane = n / channels;
    for (int64_t k = 0; k < plane; ++k) {
      float u = rng.uniform();
      for (int64_t c = 0; c < channels; ++c) out[c * plane + k] = pick(u, in[c * plane + k]);
    }
  }
}

template <typename T>
void shot_noise(T* out, const T* in, int64_t n, double factor, uint64_t key, uint64_t iteration,
                uint32_t sample) {
  if (factor == 0) {
    for (int64_t k = 0; k < n; ++k) out[k] = in[k];
    return;
  }
  const double inv = 1.0 / factor;
  for (int64_t k = 0; k < n; ++k) {
    const double lambda = std::fmax(0.0, static_cast<double>(in[k]) * inv);
    Philox rng = shot_stream(key, iteration, sample, static_cast<uint64_t>(k));
    out[k] = round_away_sat<T>(poisson(lambda, rng) * factor);
  }
}

template <typename T>
void grid_mask(const ImageView<T>& out, const ImageView<const T>& in, const GridMask& g) {
  // DALI's arithmetic, step by step in float, so that pixels on a square's edge fall the same way.
  const float tile = static_cast<float>(g.tile);
  const float ca = static_cast<float>(std::cos(static_cast<double>(g.angle))) / tile;
  const float sa = static_cast<float>(std::sin(static_cast<double>(g.angle))) / tile;
  const float sx = g.shift_x / tile, sy = g.shift_y / tile;
  const int64_t c = in.channels;
  for (int64_t y = 0; y < in.height; ++y) {
    const float fy_f = static_cast<float>(y);
    const float fxy = -sx + fy_f * -sa;
    const float fyy = -sy + fy_f * ca;
    const T* src = in.row(y);
    T* dst = out.row(y);
    for (int64_t x = 0; x < in.width; ++x) {
      const float fx_f = static_cast<float>(x);
      const float fx = fxy + fx_f * ca;
      const float fy = fyy + fx_f * sa;
      const bool keep = (fx - std::floor(fx) >= g.ratio) || (fy - std::floor(fy) >= g.ratio);
      const T* s = src + x * in.pixel_stride;
      T* d = dst + x * out.pixel_stride;
      for (int64_t k = 0; k < c; ++k) d[k] = keep ? s[k] : T(0);
    }
  }
}

template <typename T>
void jitter(const ImageView<T>& out, const ImageView<const T>& in, int64_t degree, double fill,
            Philox& rng) {
  const int64_t h = in.height, w = in.width, c = in.channels;
  const T fill_t = round_away_sat<T>(fill);
  if (degree <= 1) {
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x)
        for (int64_t k = 0; k < c; ++k) out.at(y, x)[k] = in.at(y, x)[k];
    return;
  }
  const int64_t half = degree / 2;
  const uint32_t n = static_cast<uint32_t>(degree);
  for (int64_t y = 0; y < h; ++y) {
    for (int64_t x = 0; x < w; ++x) {
      const int64_t sx = x + static_cast<int64_t>(rng.below(n)) - half;
      const int64_t sy = y + static_cast<int64_t>(rng.below(n)) - half;
      T* d = out.at(y, x);
      if (sx < 0 || sx >= w || sy < 0 || sy >= h) {
        for (int64_t k = 0; k < c; ++k) d[k] = fill_t;
      } else {
        const T* s = in.at(sy, sx);
        for (int64_t k = 0; k < c; ++k) d[k] = s[k];
      }
    }
  }
}

#define STOKER_AUGMENT_INSTANTIATE(T)                                                          \
  template T round_away_sat<T>(double);                                                        \
  template double salt_pepper_value<T>(double);                                                \
  template void gaussian_noise<T>(T*, const T*, int64_t, double, double, Philox&);            \
  template void salt_and_pepper<T>(T*, const T*, int64_t, int64_t, bool, const SaltAndPepper&, \
                                   Philox&);                                                   \
  template void shot_noise<T>(T*, const T*, int64_t, double, uint64_t, uint64_t, uint32_t);    \
  template void grid_mask<T>(const ImageView<T>&, const ImageView<const T>&, const GridMask&); \
  template void jitter<T>(const ImageView<T>&, const ImageView<const T>&, int64_t, double, Philox&);

STOKER_AUGMENT_INSTANTIATE(uint8_t)
STOKER_AUGMENT_INSTANTIATE(int8_t)
STOKER_AUGMENT_INSTANTIATE(uint16_t)
STOKER_AUGMENT_INSTANTIATE(int16_t)
STOKER_AUGMENT_INSTANTIATE(uint32_t)
STOKER_AUGMENT_INSTANTIATE(int32_t)
STOKER_AUGMENT_INSTANTIATE(uint64_t)
STOKER_AUGMENT_INSTANTIATE(int64_t)
STOKER_AUGMENT_INSTANTIATE(float)
STOKER_AUGMENT_INSTANTIATE(double)
#undef STOKER_AUGMENT_INSTANTIATE

}  // namespace kernels
}  // namespace stoker
