// segmentation.random_mask_pixel, segmentation.random_object_bbox and segmentation.select_masks
// (DALI's segmentation operators). The two random ones draw from the sample's own stream; the
// shapes of their outputs follow from the masks' dimensions, so the blobs and pixels are found
// per sample in run_sample(). select_masks sizes its outputs from the polygons it keeps, so it
// plans in setup().
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/cpu/detection/segmentation.h"
#include "pipeline/operator.h"

namespace stoker {
namespace {

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof(b), "%.9g", v);
  return b;
}

std::string list_repr(const std::vector<double>& v) {
  std::string s = "[";
  for (size_t k = 0; k < v.size(); ++k) s += (k ? ", " : "") + num(v[k]);
  return s + "]";
}

int64_t whole_index(const Workspace& ws, int64_t i) {
  return ws.origins ? (*ws.origins)[i] : i;
}

std::string where(const OpSpec& spec, const Workspace& ws, int64_t i) {
  return spec.display_name() + ": sample " + std::to_string(whole_index(ws, i));
}

// " for sample i" where the argument is a per-sample tensor.
std::string for_sample(const OpSpec& spec, const Workspace& ws, const char* arg, int64_t i) {
  return spec.is_tensor_arg(arg) ? " for sample " + std::to_string(whole_index(ws, i)) : "";
}

bool whole(double v) { return std::isfinite(v) && v == std::floor(v); }

// ---- random_mask_pixel

class RandomMaskPixel : public Operator {
 public:
  explicit RandomMaskPixel(const OpSpec& spec) : Operator(spec) {
    by_value_ = spec.has("value") || spec.is_tensor_arg("value");
    if (by_value_ && (spec.has("threshold") || spec.is_tensor_arg("threshold")))
      spec.arg_error("value", "cannot be given with threshold: foreground pixels are either "
                              "those equal to value or those above threshold. Pass one of them.");
  }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int64_t n = static_cast<int64_t>(in.size());
    if (n > 0) {
      switch (in.dtype()) {
        case DType::kBool: case DType::kUInt8: case DType::kInt8: case DType::kUInt16:
        case DType::kInt16: case DType::kUInt32: case DType::kInt32: case DType::kUInt64:
        case DType::kInt64: case DType::kFloat32:
          break;
        default:
          fail(ErrorKind::kTypeMismatch,
               spec_.display_name() + ": the mask (input 0) must be bool, an integer type or " +
                   "float32, got " + dtype_name(in.dtype()) + "; convert it with " +
                   "fn.cast(mask, dtype=types.FLOAT).");
      }
    }
    tests_.assign(n, kernels::ForegroundTest());
    fg_.assign(n, false);
    OutputDesc d{DType::kInt64, "", {}};
    for (int64_t i = 0; i < n; ++i) {
      const Shape& s = in.shape(i);
      if (s.empty())
        fail(ErrorKind::kInvalidArgument,
             where(spec_, ws, i) + ": the mask is a scalar (shape ()); random_mask_pixel picks "
             "a position in a mask of 1 or more dimensions.");
      if (volume(s) == 0)
        fail(ErrorKind::kInvalidArgument,
             where(spec_, ws, i) + ": the mask has shape " + to_string(s) + ", no pixels to " +
             "pick from; drop empty masks before random_mask_pixel.");
      const double fg = ws.scalar_arg("foreground", i, 0);
      if (!whole(fg))
        spec_.arg_error("foreground", "must be an integer (0: any pixel, else a foreground "
                                      "pixel), got " + num(fg) +
                                          for_sample(spec_, ws, "foreground", i) + ".");
      fg_[i] = fg != 0;
      kernels::ForegroundTest& t = tests_[i];
      t.by_value = by_value_;
      if (by_value_) {
        const double v = ws.scalar_arg("value", i, 0);
        if (!whole(v) || std::fabs(v) > 9.2e18)
          spec_.arg_error("value", "must be an integer, got " + num(v) +
                                       for_sample(spec_, ws, "value", i) + ".");
        t.value = static_cast<int64_t>(v);
      } else {
        const double th = ws.scalar_arg("threshold", i, 0.0);
        if (std::isnan(th))
          spec_.arg_error("threshold", "must be a number, got nan" +
                                           for_sample(spec_, ws, "threshold", i) + ".");
        t.threshold = static_cast<float>(th);
      }
      d.shapes.push_back(Shape{static_cast<int64_t>(s.size())});
    }
    return {d};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const Batch& in = ws.input(0);
    const Shape& s = in.shape(i);
    const int64_t n = volume(s);
    int64_t* out = ws.output(0).data<int64_t>(i);
    Philox rng = ws.rng(i);
    int64_t flat = -1;
    if (fg_[i]) {
      visit_dtype(in.dtype(), [&](auto t) {
        using T = decltype(t);
        if constexpr (std::is_same_v<T, float16> || std::is_same_v<T, double>) {
          STOKER_ASSERT(false, "random_mask_pixel: dtype refused in setup");
        } else {
          const T* p = in.data<T>(i);
          const int64_t count = kernels::count_foreground(p, n, tests_[i]);
          if (count > 0)
            flat = kernels::find_foreground(p, n, tests_[i], kernels::uniform_index(rng, count));
        }
      });
    }
    if (flat >= 0) {
      for (int d = static_cast<int>(s.size()) - 1; d >= 0; --d) {
        out[d] = flat % s[d];
        flat /= s[d];
      }
      return;
    }
    // Any pixel: foreground == 0, or a mask without foreground.
    for (size_t d = 0; d < s.size(); ++d) out[d] = kernels::uniform_index(rng, s[d]);
  }

 private:
  bool by_value_ = false;
  std::vector<kernels::ForegroundTest> tests_;
  std::vector<bool> fg_;
};

