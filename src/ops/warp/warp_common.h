// Shared by the warp-family operators: layout checks for images and sequences of images, the
// interpolation argument, and the output-type dispatch.
#pragma once
#include <string>

#include "core/dtype.h"
#include "kernels/cpu/warp/warp.h"
#include "ops/image/image_types.h"
#include "pipeline/operator.h"

namespace stoker {
namespace warp_ops {

// An image sample seen as frames of (height, width, channels).
struct ImageDims {
  int64_t frames = 1, height = 0, width = 0, channels = 0;
};

// The input's layout, "HWC" or (with sequences allowed) "FHWC"; an empty layout is read from the
// number of dimensions, as DALI does. Throws a ValueError naming the operator otherwise.
inline std::string image_layout(const OpSpec& spec, const Batch& in, bool allow_sequence) {
  std::string l = in.layout();
  int nd = in.ndim();
  if (l.empty()) l = nd == 3 ? "HWC" : (nd == 4 && allow_sequence) ? "FHWC" : "";
  bool ok = (l == "HWC" && nd == 3) || (allow_sequence && l == "FHWC" && nd == 4);
  if (!ok)
    fail(ErrorKind::kInvalidArgument,
         spec.display_name() + ": input 0 must be images with layout HWC" +
             (allow_sequence ? std::string(" or sequences with layout FHWC") : std::string()) +
             " (channels last), got layout '" + in.layout() + "' with " + std::to_string(nd) +
             " dimensions. Decode with fn.decoders.image (HWC), or transpose channel-first data "
             "first.");
  return l;
}

inline ImageDims image_dims(const Shape& s) {
  ImageDims d;
  size_t k = 0;
  if (s.size() == 4) d.frames = s[k++];
  d.height = s[k];
  d.width = s[k + 1];
  d.channels = s[k + 2];
  return d;
}

inline Shape with_hw(const Shape& s, int64_t h, int64_t w) {
  Shape r = s;
  size_t k = s.size() == 4 ? 1 : 0;
  r[k] = h;
  r[k + 1] = w;
  return r;
}

// NN / LINEAR as DALI's warps; CUBIC is an extension (OpenCV's INTER_CUBIC).
inline kernels::WarpInterp warp_interp(const OpSpec& spec, double v) {
  switch (static_cast<InterpType>(static_cast<int>(v))) {
    case InterpType::kNN: return kernels::WarpInterp::kNearest;
    case InterpType::kLinear: return kernels::WarpInterp::kLinear;
    case InterpType::kCubic: return kernels::WarpInterp::kCubic;
    default: break;
  }
  spec.arg_error("interp_type", "must be INTERP_NN, INTERP_LINEAR or INTERP_CUBIC for this "
                                "operator, got " + std::to_string(static_cast<int>(v)) + ".");
}

// The output element type: `dtype` if given, else the input's. Like DALI, it must be the input
// type or float, or the input must be float.
inline DType output_dtype(const OpSpec& spec, DType in) {
  if (in == DType::kBool)
    fail(ErrorKind::kInvalidArgument, spec.display_name() + ": input 0 has type bool, which cannot "
                                      "be interpolated; cast it to uint8 first.");
  if (!spec.has("dtype")) return in;
  DType out = static_cast<DType>(spec.get<int64_t>("dtype"));
  if (out == DType::kBool) spec.arg_error("dtype", "cannot be bool.");
  if (out == in || out == DType::kFloat32 || in == DType::kFloat32) return out;
  spec.arg_error("dtype", std::string("must be the input type (") + dtype_name(in) +
                              ") or float32 (or the input must be float32), got " + dtype_name(out) + ".");
}

// Calls f(Out{}, In{}) for the pairs output_dtype() allows.
template <typename F>
void visit_out_in(DType out, DType in, F&& f) {
  if (out == in) {
    visit_dtype(in, [&](auto t) { f(t, t); });
  } else if (out == DType::kFloat32) {
    visit_dtype(in, [&](auto t) { f(float{}, t); });
  } else {
    STOKER_ASSERT(in == DType::kFloat32, "unexpected warp type pair");
    visit_dtype(out, [&](auto t) { f(t, float{}); });
  }
}

template <typename T>
ImageView<T> frame_view(T* base, const ImageDims& d, int64_t f) {
  return ImageView<T>(base + f * d.height * d.width * d.channels, d.height, d.width, d.channels);
}

}  // namespace warp_ops
}  // namespace stoker
