// The pixel loops of color_affine.h compiled for AVX2 (without FMA, so that results are the same
// bit for bit as the baseline's). color_affine.cc calls them when the CPU has AVX2.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#if defined(__SSE2__)
#include <immintrin.h>
#endif

#include "kernels/cpu/color/color_affine_isa.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define STOKER_COLOR_HAVE_AVX2 1
// After every #include: only the code below is compiled for AVX2 (see color_affine_isa.h).
#pragma GCC target("avx2")
#pragma GCC optimize("no-trapping-math")
#define STOKER_COLOR_AVX2 1
#endif

#define STOKER_COLOR_ISA color_avx2
#include "kernels/cpu/color/color_affine_impl.inc"

namespace stoker {
namespace kernels {
bool color_use_avx2() {
#ifdef STOKER_COLOR_HAVE_AVX2
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
#else
  return false;
#endif
}
}  // namespace kernels
}  // namespace stoker
