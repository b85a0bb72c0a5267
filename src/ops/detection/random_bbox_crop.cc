// random_bbox_crop: a random crop window that keeps bounding boxes (DALI's RandomBBoxCrop). The
// window is searched for in setup(), because the number of boxes it keeps sizes the outputs;
// the samples' searches run on the thread pool, each from its own random stream.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/repr.h"
#include "kernels/cpu/detection/crop_boxes.h"
#include "pipeline/operator.h"

namespace stoker {
namespace {

using kernels::BoxNd;
using kernels::CropResult;

constexpr char kAxes[] = "xyz";

class RandomBBoxCrop : public Operator {
 public:
  explicit RandomBBoxCrop(const OpSpec& spec) : Operator(spec) {
    args_.thresholds = spec.get<std::vector<float>>("thresholds");
    args_.metric = spec.get<std::string>("threshold_type") == "overlap"
                       ? kernels::OverlapMetric::kOverlap
                       : kernels::OverlapMetric::kIoU;
    args_.all_boxes_above_threshold = spec.get<bool>("all_boxes_above_threshold");
    args_.num_attempts = spec.get<int64_t>("num_attempts");
    args_.total_num_attempts = spec.get<int64_t>("total_num_attempts");
    if (args_.total_num_attempts == 0 || args_.total_num_attempts < -1)
      spec.arg_error("total_num_attempts",
                     "must be at least 1 (or -1: search until a window meets a threshold), got " +
                         std::to_string(args_.total_num_attempts) + ".");
    has_crop_shape_ = spec.has("crop_shape") || spec.is_tensor_arg("crop_shape");
    has_input_shape_ = spec.has("input_shape") || spec.is_tensor_arg("input_shape");
    if (has_crop_shape_ && !has_input_shape_)
      spec.arg_error("crop_shape", "needs input_shape: the window's size is in pixels, and the "
                                   "boxes are relative to the image, whose size input_shape "
                                   "gives.");
    if (has_crop_shape_) {
      for (const char* a : {"aspect_ratio", "scaling"})
        if (spec.has(a))
          spec.arg_error(a, std::string("cannot be given with crop_shape: the window's size is "
                                        "then fixed. Leave out either ") + a + " or crop_shape.");
      if (spec.has("allow_no_crop") && spec.get<bool>("allow_no_crop"))
        spec.arg_error("allow_no_crop", "cannot be True with crop_shape: every window then has "
                                        "the size crop_shape gives. Leave it out (with crop_shape "
                                        "it is False) or pass allow_no_crop=False.");
    }
    args_.allow_no_crop =
        !has_crop_shape_ && spec.get_optional<bool>("allow_no_crop").value_or(true);

    std::vector<float> scaling = spec.get_optional<std::vector<float>>("scaling").value_or(
        std::vector<float>{1.0f, 1.0f});
    if (!(scaling[0] >= 0.0f && scaling[0] <= scaling[1]))
      spec.arg_error("scaling", "must be a range [min, max] with 0 <= min <= max, got " +
                                    floats_repr(scaling) + ".");
    args_.scale_min = scaling[0];
    args_.scale_max = scaling[1];
    args_.aspect_ranges = spec.get_optional<std::vector<float>>("aspect_ratio").value_or(
        std::vector<float>{1.0f, 1.0f});
    const std::vector<float>& ar = args_.aspect_ranges;
    if (ar.size() != 2 && ar.size() != 6)
      spec.arg_error("aspect_ratio", "takes 2 values (a range [min, max] of width / height) or, "
                                     "for 3-D boxes, 6 (ranges of x/y, x/z and y/z), got " +
                                         std::to_string(ar.size()) + ": " + floats_repr(ar) + ".");
    for (size_t k = 0; k < ar.size(); k += 2)
      if (!(ar[k] >= 0.0f && ar[k] <= ar[k + 1]) || ar[k + 1] == 0.0f)
        spec.arg_error("aspect_ratio", "must be ranges [min, max] with 0 <= min <= max and max > "
                                       "0, got " + floats_repr(ar) + ".");

    if (spec.has("bbox_prune_threshold"))
      args_.prune_threshold = spec.get<float>("bbox_prune_threshold");

    const bool ltrb_given = spec.has("ltrb");
    if (spec.has("bbox_layout")) {
      if (ltrb_given)
        spec.arg_error("ltrb", "cannot be given with bbox_layout; ltrb is DALI's deprecated form "
                               "of it: ltrb=True is bbox_layout=\"xyXY\", ltrb=False is "
                               "bbox_layout=\"xyWH\".");
      bbox_layout_ = spec.get<std::string>("bbox_layout");
      kernels::BoxLayout l;
      if (!kernels::parse_box_layout(bbox_layout_, 2, &l) &&
          !kernels::parse_box_layout(bbox_layout_, 3, &l))
        spec.arg_error("bbox_layout", "must be a permutation of \"xyXY\" or \"xyWH\" (2-D boxes) "
                                      "or of \"xyzXYZ\" or \"xyzWHD\" (3-D boxes), got \"" +
                                          bbox_layout_ + "\".");
    }
    extent_layout_ = ltrb_given && !spec.get<bool>("ltrb");
    if (spec.has("shape_layout")) {
      shape_layout_ = spec.get<std::string>("shape_layout");
      if (!is_shape_layout(shape_layout_, 2) && !is_shape_layout(shape_layout_, 3))
        spec.arg_error("shape_layout", "must be a permutation of \"WH\" (2-D) or \"WHD\" (3-D), "
                                       "the order of crop_shape and input_shape, got \"" +
                                           shape_layout_ + "\".");
    }
    output_indices_ = spec.get<bool>("output_bbox_indices");
    const int want = 3 + (spec.num_inputs > 1 ? 1 : 0) + (output_indices_ ? 1 : 0);
    STOKER_ASSERT(spec.num_outputs == want,
                  spec.display_name() + " was given " + std::to_string(spec.num_outputs) +
                      " outputs, expected " + std::to_string(want));
  }

