#include "kernels/cpu/geometry/strided_row.h"

#include <type_traits>

#if defined(__x86_64__)
#include <immintrin.h>
#define STOKER_STRIDED_ROW_X86 1
#endif

namespace stoker {
namespace kernels {
namespace {

// Scalar twin of the SIMD blocks. Separate multiply and add (never fused: this file is built
// without FMA) so that the result is float32 math exactly as NumPy does it.
template <typename Out>
void scalar_row(Out* dst, const uint8_t* src, int64_t n, int64_t step, float mul, float add) {
  for (int64_t i = 0; i < n; ++i) {
    float v = static_cast<float>(src[i * step]) * mul + add;
    dst[i] = Out(v);
  }
}

#ifdef STOKER_STRIDED_ROW_X86

// pshufb masks that gather 16 bytes spaced S apart from L consecutive 16-byte loads; reversed
// when Rev, so a mirrored row costs no extra pass.
template <int S, bool Rev, int Offset = 0>
struct GatherMasks {
  static constexpr int kLoads = (15 * S + Offset) / 16 + 1;
  alignas(16) uint8_t m[kLoads][16] = {};
  constexpr GatherMasks() {
    for (int l = 0; l < kLoads; ++l)
      for (int j = 0; j < 16; ++j) {
        int pos = (Rev ? 15 - j : j) * S + Offset;
        m[l][j] = (pos >> 4) == l ? static_cast<uint8_t>(pos & 15) : 0x80;
      }
  }
};

template <bool Half>
__attribute__((target("avx2,f16c"))) inline void store16(void* dst, int64_t i, __m128i v, __m256 vm,
                                                         __m256 va) {
  __m256 f0 = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(v));
  __m256 f1 = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(v, 8)));
  f0 = _mm256_add_ps(_mm256_mul_ps(f0, vm), va);
  f1 = _mm256_add_ps(_mm256_mul_ps(f1, vm), va);
  if constexpr (Half) {
    auto* d = static_cast<uint16_t*>(dst) + i;
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d), _mm256_cvtps_ph(f0, _MM_FROUND_TO_NEAREST_INT));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 8), _mm256_cvtps_ph(f1, _MM_FROUND_TO_NEAREST_INT));
  } else {
    float* d = static_cast<float*>(dst) + i;
    _mm256_storeu_ps(d, f0);
    _mm256_storeu_ps(d + 8, f1);
  }
}

// 16 RGB pixels (48 bytes, three loads) per step, deinterleaved into three planes.
template <bool Rev, bool Half>
__attribute__((target("avx2,f16c"))) int64_t simd_rgb_blocks(void* const dst[3], const uint8_t* src,
                                                              int64_t n, const float mul[3],
                                                              const float add[3]) {
  static constexpr GatherMasks<3, Rev, 0> k0{};
  static constexpr GatherMasks<3, Rev, 1> k1{};
  static constexpr GatherMasks<3, Rev, 2> k2{};
  const uint8_t(*masks[3])[16] = {k0.m, k1.m, k2.m};
  __m128i mask[3][3];
  __m256 vm[3], va[3];
  for (int c = 0; c < 3; ++c) {
    for (int l = 0; l < 3; ++l) mask[c][l] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(masks[c][l]));
    vm[c] = _mm256_set1_ps(mul[c]);
    va[c] = _mm256_set1_ps(add[c]);
  }
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const uint8_t* q = Rev ? src - (i + 15) * 3 : src + i * 3;
    __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q));
    __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q + 16));
    __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q + 32));
    for (int c = 0; c < 3; ++c) {
      __m128i v = _mm_or_si128(_mm_or_si128(_mm_shuffle_epi8(a, mask[c][0]), _mm_shuffle_epi8(b, mask[c][1])),
                               _mm_shuffle_epi8(d, mask[c][2]));
      store16<Half>(dst[c], i, v, vm[c], va[c]);
    }
  }
  return i;
}

