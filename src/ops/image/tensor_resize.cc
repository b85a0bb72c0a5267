// tensor_resize: DALI's resize of any tensor along any of its axes (sizes or scales per axis,
// the other axes asked to keep their extent), with resize's sizing rules (resize_attr.h,
// plan_resize over every axis, as DALI's TensorResizeAttr) and its resampling kernels.
//
// The axes whose extent or window changes must lie within three consecutive ones, the
// "spatial" axes; the axes before them are frames and those after them channels, so that a
// sample is resampled as frames of 1-D (one row), 2-D or 3-D (a volume) images. As in DALI 2.4,
// an axis left out of `axes` still counts as asked to keep its extent, so the modes that keep the
// aspect ratio (not_smaller, not_larger) and the default mode's missing extents see it: an HWC
// image given sizes=[20, 20] on axes (0, 1) with mode='not_smaller' gets twice its channels.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

#include "kernels/cpu/imgproc/resample.h"
#include "ops/image/resample_args.h"
#include "ops/image/resample_gpu.h"
#include "ops/image/resize_attr.h"
#include "pipeline/operator.h"

namespace stoker {
namespace {

bool supported_dtype(DType t) {
  return t == DType::kUInt8 || t == DType::kInt16 || t == DType::kUInt16 || t == DType::kFloat32;
}

// Sample i: its frames, spatial extents (1 to 3; a single axis is a row of height 1) and
// channels, and the source windows of the spatial axes.
struct TensorPlan {
  int64_t frames = 1, channels = 1;
  std::vector<int64_t> in, out;  // spatial extents, outer first
  std::vector<double> lo, hi;    // source window per spatial axis
  bool copy = false;             // nothing changes: the input is copied (cast)
};

class TensorResize : public Operator {
 public:
  explicit TensorResize(const OpSpec& spec) : Operator(spec), params_(resample_params(spec)) {
    const bool sizes = spec.has("sizes") || spec.is_tensor_arg("sizes");
    const bool scales = spec.has("scales") || spec.is_tensor_arg("scales");
    if (sizes == scales)
      spec.arg_error(sizes ? "scales" : "sizes",
                     sizes ? "cannot be given with sizes; give one of them"
                           : "or scales must be given (the output extents, or factors)");
    by_scales_ = scales;
    if (spec.has("axes") && spec.has("axis_names"))
      spec.arg_error("axis_names", "cannot be given with axes; give one of them");
    const bool roi_start = spec.has("roi_start") || spec.is_tensor_arg("roi_start");
    const bool roi_end = spec.has("roi_end") || spec.is_tensor_arg("roi_end");
    if (roi_start != roi_end)
      spec.arg_error(roi_start ? "roi_end" : "roi_start",
                     "must be given together with " + std::string(roi_start ? "roi_start" : "roi_end"));
    roi_ = roi_start;
    roi_relative_ = spec.get<bool>("roi_relative");
    subpixel_ = spec.get<bool>("subpixel_scale");
    mode_ = spec.has("mode") ? parse_resize_mode(spec.get<std::string>("mode")) : ResizeMode::kDefault;
    if (by_scales_ && (mode_ == ResizeMode::kNotSmaller || mode_ == ResizeMode::kNotLarger))
      spec.arg_error("mode", std::string("'") + resize_mode_name(mode_) +
                                 "' keeps the aspect ratio of given sizes; it cannot be used with "
                                 "scales");
    const std::string rounding = spec.get<std::string>("size_rounding");
    if (rounding != "round" && rounding != "truncate" && rounding != "ceil")
      spec.arg_error("size_rounding", "must be 'round', 'truncate' or 'ceil', got '" + rounding + "'");
    rounding_ = rounding == "truncate" ? SizeRounding::kTruncate
                : rounding == "ceil"     ? SizeRounding::kCeil
                                         : SizeRounding::kRound;
    if (spec.has("max_size")) max_size_ = spec.get<std::vector<float>>("max_size");
    if (spec.has("dtype")) {
      dtype_ = static_cast<DType>(spec.get<int64_t>("dtype"));
      if (dtype_ != DType::kFloat32 && !supported_dtype(dtype_))
        spec.arg_error("dtype", std::string("must be the input's type or FLOAT, got ") + dtype_name(dtype_));
    }
  }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const std::string op = spec_.display_name();
    if (!supported_dtype(in.dtype()))
      spec_.arg_error("input", std::string("must be uint8, int16, uint16 or float32, got ") +
                                   dtype_name(in.dtype()));
    const DType out_t = dtype_ == DType::kNone ? in.dtype() : dtype_;
    if (out_t != in.dtype() && out_t != DType::kFloat32)
      spec_.arg_error("dtype", std::string("must be the input's type (") + dtype_name(in.dtype()) +
                                   ") or FLOAT, got " + dtype_name(out_t));
    const int ndim = in.ndim();
    if (ndim < 1) spec_.arg_error("input", "must have at least 1 dimension, got a scalar");
    const std::vector<int> axes = resolve_axes(in.layout(), ndim);
    plans_.assign(in.size(), {});
    OutputDesc d{out_t, in.layout(), {}};
    for (size_t i = 0; i < in.size(); ++i) {
      try {
        d.shapes.push_back(plan_sample(ws, static_cast<int64_t>(i), in.shape(i), axes));
      } catch (const Error& e) {
        throw e.with_context(op + ", sample " + std::to_string(i));
      }
    }
    return {d};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const Batch& in = ws.input(0);
    Batch& out = ws.output(0);
    const TensorPlan& t = plans_[i];
    if (out.sample_bytes(i) == 0) return;
    if (in.sample_bytes(i) == 0) {
      std::memset(out[i].data, 0, out.sample_bytes(i));
      return;
    }
    if (t.copy) {  // nothing resized: the values, cast
      visit_dtype(in.dtype(), [&](auto ti) {
        using In = decltype(ti);
        visit_dtype(out.dtype(), [&](auto to) {
          using Out = decltype(to);
          if constexpr (std::is_same_v<Out, In> || std::is_same_v<Out, float>) {
            const In* s = in.data<In>(i);
            Out* o = out.data<Out>(i);
            for (int64_t k = 0, n = volume(in.shape(i)); k < n; ++k) o[k] = static_cast<Out>(s[k]);
          }
        });
      });
      return;
    }
    kernels::ResampleParams p = params_;
    const size_t n = t.in.size();
    if (n <= 2) {
      const int64_t ih = n == 2 ? t.in[0] : 1, iw = t.in[n - 1];
      const int64_t oh = n == 2 ? t.out[0] : 1, ow = t.out[n - 1];
      p.roi = n == 2 ? kernels::ResampleRoi{t.lo[0], t.lo[1], t.hi[0], t.hi[1]}
                     : kernels::ResampleRoi{0, t.lo[0], 1, t.hi[0]};
      resample_frames(in, out, i, t.frames, ih, iw, oh, ow, t.channels, p, "tensor_resize");
      return;
    }
    p.roi = kernels::ResampleRoi{t.lo[1], t.lo[2], t.hi[1], t.hi[2]};
    resample_volumes(in, out, i, t.frames, t.in[0], t.in[1], t.in[2], t.out[0], t.out[1],
                     t.out[2], t.channels, p, t.lo[0], t.hi[0], "tensor_resize");
  }

