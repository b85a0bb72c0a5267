// Device helpers shared by stoker's batched kernels. Included by .cu files only.
//
// Batched launches: a launch covers every sample of a batch, each in its own shape. The host
// gives each sample a run of blocks (block_start[s] = the first block of sample s, a prefix sum);
// a block finds its sample by binary search over the (few hundred) entries.
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "core/float16.h"

namespace stoker::kernels::cuda {

__device__ __forceinline__ int sample_of_block(const int* block_start, int n, int block) {
  int lo = 0, hi = n - 1;
  while (lo < hi) {
    int mid = (lo + hi + 1) >> 1;
    if (block_start[mid] <= block) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

// Division by a divisor fixed at launch, as a multiply and a shift (Granlund-Montgomery's
// round-up method): exact for every 32-bit dividend. Index arithmetic in batched kernels divides
// by extents per element, and a 32-bit division is a long instruction sequence on the GPU.
struct FastDiv {
  uint32_t d, m, s;  // no initialisers: trivially constructible, so it may live in __shared__
  FastDiv() = default;
  explicit FastDiv(uint32_t divisor) : d(divisor), m(0), s(0) {
    if (d <= 1) {
      d = 1;
      return;
    }
    while ((uint64_t(1) << s) < d) ++s;  // ceil(log2 d)
    m = static_cast<uint32_t>(((uint64_t(1) << 32) * ((uint64_t(1) << s) - d)) / d + 1);
  }
  __device__ __forceinline__ uint32_t div(uint32_t n) const {
    return static_cast<uint32_t>((uint64_t(__umulhi(n, m)) + n) >> s);
  }
};

// The device type of a host element type (stoker::float16 -> __half).
template <typename T> struct DevType { using type = T; };
template <> struct DevType<float16> { using type = __half; };

template <typename T>
__device__ __forceinline__ float to_float(T v) { return static_cast<float>(v); }
template <>
__device__ __forceinline__ float to_float<__half>(__half v) { return __half2float(v); }

// The range of an integer type, usable in device code (std::numeric_limits is host-only).
template <typename T> struct Range;
template <> struct Range<uint8_t> { static constexpr float lo = 0.f, hi = 255.f; };
template <> struct Range<int8_t> { static constexpr float lo = -128.f, hi = 127.f; };
template <> struct Range<uint16_t> { static constexpr float lo = 0.f, hi = 65535.f; };
template <> struct Range<int16_t> { static constexpr float lo = -32768.f, hi = 32767.f; };
template <> struct Range<uint32_t> { static constexpr float lo = 0.f, hi = 4294967295.f; };
template <> struct Range<int32_t> { static constexpr float lo = -2147483648.f, hi = 2147483647.f; };
template <> struct Range<uint64_t> { static constexpr float lo = 0.f, hi = 18446744073709551615.f; };
template <> struct Range<int64_t> { static constexpr float lo = -9223372036854775808.f, hi = 9223372036854775807.f; };
template <typename T> struct IntRange;
template <> struct IntRange<uint8_t> { static constexpr uint8_t lo = 0, hi = 255; };
template <> struct IntRange<int8_t> { static constexpr int8_t lo = -128, hi = 127; };
template <> struct IntRange<uint16_t> { static constexpr uint16_t lo = 0, hi = 65535; };
template <> struct IntRange<int16_t> { static constexpr int16_t lo = -32768, hi = 32767; };
template <> struct IntRange<uint32_t> { static constexpr uint32_t lo = 0, hi = 4294967295u; };
template <> struct IntRange<int32_t> { static constexpr int32_t lo = -2147483647 - 1, hi = 2147483647; };
template <> struct IntRange<uint64_t> { static constexpr uint64_t lo = 0, hi = 18446744073709551615ull; };
template <> struct IntRange<int64_t> { static constexpr int64_t lo = -9223372036854775807ll - 1, hi = 9223372036854775807ll; };

// float -> Out as stoker::convert_sat does on the CPU: integers round half to even and saturate,
// NaN becomes 0; float16 rounds to nearest even.
template <typename Out>
__device__ __forceinline__ Out from_float(float v) {
  if constexpr (std::is_same_v<Out, float>) {
    return v;
  } else if constexpr (std::is_same_v<Out, double>) {
    return static_cast<double>(v);
  } else if constexpr (std::is_same_v<Out, __half>) {
    return __float2half_rn(v);
  } else if constexpr (std::is_same_v<Out, bool>) {
    return v != 0.0f;
  } else {
    if (v != v) return Out(0);
    float r = rintf(v);  // half to even
    if (r <= Range<Out>::lo) return IntRange<Out>::lo;
    if (r >= Range<Out>::hi) return IntRange<Out>::hi;
    return static_cast<Out>(r);
  }
}

// Round half up and saturate (what resampling stores, as on the CPU).
template <typename Out>
__device__ __forceinline__ Out round_half_up_sat(float v) {
  if constexpr (std::is_same_v<Out, float>) {
    return v;
  } else {
    constexpr float lo = Range<Out>::lo, hi = Range<Out>::hi;
    if constexpr (std::is_signed_v<Out>) {
      v += 32768.5f;
      v = v > 0.0f ? v : 0.0f;
      v = v < 65535.0f ? v : 65535.0f;
      return static_cast<Out>(static_cast<int>(v) - 32768);
    } else {
      v += 0.5f;
      v = v > lo ? v : lo;
      v = v < hi ? v : hi;
      return static_cast<Out>(static_cast<int>(v));
    }
  }
}

// Throws stoker::Error naming `what` when the last launch failed (a bad configuration; faults
// inside the kernel surface at the next synchronising call).
void check_launch(const char* what);

}  // namespace stoker::kernels::cuda
