// bbox_rotate: boxes carried through fn.rotate of their image (DALI's BBoxRotate). The boxes kept
// size the outputs, so they are computed in setup(), the samples on the thread pool.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/repr.h"
#include "kernels/cpu/detection/crops_rotate.h"
#include "kernels/cpu/warp/warp.h"
#include "pipeline/operator.h"

namespace stoker {
namespace {

class BBoxRotate : public Operator {
 public:
  explicit BBoxRotate(const OpSpec& spec) : Operator(spec) {
    const std::string layout = spec.get<std::string>("bbox_layout");
    if (layout != "xyXY" && layout != "xyWH")
      spec.arg_error("bbox_layout", "must be \"xyXY\" (left, top, right, bottom) or \"xyWH\" "
                                    "(left, top, width, height), got \"" + layout + "\".");
    args_.ltrb = layout == "xyXY";
    args_.normalized = spec.get<bool>("bbox_normalized");
    const std::string mode = spec.get<std::string>("mode");
    args_.mode = mode == "fixed"     ? kernels::BoxRotateMode::kFixed
                 : mode == "halfway" ? kernels::BoxRotateMode::kHalfway
                                     : kernels::BoxRotateMode::kExpand;
    args_.remove_threshold = spec.get<float>("remove_threshold");
    keep_size_ = spec.get<bool>("keep_size");
    has_size_ = spec.is_tensor_arg("size") ||
                (spec.has("size") && !spec.get<std::vector<double>>("size").empty());
    if (keep_size_ && has_size_)
      spec.arg_error("size", "cannot be given with keep_size=True: the canvas then keeps the "
                             "image's size. Leave out one of them.");
    const std::string sl = spec.get<std::string>("shape_layout");
    w_index_ = static_cast<int>(sl.find('W'));
    h_index_ = static_cast<int>(sl.find('H'));
    if (sl.find('W') == std::string::npos || sl.find('H') == std::string::npos ||
        sl.find('W') != sl.rfind('W') || sl.find('H') != sl.rfind('H'))
      spec.arg_error("shape_layout", "must name where the height and the width are in "
                                     "input_shape with one \"H\" and one \"W\" (\"HW\", \"HWC\", "
                                     "\"CHW\", ...), got \"" + sl + "\".");
  }

  bool setup_reads_input_data() const override { return true; }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& boxes = ws.input(0);
    const int64_t n = static_cast<int64_t>(boxes.size());
    const bool labels = ws.inputs.size() > 1;
    check_inputs(ws);
    std::vector<kernels::BoxRotateArgs> sample_args(n, args_);
    for (int64_t i = 0; i < n; ++i) sample_geometry(ws, i, &sample_args[i]);

    kept_.assign(n, {});
    out_boxes_.assign(n, {});
    ws.thread_pool->parallel_for(n, [&](int64_t i, int) {
      const int64_t nb = boxes.shape(i)[0];
      const float* in = boxes.data<float>(i);
      for (int64_t b = 0; b < nb; ++b) check_box(ws, i, b, in + 4 * b);
      out_boxes_[i].resize(static_cast<size_t>(nb) * 4);
      kept_[i] = kernels::rotate_boxes(out_boxes_[i].data(), in, nb, sample_args[i]);
    });

    std::vector<OutputDesc> out(1);
    out[0].dtype = DType::kFloat32;
    for (int64_t i = 0; i < n; ++i)
      out[0].shapes.push_back({static_cast<int64_t>(kept_[i].size()), 4});
    if (labels && spec_.num_outputs > 1) {
      const Batch& lab = ws.input(1);
      OutputDesc d;
      d.dtype = lab.dtype();
      d.layout = lab.layout();
      for (int64_t i = 0; i < n; ++i) {
        Shape s = lab.shape(i);
        s[0] = static_cast<int64_t>(kept_[i].size());
        d.shapes.push_back(s);
      }
      out.push_back(d);
    }
    return out;
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const std::vector<int32_t>& kept = kept_[i];
    std::memcpy(ws.output(0).data<float>(i), out_boxes_[i].data(), kept.size() * 4 * sizeof(float));
    if (ws.outputs.size() > 1) {
      const Batch& lab = ws.input(1);
      const int64_t nb = lab.shape(i)[0];
      const size_t row = nb > 0 ? lab.sample_bytes(i) / static_cast<size_t>(nb) : 0;
      const auto* src = static_cast<const uint8_t*>(lab[i].data);
      auto* dst = static_cast<uint8_t*>(ws.output(1)[i].data);
      for (size_t k = 0; k < kept.size(); ++k)
        std::memcpy(dst + k * row, src + static_cast<size_t>(kept[k]) * row, row);
    }
  }