  bool setup_reads_input_data() const override { return true; }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& boxes = ws.input(0);
    const int64_t n = static_cast<int64_t>(boxes.size());
    const int nd = box_dims(ws);
    kernels::CropSearchArgs args = args_;
    args.ndim = nd;
    kernels::BoxLayout layout;
    const std::string layout_name =
        bbox_layout_.empty() ? kernels::default_box_layout(nd, extent_layout_) : bbox_layout_;
    if (n > 0 && !kernels::parse_box_layout(layout_name, nd, &layout))
      spec_.arg_error("bbox_layout", "is \"" + layout_name + "\", but the boxes have " +
                                         std::to_string(2 * nd) + " coordinates: it must be a " +
                                         "permutation of \"" +
                                         kernels::default_box_layout(nd, false) + "\" or \"" +
                                         kernels::default_box_layout(nd, true) + "\".");
    layout_ = layout;
    const bool labels = ws.inputs.size() > 1;
    if (labels) check_labels(ws);

    std::vector<kernels::CropSearchArgs> sample_args(n, args);
    if (has_input_shape_ || has_crop_shape_) {
      if (!shape_layout_.empty() && !is_shape_layout(shape_layout_, nd))
        spec_.arg_error("shape_layout", "is \"" + shape_layout_ + "\", but the boxes are " +
                                            std::to_string(nd) + "-D: it must be a permutation " +
                                            "of \"" + std::string("WHD").substr(0, nd) + "\".");
      for (int64_t i = 0; i < n; ++i) {
        kernels::CropSearchArgs& a = sample_args[i];
        a.has_input_shape = has_input_shape_;
        a.has_crop_shape = has_crop_shape_;
        if (has_input_shape_) read_shape(ws, "input_shape", i, nd, a.input_shape);
        if (has_crop_shape_) read_shape(ws, "crop_shape", i, nd, a.crop_shape);
      }
    }

