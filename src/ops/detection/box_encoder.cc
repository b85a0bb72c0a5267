// box_encoder: SSD's assignment of ground-truth boxes and labels to a fixed set of anchors
// (default boxes), as DALI computes it (kernels/cpu/detection/boxes.h).
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "core/repr.h"
#include "kernels/cpu/detection/boxes.h"
#include "kernels/cuda/detection_gpu.h"
#include "ops/generic/gpu_twin.h"
#include "pipeline/operator.h"

namespace stoker {
namespace {

std::string box_repr(const float* b) {
  char s[128];
  std::snprintf(s, sizeof(s), "(%g, %g, %g, %g)", b[0], b[1], b[2], b[3]);
  return s;
}

bool is_ltrb(const float* b) {
  for (int k = 0; k < 4; ++k)
    if (!std::isfinite(b[k])) return false;
  return b[2] >= b[0] && b[3] >= b[1];
}

class BoxEncoder : public Operator {
 public:
  explicit BoxEncoder(const OpSpec& spec) : Operator(spec) {
    criteria_ = spec.get<float>("criteria");
    enc_.offset = spec.get<bool>("offset");
    enc_.scale = spec.get<float>("scale");
    const std::vector<float> means = spec.get<std::vector<float>>("means");
    const std::vector<float> stds = spec.get<std::vector<float>>("stds");
    for (int k = 0; k < 4; ++k) {
      enc_.means[k] = means[k];
      enc_.stds[k] = stds[k];
      if (stds[k] == 0 || !std::isfinite(stds[k]))
        spec.arg_error("stds", "must be nonzero and finite (the offsets are divided by them), got " +
                                   box_repr(stds.data()) + ".");
    }
    if (enc_.offset && (enc_.scale == 0 || !std::isfinite(enc_.scale)))
      spec.arg_error("scale", "must be nonzero and finite with offset=True (the offsets are "
                              "divided by the anchors' scaled sizes), got " +
                                  num(enc_.scale) + ".");
    anchors_ = spec.get<std::vector<float>>("anchors");
    if (anchors_.size() % 4 != 0)
      spec.arg_error("anchors", "has " + std::to_string(anchors_.size()) + " values; it takes 4 "
                                "per anchor (left, top, right, bottom), so the count must be a "
                                "multiple of 4.");
    for (size_t a = 0; a < anchors_.size() / 4; ++a)
      if (!is_ltrb(&anchors_[4 * a]))
        spec.arg_error("anchors", "has anchor " + std::to_string(a) + " = " +
                                      box_repr(&anchors_[4 * a]) + ", which is not an ltrb box: "
                                      "right must be >= left and bottom >= top, all finite.");
  }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& boxes = ws.input(0);
    const Batch& labels = ws.input(1);
    const std::string& name = spec_.display_name();
    if (labels.size() != boxes.size())
      fail(ErrorKind::kInvalidArgument,
           name + ": the labels (input 1) have " + std::to_string(labels.size()) + " samples but " +
               "the boxes (input 0) " + std::to_string(boxes.size()) + "; give one label list per " +
               "sample of boxes.");
    if (boxes.size() == 0) return {OutputDesc{DType::kFloat32, "", {}}, OutputDesc{DType::kInt32, "", {}}};
    if (boxes.dtype() != DType::kFloat32)
      fail(ErrorKind::kTypeMismatch,
           name + ": the boxes (input 0) must be float32 relative coordinates, got " +
               dtype_name(boxes.dtype()) + "; convert them with fn.cast(boxes, dtype=types.FLOAT).");
    if (!is_integer(labels.dtype()))
      fail(ErrorKind::kTypeMismatch,
           name + ": the labels (input 1) must be integers, got " + dtype_name(labels.dtype()) +
               "; convert them with fn.cast(labels, dtype=types.INT32).");
    const int64_t nanchors = static_cast<int64_t>(anchors_.size() / 4);
    std::vector<Shape> box_shapes, label_shapes;
    for (size_t i = 0; i < boxes.size(); ++i) {
      const Shape& bs = boxes.shape(i);
      const Shape& ls = labels.shape(i);
      const bool empty_list = bs.size() == 1 && bs[0] == 0;
      if (!(bs.size() == 2 && bs[1] == 4) && !empty_list)
        fail(ErrorKind::kInvalidArgument,
             name + ": sample " + std::to_string(i) + " of the boxes has shape " + to_string(bs) +
                 ", which is not a list of boxes; give them as [N, 4] (one ltrb box per row).");
      const int64_t n = empty_list ? 0 : bs[0];
      if (!((ls.size() == 1 || (ls.size() == 2 && ls[1] == 1)) && ls[0] == n))
        fail(ErrorKind::kInvalidArgument,
             name + ": sample " + std::to_string(i) + " has " + std::to_string(n) + " boxes but " +
                 "labels of shape " + to_string(ls) + "; give one label per box, shape [" +
                 std::to_string(n) + "] or [" + std::to_string(n) + ", 1].");
      box_shapes.push_back({nanchors, 4});
      label_shapes.push_back({nanchors});
    }
    return {OutputDesc{DType::kFloat32, "", box_shapes},
            OutputDesc{labels.dtype(), "", label_shapes}};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const Batch& labels_in = ws.input(1);
    const float* boxes = ws.input(0).data<float>(i);
    const int64_t nboxes = volume(ws.input(0).shape(i)) / 4;
    for (int64_t b = 0; b < nboxes; ++b)
      if (!is_ltrb(boxes + 4 * b))
        fail(ErrorKind::kInvalidArgument,
             spec_.display_name() + ": box " + std::to_string(b) + " is " + box_repr(boxes + 4 * b) +
                 ", which is not an ltrb box: right must be >= left and bottom >= top, all " +
                 "finite. box_encoder takes (left, top, right, bottom); readers.coco gives them " +
                 "with ltrb=True.");
    const int64_t nanchors = static_cast<int64_t>(anchors_.size() / 4);
    thread_local std::vector<int64_t> match, scratch;
    match.resize(nanchors);
    scratch.resize((kernels::match_boxes_scratch_bytes(nboxes, nanchors) + 7) / 8);
    kernels::match_boxes(match.data(), boxes, nboxes, anchors_.data(), nanchors, criteria_,
                         scratch.data());
    kernels::encode_boxes(ws.output(0).data<float>(i), match.data(), boxes, anchors_.data(),
                          nanchors, enc_);
    // Labels of any integer type, copied element by element; background is 0.
    const size_t esize = dtype_size(labels_in.dtype());
    const char* src = labels_in.data<char>(i);
    char* dst = ws.output(1).data<char>(i);
    std::memset(dst, 0, esize * nanchors);
    for (int64_t a = 0; a < nanchors; ++a)
      if (match[a] >= 0) std::memcpy(dst + a * esize, src + match[a] * esize, esize);
  }

