// The random crop windows of the detection pipelines beside random_bbox_crop:
//  - ssd_random_crop (DALI's legacy SSDRandomCrop): image, boxes and labels cropped together by
//    SSD's IoU rule; the window is searched for in setup(), because the boxes it keeps and its
//    size shape the outputs.
//  - roi_random_crop: the start of a fixed-size window placed at random around a region of
//    interest.
//  - random_crop_generator: the window of random_resized_crop for a given shape, as anchor and
//    shape (random_crop_attr.h draws it).
// Every sample draws from its own stream (ws.rng(i)): the same seed gives the same windows
// whatever num_threads.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "core/repr.h"
#include "kernels/cpu/detection/crop_boxes.h"
#include "kernels/cpu/detection/crops_rotate.h"
#include "kernels/cpu/geometry/strided_copy.h"
#include "ops/image/random_crop_attr.h"
#include "pipeline/operator.h"

namespace stoker {
namespace {

using kernels::BoxNd;

int64_t whole_index(const Workspace& ws, int64_t i) { return ws.origins ? (*ws.origins)[i] : i; }

std::string sample_name(const OpSpec& spec, const Workspace& ws, int64_t i) {
  return spec.display_name() + ": sample " + std::to_string(whole_index(ws, i));
}

// A uniform integer in [lo, hi] (lo <= hi), without modulo bias.
int64_t uniform_int(Philox& rng, int64_t lo, int64_t hi) {
  const uint64_t n = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1;
  if (n == 0) return static_cast<int64_t>(rng.next_u64());  // the whole int64 range
  if (n <= 0xffffffffull) return lo + static_cast<int64_t>(rng.below(static_cast<uint32_t>(n)));
  const uint64_t limit = std::numeric_limits<uint64_t>::max() -
                         std::numeric_limits<uint64_t>::max() % n;
  uint64_t v;
  do v = rng.next_u64();
  while (v >= limit);
  return static_cast<int64_t>(static_cast<uint64_t>(lo) + v % n);
}

// ---------------------------------------------------------------------------------------------
// ssd_random_crop

class SsdRandomCrop : public Operator {
 public:
  explicit SsdRandomCrop(const OpSpec& spec) : Operator(spec) {
    num_attempts_ = spec.get<int64_t>("num_attempts");
  }

  bool setup_reads_input_data() const override { return true; }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& images = ws.input(0);
    const Batch& boxes = ws.input(1);
    const Batch& labels = ws.input(2);
    const int64_t n = static_cast<int64_t>(images.size());
    check_inputs(ws);
    kernels::BoxLayout layout;
    kernels::parse_box_layout("xyXY", 2, &layout);
    results_.assign(n, kernels::SsdCropResult());
    ws.thread_pool->parallel_for(n, [&](int64_t i, int) {
      const int64_t nb = boxes.shape(i)[0];
      std::vector<BoxNd> in(nb);
      kernels::read_boxes(in.data(), boxes.data<float>(i), nb, layout);
      for (int64_t b = 0; b < nb; ++b) check_box(ws, i, b, in[b]);
      const Shape& s = images.shape(i);
      Philox rng = ws.rng(i);
      results_[i] = kernels::ssd_random_crop(in.data(), nb, s[0], s[1], num_attempts_, rng);
    });

    std::vector<OutputDesc> out(3);
    out[0].dtype = images.dtype();
    out[0].layout = images.layout();
    out[1].dtype = DType::kFloat32;
    out[2].dtype = labels.dtype();
    for (int64_t i = 0; i < n; ++i) {
      const kernels::SsdCropResult& r = results_[i];
      const int64_t kept = static_cast<int64_t>(r.kept.size());
      out[0].shapes.push_back({r.y1 - r.y0, r.x1 - r.x0, images.shape(i)[2]});
      out[1].shapes.push_back({kept, 4});
      Shape ls = labels.shape(i);
      ls[0] = kept;
      out[2].shapes.push_back(ls);
    }
    return out;
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const kernels::SsdCropResult& r = results_[i];
    const Batch& images = ws.input(0);
    const Shape& s = images.shape(i);
    kernels::strided_copy(ws.output(0)[i].data, images[i].data, s, {r.y0, r.x0, 0}, {1, 1, 1},
                          {r.y1 - r.y0, r.x1 - r.x0, s[2]}, dtype_size(images.dtype()));
    kernels::BoxLayout layout;
    kernels::parse_box_layout("xyXY", 2, &layout);
    kernels::write_boxes(ws.output(1).data<float>(i), r.boxes.data(),
                         static_cast<int64_t>(r.boxes.size()), layout);
    const Batch& lab = ws.input(2);
    const int64_t nb = lab.shape(i)[0];
    const size_t row = nb > 0 ? lab.sample_bytes(i) / static_cast<size_t>(nb) : 0;
    const auto* src = static_cast<const uint8_t*>(lab[i].data);
    auto* dst = static_cast<uint8_t*>(ws.output(2)[i].data);
    for (size_t k = 0; k < r.kept.size(); ++k)
      std::memcpy(dst + k * row, src + static_cast<size_t>(r.kept[k]) * row, row);
  }

