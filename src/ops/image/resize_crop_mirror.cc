// resize_crop_mirror (and DALI's deprecated fast_resize_crop_mirror): resize, then crop, then
// mirror, fused as DALI fuses them. The resize's output size and source window come from
// DALI's sizing rules (resize_attr.h); the crop window is placed on the resized image
// (geometry::CropWindow) and projected back through the resize onto the source; mirroring swaps
// that window's ends. One resampling pass then makes the cropped output, so pixels outside the
// crop are never computed. The GPU twin runs the same setup and the resize's GPU resampling
// kernel (ops/image/resample_gpu.h) on those windows.
#include <optional>
#include <utility>

#include "kernels/cpu/imgproc/resample.h"
#include "ops/geometry/geometry_common.h"
#include "ops/image/image_types.h"
#include "ops/image/resample_args.h"
#include "ops/image/resample_gpu.h"
#include "ops/image/resize_attr.h"
#include "ops/image/resize_layout.h"
#include "pipeline/operator.h"

namespace stoker {
namespace {

bool supported_dtype(DType t) {
  return t == DType::kUInt8 || t == DType::kInt16 || t == DType::kUInt16 || t == DType::kFloat32;
}

class ResizeCropMirror : public Operator {
 public:
  explicit ResizeCropMirror(const OpSpec& spec) : Operator(spec), crop_(spec_) {
    params_ = resample_params(spec);
    if (spec.has("dtype")) dtype_ = static_cast<DType>(spec.get<int64_t>("dtype"));
    if (spec.has("mode")) base_.mode = parse_resize_mode(spec.get<std::string>("mode"));
    if (spec.has("max_size")) {
      auto m = spec.get<std::vector<double>>("max_size");
      base_.max_size.assign(m.begin(), m.end());
    }
    base_.subpixel_scale = spec.get<bool>("subpixel_scale");
    base_.roi_relative = spec.get<bool>("roi_relative");
    try {
      check_resize_args(args_for_sample(nullptr, 0), 2);
    } catch (const Error& e) {
      throw e.with_context(spec.display_name());
    }
  }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const std::string& layout = in.layout();
    if (layout.find('D') != std::string::npos)
      spec_.arg_error("input", "has layout '" + layout + "': 3-D (volumetric) resizing is not "
                               "supported yet. Give HWC, CHW, FHWC, FCHW or CFHW data.");
    if (!resize_layout_supported(layout, in.ndim()))
      spec_.arg_error("input", "must be images (HWC or CHW) or sequences of images (FHWC, FCHW or "
                               "CFHW), got layout '" + layout + "' with " +
                               std::to_string(in.ndim()) + " dimensions.");
    if (!supported_dtype(in.dtype()))
      spec_.arg_error("input", std::string("must be uint8, int16, uint16 or float32, got ") +
                                   dtype_name(in.dtype()) + ".");
    const DType out_t = dtype_ == DType::kNone ? in.dtype() : dtype_;
    if (out_t != in.dtype() && out_t != DType::kFloat32)
      spec_.arg_error("dtype", std::string("must be the input's type (") + dtype_name(in.dtype()) +
                                   ") or FLOAT, got " + dtype_name(out_t) + ".");
    // The crop window is placed by layout letters; an empty 3-D layout is HWC.
    const std::string crop_layout = layout.empty() ? "HWC" : layout;
    const int64_t n = static_cast<int64_t>(in.size());
    rois_.assign(n, {});
    OutputDesc d{out_t, layout, {}};
    for (int64_t i = 0; i < n; ++i) {
      const Shape& s = in.shape(i);
      const ResizePlanes g = resize_planes(layout, s);
      ResizeResult2D r;
      try {
        r = compute_resize_2d(args_for_sample(&ws, i), g.h, g.w);
      } catch (const Error& e) {
        throw e.with_context(spec_.display_name() + ", sample " + std::to_string(i));
      }
      // The crop window on the resized sample.
      Shape resized = s;
      resized[g.h_axis] = r.out_h;
      resized[g.w_axis] = r.out_w;
      std::vector<int64_t> anchor, window;
      crop_.compute(ws, i, resized, crop_layout, anchor, window);
      for (size_t k = 0; k < resized.size(); ++k)
        if (static_cast<int>(k) != g.h_axis && static_cast<int>(k) != g.w_axis &&
            (anchor[k] != 0 || window[k] != resized[k]))
          spec_.arg_error("crop", "crops only the height and width of images and sequences; a "
                                  "third extent (depth or frames) is not supported, got layout '" +
                                  layout + "' for sample " + std::to_string(i) + ".");
      // Back through the resize: resized pixel p of an axis is source position lo + p * ratio.
      auto project = [](double lo, double hi, int64_t out, int64_t a, int64_t w, double& nlo,
                        double& nhi) {
        const double ratio = out > 0 ? (hi - lo) / static_cast<double>(out) : 0.0;
        // Kept in float, as DALI keeps a resize's source window.
        nlo = static_cast<float>(static_cast<double>(a) * ratio + lo);
        nhi = static_cast<float>(static_cast<double>(a + w) * ratio + lo);
      };
      kernels::ResampleRoi roi;
      project(r.y0, r.y1, r.out_h, anchor[g.h_axis], window[g.h_axis], roi.y0, roi.y1);
      project(r.x0, r.x1, r.out_w, anchor[g.w_axis], window[g.w_axis], roi.x0, roi.x1);
      // mirror's bits, as DALI documents them: 1 horizontal (W), 2 vertical (H).
      const double mirror = ws.scalar_arg("mirror", i, 0);
      if (!(mirror >= 0) || mirror != static_cast<double>(static_cast<int64_t>(mirror)))
        spec_.arg_error("mirror", "must be a non-negative integer mask (1: horizontal flip, 2: "
                                  "vertical flip, 3: both), got " + std::to_string(mirror) +
                                  " for sample " + std::to_string(i) + ".");
      const int64_t m = static_cast<int64_t>(mirror);
      if (m & 1) std::swap(roi.x0, roi.x1);
      if (m & 2) std::swap(roi.y0, roi.y1);
      rois_[i] = roi;
      Shape o = s;
      o[g.h_axis] = window[g.h_axis];
      o[g.w_axis] = window[g.w_axis];
      d.shapes.push_back(o);
    }
    return {d};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const Batch& in = ws.input(0);
    Batch& out = ws.output(0);
    const ResizePlanes gi = resize_planes(in.layout(), in.shape(i));
    const ResizePlanes go = resize_planes(in.layout(), out.shape(i));
    const int64_t nf = gi.planes, ih = gi.h, iw = gi.w, c = gi.c, oh = go.h, ow = go.w;
    if (oh == 0 || ow == 0 || ih == 0 || iw == 0 || c == 0) return;
    kernels::ResampleParams p = params_;
    p.roi = rois_[i];
    resample_frames(in, out, i, nf, ih, iw, oh, ow, c, p, "resize_crop_mirror");
  }

