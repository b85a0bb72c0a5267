// slice: a window given by start/end/shape arguments (absolute or relative) or by the anchor and
// shape inputs, over chosen axes; the other axes are kept whole.
#include <cmath>

#include "ops/geometry/geometry_common.h"

namespace stoker {
namespace {

const char* const kNamedStart[] = {"start", "rel_start"};
const char* const kNamedEnd[] = {"end", "rel_end", "shape", "rel_shape"};

class Slice : public geometry::SliceOperator {
 public:
  explicit Slice(const OpSpec& spec) : SliceOperator(spec), policy_(geometry::out_of_bounds_policy(spec)) {
    normalized_anchor_ = spec.get<bool>("normalized_anchor");
    normalized_shape_ = spec.get<bool>("normalized_shape");
    if (spec.has("dtype")) dtype_ = static_cast<DType>(spec.get<int64_t>("dtype"));
    fill_ = spec.get<std::vector<double>>("fill_values");
    for (const char* a : kNamedStart)
      if (given(a)) start_arg_ = start_arg_.empty() ? a : conflict(start_arg_, a);
    for (const char* a : kNamedEnd)
      if (given(a)) end_arg_ = end_arg_.empty() ? a : conflict(end_arg_, a);
    bool named = !start_arg_.empty() || !end_arg_.empty();
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
    if (spec.has("axis_names")) {
      axis_names_ = spec.get<std::string>("axis_names");
    } else if (spec.has("axes")) {
      axes_ = spec.get<std::vector<int64_t>>("axes");
    }
  }

  bool setup_reads_input_data() const override { return spec_.num_inputs == 3; }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const std::string& layout = in.layout();
    const int nd = in.ndim();
    DType out_type = dtype_ == DType::kNone ? in.dtype() : dtype_;
    if (!geometry::slice_converts(out_type, in.dtype()))
      spec_.arg_error("dtype", std::string("must be FLOAT, FLOAT16, UINT8, INT8 or the input's type (") +
                                   dtype_name(in.dtype()) + "), got " + dtype_name(out_type) + ".");
    std::vector<int> axes = resolve_axes(layout, nd);
    const int naxes = static_cast<int>(axes.size());
    int c_axis = geometry::axis_index(layout, 'C');
    const int64_t n = static_cast<int64_t>(in.size());
    args_.assign(n, {});
    OutputDesc desc{out_type, layout, {}};
    for (int64_t i = 0; i < n; ++i) {
      kernels::SliceArgs& a = args_[i];
      const Shape& shape = in.shape(i);
      a.in_shape = shape;
      a.anchor.assign(nd, 0);
      a.shape = shape;
      if (spec_.num_inputs == 3) {
        std::vector<double> an = geometry::sample_values(ws.input(1), i);
        std::vector<double> sh = geometry::sample_values(ws.input(2), i);
        check_count("anchor input", an.size(), naxes, i);
        check_count("shape input", sh.size(), naxes, i);
        for (int j = 0; j < naxes; ++j) {
          int d = axes[j];
          double e = static_cast<double>(shape[d]), av = an[j], sv = sh[j];
          int64_t end;
          if (normalized_anchor_ && normalized_shape_) {
            end = std::llround((av + sv) * e);  // one rounding of the sum, as DALI
            av *= e;
          } else {
            if (normalized_anchor_) av *= e;
            if (normalized_shape_) sv *= e;
            end = std::llround(av + sv);
          }
          set_axis(a, d, std::llround(av), end, i);
        }
      } else {
        std::vector<double> st, en;
        if (!start_arg_.empty()) {
          st = ws.list_arg(start_arg_, i);
          check_count("argument '" + start_arg_ + "'", st.size(), naxes, i);
        }
        if (!end_arg_.empty()) {
          en = ws.list_arg(end_arg_, i);
          check_count("argument '" + end_arg_ + "'", en.size(), naxes, i);
        }
        for (int j = 0; j < naxes; ++j) {
          int d = axes[j];
          double e = static_cast<double>(shape[d]);
          double s = st.empty() ? 0.0 : start_arg_ == "rel_start" ? st[j] * e : st[j];
          double f = e;
          if (end_arg_ == "end") f = en[j];
          else if (end_arg_ == "rel_end") f = en[j] * e;
          else if (end_arg_ == "shape") f = s + en[j];
          else if (end_arg_ == "rel_shape") f = s + en[j] * e;
          set_axis(a, d, std::llround(s), std::llround(f), i);
        }
      }
      geometry::apply_out_of_bounds(policy_, shape, a.anchor, a.shape, "the slice");
      geometry::check_fill_values(spec_, "fill_values", fill_, c_axis >= 0 ? shape[c_axis] : -1);
      a.channel_dim = c_axis;
      a.fill = fill_;
      desc.shapes.push_back(kernels::slice_output_shape(a));
    }
    return {desc};
  }