 private:
  void check_inputs(const Workspace& ws) const {
    const Batch& images = ws.input(0);
    const Batch& boxes = ws.input(1);
    const Batch& labels = ws.input(2);
    const std::string& il = images.layout();
    if (!il.empty() && il != "HWC")
      fail(ErrorKind::kInvalidArgument,
           spec_.display_name() + ": the images (input 0) have layout \"" + il +
               "\"; ssd_random_crop takes HWC images (height, width, channels).");
    if (boxes.size() > 0 && boxes.dtype() != DType::kFloat32)
      fail(ErrorKind::kTypeMismatch,
           spec_.display_name() + ": the boxes (input 1) must be float32, got " +
               dtype_name(boxes.dtype()) + "; convert them with fn.cast(boxes, dtype=types.FLOAT).");
    for (size_t k = 0; k < images.size(); ++k) {
      const int64_t i = static_cast<int64_t>(k);
      const Shape& s = images.shape(k);
      if (s.size() != 3)
        fail(ErrorKind::kInvalidArgument,
             sample_name(spec_, ws, i) + ": the image (input 0) has shape " + to_string(s) +
                 "; ssd_random_crop takes HWC images, 3 dimensions (height, width, channels). " +
                 "Give a grayscale image a channel axis with fn.expand_dims(image, axes=[2], " +
                 "new_axis_names=\"C\").");
      const Shape& b = boxes.shape(k);
      if (b.size() != 2 || b[1] != 4)
        fail(ErrorKind::kInvalidArgument,
             sample_name(spec_, ws, i) + ": the boxes (input 1) have shape " + to_string(b) +
                 "; give them as [N, 4], one box (left, top, right, bottom) per row.");
      const Shape& l = labels.shape(k);
      if (l.empty() || l[0] != b[0])
        fail(ErrorKind::kInvalidArgument,
             sample_name(spec_, ws, i) + ": the labels (input 2) have shape " + to_string(l) +
                 " for " + std::to_string(b[0]) + " boxes; give one label (or one row of " +
                 "labels) per box, shape [" + std::to_string(b[0]) + "] or [" +
                 std::to_string(b[0]) + ", ...].");
    }
  }

  void check_box(const Workspace& ws, int64_t i, int64_t b, const BoxNd& box) const {
    int axis = 0;
    const kernels::BoxFault f = kernels::check_box(box, 2, &axis);
    if (f == kernels::BoxFault::kNone) return;
    const float* raw = ws.input(1).data<float>(i) + b * 4;
    std::string stored;
    for (int k = 0; k < 4; ++k) stored += (k ? ", " : "") + float_repr(raw[k]);
    const std::string what =
        sample_name(spec_, ws, i) + ", box " + std::to_string(b) + " (" + stored + ")";
    const std::string ax = axis == 0 ? "x" : "y";
    if (f == kernels::BoxFault::kOutside)
      fail(ErrorKind::kInvalidArgument,
           what + ": on " + ax + " it spans [" + float_repr(box.lo[axis]) + ", " +
               float_repr(box.hi[axis]) + "], which is not inside [0, 1]. ssd_random_crop " +
               "takes boxes (left, top, right, bottom) relative to the image's size " +
               "(readers.coco(ratio=True, ltrb=True) gives them so).");
    fail(ErrorKind::kInvalidArgument,
         what + ": on " + ax + " it ends (" + float_repr(box.hi[axis]) + ") before it starts (" +
             float_repr(box.lo[axis]) + "). ssd_random_crop takes boxes as (left, top, right, " +
             "bottom); boxes given as (x, y, width, height) can be read with " +
             "readers.coco(ltrb=True).");
  }