    results_.assign(n, CropResult());
    ws.thread_pool->parallel_for(n, [&](int64_t i, int) {
      const Shape& s = boxes.shape(i);
      std::vector<BoxNd> in(s[0]);
      kernels::read_boxes(in.data(), boxes.data<float>(i), s[0], layout_);
      for (int64_t b = 0; b < s[0]; ++b) check_box(ws, i, b, in[b], nd);
      Philox rng = ws.rng(i);
      results_[i] = kernels::find_crop(in.data(), s[0], sample_args[i], rng);
      if (results_[i].kind == CropResult::Kind::kGaveUp) gave_up(ws, i, sample_args[i]);
    });

    std::vector<OutputDesc> out(3);
    for (OutputDesc& d : out) d.dtype = DType::kFloat32;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t kept = static_cast<int64_t>(results_[i].kept.size());
      out[0].shapes.push_back({nd});
      out[1].shapes.push_back({nd});
      out[2].shapes.push_back({kept, 2 * nd});
    }
    if (labels) {
      const Batch& lab = ws.input(1);
      OutputDesc d;
      d.dtype = lab.dtype();
      for (int64_t i = 0; i < n; ++i) {
        Shape s = lab.shape(i);
        s[0] = static_cast<int64_t>(results_[i].kept.size());
        d.shapes.push_back(s);
      }
      out.push_back(d);
    }
    if (output_indices_) {
      OutputDesc d;
      d.dtype = DType::kInt32;
      for (int64_t i = 0; i < n; ++i)
        d.shapes.push_back({static_cast<int64_t>(results_[i].kept.size())});
      out.push_back(d);
    }
    return out;
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const CropResult& r = results_[i];
    const int nd = layout_.ndim;
    float* anchor = ws.output(0).data<float>(i);
    float* shape = ws.output(1).data<float>(i);
    for (int d = 0; d < nd; ++d) {
      anchor[d] = r.window.lo[d];
      shape[d] = r.window.hi[d] - r.window.lo[d];
    }
    kernels::write_boxes(ws.output(2).data<float>(i), r.boxes.data(),
                         static_cast<int64_t>(r.boxes.size()), layout_);
    int next = 3;
    if (ws.inputs.size() > 1) {
      const Batch& lab = ws.input(1);
      const Shape& s = lab.shape(i);
      const size_t row = s[0] > 0 ? lab.sample_bytes(i) / static_cast<size_t>(s[0]) : 0;
      const auto* src = static_cast<const uint8_t*>(lab[i].data);
      auto* dst = static_cast<uint8_t*>(ws.output(next)[i].data);
      for (size_t k = 0; k < r.kept.size(); ++k)
        std::memcpy(dst + k * row, src + static_cast<size_t>(r.kept[k]) * row, row);
      ++next;
    }
    if (output_indices_) {
      int32_t* idx = ws.output(next).data<int32_t>(i);
      std::copy(r.kept.begin(), r.kept.end(), idx);
    }
  }

 private:
  static bool is_shape_layout(const std::string& s, int nd) {
    std::string sorted = s, want = std::string("DHW").substr(nd == 2 ? 1 : 0);
    std::sort(sorted.begin(), sorted.end());
    return sorted == want;
  }

  int64_t whole_index(const Workspace& ws, int64_t i) const {
    return ws.origins ? (*ws.origins)[i] : i;
  }

  std::string where(const Workspace& ws, int64_t i) const {
    return spec_.display_name() + ": sample " + std::to_string(whole_index(ws, i));
  }

  // The dimensionality of the batch's boxes (2 or 3), after checking their type and shapes.
  int box_dims(const Workspace& ws) const {
    const Batch& in = ws.input(0);
    if (in.size() > 0 && in.dtype() != DType::kFloat32)
      fail(ErrorKind::kTypeMismatch,
           spec_.display_name() + ": the boxes (input 0) must be float32, got " +
               dtype_name(in.dtype()) + "; convert them with fn.cast(boxes, dtype=types.FLOAT).");
    int64_t coords = -1, first = 0;
    for (size_t i = 0; i < in.size(); ++i) {
      const Shape& s = in.shape(i);
      if (s.size() != 2 || (s[1] != 4 && s[1] != 6))
        fail(ErrorKind::kInvalidArgument,
             where(ws, i) + ": the boxes have shape " + to_string(s) + "; give them as [N, 4] " +
                 "(2-D boxes, one per row) or [N, 6] (3-D boxes).");
      if (coords >= 0 && s[1] != coords)
        fail(ErrorKind::kInvalidArgument,
             where(ws, i) + ": its boxes have " + std::to_string(s[1]) + " coordinates, but " +
                 "sample " + std::to_string(whole_index(ws, first)) + "'s have " +
                 std::to_string(coords) + "; the boxes of a batch must all be 2-D (4 " +
                 "coordinates) or all 3-D (6).");
      if (coords < 0) {
        coords = s[1];
        first = static_cast<int64_t>(i);
      }
    }
    return coords == 6 ? 3 : 2;
  }