  // After setup(): sample i as frames of rows, images or volumes for the GPU twin.
  std::optional<kernels::ResampleParams> sample_params(int64_t i) const {
    const TensorPlan& t = plans_[i];
    kernels::ResampleParams p = params_;
    const size_t n = t.in.size();
    if (t.copy) {
      p.roi = kernels::ResampleRoi{0, 0, 1, static_cast<double>(t.in.back())};
    } else if (n == 1) {
      p.roi = kernels::ResampleRoi{0, t.lo[0], 1, t.hi[0]};
    } else {
      p.roi = kernels::ResampleRoi{t.lo[n - 2], t.lo[n - 1], t.hi[n - 2], t.hi[n - 1]};
    }
    return p;
  }

  ResampleGeometry sample_geometry(int64_t i) const {
    const TensorPlan& t = plans_[i];
    const size_t n = t.in.size();
    ResampleGeometry g{t.frames, n >= 2 ? t.in[n - 2] : 1, t.in[n - 1],
                       n >= 2 ? t.out[n - 2] : 1, t.out[n - 1], t.channels};
    if (n == 3) {
      g.volume = true;
      g.id = t.in[0];
      g.od = t.out[0];
      g.z0 = t.lo[0];
      g.z1 = t.hi[0];
    }
    return g;
  }

