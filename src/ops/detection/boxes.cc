// bb_flip, bbox_paste and coord_flip: boxes and points that follow their image through a flip
// or a paste onto a larger canvas, in DALI's relative [0, 1] coordinates.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "core/repr.h"
#include "kernels/cpu/detection/boxes.h"
#include "kernels/cuda/detection_gpu.h"
#include "ops/generic/gpu_twin.h"
#include "pipeline/operator.h"

namespace stoker {
namespace {

// The input of bb_flip and bbox_paste: float32 boxes of 4 coordinates, [N, 4], or as DALI also
// reads them a flat [4N] or any shape whose last axis is 4. Returns the boxes per sample.
std::vector<int64_t> box_counts(const OpSpec& spec, const Batch& in) {
  if (in.size() > 0 && in.dtype() != DType::kFloat32)
    fail(ErrorKind::kTypeMismatch,
         spec.display_name() + ": the boxes (input 0) must be float32 relative coordinates, got " +
             dtype_name(in.dtype()) + "; convert them with fn.cast(boxes, dtype=types.FLOAT).");
  std::vector<int64_t> counts(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const Shape& s = in.shape(i);
    if (!s.empty() && s.back() == 4) {
      counts[i] = volume(s) / 4;
    } else if (s.size() == 1 && s[0] % 4 == 0) {
      counts[i] = s[0] / 4;
    } else {
      fail(ErrorKind::kInvalidArgument,
           spec.display_name() + ": sample " + std::to_string(i) + " of the boxes has shape " +
               to_string(s) + ", which is not a list of boxes; give them as [N, 4] (one box of " +
               "4 coordinates per row).");
    }
  }
  return counts;
}

class BbFlip : public Operator {
 public:
  explicit BbFlip(const OpSpec& spec) : Operator(spec), ltrb_(spec.get<bool>("ltrb")) {}

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    counts_ = box_counts(spec_, in);
    return {OutputDesc{DType::kFloat32, in.layout(), in.shapes()}};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const bool h = ws.scalar_arg("horizontal", i, 1) != 0;
    const bool v = ws.scalar_arg("vertical", i, 0) != 0;
    kernels::flip_boxes(ws.output(0).data<float>(i), ws.input(0).data<float>(i), counts_[i], ltrb_,
                        h, v);
  }

  void run_gpu(Workspace& ws, const std::vector<OutputDesc>& descs) {
    require_device_input(ws);
    const Batch& in = ws.input(0);
    ws.outputs.assign(1, allocate_device_batch(ws, descs[0].dtype, descs[0].shapes, descs[0].layout));
    std::vector<kernels::cuda::BoxFlipJob> jobs(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      jobs[i].in = static_cast<const float*>(in[i].data);
      jobs[i].out = static_cast<float*>(ws.outputs[0][i].data);
      jobs[i].n = counts_[i];
      jobs[i].horizontal = ws.scalar_arg("horizontal", i, 1) != 0;
      jobs[i].vertical = ws.scalar_arg("vertical", i, 0) != 0;
    }
    kernels::cuda::flip_boxes_gpu(ws, ltrb_, jobs);
  }

 private:
  bool ltrb_;
  std::vector<int64_t> counts_;
};

class BboxPaste : public Operator {
 public:
  explicit BboxPaste(const OpSpec& spec) : Operator(spec), ltrb_(spec.get<bool>("ltrb")) {}

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    counts_ = box_counts(spec_, in);
    params_.resize(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      const double ratio = ws.scalar_arg("ratio", i, 1);
      const double px = ws.scalar_arg("paste_x", i, 0.5), py = ws.scalar_arg("paste_y", i, 0.5);
      const std::string where = " for sample " + std::to_string(i) + ".";
      if (!(ratio >= 1) || !std::isfinite(ratio))
        spec_.arg_error("ratio", "must be >= 1 (the canvas is that many times larger than the "
                                 "image), got " + num(ratio) + where);
      if (!(px >= 0 && px <= 1))
        spec_.arg_error("paste_x", "must be in [0, 1], got " + num(px) + where);
      if (!(py >= 0 && py <= 1))
        spec_.arg_error("paste_y", "must be in [0, 1], got " + num(py) + where);
      params_[i] = kernels::box_paste_params(static_cast<float>(ratio), static_cast<float>(px),
                                             static_cast<float>(py));
    }
    return {OutputDesc{DType::kFloat32, in.layout(), in.shapes()}};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    kernels::paste_boxes(ws.output(0).data<float>(i), ws.input(0).data<float>(i), counts_[i],
                         ltrb_, params_[i]);
  }

