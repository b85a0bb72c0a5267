#include "ops/image/resize_attr.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <utility>

#include "core/error.h"

namespace stoker {

ResizeMode parse_resize_mode(const std::string& name) {
  if (name == "default") return ResizeMode::kDefault;
  if (name == "stretch") return ResizeMode::kStretch;
  if (name == "not_smaller") return ResizeMode::kNotSmaller;
  if (name == "not_larger") return ResizeMode::kNotLarger;
  fail(ErrorKind::kInvalidArgument,
       "mode: expected one of \"default\", \"stretch\", \"not_smaller\", \"not_larger\"; got \"" +
           name + "\"");
}

const char* resize_mode_name(ResizeMode mode) {
  switch (mode) {
    case ResizeMode::kDefault: return "default";
    case ResizeMode::kStretch: return "stretch";
    case ResizeMode::kNotSmaller: return "not_smaller";
    case ResizeMode::kNotLarger: return "not_larger";
  }
  return "?";
}

namespace {

// Axes a sample may have (tensor_resize resizes any of a tensor's).
constexpr int kMaxNdim = 16;

std::string list_str(const std::vector<float>& v) {
  std::ostringstream s;
  s << "[";
  for (size_t i = 0; i < v.size(); i++) s << (i ? ", " : "") << v[i];
  s << "]";
  return s.str();
}

void check_length(const std::vector<float>& v, int ndim, const char* name, bool allow_empty) {
  const int n = static_cast<int>(v.size());
  if (n == 1 || n == ndim || (allow_empty && n == 0)) return;
  fail(ErrorKind::kInvalidArgument,
       std::string(name) + ": expected one value for all " + std::to_string(ndim) +
           " spatial axes or one per axis (" + std::to_string(ndim) + " values, " +
           (ndim == 3 ? "D, H, W" : "H, W") + " order); got " + std::to_string(n) + " values " +
           list_str(v));
}

void check_finite(const std::vector<float>& v, const char* name) {
  for (float x : v)
    if (!std::isfinite(x))
      fail(ErrorKind::kInvalidArgument,
           std::string(name) + ": expected finite numbers; got " + list_str(v));
}

void check_finite(const std::optional<float>& v, const char* name) {
  if (v && !std::isfinite(*v))
    fail(ErrorKind::kInvalidArgument,
         std::string(name) + ": expected a finite number; got " + std::to_string(*v));
}

// One value repeated for all axes, or the values as they are.
std::vector<float> per_axis(const std::vector<float>& v, int ndim) {
  if (v.size() == 1) return std::vector<float>(ndim, v[0]);
  return v;
}

// DALI's AdjustOutputSize: fills in missing extents (0) and applies the mode and max_size.
// out_size may be negative (flip); in_size is positive or 0. Float where DALI keeps floats.
void adjust_output_size(float* out_size, const float* in_size, int ndim, ResizeMode mode,
                        const float* max_size) {
  double scale[kMaxNdim];
  bool mask[kMaxNdim];
  int provided = 0;
  for (int d = 0; d < ndim; d++) {
    mask[d] = out_size[d] != 0 && in_size[d] != 0;
    scale[d] = in_size[d] != 0 ? out_size[d] / in_size[d] : 1;  // float division, as DALI
    provided += mask[d];
  }
  if (provided == 0) {  // nothing to go by: keep the input size
    for (int d = 0; d < ndim; d++) out_size[d] = in_size[d];
    return;
  }
  auto apply_max_size = [&]() {
    if (!max_size) return;
    for (int d = 0; d < ndim; d++) {
      if (max_size[d] > 0 && std::fabs(out_size[d]) > max_size[d]) {
        out_size[d] = std::copysign(max_size[d], out_size[d]);
        scale[d] = out_size[d] / in_size[d];
      }
    }
  };
  if (mode == ResizeMode::kDefault) {
    if (provided < ndim) {
      double avg = 1;
      for (int d = 0; d < ndim; d++)
        if (mask[d]) avg *= std::fabs(scale[d]);
      if (provided > 1) avg = std::pow(avg, 1.0 / provided);
      for (int d = 0; d < ndim; d++) {
        if (!mask[d]) {
          scale[d] = avg;
          out_size[d] = static_cast<float>(in_size[d] * scale[d]);
        }
      }
    }
    apply_max_size();
  } else if (mode == ResizeMode::kStretch) {
    for (int d = 0; d < ndim; d++) {
      if (!mask[d]) {
        scale[d] = 1;
        out_size[d] = in_size[d];
      }
    }
    apply_max_size();
  } else {
    // One scale for all axes: the largest (not_smaller) or smallest (not_larger) of the given
    // ones, then lowered to respect max_size.
    double final_scale = 0;
    bool first = true;
    for (int d = 0; d < ndim; d++) {
      if (!mask[d]) continue;
      float s = static_cast<float>(std::fabs(scale[d]));
      if (first || (mode == ResizeMode::kNotSmaller && s > final_scale) ||
          (mode == ResizeMode::kNotLarger && s < final_scale))
        final_scale = s;
      first = false;
    }
    if (max_size) {
      for (int d = 0; d < ndim; d++) {
        if (max_size[d] > 0) {
          double s = static_cast<double>(max_size[d]) / in_size[d];
          if (s < final_scale) final_scale = s;
        }
      }
    }
    for (int d = 0; d < ndim; d++) {
      if (!mask[d] || std::fabs(scale[d]) != final_scale) {
        scale[d] = std::copysign(final_scale, scale[d]);
        out_size[d] = static_cast<float>(in_size[d] * scale[d]);
      }
    }
  }
}

std::string shape_str(const std::vector<int64_t>& s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); i++) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + ")";
}

}  // namespace