  void check_labels(const Workspace& ws) const {
    const Batch& boxes = ws.input(0);
    const Batch& lab = ws.input(1);
    for (size_t i = 0; i < lab.size(); ++i) {
      const Shape& s = lab.shape(i);
      const int64_t nb = boxes.shape(i)[0];
      if (s.empty() || s[0] != nb)
        fail(ErrorKind::kInvalidArgument,
             where(ws, i) + ": the labels (input 1) have shape " + to_string(s) + " for " +
                 std::to_string(nb) + " boxes; give one label (or one row of labels) per box, " +
                 "shape [" + std::to_string(nb) + "] or [" + std::to_string(nb) + ", ...].");
    }
  }

  // crop_shape or input_shape of sample i, in x, y(, z) order.
  void read_shape(const Workspace& ws, const char* name, int64_t i, int nd, int64_t* out) const {
    const std::vector<double> v = ws.list_arg(name, i);
    const std::string order =
        shape_layout_.empty() ? std::string("WHD").substr(0, nd) : shape_layout_;
    std::string got = "[";
    for (size_t k = 0; k < v.size(); ++k) {
      char b[32];
      std::snprintf(b, sizeof(b), "%.17g", v[k]);
      got += (k ? ", " : "") + std::string(b);
    }
    got += "]";
    const std::string for_sample = spec_.is_tensor_arg(name)
                                       ? " for sample " + std::to_string(whole_index(ws, i))
                                       : std::string();
    if (static_cast<int>(v.size()) != nd)
      spec_.arg_error(name, "takes " + std::to_string(nd) + " values for " + std::to_string(nd) +
                                "-D boxes (in the order of shape_layout, \"" + order + "\"), got " +
                                std::to_string(v.size()) + ": " + got + for_sample + ".");
    for (int k = 0; k < nd; ++k) {
      if (!(v[k] >= 1 && v[k] <= 2147483647.0) || v[k] != std::floor(v[k]))
        spec_.arg_error(name, "must be whole numbers of pixels in [1, 2147483647], got " + got +
                                  for_sample + ".");
      const int axis = static_cast<int>(std::string("WHD").find(order[k]));
      out[axis] = static_cast<int64_t>(v[k]);
    }
  }

  void check_box(const Workspace& ws, int64_t i, int64_t b, const BoxNd& box, int nd) const {
    int axis = 0;
    const kernels::BoxFault f = kernels::check_box(box, nd, &axis);
    if (f == kernels::BoxFault::kNone) return;
    const float* raw = ws.input(0).data<float>(i) + b * 2 * nd;
    std::string stored;
    for (int k = 0; k < 2 * nd; ++k) stored += (k ? ", " : "") + float_repr(raw[k]);
    const std::string what = where(ws, i) + ", box " + std::to_string(b) + " (" + stored +
                             " in bbox_layout \"" + bbox_layout_name() + "\")";
    const std::string ax(1, kAxes[axis]);
    if (f == kernels::BoxFault::kOutside)
      fail(ErrorKind::kInvalidArgument,
           what + ": on " + ax + " it spans [" + float_repr(box.lo[axis]) + ", " +
               float_repr(box.hi[axis]) + "], which is not inside [0, 1]. random_bbox_crop " +
               "takes boxes relative to the image's size (readers.coco(ratio=True) gives them " +
               "so); if they only overshoot by rounding, clamp them with " +
               "stoker.math.clamp(boxes, 0, 1).");
    fail(ErrorKind::kInvalidArgument,
         what + ": on " + ax + " it ends (" + float_repr(box.hi[axis]) + ") before it starts (" +
             float_repr(box.lo[axis]) + "). Check bbox_layout: \"" +
             kernels::default_box_layout(nd, false) + "\" is the start and end corners, \"" +
             kernels::default_box_layout(nd, true) + "\" the start corner and the size.");
  }

