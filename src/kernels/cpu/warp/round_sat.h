// Float to element conversion for the warp-family kernels' inner loops.
#pragma once
#include <limits>
#include <type_traits>

#include "core/convert.h"

namespace stoker {
namespace kernels {

// convert_sat<Out>(v) for float v, without its library calls on the hot path: small integer
// types clamp and then round half to even by the float magic-number addition (exact below 2^22).
template <typename Out>
inline Out round_sat(float v) {
  if constexpr (std::is_integral_v<Out> && !std::is_same_v<Out, bool> && sizeof(Out) <= 2) {
    constexpr float lo = static_cast<float>(std::numeric_limits<Out>::lowest());
    constexpr float hi = static_cast<float>(std::numeric_limits<Out>::max());
    if (!(v > lo)) return v != v ? Out(0) : std::numeric_limits<Out>::lowest();  // NaN -> 0
    if (v >= hi) return std::numeric_limits<Out>::max();
    float r = v + 12582912.0f;  // 1.5 * 2^23: the sum rounds to an integer, ties to even
    return static_cast<Out>(static_cast<int>(r - 12582912.0f));
  } else {
    return convert_sat<Out>(v);
  }
}

}  // namespace kernels
}  // namespace stoker