// ---- random_object_bbox

enum class BoxFormat { kAnchorShape, kStartEnd, kBox };

class RandomObjectBBox : public Operator {
 public:
  explicit RandomObjectBBox(const OpSpec& spec) : Operator(spec) {
    const std::string f = spec.get<std::string>("format");
    format_ = f == "box" ? BoxFormat::kBox : f == "start_end" ? BoxFormat::kStartEnd
                                                               : BoxFormat::kAnchorShape;
    ignore_class_ = spec.get<bool>("ignore_class");
    output_class_ = spec.get<bool>("output_class");
    has_classes_ = spec.has("classes") || spec.is_tensor_arg("classes");
    has_weights_ = spec.has("class_weights") || spec.is_tensor_arg("class_weights");
    has_background_ = spec.has("background") || spec.is_tensor_arg("background");
    has_threshold_ = spec.has("threshold") || spec.is_tensor_arg("threshold");
    if (ignore_class_) {
      for (const char* a : {"classes", "class_weights"})
        if (spec.has(a) || spec.is_tensor_arg(a))
          spec.arg_error("ignore_class", std::string("cannot be True with ") + a + ": with " +
                                             "ignore_class every blob is drawn alike, whatever "
                                             "its class. Leave out either.");
      if (output_class_)
        spec.arg_error("ignore_class", "cannot be True with output_class=True: with "
                                       "ignore_class no class is chosen. Leave out either.");
    }
    if (spec.has("k_largest")) k_largest_ = spec.get<int64_t>("k_largest");
    const int want = (format_ == BoxFormat::kBox ? 1 : 2) + (output_class_ ? 1 : 0);
    if (spec.num_outputs != want)
      fail(ErrorKind::kInvalidArgument,
           spec.display_name() + " gives " + std::to_string(want) + " output(s) with format=\"" +
               f + "\"" + (output_class_ ? " and output_class=True" : "") + ", but " +
               std::to_string(spec.num_outputs) + " were asked for.");
  }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int64_t n = static_cast<int64_t>(in.size());
    if (n > 0) {
      switch (in.dtype()) {
        case DType::kBool: case DType::kUInt8: case DType::kInt8: case DType::kUInt16:
        case DType::kInt16: case DType::kUInt32: case DType::kInt32:
          break;
        default:
          fail(ErrorKind::kTypeMismatch,
               spec_.display_name() + ": the mask (input 0) must be bool or an integer type of " +
                   "at most 32 bits (uint8, int8, uint16, int16, uint32, int32), got " +
                   dtype_name(in.dtype()) + "; convert it with fn.cast(mask, " +
                   "dtype=types.INT32).");
      }
    }
    args_.assign(n, kernels::ObjectChoiceArgs());
    fg_prob_.assign(n, 1.0);
    int ndim = 0;
    for (int64_t i = 0; i < n; ++i) {
      const Shape& s = in.shape(i);
      ndim = static_cast<int>(s.size());
      if (s.empty())
        fail(ErrorKind::kInvalidArgument,
             where(spec_, ws, i) + ": the mask is a scalar (shape ()); random_object_bbox "
             "takes masks of 1 or more dimensions.");
      read_args(ws, i, ndim);
    }
    OutputDesc box{DType::kInt32, "", std::vector<Shape>(n, Shape{ndim})};
    std::vector<OutputDesc> out;
    if (format_ == BoxFormat::kBox) {
      box.shapes.assign(n, Shape{2 * ndim});
      out.push_back(box);
    } else {
      out.push_back(box);
      out.push_back(box);
    }
    if (output_class_) out.push_back(OutputDesc{DType::kInt32, "", std::vector<Shape>(n, Shape{})});
    return out;
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const Batch& in = ws.input(0);
    const Shape& s = in.shape(i);
    const int nd = static_cast<int>(s.size());
    const kernels::ObjectChoiceArgs& a = args_[i];
    Philox rng = ws.rng(i);
    std::vector<int64_t> lo(nd, 0), hi(s.begin(), s.end());
    int64_t cls = a.background;
    if (rng.uniform_double() < fg_prob_[i]) {
      kernels::Blobs blobs;
      visit_dtype(in.dtype(), [&](auto t) {
        using T = decltype(t);
        if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, uint8_t> ||
                      std::is_same_v<T, int8_t> || std::is_same_v<T, uint16_t> ||
                      std::is_same_v<T, int16_t> || std::is_same_v<T, uint32_t> ||
                      std::is_same_v<T, int32_t>) {
          blobs = kernels::find_blobs(in.data<T>(i), s.data(), nd, a.background);
        } else {
          STOKER_ASSERT(false, "random_object_bbox: dtype refused in setup");
        }
      });
      const kernels::ObjectChoice c = kernels::choose_object(blobs, a, rng);
      cls = c.class_label;
      if (c.blob >= 0) {
        std::copy(blobs.lo(c.blob), blobs.lo(c.blob) + nd, lo.begin());
        std::copy(blobs.hi(c.blob), blobs.hi(c.blob) + nd, hi.begin());
      }
    }
    int32_t* o0 = ws.output(0).data<int32_t>(i);
    for (int d = 0; d < nd; ++d) {
      switch (format_) {
        case BoxFormat::kBox:
          o0[d] = static_cast<int32_t>(lo[d]);
          o0[nd + d] = static_cast<int32_t>(hi[d]);
          break;
        case BoxFormat::kStartEnd:
          o0[d] = static_cast<int32_t>(lo[d]);
          ws.output(1).data<int32_t>(i)[d] = static_cast<int32_t>(hi[d]);
          break;
        case BoxFormat::kAnchorShape:
          o0[d] = static_cast<int32_t>(lo[d]);
          ws.output(1).data<int32_t>(i)[d] = static_cast<int32_t>(hi[d] - lo[d]);
          break;
      }
    }
    if (output_class_)
      *ws.output(format_ == BoxFormat::kBox ? 1 : 2).data<int32_t>(i) = static_cast<int32_t>(cls);
  }

 private:
  // Sample i's arguments: checked, and the background chosen as DALI chooses it.
  void read_args(const Workspace& ws, int64_t i, int ndim) {
    kernels::ObjectChoiceArgs& a = args_[i];
    a.ignore_class = ignore_class_;
    a.k_largest = k_largest_;
    const double p = ws.scalar_arg("foreground_prob", i, 1.0);
    if (!(p >= 0 && p <= 1))
      spec_.arg_error("foreground_prob", "must be a probability in [0, 1], got " + num(p) +
                                             for_sample(spec_, ws, "foreground_prob", i) + ".");
    fg_prob_[i] = p;
    const double bg = ws.scalar_arg("background", i, 0);
    if (!whole(bg) || bg < INT32_MIN || bg > INT32_MAX)
      spec_.arg_error("background", "must be an int32 label, got " + num(bg) +
                                        for_sample(spec_, ws, "background", i) + ".");
    a.background = static_cast<int64_t>(bg);

    if (has_threshold_) {
      const std::vector<double> t = ws.list_arg("threshold", i);
      if (static_cast<int>(t.size()) != ndim)
        spec_.arg_error("threshold", "takes one minimum extent per axis of the mask, " +
                                         std::to_string(ndim) + " for masks of shape " +
                                         to_string(ws.input(0).shape(i)) + ", got " +
                                         std::to_string(t.size()) + ": " + list_repr(t) +
                                         for_sample(spec_, ws, "threshold", i) + ".");
      for (double v : t) {
        if (!whole(v))
          spec_.arg_error("threshold", "must be whole numbers of pixels, got " + list_repr(t) +
                                           for_sample(spec_, ws, "threshold", i) + ".");
        a.threshold.push_back(static_cast<int64_t>(v));
      }
    }
    if (ignore_class_) return;

    a.from_labels = !has_classes_ && !has_weights_;
    std::vector<double> cls, w;
    if (has_classes_) cls = ws.list_arg("classes", i);
    if (has_weights_) w = ws.list_arg("class_weights", i);
    if (has_classes_ && has_weights_ && cls.size() != w.size())
      spec_.arg_error("class_weights", "takes one weight per class, " +
                                           std::to_string(cls.size()) + " for classes " +
                                           list_repr(cls) + ", got " + std::to_string(w.size()) +
                                           ": " + list_repr(w) +
                                           for_sample(spec_, ws, "class_weights", i) + ".");
    for (double v : w)
      if (!(v >= 0) || !std::isfinite(v))
        spec_.arg_error("class_weights", "must be finite and >= 0 (relative probabilities), "
                                         "got " + list_repr(w) +
                                             for_sample(spec_, ws, "class_weights", i) + ".");
    if (has_classes_) {
      int64_t min_class = 0;
      bool on_background = false;
      for (size_t k = 0; k < cls.size(); ++k) {
        if (!whole(cls[k]) || cls[k] < INT32_MIN || cls[k] > INT32_MAX)
          spec_.arg_error("classes", "must be int32 labels, got " + list_repr(cls) +
                                         for_sample(spec_, ws, "classes", i) + ".");
        const int64_t c = static_cast<int64_t>(cls[k]);
        a.classes.push_back(c);
        min_class = k == 0 ? c : std::min(min_class, c);
        on_background = on_background || c == a.background;
      }
      if (on_background) {
        if (has_background_)
          spec_.arg_error("classes", "contains " + num(static_cast<double>(a.background)) +
                                         ", the background label" +
                                         for_sample(spec_, ws, "classes", i) + ": a class "
                                         "cannot be the background. Remove it from classes or "
                                         "pass another background.");
        // The background left to its default moves below the smallest class.
        a.background = min_class > INT32_MIN ? min_class - 1 : pick_free_label(a.classes);
      }
    }
    if (has_weights_) {
      a.weights = w;
      if (!has_classes_) {  // classes 0, 1, 2, ... leaving out the background
        int64_t c = 0;
        for (size_t k = 0; k < w.size(); ++k, ++c) {
          if (c == a.background) ++c;
          a.classes.push_back(c);
        }
      }
    } else {
      a.weights.assign(a.classes.size(), 1.0);
    }
  }

  static int64_t pick_free_label(const std::vector<int64_t>& classes) {
    int64_t b = INT32_MAX;
    while (std::find(classes.begin(), classes.end(), b) != classes.end()) --b;
    return b;
  }

  BoxFormat format_ = BoxFormat::kAnchorShape;
  bool ignore_class_ = false, output_class_ = false;
  bool has_classes_ = false, has_weights_ = false, has_background_ = false, has_threshold_ = false;
  int64_t k_largest_ = -1;
  std::vector<kernels::ObjectChoiceArgs> args_;
  std::vector<double> fg_prob_;
};