  std::string bbox_layout_name() const {
    return bbox_layout_.empty() ? kernels::default_box_layout(layout_.ndim, extent_layout_)
                                : bbox_layout_;
  }

  [[noreturn]] void gave_up(const Workspace& ws, int64_t i,
                            const kernels::CropSearchArgs& a) const {
    const CropResult& r = results_[i];
    const std::string tried = where(ws, i) + ": " + std::to_string(r.attempts) + " windows ";
    if (r.best_metric < 0)  // no window had its aspect ratios in range
      fail(ErrorKind::kInvalidArgument,
           tried + "were drawn and none had its aspect ratios in aspect_ratio " +
               floats_repr(a.aspect_ranges) + " (extents drawn in scaling [" +
               float_repr(a.scale_min) + ", " + float_repr(a.scale_max) + "]" +
               (a.has_input_shape ? ", ratios of pixels of input_shape" : "") +
               "). Widen aspect_ratio or scaling, or pass total_num_attempts to take the whole "
               "image after that many attempts.");
    const char* metric = a.metric == kernels::OverlapMetric::kIoU ? "IoU" : "overlap";
    fail(ErrorKind::kInvalidArgument,
         tried + "were drawn and none met a threshold (thresholds " + floats_repr(a.thresholds) +
             "; the best window's " + (a.all_boxes_above_threshold ? "smallest " : "largest ") +
             metric + " with a box was " + float_repr(r.best_metric) + "). Pass " +
             "total_num_attempts to take the best window after that many attempts, " +
             "allow_no_crop=True, or lower thresholds.");
  }

  kernels::CropSearchArgs args_;
  bool has_crop_shape_ = false, has_input_shape_ = false;
  bool extent_layout_ = false;  // ltrb=False: "xyWH" boxes unless bbox_layout says otherwise
  bool output_indices_ = false;
  std::string bbox_layout_, shape_layout_;
  kernels::BoxLayout layout_;
  std::vector<CropResult> results_;
};

}  // namespace