 private:
  // `axes` or `axis_names` as indices in [0, ndim), in the order given; every axis without them.
  std::vector<int> resolve_axes(const std::string& layout, int ndim) const {
    std::vector<int> axes;
    if (spec_.has("axis_names")) {
      const std::string names = spec_.get<std::string>("axis_names");
      if (layout.empty())
        spec_.arg_error("axis_names", "needs an input with a layout; the input has none (use axes)");
      for (char c : names) {
        const size_t k = layout.find(c);
        if (k == std::string::npos)
          spec_.arg_error("axis_names", std::string("'") + c + "' is not an axis of the input's layout '" +
                                            layout + "'");
        axes.push_back(static_cast<int>(k));
      }
    } else if (spec_.has("axes")) {
      for (int64_t a : spec_.get<std::vector<int64_t>>("axes")) {
        if (a < -ndim || a >= ndim)
          spec_.arg_error("axes", "axis " + std::to_string(a) + " is outside [-" +
                                      std::to_string(ndim) + ", " + std::to_string(ndim - 1) +
                                      "] for " + std::to_string(ndim) + "-D input");
        axes.push_back(static_cast<int>(a < 0 ? a + ndim : a));
      }
    } else {
      for (int d = 0; d < ndim; ++d) axes.push_back(d);
    }
    for (size_t k = 0; k < axes.size(); ++k)
      for (size_t j = 0; j < k; ++j)
        if (axes[j] == axes[k])
          spec_.arg_error(spec_.has("axis_names") ? "axis_names" : "axes",
                          "names axis " + std::to_string(axes[k]) + " twice");
    return axes;
  }

  // One value per axis of `axes`, or one for all of them (setup names the operator and sample).
  std::vector<float> per_axis(const char* arg, const std::vector<double>& v, size_t naxes) const {
    if (v.size() == 1) return std::vector<float>(naxes, static_cast<float>(v[0]));
    if (v.size() != naxes)
      fail(ErrorKind::kInvalidArgument,
           std::string("argument '") + arg + "' has " + std::to_string(v.size()) + " values for " +
               std::to_string(naxes) + " axes; give one per axis, or one for all");
    return std::vector<float>(v.begin(), v.end());
  }

  Shape plan_sample(Workspace& ws, int64_t i, const Shape& shape, const std::vector<int>& axes) {
    const int ndim = static_cast<int>(shape.size());
    std::vector<int64_t> in_shape(shape.begin(), shape.end());
    // Every axis asks for its own extent, over its whole length, unless `axes` names it.
    std::vector<float> requested(in_shape.begin(), in_shape.end()), lo(ndim, 0.0f), hi(ndim);
    for (int d = 0; d < ndim; ++d) hi[d] = static_cast<float>(in_shape[d]);
    const std::vector<float> given = per_axis(by_scales_ ? "scales" : "sizes",
                                              ws.list_arg(by_scales_ ? "scales" : "sizes", i), axes.size());
    for (size_t k = 0; k < axes.size(); ++k) {
      const int d = axes[k];
      if (!by_scales_) {
        requested[d] = given[k];
        continue;
      }
      // Fractional: plan_resize rounds it by size_rounding and keeps the exact scale.
      requested[d] = given[k] * static_cast<float>(in_shape[d]);  // in float, as DALI
    }
    if (roi_) {
      const std::vector<float> a = per_axis("roi_start", ws.list_arg("roi_start", i), axes.size());
      const std::vector<float> b = per_axis("roi_end", ws.list_arg("roi_end", i), axes.size());
      for (size_t k = 0; k < axes.size(); ++k)
        if (in_shape[axes[k]] > 0)
          input_window(a[k], b[k], static_cast<float>(in_shape[axes[k]]), roi_relative_,
                       &lo[axes[k]], &hi[axes[k]]);
    }
    std::vector<float> max_size;
    if (!max_size_.empty()) {
      std::vector<double> m(max_size_.begin(), max_size_.end());
      const std::vector<float> per = per_axis("max_size", m, axes.size());
      max_size.assign(ndim, 0.0f);  // 0: no limit
      for (size_t k = 0; k < axes.size(); ++k) max_size[axes[k]] = per[k];
    }
    std::vector<float> align;
    if (ws.has_arg("alignment")) {
      const std::vector<float> a = per_axis("alignment", ws.list_arg("alignment", i), axes.size());
      align.assign(ndim, 0.5f);
      for (size_t k = 0; k < axes.size(); ++k) align[axes[k]] = a[k];
    }
    const ResizeResult r = plan_resize(requested, lo, hi, in_shape, mode_,
                                       max_size.empty() ? nullptr : max_size.data(), subpixel_,
                                       align.empty() ? nullptr : &align, rounding_);
    // The axes that change: their extent, or their window.
    int first = -1, last = -1;
    for (int d = 0; d < ndim; ++d) {
      const bool same = r.out_size[d] == in_shape[d] && r.roi_lo[d] == 0.0 &&
                        r.roi_hi[d] == static_cast<double>(in_shape[d]);
      if (same) continue;
      if (first < 0) first = d;
      last = d;
    }
    TensorPlan& t = plans_[i];
    Shape out(r.out_size.begin(), r.out_size.end());
    if (first < 0) {
      t.copy = true;
      t.in = t.out = {in_shape.empty() ? 1 : in_shape.back()};
      for (int d = 0; d + 1 < ndim; ++d) t.frames *= in_shape[d];
      return out;
    }
    if (last - first + 1 > 3)
      fail(ErrorKind::kInvalidArgument,
           "the resized axes " + std::to_string(first) + " to " + std::to_string(last) + " are " +
               std::to_string(last - first + 1) + " consecutive axes; tensor_resize resamples at "
               "most 3 consecutive ones (resize the others in a second call)");
    for (int d = 0; d < first; ++d) t.frames *= in_shape[d];
    for (int d = last + 1; d < ndim; ++d) t.channels *= in_shape[d];
    for (int d = first; d <= last; ++d) {
      t.in.push_back(in_shape[d]);
      t.out.push_back(r.out_size[d]);
      t.lo.push_back(r.roi_lo[d]);
      t.hi.push_back(r.roi_hi[d]);
    }
    return out;
  }

