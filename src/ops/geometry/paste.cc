// paste: puts each image on a larger canvas of fill_value (ratio times its size, at least
// min_canvas_size), at a normalised position. DALI has it on the GPU only; this is its CPU twin.
#include "ops/geometry/geometry_common.h"

namespace stoker {
namespace {

class Paste : public geometry::SliceOperator {
 public:
  explicit Paste(const OpSpec& spec) : SliceOperator(spec) {
    n_channels_ = spec.get<int64_t>("n_channels");
    fill_ = spec.get<std::vector<double>>("fill_value");
    if (fill_.size() != 1 && static_cast<int64_t>(fill_.size()) != n_channels_)
      spec.arg_error("fill_value", "must have n_channels (" + std::to_string(n_channels_) +
                                       ") values, got " + std::to_string(fill_.size()) + ".");
  }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const std::string& layout = in.layout();
    const int h = geometry::axis_index(layout, 'H'), w = geometry::axis_index(layout, 'W'),
              c = geometry::axis_index(layout, 'C');
    if (h < 0 || w < 0 || c < 0)
      fail(ErrorKind::kInvalidArgument, "expects images with H, W and C axes (HWC, FHWC, CHW), got " +
                                            geometry::layout_repr(layout) + ".");
    const int64_t n = static_cast<int64_t>(in.size());
    args_.assign(n, {});
    OutputDesc desc{in.dtype(), layout, {}};
    for (int64_t i = 0; i < n; ++i) {
      kernels::SliceArgs& a = args_[i];
      a.in_shape = in.shape(i);
      const int64_t H = a.in_shape[h], W = a.in_shape[w];
      if (a.in_shape[c] != n_channels_)
        spec_.arg_error("n_channels", "is " + std::to_string(n_channels_) + ", but sample " +
                                          std::to_string(i) + " has " + std::to_string(a.in_shape[c]) +
                                          " channels.");
      float ratio = static_cast<float>(ws.scalar_arg("ratio", i, 1.0));
      if (!(ratio >= 1.0f))
        spec_.arg_error("ratio", "must be >= 1 (the canvas is never smaller than the image), got " +
                                     std::to_string(ratio) + " for sample " + std::to_string(i) + ".");
      float min_canvas = static_cast<float>(ws.scalar_arg("min_canvas_size", i, 0.0));
      if (!(min_canvas >= 0.0f))
        spec_.arg_error("min_canvas_size", "must be >= 0, got " + std::to_string(min_canvas) + ".");
      // float32 and truncation, as DALI computes the canvas and the position
      int64_t new_h = std::max(static_cast<int64_t>(ratio * H), static_cast<int64_t>(min_canvas));
      int64_t new_w = std::max(static_cast<int64_t>(ratio * W), static_cast<int64_t>(min_canvas));
      float px = static_cast<float>(geometry::unit_arg(ws, "paste_x", i, 0.5));
      float py = static_cast<float>(geometry::unit_arg(ws, "paste_y", i, 0.5));
      a.anchor.assign(a.in_shape.size(), 0);
      a.shape = a.in_shape;
      a.anchor[h] = -static_cast<int64_t>(py * static_cast<float>(new_h - H));
      a.anchor[w] = -static_cast<int64_t>(px * static_cast<float>(new_w - W));
      a.shape[h] = new_h;
      a.shape[w] = new_w;
      a.channel_dim = c;
      a.fill = fill_;
      desc.shapes.push_back(kernels::slice_output_shape(a));
    }
    return {desc};
  }


 private:
  int64_t n_channels_ = 3;
  std::vector<double> fill_;
};

}  // namespace

STOKER_REGISTER_OP_NAMED(paste, "paste") {
  schema
      .doc("Pastes each image onto a canvas filled with fill_value: the canvas is `ratio` times the "
           "image (at least min_canvas_size), the image's corner lands at paste_x/paste_y (0..1) of "
           "the free space.")
      .inputs(1, 1, {"input"})
      .outputs(1)
      .input_layouts({"HWC", "FHWC", "CHW"})
      .arg({.name = "ratio", .type = ArgType::kFloat, .doc = "Canvas size over image size (>= 1).",
            .tensor = true, .min = 1.0})
      .arg({.name = "fill_value", .type = ArgType::kFloatList,
            .doc = "Colour of the canvas, one value per channel.", .list_min = 1})
      .arg({.name = "n_channels", .type = ArgType::kInt, .default_value = int64_t{3},
            .doc = "Number of channels of the images.", .min = 1})
      .arg({.name = "paste_x", .type = ArgType::kFloat, .default_value = 0.5,
            .doc = "Horizontal position of the image in the free space (0: left, 1: right).",
            .tensor = true, .min = 0.0, .max = 1.0})
      .arg({.name = "paste_y", .type = ArgType::kFloat, .default_value = 0.5,
            .doc = "Vertical position of the image in the free space (0: top, 1: bottom).",
            .tensor = true, .min = 0.0, .max = 1.0})
      .arg({.name = "min_canvas_size", .type = ArgType::kFloat, .default_value = 0.0,
            .doc = "Smallest canvas height and width.", .tensor = true, .min = 0.0})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<Paste>(s); })
      STOKER_SLICE_GPU_BACKEND(Paste);
}

}  // namespace stoker
