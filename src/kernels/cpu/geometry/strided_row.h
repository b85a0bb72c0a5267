// The inner loop of crop_mirror_normalize's common case: one output row of one channel, read
// from interleaved uint8 pixels (every `step`-th byte, backwards when step < 0) and written as
// float or float16 after out = float(in) * mul + add. AVX2 + F16C where the CPU has them (chosen
// at run time, so the build needs no -march flag), plain C++ otherwise; both give the same bits.
#pragma once
#include <cstdint>

#include "core/float16.h"

namespace stoker {
namespace kernels {

// step: +-1, +-3 or +-4 take the SIMD path; any other step is handled by the scalar loop.
// [lo, hi) is memory that may be read (the whole input buffer): SIMD loads read whole 16-byte
// blocks around the elements they need and stay inside it.
void strided_row_u8(float* dst, const uint8_t* src, int64_t n, int64_t step, float mul, float add,
                    const uint8_t* lo, const uint8_t* hi);
void strided_row_u8(float16* dst, const uint8_t* src, int64_t n, int64_t step, float mul,
                    float add, const uint8_t* lo, const uint8_t* hi);

// The three channel rows of interleaved RGB pixels at once: dst[c][i] = float(src[i * step + c])
// * mul[c] + add[c], step = +-3 (src points at the first pixel's first channel). Reads only the
// pixels' own bytes, so it needs no bounds.
void strided_rows3_u8(float* const dst[3], const uint8_t* src, int64_t n, int64_t step,
                      const float mul[3], const float add[3]);
void strided_rows3_u8(float16* const dst[3], const uint8_t* src, int64_t n, int64_t step,
                      const float mul[3], const float add[3]);

// A row of `npix` interleaved pixels of C channels kept interleaved (HWC output):
// dst[i * C + c] = float(src[i * sx + c]) * mul[c] + add[c], with sx = C, or -C when `mirror`
// (src points at the first output pixel). SIMD for C = 3 and 4.
void interleaved_row_u8(float* dst, const uint8_t* src, int64_t npix, int C, bool mirror,
                        const float* mul, const float* add);
void interleaved_row_u8(float16* dst, const uint8_t* src, int64_t npix, int C, bool mirror,
                        const float* mul, const float* add);

bool strided_row_simd_available();

}  // namespace kernels
}  // namespace stoker