  // The boxes stay on the device, so unlike on the CPU they are not checked: a box that is not
  // ltrb matches as its IoUs say.
  void run_gpu(Workspace& ws, const std::vector<OutputDesc>& descs) {
    require_device_input(ws, 0);
    require_device_input(ws, 1);
    const Batch& boxes = ws.input(0);
    const Batch& labels = ws.input(1);
    ws.outputs.clear();
    for (const OutputDesc& d : descs)
      ws.outputs.push_back(allocate_device_batch(ws, d.dtype, d.shapes, d.layout));
    std::vector<kernels::cuda::BoxEncodeJob> jobs(boxes.size());
    for (size_t i = 0; i < boxes.size(); ++i) {
      jobs[i].boxes = static_cast<const float*>(boxes[i].data);
      jobs[i].labels = labels[i].data;
      jobs[i].out_boxes = static_cast<float*>(ws.outputs[0][i].data);
      jobs[i].out_labels = ws.outputs[1][i].data;
      jobs[i].nboxes = volume(boxes.shape(i)) / 4;
    }
    if (!jobs.empty())
      kernels::cuda::box_encoder_gpu(ws, anchors_, criteria_, enc_, dtype_size(labels.dtype()), jobs);
  }

 private:
  std::vector<float> anchors_;
  float criteria_ = 0.5f;
  kernels::BoxEncoding enc_;
};

}  // namespace

STOKER_REGISTER_OP_NAMED(box_encoder, "box_encoder") {
  schema.doc("Encodes a sample's boxes and labels against a fixed set of anchors (SSD's default "
             "boxes), as SSD trains: each anchor takes the box it overlaps most if their IoU is "
             "above `criteria`, and each box also takes the anchor it overlaps most. Inputs: "
             "boxes [N, 4] float32 (left, top, right, bottom) and labels [N] (integers). Outputs: "
             "boxes [A, 4] float32, one per anchor: (center x, center y, width, height) of the "
             "matched box, or the anchor's own where none matched; with offset=True SSD's "
             "regression targets instead (0 where none matched); and labels [A] (0 where none "
             "matched).")
      .inputs(2, 2, {"bboxes", "labels"})
      .outputs(2, {"encoded_bboxes", "encoded_labels"})
      .arg({.name = "anchors", .type = ArgType::kFloatList,
            .doc = "The anchors, 4 values each (left, top, right, bottom), one after another.",
            .list_min = 4})
      .arg({.name = "criteria", .type = ArgType::kFloat, .default_value = 0.5,
            .doc = "The IoU an anchor must exceed to take a box, in [0, 1].", .min = 0.0,
            .max = 1.0})
      .arg({.name = "offset", .type = ArgType::kBool, .default_value = false,
            .doc = "Give SSD's offsets against the anchors: ((center - anchor center) / anchor "
                   "size - means[0:2]) / stds[0:2] and (log(size / anchor size) - means[2:4]) / "
                   "stds[2:4], with every coordinate multiplied by `scale` first."})
      .arg({.name = "scale", .type = ArgType::kFloat, .default_value = 1.0,
            .doc = "Multiplies boxes and anchors before the offsets are computed (e.g. to "
                   "absolute pixel coordinates)."})
      .arg({.name = "means", .type = ArgType::kFloatList,
            .default_value = std::vector<double>{0.0, 0.0, 0.0, 0.0},
            .doc = "(x, y, w, h) means subtracted from the offsets.", .list_min = 4,
            .list_max = 4})
      .arg({.name = "stds", .type = ArgType::kFloatList,
            .default_value = std::vector<double>{1.0, 1.0, 1.0, 1.0},
            .doc = "(x, y, w, h) standard deviations the offsets are divided by.", .list_min = 4,
            .list_max = 4})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<BoxEncoder>(s); })
      STOKER_GPU_TWIN(BoxEncoder);
}

}  // namespace stoker
