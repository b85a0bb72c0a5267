// crop: a window of each image (or of each frame / volume), DALI's crop window arguments.
#include "ops/geometry/geometry_common.h"

namespace stoker {
namespace {

class Crop : public geometry::SliceOperator {
 public:
  explicit Crop(const OpSpec& spec)
      : SliceOperator(spec), crop_(spec_), policy_(geometry::out_of_bounds_policy(spec)) {
    if (spec.has("dtype")) dtype_ = static_cast<DType>(spec.get<int64_t>("dtype"));
    fill_ = spec.get<std::vector<double>>("fill_values");
  }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const std::string& layout = in.layout();
    DType out_type = dtype_ == DType::kNone ? in.dtype() : dtype_;
    if (!geometry::slice_converts(out_type, in.dtype()))
      spec_.arg_error("dtype", std::string("must be FLOAT, FLOAT16, UINT8, INT8 or the input's type (") +
                                   dtype_name(in.dtype()) + "), got " + dtype_name(out_type) + ".");
    int c_axis = geometry::axis_index(layout, 'C');
    const int64_t n = static_cast<int64_t>(in.size());
    args_.assign(n, {});
    OutputDesc desc{out_type, layout, {}, crop_.size_arg()};
    for (int64_t i = 0; i < n; ++i) {
      kernels::SliceArgs& a = args_[i];
      a.in_shape = in.shape(i);
      crop_.compute(ws, i, a.in_shape, layout, a.anchor, a.shape);
      geometry::apply_out_of_bounds(policy_, a.in_shape, a.anchor, a.shape, "the crop window");
      geometry::check_fill_values(spec_, "fill_values", fill_, c_axis >= 0 ? a.in_shape[c_axis] : -1);
      a.channel_dim = c_axis;
      a.fill = fill_;
      desc.shapes.push_back(kernels::slice_output_shape(a));
    }
    return {desc};
  }


 private:
  geometry::CropWindow crop_;
  geometry::OutOfBounds policy_;
  DType dtype_ = DType::kNone;
  std::vector<double> fill_;
};

}  // namespace

STOKER_REGISTER_OP_NAMED(crop, "crop") {
  schema
      .doc("Crops images to a window of the given size at a normalised position (crop_pos_x/y/z: "
           "0 = left/top, 1 = right/bottom). Sequences (FHWC) get the same window on every frame.")
      .inputs(1, 1, {"input"})
      .outputs(1)
      .input_layouts({"HWC", "CHW", "DHWC", "CDHW", "FHWC", "FCHW", "CFHW", "FDHWC", "FCDHW", "CFDHW"})
      .arg({.name = "dtype", .type = ArgType::kDType, .optional = true,
            .doc = "Output type: FLOAT, FLOAT16, UINT8 or INT8 (rounded and saturated); default: "
                   "the input's type."});
  geometry::add_crop_args(schema);
  geometry::add_out_of_bounds_args(schema);
  schema.backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<Crop>(s); })
      STOKER_SLICE_GPU_BACKEND(Crop);
}

}  // namespace stoker
