// Element conversions: float to integer rounds half to even and saturates (like OpenCV's
// saturate_cast); integer to integer saturates; anything to float16 rounds to nearest.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/float16.h"

namespace stoker {

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
    if (std::isnan(v)) return Out(0);
    double r = std::nearbyint(static_cast<double>(v));  // default rounding: half to even
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
