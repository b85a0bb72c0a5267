// Shared by the colour operators: input checks and views. Images are channels-last ("HWC", or
// "FHWC" / "DHWC" where every frame or slice gets the same parameters, so the leading extents
// fold into the rows of one tall image).
#pragma once
#include <cmath>
#include <optional>
#include <string>
#include <type_traits>

#include "core/batch.h"
#include "core/error.h"
#include "pipeline/operator.h"

namespace stoker {
namespace color_ops {

inline const char* kColorLayouts = "HWC, FHWC or DHWC";

// Element types the colour kernels take and give (kernels/cpu/color/color_affine.h).
inline bool color_dtype_ok(DType t) {
  switch (t) {
    case DType::kUInt8: case DType::kUInt16: case DType::kInt16: case DType::kInt32:
    case DType::kFloat16: case DType::kFloat32:
      return true;
    default:
      return false;
  }
}
template <typename T>
constexpr bool is_color_type() {
  return std::is_same_v<T, uint8_t> || std::is_same_v<T, uint16_t> || std::is_same_v<T, int16_t> ||
         std::is_same_v<T, int32_t> || std::is_same_v<T, float16> || std::is_same_v<T, float>;
}
inline const char* kColorDTypes = "UINT8, UINT16, INT16, INT32, FLOAT16 or FLOAT";

// Throws unless `in` is a batch of channels-last images of a supported type.
inline void check_image_input(const OpSpec& spec, const Batch& in) {
  const std::string& l = in.layout();
  bool ok = l == "HWC" || l == "FHWC" || l == "DHWC" || (l.empty() && in.ndim() == 3);
  if (!ok)
    fail(ErrorKind::kInvalidArgument,
         std::string("input 0 must have layout ") + kColorLayouts + ", got " +
             (l.empty() ? std::string("no layout with ") + std::to_string(in.ndim()) + " dimensions"
                        : "'" + l + "'") + ".");
  if (!color_dtype_ok(in.dtype()))
    fail(ErrorKind::kTypeMismatch,
         std::string("input 0 must be of type ") + kColorDTypes + ", got " +
             dtype_name(in.dtype()) + ". Convert it first with fn.cast.");
}

// The `dtype` argument, checked (call from the constructor, where errors name the operator).
inline std::optional<DType> dtype_arg(const OpSpec& spec) {
  if (!spec.has("dtype")) return std::nullopt;
  auto t = static_cast<DType>(spec.get<int64_t>("dtype"));
  if (!color_dtype_ok(t))
    spec.arg_error("dtype", std::string("must be one of ") + kColorDTypes + ", got " +
                                dtype_name(t) + ".");
  return t;
}

// One sample as an image view: leading extents (frames, slices) fold into the rows.
template <typename T>
ImageView<T> sample_view(T* data, const Shape& s) {
  int64_t rows = 1;
  for (size_t d = 0; d + 2 < s.size(); ++d) rows *= s[d];
  return ImageView<T>(data, rows, s[s.size() - 2], s.back());
}

// A per-sample scalar argument that must be finite (and >= 0 where `non_negative`). Read in
// setup() (both backends share the per-sample parameters), so the message names the sample and
// its source itself; the executor puts the operator in front.
inline float checked_scalar(const Workspace& ws, const std::string& name, int64_t sample,
                            double fallback, bool non_negative = false) {
  double v = ws.scalar_arg(name, sample, fallback);
  if (!std::isfinite(v) || (non_negative && v < 0)) {
    std::string where = "sample " + std::to_string(sample);
    if (!ws.inputs.empty() && sample < static_cast<int64_t>(ws.inputs[0]->size()) &&
        !(*ws.inputs[0])[sample].source.empty())
      where += " ('" + (*ws.inputs[0])[sample].source + "')";
    fail(ErrorKind::kInvalidArgument,
         where + ": argument '" + name + "' must be a finite" +
             (non_negative ? ", non-negative" : "") + " number, got " + std::to_string(v) + ".");
  }
  return static_cast<float>(v);
}

}  // namespace color_ops
}  // namespace stoker