template <int S, bool Rev, bool Half>
__attribute__((target("avx2,f16c"))) int64_t simd_blocks(void* dst, const uint8_t* src, int64_t n,
                                                          float mul, float add, const uint8_t* lo,
                                                          const uint8_t* hi) {
  static constexpr GatherMasks<S, Rev> kMasks{};
  constexpr int L = GatherMasks<S, Rev>::kLoads;
  __m128i mask[L];
  for (int l = 0; l < L; ++l) mask[l] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(kMasks.m[l]));
  const __m256 vm = _mm256_set1_ps(mul), va = _mm256_set1_ps(add);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    // Lowest address of the 16 elements of this block.
    const uint8_t* q = Rev ? src - (i + 15) * S : src + i * S;
    if (q < lo || hi - q < 16 * L) break;
    __m128i v = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q)), mask[0]);
    for (int l = 1; l < L; ++l)
      v = _mm_or_si128(v, _mm_shuffle_epi8(
                              _mm_loadu_si128(reinterpret_cast<const __m128i*>(q + 16 * l)), mask[l]));
    store16<Half>(dst, i, v, vm, va);
  }
  return i;
}

// Pixel-reversing masks for 16 pixels of C channels: output byte k of output vector v is byte
// (15 - p) * C + ch of the block, p = (16 v + k) / C, ch = (16 v + k) % C.
template <int C>
struct MirrorMasks {
  alignas(16) uint8_t m[C][C][16] = {};  // [output vector][load][lane]
  constexpr MirrorMasks() {
    for (int v = 0; v < C; ++v)
      for (int l = 0; l < C; ++l)
        for (int k = 0; k < 16; ++k) {
          int e = 16 * v + k, pos = (15 - e / C) * C + e % C;
          m[v][l][k] = (pos >> 4) == l ? static_cast<uint8_t>(pos & 15) : 0x80;
        }
  }
};

template <int C, bool Mirror, bool Half>
__attribute__((target("avx2,f16c"))) int64_t simd_interleaved(void* dst, const uint8_t* src,
                                                               int64_t npix, const float* mul,
                                                               const float* add) {
  static constexpr MirrorMasks<C> kMasks{};
  // Element 8h of the block starts at channel (8h) % C: one coefficient vector per start.
  __m256 vm[C], va[C];
  for (int s = 0; s < C; ++s) {
    alignas(32) float m8[8], a8[8];
    for (int j = 0; j < 8; ++j) {
      m8[j] = mul[(s + j) % C];
      a8[j] = add[(s + j) % C];
    }
    vm[s] = _mm256_load_ps(m8);
    va[s] = _mm256_load_ps(a8);
  }
  int64_t i = 0;
  for (; i + 16 <= npix; i += 16) {
    const uint8_t* q = Mirror ? src - (i + 15) * C : src + i * C;
    __m128i in[C];
    for (int l = 0; l < C; ++l) in[l] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(q + 16 * l));
    for (int v = 0; v < C; ++v) {
      __m128i x;
      if constexpr (Mirror) {
        x = _mm_setzero_si128();
        for (int l = 0; l < C; ++l)
          x = _mm_or_si128(x, _mm_shuffle_epi8(in[l], _mm_loadu_si128(reinterpret_cast<const __m128i*>(kMasks.m[v][l]))));
      } else {
        x = in[v];
      }
      __m256 f0 = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(x));
      __m256 f1 = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(x, 8)));
      const int s0 = (16 * v) % C, s1 = (16 * v + 8) % C;
      f0 = _mm256_add_ps(_mm256_mul_ps(f0, vm[s0]), va[s0]);
      f1 = _mm256_add_ps(_mm256_mul_ps(f1, vm[s1]), va[s1]);
      const int64_t o = i * C + 16 * v;
      if constexpr (Half) {
        auto* d = static_cast<uint16_t*>(dst) + o;
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d), _mm256_cvtps_ph(f0, _MM_FROUND_TO_NEAREST_INT));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 8), _mm256_cvtps_ph(f1, _MM_FROUND_TO_NEAREST_INT));
      } else {
        float* d = static_cast<float*>(dst) + o;
        _mm256_storeu_ps(d, f0);
        _mm256_storeu_ps(d + 8, f1);
      }
    }
  }
  return i;
}

template <bool Half>
int64_t simd_dispatch(void* dst, const uint8_t* src, int64_t n, int64_t step, float mul,
                      float add, const uint8_t* lo, const uint8_t* hi) {
  switch (step) {
    case 1: return simd_blocks<1, false, Half>(dst, src, n, mul, add, lo, hi);
    case -1: return simd_blocks<1, true, Half>(dst, src, n, mul, add, lo, hi);
    case 3: return simd_blocks<3, false, Half>(dst, src, n, mul, add, lo, hi);
    case -3: return simd_blocks<3, true, Half>(dst, src, n, mul, add, lo, hi);
    case 4: return simd_blocks<4, false, Half>(dst, src, n, mul, add, lo, hi);
    case -4: return simd_blocks<4, true, Half>(dst, src, n, mul, add, lo, hi);
    default: return 0;
  }
}