STOKER_REGISTER_OP_NAMED(random_bbox_crop, "random_bbox_crop") {
  schema
      .doc("A random crop window for an image, chosen so that it keeps its bounding boxes, and "
           "the boxes in the window's coordinates. Each sample draws one of `thresholds` (or, "
           "with allow_no_crop, \"no crop\"), then up to num_attempts windows, random in size "
           "(scaling, aspect_ratio) and place or of the fixed crop_shape; a window is taken "
           "when its IoU (threshold_type=\"iou\") or the fraction of each box inside it "
           "(\"overlap\") reaches the threshold, for every box (all_boxes_above_threshold) or "
           "for one, and it keeps a box; otherwise another threshold is drawn. Boxes are kept "
           "whose centre is in the window (or, with bbox_prune_threshold, whose fraction "
           "inside is at least that), clipped to it and made relative to it. Inputs: boxes, "
           "[N, 4] (or [N, 6] for 3-D) float32 in [0, 1], and optionally labels, one row per "
           "box. Outputs: anchor and shape of the window ([x, y(, z)] and [w, h(, d)], relative, "
           "or pixels with crop_shape; feed them to fn.slice or decoders.image_slice), the "
           "boxes, the labels (with a labels input) and the indices of the boxes kept "
           "(output_bbox_indices).")
      .inputs(1, 2, {"boxes", "labels"})
      .outputs(3, {"anchor", "shape", "boxes", "labels", "bbox_indices"})
      .random()
      .arg({.name = "thresholds", .type = ArgType::kFloatList,
            .default_value = std::vector<double>{0.0},
            .doc = "The minimum metric (see threshold_type) a window must reach; each round "
                   "draws one of them.",
            .min = 0.0, .max = 1.0, .list_min = 1})
      .arg({.name = "threshold_type", .type = ArgType::kString,
            .default_value = std::string("iou"),
            .doc = "\"iou\": intersection over union of window and box; \"overlap\": the "
                   "fraction of the box's area inside the window.",
            .choices = {"iou", "overlap"}})
      .arg({.name = "aspect_ratio", .type = ArgType::kFloatList, .optional = true,
            .doc = "Range [min, max] of the window's width / height (default [1, 1]); for 3-D "
                   "boxes also 6 values, ranges of x/y, x/z and y/z. Relative to the image's "
                   "shape, or of pixels where input_shape is given. min == max fixes the ratio. "
                   "Not with crop_shape.",
            .min = 0.0, .list_min = 2, .list_max = 6})
      .arg({.name = "scaling", .type = ArgType::kFloatList, .optional = true,
            .doc = "Range [min, max] of the window's extents relative to the image's (default "
                   "[1, 1]). Not with crop_shape.",
            .min = 0.0, .list_min = 2, .list_max = 2})
      .arg({.name = "ltrb", .type = ArgType::kBool, .optional = true,
            .doc = "Deprecated (default True): True is bbox_layout=\"xyXY\", False \"xyWH\"."})
      .arg({.name = "num_attempts", .type = ArgType::kInt, .default_value = int64_t{1},
            .doc = "Windows tried per drawn threshold before another is drawn.", .min = 1.0})
      .arg({.name = "total_num_attempts", .type = ArgType::kInt, .default_value = int64_t{-1},
            .doc = "The most windows tried in all, after which the window with the best metric "
                   "is taken; -1: search until a window meets a threshold (stoker gives up with "
                   "an error after a million)."})
      .arg({.name = "all_boxes_above_threshold", .type = ArgType::kBool, .default_value = true,
            .doc = "True: every box must reach the threshold; False: one box is enough."})
      .arg({.name = "allow_no_crop", .type = ArgType::kBool, .optional = true,
            .doc = "Whether \"no crop\" (the whole image, every box kept) is one of the "
                   "choices drawn, beside the thresholds (default True; False with crop_shape)."})
      .arg({.name = "crop_shape", .type = ArgType::kIntList, .optional = true,
            .doc = "A fixed window size in pixels, in the order of shape_layout; needs "
                   "input_shape. The anchor is then drawn in whole pixels and the outputs "
                   "anchor and shape are pixels.",
            .tensor = true})
      .arg({.name = "input_shape", .type = ArgType::kIntList, .optional = true,
            .doc = "The image's size in pixels, in the order of shape_layout: needed by "
                   "crop_shape; without it, makes aspect_ratio a ratio of pixels.",
            .tensor = true})
      .arg({.name = "bbox_layout", .type = ArgType::kString, .optional = true,
            .doc = "The order of each box's coordinates: a permutation of \"xyXY\" (corners) or "
                   "\"xyWH\" (corner and size); \"xyzXYZ\" or \"xyzWHD\" for 3-D. Default "
                   "\"xyXY\" / \"xyzXYZ\". The output boxes have the same layout."})
      .arg({.name = "shape_layout", .type = ArgType::kString, .optional = true,
            .doc = "The order of crop_shape and input_shape: a permutation of \"WH\" (or "
                   "\"WHD\"), the default."})
      .arg({.name = "output_bbox_indices", .type = ArgType::kBool, .default_value = false,
            .doc = "Add an output with the indices (int32) of the boxes kept."})
      .arg({.name = "bbox_prune_threshold", .type = ArgType::kFloat, .optional = true,
            .doc = "Keep the boxes of which at least this fraction of the area is in the "
                   "window (and some is); without it, those whose centre is in the window.",
            .min = 0.0, .max = 1.0})
      .arg({.name = "quiet", .type = ArgType::kBool, .default_value = false,
            .doc = "DALI's switch for its warning when total_num_attempts runs out; stoker "
                   "prints no such warning."})
      .arg({.name = "seed", .type = ArgType::kInt, .default_value = int64_t{-1},
            .doc = "Random seed; -1 takes it from the pipeline's seed and this operator's place "
                   "in the graph."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<RandomBBoxCrop>(s); });
}

}  // namespace stoker
