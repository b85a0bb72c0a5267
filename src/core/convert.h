// Element conversions: float to integer rounds half to even and saturates (like OpenCV's
// saturate_cast); integer to integer saturates; anything to float16 rounds to nearest.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/float16.h"

namespace stoker {

// Round half to even without a library call (std::nearbyint is one without SSE4.1): adding and
// subtracting 1.5 * 2^(mantissa bits) leaves the nearest integer under the default rounding mode.
inline float round_half_even(float x) {
  if (!(std::fabs(x) < 4194304.0f)) return std::nearbyint(x);  // |x| >= 2^22 (or NaN): rare
  float t = x + 12582912.0f;  // not folded: without -ffast-math the compiler keeps IEEE rounding
  return t - 12582912.0f;
}
inline double round_half_even(double x) {
  if (!(std::fabs(x) < 2251799813685248.0)) return std::nearbyint(x);  // |x| >= 2^51
  double t = x + 6755399441055744.0;
  return t - 6755399441055744.0;
}

template <typename Out, typename In>
inline Out convert_sat(In v) {
  if constexpr (std::is_same_v<Out, In>) {
    return v;
  } else if constexpr (std::is_same_v<Out, bool>) {
    return static_cast<float>(v) != 0.0f;
  } else if constexpr (std::is_same_v<Out, float16>) {
    return float16(static_cast<float>(v));
  } else if constexpr (std::is_same_v<In, float16>) {
    return convert_sat<Out>(static_cast<float>(v));
  } else if constexpr (std::is_floating_point_v<Out>) {
    return static_cast<Out>(v);
  } else if constexpr (std::is_floating_point_v<In>) {
    if (v != v) return Out(0);  // NaN
    double r;
    if constexpr (sizeof(In) == 4 && sizeof(Out) <= 2) r = round_half_even(static_cast<float>(v));
    else r = round_half_even(static_cast<double>(v));
    if (r <= static_cast<double>(std::numeric_limits<Out>::lowest())) return std::numeric_limits<Out>::lowest();
    if (r >= static_cast<double>(std::numeric_limits<Out>::max())) return std::numeric_limits<Out>::max();
    return static_cast<Out>(r);
  } else if constexpr (std::is_same_v<In, bool>) {
    return static_cast<Out>(v ? 1 : 0);
  } else {
    // integer -> integer
    using Wide = std::conditional_t<std::is_signed_v<In>, int64_t, uint64_t>;
    Wide w = static_cast<Wide>(v);
    if constexpr (std::is_signed_v<In> && !std::is_signed_v<Out>) {
      if (w < 0) return 0;
      if (static_cast<uint64_t>(w) > static_cast<uint64_t>(std::numeric_limits<Out>::max())) return std::numeric_limits<Out>::max();
      return static_cast<Out>(w);
    } else if constexpr (!std::is_signed_v<In> && std::is_signed_v<Out>) {
      if (w > static_cast<uint64_t>(std::numeric_limits<Out>::max())) return std::numeric_limits<Out>::max();
      return static_cast<Out>(w);
    } else {
      if (w < static_cast<Wide>(std::numeric_limits<Out>::lowest())) return std::numeric_limits<Out>::lowest();
      if (w > static_cast<Wide>(std::numeric_limits<Out>::max())) return std::numeric_limits<Out>::max();
      return static_cast<Out>(w);
    }
  }
}

}  // namespace stoker
