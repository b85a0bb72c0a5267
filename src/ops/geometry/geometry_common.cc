#include "ops/geometry/geometry_common.h"

#include <cmath>
#include <cstdio>
#include <type_traits>

namespace stoker {
namespace geometry {

std::string layout_repr(const std::string& layout) {
  return layout.empty() ? std::string("no layout") : "'" + layout + "'";
}

std::vector<double> sample_values(const Batch& b, int64_t i) {
  int64_t n = volume(b.shape(i));
  std::vector<double> r(n);
  visit_dtype(b.dtype(), [&](auto t) {
    using T = decltype(t);
    const T* p = b.data<T>(i);
    for (int64_t k = 0; k < n; ++k) r[k] = static_cast<double>(p[k]);
  });
  return r;
}

void add_out_of_bounds_args(OpSchema& s) {
  s.arg({.name = "out_of_bounds_policy", .type = ArgType::kString,
         .default_value = std::string("error"),
         .doc = "What to do when the window reaches outside the input: 'error' raises, 'pad' fills "
                "the outside with fill_values, 'trim_to_shape' shrinks the window to the input.",
         .choices = {"error", "pad", "trim_to_shape"}});
  s.arg({.name = "fill_values", .type = ArgType::kFloatList, .default_value = std::vector<double>{0.0},
         .doc = "Values of the padded area: one for all channels, or one per channel."});
}

OutOfBounds out_of_bounds_policy(const OpSpec& spec) {
  std::string p = spec.get<std::string>("out_of_bounds_policy");
  if (p == "pad") return OutOfBounds::kPad;
  if (p == "trim_to_shape") return OutOfBounds::kTrimToShape;
  return OutOfBounds::kError;
}

void apply_out_of_bounds(OutOfBounds policy, const Shape& in_shape, std::vector<int64_t>& anchor,
                         std::vector<int64_t>& shape, const std::string& what) {
  const size_t nd = in_shape.size();
  if (policy == OutOfBounds::kPad) return;
  if (policy == OutOfBounds::kTrimToShape) {
    for (size_t d = 0; d < nd; ++d) {
      int64_t lo = std::clamp<int64_t>(anchor[d], 0, in_shape[d]);
      int64_t hi = std::clamp<int64_t>(anchor[d] + shape[d], lo, in_shape[d]);
      anchor[d] = lo;
      shape[d] = hi - lo;
    }
    return;
  }
  for (size_t d = 0; d < nd; ++d) {
    if (anchor[d] < 0 || anchor[d] + shape[d] > in_shape[d]) {
      Shape end(nd);
      for (size_t k = 0; k < nd; ++k) end[k] = anchor[k] + shape[k];
      fail(ErrorKind::kInvalidArgument,
           what + " from " + to_string(Shape(anchor.begin(), anchor.end())) + " to " + to_string(end) +
               " (exclusive) reaches outside the input of shape " + to_string(in_shape) +
               ". Keep it inside, or set out_of_bounds_policy='pad' (fill the outside) or "
               "'trim_to_shape' (shrink the window).");
    }
  }
}

void check_fill_values(const OpSpec& spec, const std::string& arg, const std::vector<double>& fill,
                       int64_t channels) {
  if (fill.size() <= 1) return;
  if (channels < 0)
    spec.arg_error(arg, "has " + std::to_string(fill.size()) +
                            " values, but the input's layout has no channel axis 'C' to match them "
                            "with; give one value.");
  if (static_cast<int64_t>(fill.size()) < channels)
    spec.arg_error(arg, "must have one value or one per channel (" + std::to_string(channels) +
                            "), got " + std::to_string(fill.size()) + ".");
}

void add_crop_args(OpSchema& s) {
  s.arg({.name = "crop", .type = ArgType::kFloatList, .optional = true,
         .doc = "Shape of the crop window: (crop_H, crop_W), or (crop_D, crop_H, crop_W) for volumes. "
                "Not together with crop_h, crop_w and crop_d.",
         .tensor = true, .list_min = 2, .list_max = 3});
  s.arg({.name = "crop_h", .type = ArgType::kFloat, .default_value = 0.0,
         .doc = "Crop window height in pixels; 0: no crop in this axis. Give with crop_w.",
         .tensor = true, .min = 0.0});
  s.arg({.name = "crop_w", .type = ArgType::kFloat, .default_value = 0.0,
         .doc = "Crop window width in pixels; 0: no crop in this axis. Give with crop_h.",
         .tensor = true, .min = 0.0});
  s.arg({.name = "crop_d", .type = ArgType::kFloat, .default_value = 0.0,
         .doc = "Crop window depth (volumes, or frames of a sequence without a D axis). Give with "
                "crop_h and crop_w.",
         .tensor = true, .min = 0.0});
  const char* pos_doc = "Normalised position (0..1) of the window's start: the start is "
                        "round(pos * (extent - window extent)).";
  s.arg({.name = "crop_pos_x", .type = ArgType::kFloat, .default_value = 0.5, .doc = pos_doc,
         .tensor = true, .min = 0.0, .max = 1.0});
  s.arg({.name = "crop_pos_y", .type = ArgType::kFloat, .default_value = 0.5, .doc = pos_doc,
         .tensor = true, .min = 0.0, .max = 1.0});
  s.arg({.name = "crop_pos_z", .type = ArgType::kFloat, .default_value = 0.5, .doc = pos_doc,
         .tensor = true, .min = 0.0, .max = 1.0});
  s.arg({.name = "rounding", .type = ArgType::kString, .default_value = std::string("round"),
         .doc = "How window starts become whole pixels: 'round' (halves away from zero) or "
                "'truncate'. Window extents are always truncated, as in DALI.",
         .choices = {"round", "truncate"}});
}

namespace {

bool given(const OpSpec& spec, const std::string& name) {
  return spec.is_tensor_arg(name) || (spec.has(name) && spec.get<double>(name) != 0.0);
}

}  // namespace

CropWindow::CropWindow(const OpSpec& spec) : spec_(spec) {
  has_crop_ = spec.has("crop") || spec.is_tensor_arg("crop");
  bool h = given(spec, "crop_h"), w = given(spec, "crop_w");
  has_d_ = given(spec, "crop_d");
  if (h != w)
    spec.arg_error(h ? "crop_w" : "crop_h", "must be given together with '" +
                                                std::string(h ? "crop_h" : "crop_w") + "'.");
  has_hw_ = h;
  if (has_d_ && !has_hw_) spec.arg_error("crop_d", "must be given together with 'crop_h' and 'crop_w'.");
  if (has_crop_ && has_hw_)
    spec.arg_error("crop", "cannot be combined with 'crop_h', 'crop_w' or 'crop_d'; use one or the other.");
  truncate_ = spec.get<std::string>("rounding") == "truncate";
}

AxisArgs::AxisArgs(const OpSpec& spec, bool exclusive) : spec_(spec) {
  if (spec.has("axis_names")) names_ = spec.get<std::string>("axis_names");
  if (spec.has("axes")) axes_ = spec.get<std::vector<int64_t>>("axes");
  if (exclusive && !names_.empty() && !axes_.empty())
    spec.arg_error("axis_names", "cannot be given together with 'axes'; use one of them.");
}

std::vector<int> AxisArgs::resolve(const std::string& layout, int nd) const {
  std::vector<int> axes;
  if (!names_.empty()) {
    for (char c : names_) {
      int d = axis_index(layout, c);
      if (d < 0)
        spec_.arg_error("axis_names", "names axis '" + std::string(1, c) +
                                          "', which the input layout " + layout_repr(layout) +
                                          " does not have.");
      axes.push_back(d);
    }
    return axes;
  }
  for (int64_t x : axes_) {
    if (x < -nd || x >= nd)
      spec_.arg_error("axes", "has axis " + std::to_string(x) + ", out of range for " +
                                  std::to_string(nd) + "-dimensional input.");
    axes.push_back(static_cast<int>(x < 0 ? x + nd : x));
  }
  return axes;
}

void add_slice_args(OpSchema& s, const std::string& extent, const std::string& unit) {
  s.arg({.name = "normalized_anchor", .type = ArgType::kBool, .default_value = true,
         .doc = "A float anchor input is relative (0..1) to the extent, not in " + unit +
                "; an integer one is always in " + unit + "."});
  s.arg({.name = "normalized_shape", .type = ArgType::kBool, .default_value = true,
         .doc = "A float shape input is relative (0..1) to the extent, not in " + unit +
                "; an integer one is always in " + unit + "."});
  s.arg({.name = "start", .type = ArgType::kFloatList, .optional = true,
         .doc = "Start of the slice per axis (absolute).", .tensor = true});
  s.arg({.name = "rel_start", .type = ArgType::kFloatList, .optional = true,
         .doc = "Start of the slice per axis, relative to the extent.", .tensor = true});
  s.arg({.name = "end", .type = ArgType::kFloatList, .optional = true,
         .doc = "End of the slice per axis (absolute, exclusive).", .tensor = true});
  s.arg({.name = "rel_end", .type = ArgType::kFloatList, .optional = true,
         .doc = "End of the slice per axis, relative to the extent.", .tensor = true});
  s.arg({.name = "shape", .type = ArgType::kFloatList, .optional = true,
         .doc = "Extent of the slice per axis (absolute).", .tensor = true});
  s.arg({.name = "rel_shape", .type = ArgType::kFloatList, .optional = true,
         .doc = "Extent of the slice per axis, relative to the " + extent + ".", .tensor = true});
}

SliceWindow::SliceWindow(const OpSpec& spec)
    : spec_(spec),
      normalized_anchor_(spec.get<bool>("normalized_anchor")),
      normalized_shape_(spec.get<bool>("normalized_shape")) {
  auto given = [&](const char* a) { return spec.has(a) || spec.is_tensor_arg(a); };
  auto pick = [&](std::string& chosen, std::initializer_list<const char*> names) {
    for (const char* a : names) {
      if (!given(a)) continue;
      if (!chosen.empty())
        spec.arg_error(a, "cannot be given together with '" + chosen + "'; give one of them.");
      chosen = a;
    }
  };
  pick(start_arg_, {"start", "rel_start"});
  pick(end_arg_, {"end", "rel_end", "shape", "rel_shape"});
  const bool named = !start_arg_.empty() || !end_arg_.empty();
  if (spec.num_inputs == 2)
    fail(ErrorKind::kTypeMismatch, spec.display_name() +
                                       ": the anchor and shape inputs go together; give both, or "
                                       "neither and use start/end/shape arguments.");
  if (spec.num_inputs == 3 && named)
    spec.arg_error(start_arg_.empty() ? end_arg_ : start_arg_,
                   "cannot be combined with the anchor and shape inputs; use one or the other.");
  if (spec.num_inputs == 1 && !named)
    fail(ErrorKind::kInvalidArgument,
         spec.display_name() + ": no slice given. Give start/rel_start with end/rel_end/shape/"
                               "rel_shape, or the anchor and shape inputs.");
}

void SliceWindow::check_count(const std::string& what, size_t got, size_t want,
                              int64_t sample) const {
  if (got != want)
    fail(ErrorKind::kInvalidArgument,
         what + " has " + std::to_string(got) + " values for sample " + std::to_string(sample) +
             ", expected " + std::to_string(want) + " (one per sliced axis; see axes / axis_names).");
}

void SliceWindow::compute(const Workspace& ws, int64_t i, const std::vector<int>& axes,
                          const std::vector<int64_t>& extents, std::vector<int64_t>& start,
                          std::vector<int64_t>& end) const {
  const size_t n = axes.size();
  start.assign(n, 0);
  end.assign(n, 0);
  if (spec_.num_inputs == 3) {
    std::vector<double> an = sample_values(ws.input(1), i);
    std::vector<double> sh = sample_values(ws.input(2), i);
    check_count("anchor input", an.size(), n, i);
    check_count("shape input", sh.size(), n, i);
    // DALI reads integer anchor/shape inputs as absolute whatever normalized_anchor/_shape say.
    const bool norm_anchor = normalized_anchor_ && !is_integer(ws.input(1).dtype());
    const bool norm_shape = normalized_shape_ && !is_integer(ws.input(2).dtype());
    for (size_t j = 0; j < n; ++j) {
      const double e = static_cast<double>(extents[axes[j]]);
      double av = an[j], sv = sh[j];
      if (norm_anchor && norm_shape) {
        end[j] = std::llround((av + sv) * e);  // one rounding of the sum, as DALI
        av *= e;
      } else {
        if (norm_anchor) av *= e;
        if (norm_shape) sv *= e;
        end[j] = std::llround(av + sv);
      }
      start[j] = std::llround(av);
    }
    return;
  }
  std::vector<double> st, en;
  if (!start_arg_.empty()) {
    st = ws.list_arg(start_arg_, i);
    check_count("argument '" + start_arg_ + "'", st.size(), n, i);
  }
  if (!end_arg_.empty()) {
    en = ws.list_arg(end_arg_, i);
    check_count("argument '" + end_arg_ + "'", en.size(), n, i);
  }
  for (size_t j = 0; j < n; ++j) {
    const double e = static_cast<double>(extents[axes[j]]);
    const double s = st.empty() ? 0.0 : start_arg_ == "rel_start" ? st[j] * e : st[j];
    double f = e;
    if (end_arg_ == "end") f = en[j];
    else if (end_arg_ == "rel_end") f = en[j] * e;
    else if (end_arg_ == "shape") f = s + en[j];
    else if (end_arg_ == "rel_shape") f = s + en[j] * e;
    start[j] = std::llround(s);
    end[j] = std::llround(f);
  }
}

double unit_arg(const Workspace& ws, const std::string& name, int64_t sample, double fallback) {
  double v = ws.scalar_arg(name, sample, fallback);
  if (!(v >= 0.0 && v <= 1.0))
    ws.spec->arg_error(name, "must be in [0, 1], got " + std::to_string(v) + " for sample " +
                                 std::to_string(sample) + ".");
  return v;
}

void CropWindow::compute(const Workspace& ws, int64_t i, const Shape& shape,
                         const std::string& layout, std::vector<int64_t>& anchor,
                         std::vector<int64_t>& window) const {
  const int nd = static_cast<int>(shape.size());
  anchor.assign(nd, 0);
  window.assign(shape.begin(), shape.end());
  if (!has_crop_ && !has_hw_) return;
  int h = axis_index(layout, 'H'), w = axis_index(layout, 'W'), d = axis_index(layout, 'D');
  if (d < 0) d = axis_index(layout, 'F');  // crop_d on a sequence crops frames, as in DALI
  if (h < 0 || w < 0)
    fail(ErrorKind::kInvalidArgument, "cropping needs an input layout with H and W axes, got " +
                                          layout_repr(layout) + ".");
  double ch = 0, cw = 0, cd = 0;
  if (has_crop_) {
    std::vector<double> c = ws.list_arg("crop", i);
    if (c.size() != 2 && c.size() != 3)
      spec_.arg_error("crop", "takes 2 values (H, W) or 3 (D, H, W), got " + std::to_string(c.size()) +
                                  " for sample " + std::to_string(i) + ".");
    if (c.size() == 3) cd = c[0];
    ch = c[c.size() - 2];
    cw = c[c.size() - 1];
    if (c.size() == 3 && d < 0)
      spec_.arg_error("crop", "has 3 values (D, H, W), but the input layout " + layout_repr(layout) +
                                  " has no D (or F) axis.");
  } else {
    ch = ws.scalar_arg("crop_h", i, 0);
    cw = ws.scalar_arg("crop_w", i, 0);
    if (has_d_) {
      cd = ws.scalar_arg("crop_d", i, 0);
      if (d < 0)
        spec_.arg_error("crop_d", "was given, but the input layout " + layout_repr(layout) +
                                      " has no D (or F) axis.");
    }
  }
  auto place = [&](int axis, double extent, const char* pos_name, const char* extent_name) {
    if (axis < 0) return;
    if (!(extent >= 0))
      spec_.arg_error(extent_name, "must be >= 0, got " + std::to_string(extent) + " for sample " +
                                       std::to_string(i) + ".");
    // Past 2^62 the conversion to an integer is undefined; no memory holds such a window.
    if (extent > static_cast<double>(int64_t{1} << 62)) {
      char got[32];
      snprintf(got, sizeof(got), "%.0f", extent);
      spec_.arg_error(extent_name, std::string("must be at most 2^62, got ") + got + " for sample " +
                                       std::to_string(i) + ".");
    }
    // DALI truncates window extents (5.7 -> 5); 'rounding' is for the start only. An extent
    // below 1 becomes 0, which (as in DALI) means the axis is not cropped.
    int64_t e = static_cast<int64_t>(std::trunc(extent));
    if (e <= 0) return;
    double pos = unit_arg(ws, pos_name, i, 0.5);
    // float32 like DALI, so that ties land on the same pixel
    float a = static_cast<float>(pos) * static_cast<float>(shape[axis] - e);
    anchor[axis] = static_cast<int64_t>(truncate_ ? std::floor(a) : std::round(a));
    window[axis] = e;
  };
  place(h, ch, "crop_pos_y", has_crop_ ? "crop" : "crop_h");
  place(w, cw, "crop_pos_x", has_crop_ ? "crop" : "crop_w");
  place(d, cd, "crop_pos_z", has_crop_ ? "crop" : "crop_d");
}

bool slice_converts(DType out, DType in) {
  return out == in || out == DType::kFloat32 || out == DType::kFloat16 || out == DType::kUInt8 ||
         out == DType::kInt8;
}

void run_slice(const Batch& in, Batch& out, int64_t i, const kernels::SliceArgs& args) {
  visit_dtype(in.dtype(), [&](auto ti) {
    using In = decltype(ti);
    visit_dtype(out.dtype(), [&](auto to) {
      using Out = decltype(to);
      if constexpr (std::is_same_v<Out, In> || std::is_same_v<Out, float> ||
                    std::is_same_v<Out, float16> || std::is_same_v<Out, uint8_t> ||
                    std::is_same_v<Out, int8_t>) {
        kernels::slice_flip_normalize<Out, In>(out.data<Out>(i), in.data<In>(i), args);
      } else {
        STOKER_ASSERT(false, std::string("slice kernel has no ") + dtype_name(in.dtype()) + " -> " +
                                 dtype_name(out.dtype()) + " conversion");
      }
    });
  });
}

}  // namespace geometry
}  // namespace stoker
