// flip: reverses the W (horizontal), H (vertical) and D (depthwise) axes, per sample.
#include "ops/geometry/geometry_common.h"

namespace stoker {
namespace {

class Flip : public geometry::SliceOperator {
 public:
  explicit Flip(const OpSpec& spec) : SliceOperator(spec) {}

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const std::string& layout = in.layout();
    const int nd = in.ndim();
    const int64_t n = static_cast<int64_t>(in.size());
    args_.assign(n, {});
    static const struct { const char* arg; char axis; double fallback; } kAxes[] = {
        {"horizontal", 'W', 1}, {"vertical", 'H', 0}, {"depthwise", 'D', 0}};
    for (int64_t i = 0; i < n; ++i) {
      kernels::SliceArgs& a = args_[i];
      a.in_shape = in.shape(i);
      a.anchor.assign(nd, 0);
      a.shape = a.in_shape;
      a.flip.assign(nd, false);
      for (const auto& f : kAxes) {
        if (ws.scalar_arg(f.arg, i, f.fallback) == 0) continue;
        int axis = geometry::axis_index(layout, f.axis);
        // DALI ignores a flip along an axis the data does not have (depthwise on images), but
        // without any layout there is no telling which axis is meant.
        if (axis < 0 && layout.empty())
          spec_.arg_error(f.arg, std::string("asks for a flip along ") + f.axis +
                                     ", but the input has no layout to find that axis in. Give the "
                                     "data a layout, e.g. fn.transpose(x, perm=..., output_layout='HWC').");
        if (axis >= 0) a.flip[axis] = true;
      }
    }
    return {OutputDesc{in.dtype(), layout, in.shapes()}};
  }


 private:
};

}  // namespace

STOKER_REGISTER_OP_NAMED(flip, "flip") {
  schema.doc("Flips each sample horizontally (W), vertically (H) and/or depthwise (D). Works on any "
             "layout with those axes: HWC, CHW, FHWC (every frame), DHWC, ...")
      .inputs(1, 1, {"input"})
      .outputs(1)
      .input_layouts({"FDHWC", "FHWC", "DHWC", "HWC", "FCDHW", "FCHW", "CDHW", "CHW"})
      .arg({.name = "horizontal", .type = ArgType::kInt, .default_value = int64_t{1},
            .doc = "Flip the horizontal axis (W) if nonzero.", .tensor = true})
      .arg({.name = "vertical", .type = ArgType::kInt, .default_value = int64_t{0},
            .doc = "Flip the vertical axis (H) if nonzero.", .tensor = true})
      .arg({.name = "depthwise", .type = ArgType::kInt, .default_value = int64_t{0},
            .doc = "Flip the depth axis (D) if nonzero.", .tensor = true})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<Flip>(s); })
      STOKER_SLICE_GPU_BACKEND(Flip);
}

}  // namespace stoker