void check_resize_args(const ResizeArgs& args, int spatial_ndim) {
  if (spatial_ndim != 2 && spatial_ndim != 3)
    fail(ErrorKind::kInvalidArgument,
         "resize: expected an input with 2 (H, W) or 3 (D, H, W) spatial axes; got " +
             std::to_string(spatial_ndim));
  const bool separate = args.resize_x || args.resize_y || args.resize_z;
  const int ways = separate + args.size.has_value() + args.resize_shorter.has_value() +
                   args.resize_longer.has_value();
  if (ways != 1) {
    std::string given;
    auto add = [&](bool on, const char* name) {
      if (on) given += std::string(given.empty() ? "" : ", ") + name;
    };
    add(args.resize_x.has_value(), "resize_x");
    add(args.resize_y.has_value(), "resize_y");
    add(args.resize_z.has_value(), "resize_z");
    add(args.size.has_value(), "size");
    add(args.resize_shorter.has_value(), "resize_shorter");
    add(args.resize_longer.has_value(), "resize_longer");
    fail(ErrorKind::kInvalidArgument,
         "resize: give the output size in exactly one way: resize_x/resize_y" +
             std::string(spatial_ndim == 3 ? "/resize_z" : "") +
             ", size, resize_shorter or resize_longer; got " +
             (given.empty() ? std::string("none of them") : given));
  }
  const int exclusive = args.resize_shorter.has_value() + args.resize_longer.has_value() +
                        args.mode.has_value();
  if (exclusive > 1)
    fail(ErrorKind::kInvalidArgument,
         std::string("resize: ") + (args.resize_shorter ? "resize_shorter" : "resize_longer") +
             " cannot be combined with mode (resize_shorter means mode=\"not_smaller\" and "
             "resize_longer mode=\"not_larger\", with the same size for all axes); drop mode or "
             "use size=... with mode=...");
  if (args.resize_z && spatial_ndim != 3)
    fail(ErrorKind::kInvalidArgument,
         "resize_z: only applies to volumes (3 spatial axes, e.g. DHWC); this input has 2; use "
         "resize_x and resize_y");
  check_finite(args.resize_x, "resize_x");
  check_finite(args.resize_y, "resize_y");
  check_finite(args.resize_z, "resize_z");
  check_finite(args.resize_shorter, "resize_shorter");
  check_finite(args.resize_longer, "resize_longer");
  if (args.size) {
    check_length(*args.size, spatial_ndim, "size", false);
    check_finite(*args.size, "size");
  }
  check_length(args.max_size, spatial_ndim, "max_size", true);
  if (args.roi_start.has_value() != args.roi_end.has_value())
    fail(ErrorKind::kInvalidArgument,
         std::string("resize: roi_start and roi_end must be given together; got only ") +
             (args.roi_start ? "roi_start" : "roi_end"));
  if (args.roi_start) {
    check_length(*args.roi_start, spatial_ndim, "roi_start", false);
    check_length(*args.roi_end, spatial_ndim, "roi_end", false);
    check_finite(*args.roi_start, "roi_start");
    check_finite(*args.roi_end, "roi_end");
  }
}