  int64_t num_attempts_ = 1;
  std::vector<kernels::SsdCropResult> results_;
};

// ---------------------------------------------------------------------------------------------
// roi_random_crop

class RoiRandomCrop : public Operator {
 public:
  explicit RoiRandomCrop(const OpSpec& spec) : Operator(spec) {
    const bool has_end = spec.has("roi_end") || spec.is_tensor_arg("roi_end");
    const bool has_shape = spec.has("roi_shape") || spec.is_tensor_arg("roi_shape");
    if (has_end && has_shape)
      spec.arg_error("roi_shape", "cannot be given with roi_end: the ROI is roi_start with "
                                  "either its end (roi_end) or its extent (roi_shape). Leave "
                                  "out one of them.");
    if (!has_end && !has_shape)
      spec.arg_error("roi_end", "or roi_shape is needed: the ROI is roi_start with either its "
                                "end (roi_end) or its extent (roi_shape).");
    roi_end_ = has_end;
    has_in_shape_ = spec.has("in_shape") || spec.is_tensor_arg("in_shape");
    if (has_in_shape_ && spec.num_inputs > 0)
      spec.arg_error("in_shape", "cannot be given with an input: the input's shape is the "
                                 "shape the window must fit in. Pass either the data or "
                                 "in_shape.");
  }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const int64_t n =
        ws.inputs.empty() ? ws.batch_size : static_cast<int64_t>(ws.input(0).size());
    OutputDesc d;
    d.dtype = DType::kInt64;
    ranges_.assign(n, {});
    for (int64_t i = 0; i < n; ++i) {
      const std::vector<double> crop = ints(ws, "crop_shape", i);
      const size_t nd = crop.size();
      if (nd == 0)
        spec_.arg_error("crop_shape", "must have at least one value" + of(ws, "crop_shape", i) +
                                          ".");
      const std::vector<double> start = ints(ws, "roi_start", i, nd);
      const char* other = roi_end_ ? "roi_end" : "roi_shape";
      const std::vector<double> second = ints(ws, other, i, nd);
      std::vector<double> bound;
      std::string bound_name;
      if (has_in_shape_) {
        bound = ints(ws, "in_shape", i, nd);
        bound_name = "in_shape " + numbers_repr(bound);
      } else if (!ws.inputs.empty()) {
        const Shape& s = ws.input(0).shape(i);
        if (s.size() < nd)
          fail(ErrorKind::kInvalidArgument,
               sample_name(spec_, ws, i) + ": the input has shape " + to_string(s) + ", " +
                   std::to_string(s.size()) + " dimensions, but crop_shape has " +
                   std::to_string(nd) + " values " + numbers_repr(crop) + "; give crop_shape, " +
                   "roi_start and " + other + " one value for each of the input's first " +
                   "dimensions, at most " + std::to_string(s.size()) + ".");
        for (size_t k = 0; k < nd; ++k) bound.push_back(static_cast<double>(s[k]));
        bound_name = "the input's shape " + to_string(s);
      }
      std::vector<kernels::StartRange>& r = ranges_[i];
      for (size_t k = 0; k < nd; ++k) {
        const int64_t c = static_cast<int64_t>(crop[k]);
        const int64_t s0 = static_cast<int64_t>(start[k]);
        const int64_t ext = roi_end_ ? static_cast<int64_t>(second[k]) - s0
                                     : static_cast<int64_t>(second[k]);
        const std::string dim = " in dimension " + std::to_string(k);
        if (c < 0)
          spec_.arg_error("crop_shape", "must not be negative, got " + numbers_repr(crop) +
                                            of(ws, "crop_shape", i) + ".");
        if (ext < 0)
          spec_.arg_error(other, roi_end_ ? "must not be before roi_start, got roi_start " +
                                                numbers_repr(start) + " and roi_end " +
                                                numbers_repr(second) + of(ws, other, i) + "."
                                          : "must not be negative, got " + numbers_repr(second) +
                                                of(ws, other, i) + ".");
        int64_t extent = -1;
        if (!bound.empty()) {
          extent = static_cast<int64_t>(bound[k]);
          if (extent < 0)
            spec_.arg_error("in_shape", "must not be negative, got " + numbers_repr(bound) +
                                            of(ws, "in_shape", i) + ".");
          if (c > extent)
            fail(ErrorKind::kInvalidArgument,
                 sample_name(spec_, ws, i) + ": crop_shape " + numbers_repr(crop) +
                     " is larger than " + bound_name + dim + "; the window must fit in the " +
                     "input. Make crop_shape at most the input's shape.");
          if (s0 < 0 || s0 + ext > extent)
            fail(ErrorKind::kInvalidArgument,
                 sample_name(spec_, ws, i) + ": the ROI [" + std::to_string(s0) + ", " +
                     std::to_string(s0 + ext) + ")" + dim + " is not inside " + bound_name +
                     "; give roi_start and " + other + " inside the input.");
        }
        r.push_back(kernels::roi_start_range(s0, ext, c, extent));
      }
      d.shapes.push_back({static_cast<int64_t>(nd)});
    }
    return {d};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    Philox rng = ws.rng(i);
    int64_t* out = ws.output(0).data<int64_t>(i);
    const std::vector<kernels::StartRange>& r = ranges_[i];
    for (size_t k = 0; k < r.size(); ++k)
      out[k] = r[k].lo == r[k].hi ? r[k].lo : uniform_int(rng, r[k].lo, r[k].hi);
  }

