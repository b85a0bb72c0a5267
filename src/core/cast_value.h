// cast_value<Out>(In): one element of fn.cast / fn.cast_like, as DALI 2.4 converts it. Floats
// going to integers (and to bool) round half away from zero (2.5 -> 3, -0.5 -> -1), DALI's
// rule, where core/convert.h's convert_sat (used inside other operators) rounds ties to even.
// NaN becomes 0 for every integer type: DALI gives 0 for 8/16-bit outputs but INT_MIN for
// int32/int64 (an x86 conversion artefact). src/kernels/cuda/cast_gpu.cu does the same.
#pragma once
#include <cmath>
#include <limits>
#include <type_traits>

#include "core/convert.h"

namespace stoker {

template <typename Out, typename In>
inline Out cast_value(In v) {
  constexpr bool kFloatIn = std::is_floating_point_v<In> || std::is_same_v<In, float16>;
  constexpr bool kIntOut = std::is_integral_v<Out>;  // bool too
  if constexpr (kFloatIn && kIntOut && !std::is_same_v<Out, bool> && sizeof(Out) <= 2 &&
                !std::is_same_v<In, double>) {
    // The same rounding in float, without a library call (images cast back to uint8 after
    // float arithmetic take this path): below 2^24 a float's fraction is exact.
    const float f = static_cast<float>(v);
    constexpr float lo = static_cast<float>(std::numeric_limits<Out>::lowest());
    constexpr float hi = static_cast<float>(std::numeric_limits<Out>::max());
    if (!(f > lo)) return f != f ? Out(0) : std::numeric_limits<Out>::lowest();
    if (f >= hi) return std::numeric_limits<Out>::max();
    const int t = static_cast<int>(f);  // toward zero
    const float r = f - static_cast<float>(t);
    return static_cast<Out>(t + (r >= 0.5f) - (r <= -0.5f));
  } else if constexpr (kFloatIn && kIntOut) {
    const double d = static_cast<double>(static_cast<float>(v));  // exact for float and float16
    const double w = std::is_same_v<In, double> ? static_cast<double>(v) : d;
    if constexpr (std::is_same_v<Out, bool>) {
      // DALI rounds before testing for zero (0.4 -> false, 0.5 -> true); NaN is true (not 0).
      return w != w || std::round(w) != 0.0;
    } else {
      return convert_sat<Out>(std::round(w));  // an integral double (or NaN, which gives 0)
    }
  } else {
    return convert_sat<Out>(v);
  }
}

}  // namespace stoker
