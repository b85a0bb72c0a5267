// Device helpers of the GPU twins of the element-wise and pixel operators (cast, colour,
// normalize, erase, warps, blur). Included by .cu files only.
//
// convert_sat_dev<Out>(In) is core/convert.h's convert_sat, operation for operation, so a GPU
// cast (or a GPU kernel's final store) gives the CPU's bits. bool travels as uint8_t on the
// device (its bytes are what the CPU stores).
#pragma once
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <limits>
#include <type_traits>

#include "core/dtype.h"
#include "core/error.h"
#include "kernels/cuda/cuda_common.cuh"

namespace stoker::kernels::cuda {

template <typename T> struct Tag { using type = T; };

// Calls f(Tag<DeviceType>) for a stoker dtype: float16 -> __half, bool -> BoolByte.
struct BoolByte { uint8_t v; };
template <typename F>
void visit_dev_type(DType t, F&& f) {
  switch (t) {
    case DType::kUInt8: return f(Tag<uint8_t>{});
    case DType::kUInt16: return f(Tag<uint16_t>{});
    case DType::kUInt32: return f(Tag<uint32_t>{});
    case DType::kUInt64: return f(Tag<uint64_t>{});
    case DType::kInt8: return f(Tag<int8_t>{});
    case DType::kInt16: return f(Tag<int16_t>{});
    case DType::kInt32: return f(Tag<int32_t>{});
    case DType::kInt64: return f(Tag<int64_t>{});
    case DType::kFloat16: return f(Tag<__half>{});
    case DType::kFloat32: return f(Tag<float>{});
    case DType::kFloat64: return f(Tag<double>{});
    case DType::kBool: return f(Tag<BoolByte>{});
    default: STOKER_ASSERT(false, "visit_dev_type: no such dtype");
  }
}

// visit_dev_type in device code (t must be one of stoker's types).
template <typename F>
__device__ __forceinline__ void visit_dev_type_device(DType t, F&& f) {
  switch (t) {
    case DType::kUInt8: return f(Tag<uint8_t>{});
    case DType::kUInt16: return f(Tag<uint16_t>{});
    case DType::kUInt32: return f(Tag<uint32_t>{});
    case DType::kUInt64: return f(Tag<uint64_t>{});
    case DType::kInt8: return f(Tag<int8_t>{});
    case DType::kInt16: return f(Tag<int16_t>{});
    case DType::kInt32: return f(Tag<int32_t>{});
    case DType::kInt64: return f(Tag<int64_t>{});
    case DType::kFloat16: return f(Tag<__half>{});
    case DType::kFloat32: return f(Tag<float>{});
    case DType::kFloat64: return f(Tag<double>{});
    default: return f(Tag<BoolByte>{});
  }
}

// std::numeric_limits as constants (its functions are host functions, not callable in device
// code without --expt-relaxed-constexpr; constants of arithmetic type are usable there).
template <typename T>
struct DevLimits {
  static constexpr T lowest = std::numeric_limits<T>::lowest();
  static constexpr T max = std::numeric_limits<T>::max();
};

template <typename T>
inline constexpr bool kIsDevFloat =
    std::is_same_v<T, float> || std::is_same_v<T, double> || std::is_same_v<T, __half>;

// A device element as float / double.
template <typename T>
__device__ __forceinline__ float load_f(T v) {
  if constexpr (std::is_same_v<T, __half>) return __half2float(v);
  else if constexpr (std::is_same_v<T, BoolByte>) return v.v != 0 ? 1.0f : 0.0f;
  else return static_cast<float>(v);
}

// convert_sat<Out>(In), as core/convert.h. Out and In are device types (no BoolByte here: the
// cast kernel handles bool on either side itself).
template <typename Out, typename In>
__device__ __forceinline__ Out convert_sat_dev(In v) {
  if constexpr (std::is_same_v<Out, In>) {
    return v;
  } else if constexpr (std::is_same_v<Out, __half>) {
    if constexpr (std::is_same_v<In, __half>) return v;
    else return __float2half_rn(static_cast<float>(v));
  } else if constexpr (std::is_same_v<In, __half>) {
    return convert_sat_dev<Out>(__half2float(v));
  } else if constexpr (std::is_floating_point_v<Out>) {
    return static_cast<Out>(v);
  } else if constexpr (std::is_floating_point_v<In>) {
    if (v != v) return Out(0);
    double r;
    if constexpr (sizeof(In) == 4 && sizeof(Out) <= 2) r = static_cast<double>(rintf(static_cast<float>(v)));
    else r = rint(static_cast<double>(v));
    constexpr double lo = static_cast<double>(DevLimits<Out>::lowest);
    constexpr double hi = static_cast<double>(DevLimits<Out>::max);
    if (r <= lo) return DevLimits<Out>::lowest;
    if (r >= hi) return DevLimits<Out>::max;
    return static_cast<Out>(r);
  } else {
    // integer -> integer, saturating
    using Wide = std::conditional_t<std::is_signed_v<In>, int64_t, uint64_t>;
    constexpr Out kMax = DevLimits<Out>::max;
    constexpr Out kLow = DevLimits<Out>::lowest;
    Wide w = static_cast<Wide>(v);
    if constexpr (std::is_signed_v<In> && !std::is_signed_v<Out>) {
      if (w < 0) return 0;
      if (static_cast<uint64_t>(w) > static_cast<uint64_t>(kMax)) return kMax;
      return static_cast<Out>(w);
    } else if constexpr (!std::is_signed_v<In> && std::is_signed_v<Out>) {
      if (w > static_cast<uint64_t>(kMax)) return kMax;
      return static_cast<Out>(w);
    } else {
      if constexpr (std::is_signed_v<In>)  // both signed (unsigned ones have no lower bound)
        if (w < static_cast<Wide>(kLow)) return kLow;
      if (w > static_cast<Wide>(kMax)) return kMax;
      return static_cast<Out>(w);
    }
  }
}

// kernels/cpu/warp/round_sat.h's round_sat<Out>(float): the same values as convert_sat.
template <typename Out>
__device__ __forceinline__ Out round_sat_dev(float v) {
  return convert_sat_dev<Out>(v);
}

}  // namespace stoker::kernels::cuda
