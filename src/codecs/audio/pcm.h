// PCM value conversions between integer types and float in -1..1, as DALI 2.4 does them for
// audio (checked against decoders.audio and audio_resample on the CPU):
//  - signed integers to float: v / max (so the type's minimum gives slightly below -1);
//  - unsigned integers to float: v * 2 / max - 1 (0 -> -1, max -> 1);
//  - float to signed integers: round(v * max), half to even, saturated to the type's range;
//  - float to unsigned integers: round((v + 1) / 2 * max), saturated.
// The products are computed in double, which is what makes int32 match DALI bit for bit.
#pragma once
#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/convert.h"

namespace stoker::codecs::audio {

template <typename T>
inline float pcm_to_float(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<float>(v);
  } else if constexpr (std::is_signed_v<T>) {
    return static_cast<float>(static_cast<double>(v) / std::numeric_limits<T>::max());
  } else {
    return static_cast<float>(static_cast<double>(v) * 2.0 / std::numeric_limits<T>::max() - 1.0);
  }
}

template <typename T>
inline T pcm_from_float(float v) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v);
  } else if constexpr (std::is_signed_v<T>) {
    return convert_sat<T>(static_cast<double>(v) * std::numeric_limits<T>::max());
  } else {
    return convert_sat<T>((static_cast<double>(v) + 1.0) * 0.5 * std::numeric_limits<T>::max());
  }
}

// The mean of `channels` interleaved channels, frame by frame, in float with weights
// 1 / channels (DALI's Downmix), converted to T.
template <typename T>
inline void downmix(T* out, const float* in, int64_t frames, int channels) {
  const float w = 1.0f / static_cast<float>(channels);
  for (int64_t f = 0; f < frames; ++f) {
    const float* x = in + f * channels;
    float sum = x[0] * w;
    for (int c = 1; c < channels; ++c) sum += x[c] * w;
    out[f] = pcm_from_float<T>(sum);
  }
}

}  // namespace stoker::codecs::audio