ResizeMode effective_resize_mode(const ResizeArgs& args) {
  if (args.resize_shorter) return ResizeMode::kNotSmaller;
  if (args.resize_longer) return ResizeMode::kNotLarger;
  return args.mode.value_or(ResizeMode::kDefault);
}

ResizeResult compute_resize(const ResizeArgs& args, const std::vector<int64_t>& in_shape) {
  const int ndim = static_cast<int>(in_shape.size());
  check_resize_args(args, ndim);
  const ResizeMode mode = effective_resize_mode(args);

  float requested[kMaxNdim] = {0, 0, 0};
  if (args.resize_x || args.resize_y || args.resize_z) {
    requested[ndim - 1] = args.resize_x.value_or(0.0f);
    requested[ndim - 2] = args.resize_y.value_or(0.0f);
    if (ndim == 3) requested[0] = args.resize_z.value_or(0.0f);
  } else if (args.resize_shorter || args.resize_longer) {
    float v = args.resize_shorter ? *args.resize_shorter : *args.resize_longer;
    for (int d = 0; d < ndim; d++) requested[d] = v;
  } else {
    std::vector<float> s = per_axis(*args.size, ndim);
    for (int d = 0; d < ndim; d++) requested[d] = s[d];
  }

  float max_size[kMaxNdim];
  const bool has_max_size = !args.max_size.empty();
  if (has_max_size) {
    std::vector<float> m = per_axis(args.max_size, ndim);
    for (int d = 0; d < ndim; d++) max_size[d] = m[d];
  }

  // Input window, in floats as DALI keeps it.
  std::vector<float> lo(ndim), hi(ndim);
  std::vector<float> roi_start, roi_end;
  if (args.roi_start) {
    roi_start = per_axis(*args.roi_start, ndim);
    roi_end = per_axis(*args.roi_end, ndim);
  }
  for (int d = 0; d < ndim; d++) {
    const float extent = static_cast<float>(in_shape[d]);
    if (args.roi_start && in_shape[d] > 0) {
      input_window(roi_start[d], roi_end[d], extent, args.roi_relative, &lo[d], &hi[d]);
    } else {
      lo[d] = 0;
      hi[d] = extent;
    }
  }

  std::vector<float> req(requested, requested + ndim);
  return plan_resize(req, lo, hi, in_shape, mode, has_max_size ? max_size : nullptr,
                     args.subpixel_scale, nullptr, SizeRounding::kRound);
}

void input_window(double a, double b, float extent, bool relative, float* lo, float* hi) {
  // A window thinner than kMinRoi (over a non-empty input) is widened so that it still maps
  // somewhere instead of dividing by zero.
  constexpr float kMinRoi = 1e-3f;
  if (relative) {
    a *= extent;
    b *= extent;
  }
  if (std::fabs(b - a) < kMinRoi) {
    double offset = a <= b ? 0.5f * kMinRoi : -0.5f * kMinRoi;
    a -= offset;
    b += offset;
  }
  *lo = static_cast<float>(a);
  *hi = static_cast<float>(b);
}