// ---- select_masks

class SelectMasks : public Operator {
 public:
  explicit SelectMasks(const OpSpec& spec)
      : Operator(spec), reindex_(spec.get<bool>("reindex_masks")) {}

  bool setup_reads_input_data() const override { return true; }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& ids = ws.input(0);
    const Batch& polys = ws.input(1);
    const Batch& verts = ws.input(2);
    const int64_t n = static_cast<int64_t>(polys.size());
    if (static_cast<int64_t>(ids.size()) != n || static_cast<int64_t>(verts.size()) != n)
      fail(ErrorKind::kInvalidArgument,
           spec_.display_name() + ": the inputs have " + std::to_string(ids.size()) + ", " +
               std::to_string(polys.size()) + " and " + std::to_string(verts.size()) +
               " samples; mask_ids, polygons and vertices must have one sample each per "
               "batch entry.");
    if (n > 0 && ids.dtype() != DType::kInt32)
      fail(ErrorKind::kTypeMismatch,
           spec_.display_name() + ": mask_ids (input 0) must be int32, got " +
               dtype_name(ids.dtype()) + "; convert them with fn.cast(mask_ids, " +
               "dtype=types.INT32).");
    if (n > 0 && polys.dtype() != DType::kInt32)
      fail(ErrorKind::kTypeMismatch,
           spec_.display_name() + ": polygons (input 1) must be int32, got " +
               dtype_name(polys.dtype()) + "; convert them with fn.cast(polygons, " +
               "dtype=types.INT32).");
    for (int64_t i = 0; i < n; ++i) {
      if (ids.shape(i).size() != 1)
        fail(ErrorKind::kInvalidArgument,
             where(spec_, ws, i) + ": mask_ids (input 0) have shape " + to_string(ids.shape(i)) +
                 "; give them as a 1-D list of mask ids.");
      const Shape& ps = polys.shape(i);
      if (ps.size() != 2 || ps[1] != 3)
        fail(ErrorKind::kInvalidArgument,
             where(spec_, ws, i) + ": polygons (input 1) have shape " + to_string(ps) +
                 "; give them as [N, 3], one row (mask_id, start_vertex, end_vertex) per "
                 "polygon, as readers.coco(polygon_masks=True) makes them.");
      if (verts.shape(i).size() != 2)
        fail(ErrorKind::kInvalidArgument,
             where(spec_, ws, i) + ": vertices (input 2) have shape " + to_string(verts.shape(i)) +
                 "; give them as [N, ndim], one vertex per row.");
    }