 private:
  int64_t whole_index(const Workspace& ws, int64_t i) const {
    return ws.origins ? (*ws.origins)[i] : i;
  }
  std::string where(const Workspace& ws, int64_t i) const {
    return spec_.display_name() + ": sample " + std::to_string(whole_index(ws, i));
  }
  std::string of(const Workspace& ws, const std::string& name, int64_t i) const {
    return spec_.is_tensor_arg(name) ? " for sample " + std::to_string(whole_index(ws, i)) : "";
  }

  void check_inputs(const Workspace& ws) const {
    const Batch& boxes = ws.input(0);
    if (boxes.size() > 0 && boxes.dtype() != DType::kFloat32)
      fail(ErrorKind::kTypeMismatch,
           spec_.display_name() + ": the boxes (input 0) must be float32, got " +
               dtype_name(boxes.dtype()) + "; convert them with fn.cast(boxes, dtype=types.FLOAT).");
    for (size_t k = 0; k < boxes.size(); ++k) {
      const int64_t i = static_cast<int64_t>(k);
      const Shape& s = boxes.shape(k);
      if (s.size() != 2 || s[1] != 4)
        fail(ErrorKind::kInvalidArgument,
             where(ws, i) + ": the boxes (input 0) have shape " + to_string(s) + "; give them " +
                 "as [N, 4], one box per row in bbox_layout \"" +
                 (args_.ltrb ? "xyXY" : "xyWH") + "\".");
      if (ws.inputs.size() > 1) {
        const Shape& l = ws.input(1).shape(k);
        if (l.empty() || l[0] != s[0])
          fail(ErrorKind::kInvalidArgument,
               where(ws, i) + ": the labels (input 1) have shape " + to_string(l) + " for " +
                   std::to_string(s[0]) + " boxes; give one label (or one row of labels) per " +
                   "box, shape [" + std::to_string(s[0]) + "] or [" + std::to_string(s[0]) +
                   ", ...].");
      }
    }
  }

  // The angle, the image's size and the canvas' size of sample i.
  void sample_geometry(const Workspace& ws, int64_t i, kernels::BoxRotateArgs* a) const {
    const float angle_deg = static_cast<float>(ws.scalar_arg("angle", i, 0));
    if (!std::isfinite(angle_deg))
      spec_.arg_error("angle", "must be a finite number of degrees, got " +
                                   float_repr(angle_deg) + of(ws, "angle", i) + ".");
    a->angle = angle_deg * static_cast<float>(M_PI / 180.0);
    const std::vector<double> shape = ws.list_arg("input_shape", i);
    const int need = std::max(w_index_, h_index_) + 1;
    const std::string sl = spec_.get<std::string>("shape_layout");
    if (static_cast<int>(shape.size()) < need)
      spec_.arg_error("input_shape", "has " + std::to_string(shape.size()) + " values " +
                                         numbers_repr(shape) + of(ws, "input_shape", i) +
                                         ", too few for shape_layout \"" + sl + "\" (the height " +
                                         "and width at positions " + std::to_string(h_index_) +
                                         " and " + std::to_string(w_index_) + "); give the " +
                                         "image's shape, e.g. fn.shapes(image).");
    const double h = shape[h_index_], w = shape[w_index_];
    for (double v : {h, w})
      if (!(v >= 1 && v <= 2147483647.0) || v != std::floor(v))
        spec_.arg_error("input_shape", "must give the image's height and width as whole numbers "
                                       "of pixels in [1, 2147483647], got " +
                                           numbers_repr(shape) + of(ws, "input_shape", i) +
                                           " (shape_layout \"" + sl + "\").");
    a->in_w = static_cast<float>(w);
    a->in_h = static_cast<float>(h);
    if (keep_size_) {
      a->out_w = a->in_w;
      a->out_h = a->in_h;
    } else if (has_size_) {
      const std::vector<double> size = ws.list_arg("size", i);
      if (size.size() != 2)
        spec_.arg_error("size", "takes 2 values, the canvas' height and width, got " +
                                    std::to_string(size.size()) + ": " + numbers_repr(size) +
                                    of(ws, "size", i) + ".");
      for (double v : size)
        if (!(std::floor(v) >= 1 && v <= 2147483647.0))
          spec_.arg_error("size", "must be at least 1 pixel (and at most 2147483647), got " +
                                      numbers_repr(size) + of(ws, "size", i) + ".");
      a->out_h = static_cast<float>(std::floor(size[0]));
      a->out_w = static_cast<float>(std::floor(size[1]));
    } else {
      int64_t oh = 0, ow = 0;
      kernels::rotated_canvas_size(static_cast<int64_t>(h), static_cast<int64_t>(w), angle_deg,
                                   &oh, &ow);
      a->out_w = static_cast<float>(ow);
      a->out_h = static_cast<float>(oh);
    }
  }

