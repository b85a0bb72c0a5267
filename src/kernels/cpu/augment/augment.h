// Pixel arithmetic of the augmentations in ops/augment: noise (gaussian, salt and pepper, shot),
// grid_mask and jitter. Random draws come from the caller's Philox stream (one per sample), in
// a fixed order over the sample, so the result depends on the stream alone, never on threads.
//
// Element types: uint8, int8, uint16, int16, uint32, int32, uint64, int64, float, double
// (DALI's list for the noise operators, plus double); explicit instantiations in augment.cc.
#pragma once
#include <cstdint>

#include "core/random.h"
#include "core/shape.h"

namespace stoker {
namespace kernels {

// float -> T as DALI's ConvertSat does it on the CPU: integers round half away from zero and
// saturate (NaN -> 0); floating types take the value as it is.
template <typename T>
T round_away_sat(double v);

// out = in + N(mean, stddev), in DALI's precision: float for types of up to 2 bytes and float32,
// double for 4- and 8-byte integers and for double; then rounded and saturated to T.
template <typename T>
void gaussian_noise(T* out, const T* in, int64_t n, double mean, double stddev, Philox& rng);

// Salt and pepper: each draw u (uniform in [0, 1)) corrupts its values when u < prob; they take
// `salt` when u < prob * salt_vs_pepper, else `pepper`. The n values are `channels` channels,
// interleaved (channel-last: one draw per pixel for its `channels` consecutive values) or planar
// (channel-first: one draw per position, applied to each of the `channels` planes). channels == 1
// draws once per value (per_channel, or data without channels).
struct SaltAndPepper {
  float prob = 0.05f, salt_vs_pepper = 0.5f;
  double salt = 0, pepper = 0;  // already converted to the element type (see salt_pepper_value)
};
template <typename T>
void salt_and_pepper(T* out, const T* in, int64_t n, int64_t channels, bool channel_first,
                     const SaltAndPepper& p, Philox& rng);

// A salt or pepper value as the element type takes it: truncated toward zero (as DALI's cast
// does) and saturated (where DALI wraps around).
template <typename T>
double salt_pepper_value(double v);

// Shot noise: out = Poisson(max(0, in / factor)) * factor, rounded and saturated; factor == 0
// leaves the input as it is. Element k draws from its own stream (poisson.h: shot_stream of the
// sample's key, iteration and sample number), so that the GPU twin draws the same.
template <typename T>
void shot_noise(T* out, const T* in, int64_t n, double factor, uint64_t key, uint64_t iteration,
                uint32_t sample);

// Grid mask (DALI's arithmetic, in float): pixel (x, y) is kept unless both fractional parts of
// ((x cos a + ... ) / tile) fall below `ratio`:
//   fx = (x cos a - y sin a - shift_x) / tile,  fy = (x sin a + y cos a - shift_y) / tile.
struct GridMask {
  int64_t tile = 100;
  float ratio = 0.5f, angle = 0.0f, shift_x = 0.0f, shift_y = 0.0f;
};
template <typename T>
void grid_mask(const ImageView<T>& out, const ImageView<const T>& in, const GridMask& g);

// Jitter: output pixel (x, y) copies input pixel (x + dx, y + dy), with dx and dy drawn
// uniformly from {-(n/2), ..., n - 1 - n/2} (n = `degree`, n/2 rounded down; DALI's range),
// dx first, then dy, pixel by pixel in row-major order. A source pixel outside the image gives
// `fill` in every channel. degree 0 or 1 copies the image.
template <typename T>
void jitter(const ImageView<T>& out, const ImageView<const T>& in, int64_t degree, double fill,
            Philox& rng);

}  // namespace kernels
}  // namespace stoker