    plans_.assign(n, kernels::SelectPlan());
    ws.thread_pool->parallel_for(n, [&](int64_t i, int) {
      plans_[i] = kernels::plan_select_masks(ids.data<int32_t>(i), ids.shape(i)[0],
                                             polys.data<int32_t>(i), polys.shape(i)[0],
                                             verts.shape(i)[0], reindex_);
    });
    OutputDesc po{DType::kInt32, "", {}}, vo{verts.dtype(), "", {}};
    for (int64_t i = 0; i < n; ++i) {
      check(ws, i);
      const kernels::SelectPlan& p = plans_[i];
      po.shapes.push_back(Shape{static_cast<int64_t>(p.polygons.size()), 3});
      vo.shapes.push_back(Shape{p.nvertices, verts.shape(i)[1]});
    }
    return {po, vo};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const Batch& verts = ws.input(2);
    const size_t row = static_cast<size_t>(verts.shape(i)[1]) * dtype_size(verts.dtype());
    kernels::select_masks(ws.output(0).data<int32_t>(i), ws.output(1)[i].data, plans_[i],
                          ws.input(1).data<int32_t>(i), verts[i].data, row);
  }

 private:
  void check(const Workspace& ws, int64_t i) const {
    const kernels::SelectPlan& p = plans_[i];
    const int32_t* ids = ws.input(0).data<int32_t>(i);
    const int32_t* poly = ws.input(1).data<int32_t>(i) + 3 * std::max<int64_t>(p.fault_index, 0);
    const int64_t nv = ws.input(2).shape(i)[0];
    const std::string at = where(spec_, ws, i);
    switch (p.fault) {
      case kernels::SelectFault::kNone:
        if (p.nvertices > INT32_MAX)
          fail(ErrorKind::kInvalidArgument,
               at + ": the polygons selected have " + std::to_string(p.nvertices) +
                   " vertices, more than the int32 indices of the output polygons can address.");
        return;
      case kernels::SelectFault::kDuplicateId:
        fail(ErrorKind::kInvalidArgument,
             at + ": mask_ids has " + std::to_string(ids[p.fault_index]) + " more than once " +
                 "(again at position " + std::to_string(p.fault_index) + "); give each mask id " +
                 "once.");
      case kernels::SelectFault::kOutOfRange:
        fail(ErrorKind::kInvalidArgument,
             at + ": polygon " + std::to_string(p.fault_index) + " (mask id " +
                 std::to_string(poly[0]) + ") has vertices [" + std::to_string(poly[1]) + ", " +
                 std::to_string(poly[2]) + "), which is not inside the " + std::to_string(nv) +
                 " vertices given [0, " + std::to_string(nv) + ").");
      case kernels::SelectFault::kReversed:
        fail(ErrorKind::kInvalidArgument,
             at + ": polygon " + std::to_string(p.fault_index) + " (mask id " +
                 std::to_string(poly[0]) + ") has vertices [" + std::to_string(poly[1]) + ", " +
                 std::to_string(poly[2]) + "), which end before they start.");
      case kernels::SelectFault::kMissingId:
        fail(ErrorKind::kInvalidArgument,
             at + ": mask id " + std::to_string(ids[p.fault_index]) + " (mask_ids[" +
                 std::to_string(p.fault_index) + "]) is the mask id of no polygon; select only " +
                 "masks that the polygons (input 1) have.");
    }
  }

  bool reindex_;
  std::vector<kernels::SelectPlan> plans_;
};

}  // namespace

