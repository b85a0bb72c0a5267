#include "core/dtype.h"

#include "core/error.h"
#include "core/shape.h"

namespace stoker {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::kUInt8: case DType::kInt8: case DType::kBool: return 1;
    case DType::kUInt16: case DType::kInt16: case DType::kFloat16: return 2;
    case DType::kUInt32: case DType::kInt32: case DType::kFloat32: return 4;
    case DType::kUInt64: case DType::kInt64: case DType::kFloat64: return 8;
    default: throw_bad_dtype(t);
  }
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::kUInt8: return "uint8";
    case DType::kUInt16: return "uint16";
    case DType::kUInt32: return "uint32";
    case DType::kUInt64: return "uint64";
    case DType::kInt8: return "int8";
    case DType::kInt16: return "int16";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kFloat16: return "float16";
    case DType::kFloat32: return "float32";
    case DType::kFloat64: return "float64";
    case DType::kBool: return "bool";
    default: return "none";
  }
}

DType dtype_from_name(const std::string& name) {
  for (int i = 0; i <= static_cast<int>(DType::kBool); ++i)
    if (name == dtype_name(static_cast<DType>(i))) return static_cast<DType>(i);
  return DType::kNone;
}

bool is_float(DType t) {
  return t == DType::kFloat16 || t == DType::kFloat32 || t == DType::kFloat64;
}
bool is_signed(DType t) {
  return is_float(t) || t == DType::kInt8 || t == DType::kInt16 || t == DType::kInt32 ||
         t == DType::kInt64;
}
bool is_integer(DType t) { return !is_float(t) && t != DType::kBool && t != DType::kNone; }

void throw_bad_dtype(DType t) {
  fail(ErrorKind::kInternal, "unexpected element type code " + std::to_string(static_cast<int>(t)));
}

std::string to_string(const Shape& s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  if (s.size() == 1) r += ",";
  return r + ")";
}

}  // namespace stoker