  // After setup(): the filter and (cropped, mirrored) source window of sample i, for the GPU
  // twin.
  std::optional<kernels::ResampleParams> sample_params(int64_t i) const {
    kernels::ResampleParams p = params_;
    p.roi = rois_[i];
    return p;
  }

 private:
  ResizeArgs args_for_sample(const Workspace* ws, int64_t i) const {
    return resize_args_for_sample(spec_, base_, ws, i);
  }

  geometry::CropWindow crop_;
  kernels::ResampleParams params_;
  ResizeArgs base_;
  DType dtype_ = DType::kNone;
  std::vector<kernels::ResampleRoi> rois_;
};

void resize_crop_mirror_schema(OpSchema& schema, bool antialias) {
  schema.inputs(1, 1, {"input"}).outputs(1).input_layouts({"HWC", "FHWC", "CHW", "FCHW", "CFHW"})
      .arg({.name = "resize_x", .type = ArgType::kFloat, .optional = true,
            .doc = "Width of the resized image; 0 or absent: from the other extents (keeping the "
                   "aspect ratio). Negative flips the image.", .tensor = true})
      .arg({.name = "resize_y", .type = ArgType::kFloat, .optional = true,
            .doc = "Height of the resized image; 0 or absent: from the other extents. Negative "
                   "flips the image.", .tensor = true})
      .arg({.name = "size", .type = ArgType::kFloatList, .optional = true,
            .doc = "Size of the resized image (H, W); 0 for an extent computed from the others.",
            .tensor = true})
      .arg({.name = "resize_shorter", .type = ArgType::kFloat, .optional = true,
            .doc = "Length of the shorter side of the resized image; the aspect ratio is kept.",
            .tensor = true})
      .arg({.name = "resize_longer", .type = ArgType::kFloat, .optional = true,
            .doc = "Length of the longer side of the resized image; the aspect ratio is kept.",
            .tensor = true})
      .arg({.name = "max_size", .type = ArgType::kFloatList, .optional = true,
            .doc = "Upper limit of the resized extents (one value, or one per axis)."})
      .arg({.name = "mode", .type = ArgType::kString, .optional = true,
            .doc = "How size is applied: 'default', 'stretch', 'not_smaller' or 'not_larger'.",
            .choices = {"default", "stretch", "not_smaller", "not_larger"}})
      .arg({.name = "subpixel_scale", .type = ArgType::kBool, .default_value = true,
            .doc = "Keep the exact (unrounded) scale, adjusting the source window, rather than "
                   "stretching to whole output pixels."})
      .arg({.name = "roi_start", .type = ArgType::kFloatList, .optional = true,
            .doc = "Start of the source region (H, W); absolute, or relative with roi_relative.",
            .tensor = true})
      .arg({.name = "roi_end", .type = ArgType::kFloatList, .optional = true,
            .doc = "End of the source region; a start above the end flips that axis.", .tensor = true})
      .arg({.name = "roi_relative", .type = ArgType::kBool, .default_value = false,
            .doc = "roi_start and roi_end are fractions of the input size."})
      .arg({.name = "mirror", .type = ArgType::kInt, .default_value = int64_t{0},
            .doc = "Mask for flipping: 0 no flip, 1 horizontal, 2 vertical, 3 both.", .tensor = true,
            .min = 0})
      .arg({.name = "dtype", .type = ArgType::kDType, .optional = true,
            .doc = "Output data type: the input's type or FLOAT (default: the input's)."})
      .arg({.name = "minibatch_size", .type = ArgType::kInt, .default_value = int64_t{32},
            .doc = "Accepted for DALI compatibility (a GPU batching hint).", .min = 1})
      .arg({.name = "temp_buffer_hint", .type = ArgType::kInt, .default_value = int64_t{0},
            .doc = "Accepted for DALI compatibility; scratch memory is sized by use.", .min = 0});
  geometry::add_crop_args(schema);
  // The resampling arguments as resize declares them; fast_resize_crop_mirror only changes
  // antialias's default.
  OpSchema resample("resample");
  add_resample_args(resample, "of the resize");
  for (ArgDef a : resample.args()) {
    if (a.name == "antialias") a.default_value = antialias;
    schema.arg(std::move(a));
  }
  schema.backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<ResizeCropMirror>(s); })
      STOKER_RESAMPLE_GPU_BACKEND(ResizeCropMirror);
}

}  // namespace

STOKER_REGISTER_OP_NAMED(resize_crop_mirror, "resize_crop_mirror") {
  schema.doc("Performs a fused resize, crop, mirror operation: the result equals resize, then "
             "crop (crop, crop_pos_x, crop_pos_y on the resized image), then flip, computed as one "
             "resampling of the region of the input that the crop keeps. A crop window larger "
             "than the resized image repeats its edge pixels.");
  resize_crop_mirror_schema(schema, true);
}

STOKER_REGISTER_OP_NAMED(fast_resize_crop_mirror, "fast_resize_crop_mirror") {
  schema.doc("Deprecated: use resize_crop_mirror. Legacy alias for resize_crop_mirror, with "
             "antialiasing disabled by default.");
  resize_crop_mirror_schema(schema, false);
}

}  // namespace stoker