STOKER_REGISTER_OP_NAMED(segmentation_random_mask_pixel, "segmentation.random_mask_pixel") {
  schema
      .doc("A random pixel position in a mask: with `foreground` nonzero, drawn uniformly among "
           "the foreground pixels (those equal to `value`, or above `threshold`), else among all "
           "pixels; a mask without foreground pixels gives any pixel. Input: the mask, of 1 or "
           "more dimensions (bool, integer types or float32). Output: the position, int64, one "
           "coordinate per dimension of the mask (feed it to fn.roi_random_crop or use it as a "
           "crop center).")
      .inputs(1, 1, {"input"})
      .outputs(1)
      .random()
      .arg({.name = "value", .type = ArgType::kInt, .optional = true,
            .doc = "Pixels equal to this value are foreground. Not with threshold; meant for "
                   "integer masks.",
            .tensor = true})
      .arg({.name = "threshold", .type = ArgType::kFloat, .optional = true,
            .doc = "Pixels above this value are foreground (default 0.0). Not with value.",
            .tensor = true})
      .arg({.name = "foreground", .type = ArgType::kInt, .default_value = int64_t{0},
            .doc = "Nonzero: the position is drawn among the foreground pixels; 0: among all "
                   "pixels. Per sample, e.g. fn.random.coin_flip(probability=0.7) for a "
                   "foreground pixel 70% of the time.",
            .tensor = true})
      .arg({.name = "seed", .type = ArgType::kInt, .default_value = int64_t{-1},
            .doc = "Random seed; -1 takes it from the pipeline's seed and this operator's place "
                   "in the graph."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<RandomMaskPixel>(s); });
}