ResizeResult plan_resize(std::vector<float> requested, std::vector<float> lo,
                         std::vector<float> hi, const std::vector<int64_t>& in_shape,
                         ResizeMode mode, const float* max_size, bool subpixel_scale,
                         const std::vector<float>* alignment, SizeRounding rounding) {
  const int ndim = static_cast<int>(in_shape.size());
  if (ndim > kMaxNdim)
    fail(ErrorKind::kInvalidArgument, "resize: at most " + std::to_string(kMaxNdim) +
                                          " axes, got " + std::to_string(ndim));
  bool empty_input = false;
  for (int d = 0; d < ndim; d++) {
    if (in_shape[d] < 0)
      fail(ErrorKind::kInvalidArgument, "resize: negative extent in input shape " +
                                            shape_str(in_shape));
    if (in_shape[d] == 0) empty_input = true;
  }
  // A window given backwards flips the axis; so does a negative size. Two flips cancel.
  float in_size[kMaxNdim];
  for (int d = 0; d < ndim; d++) {
    float sz = hi[d] - lo[d];
    if (sz < 0) {
      std::swap(lo[d], hi[d]);
      requested[d] = -requested[d];
      sz = -sz;
    }
    in_size[d] = sz;
  }

  adjust_output_size(requested.data(), in_size, ndim, mode, max_size);

  for (int d = 0; d < ndim; d++) {
    if (lo[d] == hi[d] && requested[d] != 0)
      fail(ErrorKind::kInvalidArgument,
           "resize: cannot produce a non-empty output from the empty input of shape " +
               shape_str(in_shape) + " (spatial axis " + std::to_string(d) +
               " has extent 0); filter out empty samples before resize");
  }

  ResizeResult r;
  r.out_size.resize(ndim);
  r.roi_lo.resize(ndim);
  r.roi_hi.resize(ndim);
  // An empty input can only give an empty output; otherwise every axis gets at least one pixel,
  // sampling a degenerate window where it lies.
  const int min_size = empty_input ? 0 : 1;
  for (int d = 0; d < ndim; d++) {
    const float out_sz = requested[d];
    const float abs_sz = std::fabs(out_sz);
    if (!(abs_sz < 2e9f))
      fail(ErrorKind::kInvalidArgument,
           "resize: the output extent of spatial axis " + std::to_string(d) + " would be " +
               std::to_string(abs_sz) + " pixels for the input of shape " + shape_str(in_shape) +
               "; use max_size to bound it");
    const float rounded = rounding == SizeRounding::kTruncate ? std::trunc(abs_sz)
                          : rounding == SizeRounding::kCeil   ? std::ceil(abs_sz)
                                                              : std::round(abs_sz);
    const int size = std::max(min_size, static_cast<int>(rounded));
    float a = lo[d], b = hi[d];
    if (out_sz < 0) std::swap(a, b);
    // subpixel_scale: the extent was rounded; scale the window about its alignment point (the
    // centre by default) by the same ratio so that the scale factor stays the exact one.
    if (subpixel_scale && size != abs_sz) {
      double adjustment = static_cast<double>(size) / abs_sz;
      adjustment = std::min(std::max(adjustment, -10.0), 10.0);
      const double t = alignment ? (*alignment)[d] : 0.5;
      const double center = (1 - t) * static_cast<double>(a) + t * b;
      a = static_cast<float>(std::min(std::max(center + (a - center) * adjustment, -1e9), 1e9));
      b = static_cast<float>(std::min(std::max(center + (b - center) * adjustment, -1e9), 1e9));
    }
    r.out_size[d] = size;
    r.roi_lo[d] = a;
    r.roi_hi[d] = b;
  }
  return r;
}

ResizeResult2D compute_resize_2d(const ResizeArgs& args, int64_t in_h, int64_t in_w) {
  ResizeResult r = compute_resize(args, {in_h, in_w});
  ResizeResult2D o;
  o.out_h = r.out_size[0];
  o.out_w = r.out_size[1];
  o.y0 = r.roi_lo[0];
  o.x0 = r.roi_lo[1];
  o.y1 = r.roi_hi[0];
  o.x1 = r.roi_hi[1];
  return o;
}

}  // namespace stoker