 private:
  std::string of(const Workspace& ws, const std::string& name, int64_t i) const {
    return spec_.is_tensor_arg(name) ? " for sample " + std::to_string(whole_index(ws, i)) : "";
  }

  // An integer-list argument of sample i; with nd > 0 it must have that many values.
  std::vector<double> ints(const Workspace& ws, const std::string& name, int64_t i,
                           size_t nd = 0) const {
    std::vector<double> v = ws.list_arg(name, i);
    if (nd > 0 && v.size() != nd)
      spec_.arg_error(name, "has " + std::to_string(v.size()) + " values " + numbers_repr(v) +
                                of(ws, name, i) + ", but crop_shape has " + std::to_string(nd) +
                                "; give one value per dimension of the window.");
    constexpr double kMax = 9007199254740992.0;  // 2^53: whole numbers a double holds exactly
    for (double x : v)
      if (!(std::abs(x) <= kMax) || x != std::floor(x))
        spec_.arg_error(name, "must be whole numbers (of at most 2^53 in magnitude), got " +
                                  numbers_repr(v) + of(ws, name, i) + ".");
    return v;
  }

  bool roi_end_ = true, has_in_shape_ = false;
  std::vector<std::vector<kernels::StartRange>> ranges_;
};

// ---------------------------------------------------------------------------------------------
// random_crop_generator

class RandomCropGenerator : public Operator {
 public:
  explicit RandomCropGenerator(const OpSpec& spec) : Operator(spec), args_(random_crop_args(spec)) {}

  bool setup_reads_input_data() const override { return true; }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int64_t n = static_cast<int64_t>(in.size());
    if (n > 0 && !is_integer(in.dtype()))
      fail(ErrorKind::kTypeMismatch,
           spec_.display_name() + ": the input must hold integers (a shape, as fn.shapes gives " +
               "it), got " + dtype_name(in.dtype()) + "; convert it with fn.cast(shape, " +
               "dtype=types.INT64).");
    sizes_.assign(n, {0, 0});
    for (int64_t i = 0; i < n; ++i) {
      const Shape& s = in.shape(i);
      if (s.size() != 1 || (s[0] != 2 && s[0] != 3))
        fail(ErrorKind::kInvalidArgument,
             sample_name(spec_, ws, i) + ": the input has shape " + to_string(s) + "; give " +
                 "the shape of the image to crop, 2 or 3 values (HW or HWC), as " +
                 "fn.shapes(image) gives it.");
      std::string got;
      bool bad = false;
      visit_dtype(in.dtype(), [&](auto t) {
        using T = decltype(t);
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
          const T* v = static_cast<const T*>(in[i].data);
          for (int64_t k = 0; k < s[0]; ++k) {
            got += (k ? ", " : "") + std::to_string(v[k]);
            if (k >= 2) continue;
            bool out_of_range = static_cast<uint64_t>(v[k]) > 0x7fffffffull;
            if constexpr (std::is_signed_v<T>) out_of_range = v[k] < 0 || v[k] > 0x7fffffff;
            bad |= out_of_range;
            sizes_[i][k] = static_cast<int64_t>(v[k]);
          }
        }
      });
      if (bad)
        fail(ErrorKind::kInvalidArgument,
             sample_name(spec_, ws, i) + ": the input shape [" + got + "] has a height or " +
                 "width outside [0, 2147483647]; give the shape of the image to crop (HW or " +
                 "HWC).");
    }
    OutputDesc d;
    d.dtype = DType::kInt32;
    d.shapes.assign(n, Shape{2});
    return {d, d};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    Philox rng = ws.rng(i);
    const CropWindow2D c = random_crop_window(sizes_[i][0], sizes_[i][1], args_, rng);
    int32_t* anchor = ws.output(0).data<int32_t>(i);
    int32_t* shape = ws.output(1).data<int32_t>(i);
    anchor[0] = static_cast<int32_t>(c.y);
    anchor[1] = static_cast<int32_t>(c.x);
    shape[0] = static_cast<int32_t>(c.h);
    shape[1] = static_cast<int32_t>(c.w);
  }

 private:
  RandomCropArgs args_;
  std::vector<std::array<int64_t, 2>> sizes_;  // height, width of each sample
};

}  // namespace