STOKER_REGISTER_OP_NAMED(segmentation_random_object_bbox, "segmentation.random_object_bbox") {
  schema
      .doc("The bounding box of a random object of a label mask. With probability "
           "foreground_prob, a class is drawn (uniformly among the labels present, or by "
           "class_weights among classes), the connected blobs of that label are found (elements "
           "touch across faces: 4 neighbours in 2-D, 6 in 3-D), those smaller than threshold "
           "on an axis are dropped, the k_largest largest boxes kept, and one drawn uniformly; "
           "a class without a blob left is dropped and another drawn. Otherwise, or with no "
           "blob at all, the box is the whole mask and the class the background. Input: the "
           "mask, of 1 or more dimensions (bool or integers of up to 32 bits). Outputs (int32): "
           "anchor and shape (format \"anchor_shape\"), start and end (\"start_end\") or one box "
           "of start then end (\"box\"), in the mask's axis order, then the class (a scalar) "
           "with output_class.")
      .inputs(1, 1, {"input"})
      .outputs(2, {"anchor", "shape", "class"})
      .random()
      .arg({.name = "format", .type = ArgType::kString,
            .default_value = std::string("anchor_shape"),
            .doc = "\"anchor_shape\": two outputs, start and extent; \"start_end\": two outputs, "
                   "start and one-past-end; \"box\": one output, start and one-past-end "
                   "concatenated.",
            .choices = {"anchor_shape", "start_end", "box"}})
      .arg({.name = "background", .type = ArgType::kInt, .optional = true,
            .doc = "The background label (default 0; when left out and classes contains 0, "
                   "one less than the smallest class).",
            .tensor = true})
      .arg({.name = "classes", .type = ArgType::kIntList, .optional = true,
            .doc = "The labels that are objects (default: every label but the background).",
            .tensor = true})
      .arg({.name = "class_weights", .type = ArgType::kFloatList, .optional = true,
            .doc = "Relative probabilities of the classes, one per class (without classes, of "
                   "the labels 0, 1, 2, ... leaving out the background).",
            .tensor = true})
      .arg({.name = "foreground_prob", .type = ArgType::kFloat, .default_value = 1.0,
            .doc = "The probability of choosing an object rather than the whole mask.",
            .tensor = true, .min = 0.0, .max = 1.0})
      .arg({.name = "k_largest", .type = ArgType::kInt, .optional = true,
            .doc = "Only the k blobs of the largest bounding boxes (by volume; ties to the blob "
                   "met first in C order) are drawn from.",
            .min = 1.0})
      .arg({.name = "threshold", .type = ArgType::kIntList, .optional = true,
            .doc = "The smallest extent per axis of a blob's box; smaller blobs are not drawn.",
            .tensor = true})
      .arg({.name = "ignore_class", .type = ArgType::kBool, .default_value = false,
            .doc = "Draw among all blobs alike, whatever their label (blobs of different labels "
                   "stay apart). Not with classes, class_weights or output_class."})
      .arg({.name = "output_class", .type = ArgType::kBool, .default_value = false,
            .doc = "Add an output with the chosen blob's label (int32 scalar), or the "
                   "background label where the box is the whole mask."})
      .arg({.name = "cache_objects", .type = ArgType::kBool, .default_value = false,
            .doc = "DALI's switch for caching the blobs of masks seen before; stoker finds "
                   "them again each time, with the same results."})
      .arg({.name = "seed", .type = ArgType::kInt, .default_value = int64_t{-1},
            .doc = "Random seed; -1 takes it from the pipeline's seed and this operator's place "
                   "in the graph."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<RandomObjectBBox>(s); });
}

STOKER_REGISTER_OP_NAMED(segmentation_select_masks, "segmentation.select_masks") {
  schema
      .doc("The polygons of some masks, and their vertices. Inputs: mask_ids (1-D int32, each "
           "id once), polygons ([N, 3] int32 rows of mask_id, start_vertex, end_vertex, as "
           "readers.coco(polygon_masks=True) gives them) and vertices ([V, ndim], any type). "
           "Outputs: the polygons of the masks in mask_ids, in that order (a mask's polygons in "
           "their input order), with their vertex ranges renumbered, and their vertices back to "
           "back. An id of no polygon is an error.")
      .inputs(3, 3, {"mask_ids", "polygons", "vertices"})
      .outputs(2, {"polygons", "vertices"})
      .arg({.name = "reindex_masks", .type = ArgType::kBool, .default_value = false,
            .doc = "Replace each output mask id with the position of that id in mask_ids."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<SelectMasks>(s); });
}

}  // namespace stoker