 private:
  bool ltrb_;
  std::vector<int64_t> counts_;
  std::vector<kernels::BoxPaste> params_;
};

class CoordFlip : public Operator {
 public:
  explicit CoordFlip(const OpSpec& spec) : Operator(spec), layout_(spec.get<std::string>("layout")) {
    for (size_t k = 0; k < layout_.size(); ++k)
      if (std::string("xyz").find(layout_[k]) == std::string::npos ||
          layout_.find(layout_[k]) != k)
        spec.arg_error("layout", "must name the coordinates with the letters x, y and z, each at "
                                 "most once (\"xy\", \"yx\", \"xyz\", ...), got \"" + layout_ + "\".");
  }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    if (in.size() > 0 && in.dtype() != DType::kFloat32)
      fail(ErrorKind::kTypeMismatch,
           spec_.display_name() + ": the coordinates (input 0) must be float32, got " +
               dtype_name(in.dtype()) + "; convert them with fn.cast(coords, dtype=types.FLOAT).");
    for (size_t i = 0; i < in.size(); ++i) {
      const Shape& s = in.shape(i);
      if (s.size() != 2 || s[1] > 3)
        fail(ErrorKind::kInvalidArgument,
             spec_.display_name() + ": sample " + std::to_string(i) + " of the coordinates has " +
                 "shape " + to_string(s) + "; give points as [N, ndim] (one point per row, ndim " +
                 "1 to 3 coordinates in the order of 'layout').");
      const int nd = static_cast<int>(s[1]);
      if (layout_.empty() || nd == 0) continue;
      std::string named = layout_.substr(0, nd), want = std::string("xyz").substr(0, nd);
      std::string sorted = named;
      std::sort(sorted.begin(), sorted.end());
      if (static_cast<int>(layout_.size()) < nd || sorted != want)
        spec_.arg_error("layout", "is \"" + layout_ + "\", but sample " + std::to_string(i) +
                                      " has points of " + std::to_string(nd) + " coordinates " +
                                      "(shape " + to_string(s) + "): the layout must name them " +
                                      "with its first " + std::to_string(nd) + " letters, a " +
                                      "permutation of \"" + want + "\".");
    }
    return {OutputDesc{DType::kFloat32, in.layout(), in.shapes()}};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const kernels::cuda::CoordFlipJob j = job(ws, i);
    kernels::flip_coords(ws.output(0).data<float>(i), ws.input(0).data<float>(i), j.npoints, j.ndim,
                         j.flip, j.center);
  }

  void run_gpu(Workspace& ws, const std::vector<OutputDesc>& descs) {
    require_device_input(ws);
    const Batch& in = ws.input(0);
    ws.outputs.assign(1, allocate_device_batch(ws, descs[0].dtype, descs[0].shapes, descs[0].layout));
    std::vector<kernels::cuda::CoordFlipJob> jobs(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      jobs[i] = job(ws, static_cast<int64_t>(i));
      jobs[i].in = static_cast<const float*>(in[i].data);
      jobs[i].out = static_cast<float*>(ws.outputs[0][i].data);
    }
    kernels::cuda::flip_coords_gpu(ws, jobs);
  }

 private:
  // Sample i's points, and what to flip about which center, by coordinate.
  kernels::cuda::CoordFlipJob job(const Workspace& ws, int64_t i) const {
    const Shape& s = ws.input(0).shape(i);
    kernels::cuda::CoordFlipJob j;
    j.npoints = s[0];
    j.ndim = static_cast<int>(s[1]);
    const std::string layout = layout_.empty() ? std::string("xyz").substr(0, j.ndim) : layout_;
    for (int d = 0; d < j.ndim; ++d) {
      const std::string axis(1, layout[d]);
      j.flip[d] = ws.scalar_arg("flip_" + axis, i, axis == "x" ? 1 : 0) != 0;
      j.center[d] = static_cast<float>(ws.scalar_arg("center_" + axis, i, 0.5));
    }
    return j;
  }

  std::string layout_;
};

}  // namespace

