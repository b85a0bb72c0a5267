// Element types. The numbering follows DALI's DALIDataType so enum values read the same.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/float16.h"

namespace stoker {

enum class DType : int8_t {
  kNone = -1, kUInt8 = 0, kUInt16 = 1, kUInt32 = 2, kUInt64 = 3, kInt8 = 4, kInt16 = 5,
  kInt32 = 6, kInt64 = 7, kFloat16 = 8, kFloat32 = 9, kFloat64 = 10, kBool = 11,
};

size_t dtype_size(DType t);
const char* dtype_name(DType t);  // NumPy's names: "uint8", "float32", "bool", ...
DType dtype_from_name(const std::string& name);  // inverse of dtype_name; kNone when unknown
bool is_float(DType t);
bool is_signed(DType t);
bool is_integer(DType t);

template <typename T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<uint8_t>() { return DType::kUInt8; }
template <> constexpr DType dtype_of<uint16_t>() { return DType::kUInt16; }
template <> constexpr DType dtype_of<uint32_t>() { return DType::kUInt32; }
template <> constexpr DType dtype_of<uint64_t>() { return DType::kUInt64; }
template <> constexpr DType dtype_of<int8_t>() { return DType::kInt8; }
template <> constexpr DType dtype_of<int16_t>() { return DType::kInt16; }
template <> constexpr DType dtype_of<int32_t>() { return DType::kInt32; }
template <> constexpr DType dtype_of<int64_t>() { return DType::kInt64; }
template <> constexpr DType dtype_of<float16>() { return DType::kFloat16; }
template <> constexpr DType dtype_of<float>() { return DType::kFloat32; }
template <> constexpr DType dtype_of<double>() { return DType::kFloat64; }
template <> constexpr DType dtype_of<bool>() { return DType::kBool; }

[[noreturn]] void throw_bad_dtype(DType t);

// Calls f(T{}) with T the C++ type of `t`; throws for kNone.
template <typename F>
decltype(auto) visit_dtype(DType t, F&& f) {
  switch (t) {
    case DType::kUInt8: return f(uint8_t{});
    case DType::kUInt16: return f(uint16_t{});
    case DType::kUInt32: return f(uint32_t{});
    case DType::kUInt64: return f(uint64_t{});
    case DType::kInt8: return f(int8_t{});
    case DType::kInt16: return f(int16_t{});
    case DType::kInt32: return f(int32_t{});
    case DType::kInt64: return f(int64_t{});
    case DType::kFloat16: return f(float16{});
    case DType::kFloat32: return f(float{});
    case DType::kFloat64: return f(double{});
    case DType::kBool: return f(bool{});
    default: throw_bad_dtype(t);
  }
}

}  // namespace stoker
