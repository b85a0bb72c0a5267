// Internal to kernels/cpu/color: the pixel loops of color_affine.h, compiled once per instruction
// set (color_affine.cc for the x86-64 baseline, color_affine_avx2.cc for AVX2) and picked at run
// time. Each set lives in its own namespace and defines plain overloads, so no inline function or
// template instance compiled for AVX2 can be merged by the linker into code run on a CPU without.
#pragma once
#include <cstdint>

#include "core/float16.h"
#include "core/shape.h"
#include "kernels/cpu/color/color_affine.h"

// X(Out, In) for every supported pair of element types.
#define STOKER_COLOR_TYPES_IN(X, In) \
  X(uint8_t, In) X(uint16_t, In) X(int16_t, In) X(int32_t, In) X(float16, In) X(float, In)
#define STOKER_COLOR_TYPE_PAIRS(X)                                                         \
  STOKER_COLOR_TYPES_IN(X, uint8_t) STOKER_COLOR_TYPES_IN(X, uint16_t)                    \
  STOKER_COLOR_TYPES_IN(X, int16_t) STOKER_COLOR_TYPES_IN(X, int32_t)                     \
  STOKER_COLOR_TYPES_IN(X, float16) STOKER_COLOR_TYPES_IN(X, float)

#define STOKER_COLOR_DECLARE(Out, In)                                                       \
  void affine(const ImageView<Out>& out, const ImageView<const In>& in, const ColorAffine& t); \
  void multiply_add(Out* out, const In* in, int64_t n, float mul, float add);

namespace stoker {
namespace kernels {
namespace color_base { STOKER_COLOR_TYPE_PAIRS(STOKER_COLOR_DECLARE) }
namespace color_avx2 { STOKER_COLOR_TYPE_PAIRS(STOKER_COLOR_DECLARE) }
bool color_use_avx2();  // the CPU has AVX2 and color_avx2 was compiled for it
}  // namespace kernels
}  // namespace stoker