 private:
  bool given(const std::string& a) const { return spec_.has(a) || spec_.is_tensor_arg(a); }

  std::string conflict(const std::string& a, const std::string& b) const {
    spec_.arg_error(b, "cannot be given together with '" + a + "'; give one of them.");
  }

  void check_count(const std::string& what, size_t got, int want, int64_t i) const {
    if (static_cast<int>(got) != want)
      fail(ErrorKind::kInvalidArgument,
           what + " has " + std::to_string(got) + " values for sample " + std::to_string(i) +
               ", expected " + std::to_string(want) + " (one per sliced axis; see axes / axis_names).");
  }

  void set_axis(kernels::SliceArgs& a, int d, int64_t start, int64_t end, int64_t i) const {
    if (end < start)
      fail(ErrorKind::kInvalidArgument,
           "the slice of axis " + std::to_string(d) + " ends before it starts (start " +
               std::to_string(start) + ", end " + std::to_string(end) + ") for sample " +
               std::to_string(i) + "; the shape must be >= 0.");
    a.anchor[d] = start;
    a.shape[d] = end - start;
  }

  std::vector<int> resolve_axes(const std::string& layout, int nd) const {
    std::vector<int> axes;
    std::string names = axis_names_;
    if (names.empty() && axes_.empty()) {
      // DALI's defaults: axis_names "WH"; data without H and W falls back to axes [1, 0].
      if (geometry::axis_index(layout, 'W') >= 0 && geometry::axis_index(layout, 'H') >= 0) names = "WH";
      else if (nd >= 2) return {1, 0};
      else return {0};
    }
    if (!names.empty()) {
      for (char c : names) {
        int d = geometry::axis_index(layout, c);
        if (d < 0)
          spec_.arg_error("axis_names", "names axis '" + std::string(1, c) + "', which the input layout " +
                                            geometry::layout_repr(layout) + " does not have.");
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

  geometry::OutOfBounds policy_;
  bool normalized_anchor_ = true, normalized_shape_ = true;
  DType dtype_ = DType::kNone;
  std::vector<double> fill_;
  std::string start_arg_, end_arg_;
  std::string axis_names_;
  std::vector<int64_t> axes_;
};

}  // namespace

STOKER_REGISTER_OP_NAMED(slice, "slice") {
  schema
      .doc("Extracts a slice: start and end (or shape) per sliced axis, absolute (start, end, "
           "shape) or relative to the extent (rel_start, rel_end, rel_shape); or the anchor and "
           "shape inputs, normalised or absolute (normalized_anchor, normalized_shape). Axes not "
           "sliced are kept whole.")
      .inputs(1, 3, {"data", "anchor", "shape"})
      .outputs(1)
      .legacy_name("Slice")
      .arg({.name = "axes", .type = ArgType::kIntList, .optional = true,
            .doc = "Axes (indices) the slice values refer to, in order. Default [1, 0]; "
                   "axis_names wins when both are given."})
      .arg({.name = "axis_names", .type = ArgType::kString, .optional = true,
            .doc = "Axes (layout letters) the slice values refer to, in order. Default 'WH'."})
      .arg({.name = "normalized_anchor", .type = ArgType::kBool, .default_value = true,
            .doc = "The anchor input is relative (0..1) to the extent, not in elements."})
      .arg({.name = "normalized_shape", .type = ArgType::kBool, .default_value = true,
            .doc = "The shape input is relative (0..1) to the extent, not in elements."})
      .arg({.name = "start", .type = ArgType::kFloatList, .optional = true,
            .doc = "Start of the slice per axis (absolute).", .tensor = true})
      .arg({.name = "rel_start", .type = ArgType::kFloatList, .optional = true,
            .doc = "Start of the slice per axis, relative to the extent.", .tensor = true})
      .arg({.name = "end", .type = ArgType::kFloatList, .optional = true,
            .doc = "End of the slice per axis (absolute, exclusive).", .tensor = true})
      .arg({.name = "rel_end", .type = ArgType::kFloatList, .optional = true,
            .doc = "End of the slice per axis, relative to the extent.", .tensor = true})
      .arg({.name = "shape", .type = ArgType::kFloatList, .optional = true,
            .doc = "Extent of the slice per axis (absolute).", .tensor = true})
      .arg({.name = "rel_shape", .type = ArgType::kFloatList, .optional = true,
            .doc = "Extent of the slice per axis, relative to the input's.", .tensor = true})
      .arg({.name = "dtype", .type = ArgType::kDType, .optional = true,
            .doc = "Output type: FLOAT, FLOAT16, UINT8 or INT8; default: the input's type."});
  geometry::add_out_of_bounds_args(schema);
  schema.backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<Slice>(s); })
      STOKER_SLICE_GPU_BACKEND(Slice);
}

}  // namespace stoker