  kernels::ResampleParams params_;
  bool by_scales_ = false, roi_ = false, roi_relative_ = false, subpixel_ = true;
  ResizeMode mode_ = ResizeMode::kDefault;
  SizeRounding rounding_ = SizeRounding::kRound;
  std::vector<float> max_size_;
  DType dtype_ = DType::kNone;
  std::vector<TensorPlan> plans_;
};

}  // namespace

STOKER_REGISTER_OP_NAMED(tensor_resize, "tensor_resize") {
  schema.doc("Resizes tensors of any number of dimensions along the axes given (sizes or scales "
             "per axis), with resize's sizing rules (mode, max_size, roi_start / roi_end, "
             "subpixel_scale) and filters. The resized axes must lie within three consecutive "
             "ones (the axes before them are taken as frames, those after as channels).")
      .inputs(1, 1, {"input"}).outputs(1)
      .arg({.name = "sizes", .type = ArgType::kFloatList, .optional = true,
            .doc = "Output extents of the axes (one per axis, or one for all); 0 for an extent "
                   "computed from the others.", .tensor = true})
      .arg({.name = "scales", .type = ArgType::kFloatList, .optional = true,
            .doc = "Scale factors of the axes: out = size_rounding(scale * in).", .tensor = true})
      .arg({.name = "axes", .type = ArgType::kIntList, .optional = true,
            .doc = "Axes that sizes, scales, max_size, roi_start, roi_end and alignment refer to "
                   "(negative ones count from the back); default: every axis."})
      .arg({.name = "axis_names", .type = ArgType::kString, .optional = true,
            .doc = "The same axes by their names in the input's layout."})
      .arg({.name = "size_rounding", .type = ArgType::kString, .default_value = std::string("round"),
            .doc = "How scales round to whole extents: 'round' (half away from 0), 'truncate' "
                   "or 'ceil'.",
            .choices = {"round", "truncate", "ceil"}})
      .arg({.name = "alignment", .type = ArgType::kFloatList, .optional = true,
            .doc = "Where a rounded extent's source window keeps its place: 0 its start, 0.5 "
                   "its centre (default), 1 its end; one value, or one per axis.", .tensor = true})
      .arg({.name = "dtype", .type = ArgType::kDType, .optional = true,
            .doc = "Output type: the input's (default) or FLOAT."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<TensorResize>(s); })
      STOKER_RESAMPLE_GPU_BACKEND(TensorResize);
  add_resize_sizing_args(schema, "per axis");
  add_resize_hint_args(schema);
  add_resample_args(schema, "of the resize");
}

}  // namespace stoker