  void check_box(const Workspace& ws, int64_t i, int64_t b, const float* box) const {
    bool finite = true;
    for (int k = 0; k < 4; ++k) finite &= std::isfinite(box[k]);
    const bool inverted = args_.ltrb ? (box[2] < box[0] || box[3] < box[1])
                                     : (box[2] < 0 || box[3] < 0);
    if (finite && !inverted) return;
    std::string stored;
    for (int k = 0; k < 4; ++k) stored += (k ? ", " : "") + float_repr(box[k]);
    const std::string layout = args_.ltrb ? "xyXY" : "xyWH";
    const std::string what = where(ws, i) + ", box " + std::to_string(b) + " (" + stored +
                             " in bbox_layout \"" + layout + "\")";
    if (!finite)
      fail(ErrorKind::kInvalidArgument, what + ": its coordinates must be finite numbers.");
    fail(ErrorKind::kInvalidArgument,
         what + (args_.ltrb ? ": it ends before it starts. Check bbox_layout: \"xyXY\" is "
                              "(left, top, right, bottom), \"xyWH\" (left, top, width, height)."
                            : ": its width or height is negative. Check bbox_layout: \"xyXY\" "
                              "is (left, top, right, bottom), \"xyWH\" (left, top, width, "
                              "height)."));
  }

  kernels::BoxRotateArgs args_;
  bool keep_size_ = false, has_size_ = false;
  int w_index_ = 1, h_index_ = 0;
  std::vector<std::vector<int32_t>> kept_;
  std::vector<std::vector<float>> out_boxes_;
};

}  // namespace

STOKER_REGISTER_OP_NAMED(bbox_rotate, "bbox_rotate") {
  schema
      .doc("Boxes carried through fn.rotate of their image: each box is turned by `angle` "
           "degrees (counter-clockwise) about the image's centre onto the canvas fn.rotate makes "
           "(the whole rotated image, or the image's size with keep_size, or `size`), and "
           "replaced by an axis-aligned box (mode): \"expand\" encloses the whole rotated box, "
           "\"fixed\" keeps the original width and height (swapped past 45 degrees), "
           "\"halfway\" lies between the two. Boxes are clipped to the canvas and dropped, with "
           "their labels, when less than remove_threshold of their area is left. Rotate the "
           "boxes with the image's original shape: bbox_rotate(boxes, labels, angle=a, "
           "input_shape=fn.shapes(image)), then fn.rotate(image, angle=a). Inputs: boxes [N, 4] "
           "float32 and optionally labels, one row per box. Outputs: the boxes (and the labels) "
           "kept, in the input's layout and scale.")
      .inputs(1, 2, {"bboxes", "labels"})
      .outputs(1, {"bboxes", "labels"})
      .arg({.name = "angle", .type = ArgType::kFloat,
            .doc = "The rotation in degrees, counter-clockwise (as fn.rotate's).", .tensor = true})
      .arg({.name = "input_shape", .type = ArgType::kIntList,
            .doc = "The shape of the image the boxes belong to, before rotation; shape_layout "
                   "says where its height and width are.",
            .tensor = true, .list_min = 2})
      .arg({.name = "shape_layout", .type = ArgType::kString, .default_value = std::string("HW"),
            .doc = "The meaning of input_shape's values: \"HW\" (also right for HWC shapes), "
                   "\"CHW\", ..."})
      .arg({.name = "bbox_layout", .type = ArgType::kString,
            .default_value = std::string("xyXY"),
            .doc = "\"xyXY\" (left, top, right, bottom) or \"xyWH\" (left, top, width, height). "
                   "The output boxes have the same layout."})
      .arg({.name = "bbox_normalized", .type = ArgType::kBool, .default_value = true,
            .doc = "True: boxes relative to the image ([0, 1]), and the output relative to the "
                   "canvas; False: in pixels."})
      .arg({.name = "keep_size", .type = ArgType::kBool, .default_value = false,
            .doc = "The canvas keeps the image's size, as fn.rotate(keep_size=True); boxes "
                   "reaching outside it are clipped."})
      .arg({.name = "size", .type = ArgType::kFloatList, .optional = true,
            .doc = "The canvas' size (height, width) given to fn.rotate, if any (default [], "
                   "the size that holds the whole rotated image). Not with keep_size.",
            .tensor = true})
      .arg({.name = "mode", .type = ArgType::kString, .default_value = std::string("expand"),
            .doc = "\"expand\": the box that encloses the rotated box; \"fixed\": the original "
                   "size about the same centre; \"halfway\": between the two.",
            .choices = {"expand", "halfway", "fixed"}})
      .arg({.name = "remove_threshold", .type = ArgType::kFloat, .default_value = 0.1,
            .doc = "Boxes with less than this fraction of their area left on the canvas are "
                   "dropped (0: none are).",
            .min = 0.0, .max = 1.0})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<BBoxRotate>(s); });
}

}  // namespace stoker
