// slice: a window given by start/end/shape arguments (absolute or relative) or by the anchor and
// shape inputs, over chosen axes; the other axes are kept whole.

#include "ops/geometry/geometry_common.h"

namespace stoker {
namespace {

class Slice : public geometry::SliceOperator {
 public:
  explicit Slice(const OpSpec& spec)
      : SliceOperator(spec), policy_(geometry::out_of_bounds_policy(spec)), window_(spec_),
        axes_(spec_, /*exclusive=*/false) {
    if (spec.has("dtype")) dtype_ = static_cast<DType>(spec.get<int64_t>("dtype"));
    fill_ = spec.get<std::vector<double>>("fill_values");
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
    std::vector<int64_t> start, end;
    for (int64_t i = 0; i < n; ++i) {
      kernels::SliceArgs& a = args_[i];
      const Shape& shape = in.shape(i);
      a.in_shape = shape;
      a.anchor.assign(nd, 0);
      a.shape = shape;
      window_.compute(ws, i, axes, shape, start, end);
      for (int j = 0; j < naxes; ++j) set_axis(a, axes[j], start[j], end[j], i);
      geometry::apply_out_of_bounds(policy_, shape, a.anchor, a.shape, "the slice");
      geometry::check_fill_values(spec_, "fill_values", fill_, c_axis >= 0 ? shape[c_axis] : -1);
      a.channel_dim = c_axis;
      a.fill = fill_;
      desc.shapes.push_back(kernels::slice_output_shape(a));
    }
    return {desc};
  }


 private:
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
    if (axes_.given()) return axes_.resolve(layout, nd);
    // DALI's defaults: axis_names "WH"; data without H and W falls back to axes [1, 0].
    const int h = geometry::axis_index(layout, 'H'), w = geometry::axis_index(layout, 'W');
    if (h >= 0 && w >= 0) return {w, h};
    if (nd >= 2) return {1, 0};
    return {0};
  }

  geometry::OutOfBounds policy_;
  geometry::SliceWindow window_;
  DType dtype_ = DType::kNone;
  std::vector<double> fill_;
  geometry::AxisArgs axes_;
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
      .arg({.name = "axes", .type = ArgType::kIntList, .optional = true,
            .doc = "Axes (indices) the slice values refer to, in order. Default [1, 0]; "
                   "axis_names wins when both are given."})
      .arg({.name = "axis_names", .type = ArgType::kString, .optional = true,
            .doc = "Axes (layout letters) the slice values refer to, in order. Default 'WH'."})
      .arg({.name = "dtype", .type = ArgType::kDType, .optional = true,
            .doc = "Output type: FLOAT, FLOAT16, UINT8 or INT8; default: the input's type."});
  geometry::add_slice_args(schema, "input's", "elements");
  geometry::add_out_of_bounds_args(schema);
  schema.backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<Slice>(s); })
      STOKER_SLICE_GPU_BACKEND(Slice);
}

}  // namespace stoker