STOKER_REGISTER_OP_NAMED(ssd_random_crop, "ssd_random_crop") {
  schema
      .doc("Deprecated in DALI in favour of random_bbox_crop. Crops an image with its boxes and "
           "labels as SSD's training does. Each round draws one of: no crop, a minimum IoU of "
           "0.1, 0.3, 0.5, 0.7 or 0.9, or no constraint; then up to num_attempts windows of "
           "width and height in [0.3, 1) of the image's (width / height in [0.5, 2]), placed "
           "at random inside it. A window is taken when its IoU with every box reaches the "
           "minimum and it holds the centre of at least one box; otherwise another round "
           "begins. The boxes whose centre it holds are kept, clipped to it and made relative "
           "to the pixels cut; their labels with them. \"No crop\" (and a sample without "
           "boxes) keeps the whole image. Inputs: images (HWC, any type), boxes ([N, 4] "
           "float32, left, top, right, bottom relative to the image) and labels (one row per "
           "box). Outputs: the cropped image, the boxes and the labels kept.")
      .inputs(3, 3, {"images", "boxes", "labels"})
      .outputs(3, {"images", "boxes", "labels"})
      .input_layouts({"HWC"})
      .random()
      .arg({.name = "num_attempts", .type = ArgType::kInt, .default_value = int64_t{1},
            .doc = "Windows tried per round (per drawn choice) before another is drawn.",
            .min = 1.0})
      .arg({.name = "seed", .type = ArgType::kInt, .default_value = int64_t{-1},
            .doc = "Random seed; -1 takes it from the pipeline's seed and this operator's place "
                   "in the graph."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<SsdRandomCrop>(s); });
}

STOKER_REGISTER_OP_NAMED(roi_random_crop, "roi_random_crop") {
  schema
      .doc("The start (int64, one value per dimension) of a window of crop_shape placed at "
           "random so that it holds as much of a region of interest as it can: the whole ROI "
           "where the ROI is smaller than the window, a part of it (the window inside the ROI) "
           "where the ROI is larger; a ROI as large as the window fixes the start. With in_shape "
           "(or the data as input, whose first dimensions then count) the window also stays "
           "inside the input, which must hold the ROI and the window; without either the "
           "window may reach outside. The ROI is roi_start with roi_end or roi_shape.")
      .inputs(0, 1, {"input"})
      .outputs(1, {"crop_start"})
      .random()
      .arg({.name = "crop_shape", .type = ArgType::kIntList,
            .doc = "The window's extents.", .tensor = true, .list_min = 1})
      .arg({.name = "roi_start", .type = ArgType::kIntList,
            .doc = "Where the ROI starts.", .tensor = true, .list_min = 1})
      .arg({.name = "roi_end", .type = ArgType::kIntList, .optional = true,
            .doc = "Where the ROI ends (exclusive). Not with roi_shape.", .tensor = true,
            .list_min = 1})
      .arg({.name = "roi_shape", .type = ArgType::kIntList, .optional = true,
            .doc = "The ROI's extents. Not with roi_end.", .tensor = true, .list_min = 1})
      .arg({.name = "in_shape", .type = ArgType::kIntList, .optional = true,
            .doc = "The shape of the data to crop: the window is kept inside it. Not with an "
                   "input.",
            .tensor = true, .list_min = 1})
      .arg({.name = "seed", .type = ArgType::kInt, .default_value = int64_t{-1},
            .doc = "Random seed; -1 takes it from the pipeline's seed and this operator's place "
                   "in the graph."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<RoiRandomCrop>(s); });
}

STOKER_REGISTER_OP_NAMED(random_crop_generator, "random_crop_generator") {
  schema
      .doc("A random crop window for an image of the shape given (HW or HWC, as fn.shapes "
           "gives it), drawn as random_resized_crop and decoders.image_random_crop draw theirs: "
           "area and aspect ratio at random, then the place. Outputs anchor (y, x) and shape "
           "(height, width), int32, for fn.slice(image, anchor, shape, axes=[0, 1]) or "
           "decoders.image_slice.")
      .inputs(1, 1, {"input"})
      .outputs(2, {"anchor", "shape"});
  add_random_crop_args(schema);
  schema.backend(Backend::kCPU,
                 [](const OpSpec& s) { return std::make_unique<RandomCropGenerator>(s); });
}

}  // namespace stoker