bool detect_simd() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c");
}

#endif  // STOKER_STRIDED_ROW_X86

}  // namespace

bool strided_row_simd_available() {
#ifdef STOKER_STRIDED_ROW_X86
  static const bool available = detect_simd();
  return available;
#else
  return false;
#endif
}

void strided_row_u8(float* dst, const uint8_t* src, int64_t n, int64_t step, float mul, float add,
                    const uint8_t* lo, const uint8_t* hi) {
  int64_t done = 0;
#ifdef STOKER_STRIDED_ROW_X86
  if (strided_row_simd_available()) done = simd_dispatch<false>(dst, src, n, step, mul, add, lo, hi);
#endif
  scalar_row(dst + done, src + done * step, n - done, step, mul, add);
}

void strided_row_u8(float16* dst, const uint8_t* src, int64_t n, int64_t step, float mul,
                    float add, const uint8_t* lo, const uint8_t* hi) {
  int64_t done = 0;
#ifdef STOKER_STRIDED_ROW_X86
  if (strided_row_simd_available()) done = simd_dispatch<true>(dst, src, n, step, mul, add, lo, hi);
#endif
  scalar_row(dst + done, src + done * step, n - done, step, mul, add);
}

template <typename Out>
void rows3(Out* const dst[3], const uint8_t* src, int64_t n, int64_t step, const float mul[3],
           const float add[3]) {
  int64_t done = 0;
#ifdef STOKER_STRIDED_ROW_X86
  constexpr bool kHalf = std::is_same_v<Out, float16>;
  void* const d[3] = {dst[0], dst[1], dst[2]};
  if (strided_row_simd_available() && (step == 3 || step == -3))
    done = step > 0 ? simd_rgb_blocks<false, kHalf>(d, src, n, mul, add)
                    : simd_rgb_blocks<true, kHalf>(d, src, n, mul, add);
#endif
  for (int c = 0; c < 3; ++c)
    scalar_row(dst[c] + done, src + done * step + c, n - done, step, mul[c], add[c]);
}

template <typename Out>
void interleaved(Out* dst, const uint8_t* src, int64_t npix, int C, bool mirror, const float* mul,
                 const float* add) {
  int64_t done = 0;
#ifdef STOKER_STRIDED_ROW_X86
  constexpr bool kHalf = std::is_same_v<Out, float16>;
  if (strided_row_simd_available()) {
    if (C == 3) done = mirror ? simd_interleaved<3, true, kHalf>(dst, src, npix, mul, add)
                              : simd_interleaved<3, false, kHalf>(dst, src, npix, mul, add);
    else if (C == 4) done = mirror ? simd_interleaved<4, true, kHalf>(dst, src, npix, mul, add)
                                   : simd_interleaved<4, false, kHalf>(dst, src, npix, mul, add);
  }
#endif
  const int64_t sx = mirror ? -C : C;
  for (int64_t i = done; i < npix; ++i)
    for (int c = 0; c < C; ++c)
      dst[i * C + c] = Out(static_cast<float>(src[i * sx + c]) * mul[c] + add[c]);
}

void interleaved_row_u8(float* dst, const uint8_t* src, int64_t npix, int C, bool mirror,
                        const float* mul, const float* add) {
  interleaved(dst, src, npix, C, mirror, mul, add);
}

void interleaved_row_u8(float16* dst, const uint8_t* src, int64_t npix, int C, bool mirror,
                        const float* mul, const float* add) {
  interleaved(dst, src, npix, C, mirror, mul, add);
}

void strided_rows3_u8(float* const dst[3], const uint8_t* src, int64_t n, int64_t step,
                      const float mul[3], const float add[3]) {
  rows3(dst, src, n, step, mul, add);
}

void strided_rows3_u8(float16* const dst[3], const uint8_t* src, int64_t n, int64_t step,
                      const float mul[3], const float add[3]) {
  rows3(dst, src, n, step, mul, add);
}

}  // namespace kernels
}  // namespace stoker