STOKER_REGISTER_OP_NAMED(bb_flip, "bb_flip") {
  schema.doc("Flips bounding boxes horizontally and/or vertically, as the image they belong to is "
             "flipped: relative coordinates in [0, 1], x -> 1 - x, y -> 1 - y. Boxes are "
             "[N, 4] float32, (x, y, width, height) or, with ltrb, (left, top, right, bottom).")
      .inputs(1, 1, {"input"})
      .outputs(1)
      .arg({.name = "ltrb", .type = ArgType::kBool, .default_value = false,
            .doc = "True for (left, top, right, bottom) boxes, False for (x, y, width, height)."})
      .arg({.name = "horizontal", .type = ArgType::kInt, .default_value = int64_t{1},
            .doc = "Flip horizontally if nonzero.", .tensor = true})
      .arg({.name = "vertical", .type = ArgType::kInt, .default_value = int64_t{0},
            .doc = "Flip vertically if nonzero.", .tensor = true})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<BbFlip>(s); })
      STOKER_GPU_TWIN(BbFlip);
}

STOKER_REGISTER_OP_NAMED(bbox_paste, "bbox_paste") {
  schema.doc("Moves bounding boxes to where they land when their image is pasted onto a canvas "
             "`ratio` times larger (fn.paste): corners p -> p / ratio + paste * (ratio - 1) / "
             "ratio, sizes (xywh) -> size / ratio. paste_x, paste_y = (0, 0) puts the image at "
             "the canvas's top-left corner, (1, 1) at its bottom-right one.")
      .inputs(1, 1, {"input"})
      .outputs(1)
      .arg({.name = "ratio", .type = ArgType::kFloat,
            .doc = "How many times larger the canvas is than the image, at least 1", .tensor = true,
            .min = 1.0})
      .arg({.name = "ltrb", .type = ArgType::kBool, .default_value = false,
            .doc = "True for (left, top, right, bottom) boxes, False for (x, y, width, height)."})
      .arg({.name = "paste_x", .type = ArgType::kFloat, .default_value = 0.5,
            .doc = "Horizontal position of the image on the canvas, in [0, 1].", .tensor = true,
            .min = 0.0, .max = 1.0})
      .arg({.name = "paste_y", .type = ArgType::kFloat, .default_value = 0.5,
            .doc = "Vertical position of the image on the canvas, in [0, 1].", .tensor = true,
            .min = 0.0, .max = 1.0})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<BboxPaste>(s); });
}

STOKER_REGISTER_OP_NAMED(coord_flip, "coord_flip") {
  schema.doc("Reflects points about a center per axis, as the data they refer to is flipped: "
             "where flip_<axis> is nonzero, c -> 2 * center_<axis> - c. Points are [N, ndim] "
             "float32, ndim 1 to 3.")
      .inputs(1, 1, {"input"})
      .outputs(1)
      .arg({.name = "layout", .type = ArgType::kString, .default_value = std::string(""),
            .doc = "The order of the coordinates: letters x, y and z (\"xy\", \"yx\", \"xyz\", "
                   "...). Empty: \"x\", \"xy\" or \"xyz\" by the number of coordinates."})
      .arg({.name = "flip_x", .type = ArgType::kInt, .default_value = int64_t{1},
            .doc = "Flip the horizontal (x) coordinate if nonzero.", .tensor = true})
      .arg({.name = "flip_y", .type = ArgType::kInt, .default_value = int64_t{0},
            .doc = "Flip the vertical (y) coordinate if nonzero.", .tensor = true})
      .arg({.name = "flip_z", .type = ArgType::kInt, .default_value = int64_t{0},
            .doc = "Flip the depthwise (z) coordinate if nonzero.", .tensor = true})
      .arg({.name = "center_x", .type = ArgType::kFloat, .default_value = 0.5,
            .doc = "The flip's center on the horizontal axis.", .tensor = true})
      .arg({.name = "center_y", .type = ArgType::kFloat, .default_value = 0.5,
            .doc = "The flip's center on the vertical axis.", .tensor = true})
      .arg({.name = "center_z", .type = ArgType::kFloat, .default_value = 0.5,
            .doc = "The flip's center on the depthwise axis.", .tensor = true})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<CoordFlip>(s); })
      STOKER_GPU_TWIN(CoordFlip);
}

}  // namespace stoker
