// resize: DALI's sizing rules (resize_attr.h) and the separable resampling kernel.
#include "kernels/cpu/imgproc/resample.h"
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

class Resize : public Operator {
 public:
  explicit Resize(const OpSpec& spec) : Operator(spec) {
    std::string parity = spec.get<std::string>("parity");
    if (parity == "default") {
      params_ = resample_params(spec);
    } else {
      auto f = to_resample_filter(spec.get<int64_t>("interp_type"), spec, "interp_type");
      params_ = parity == "pil" ? kernels::ResampleParams::pil(f) : kernels::ResampleParams::opencv(f);
      if (spec.has("min_filter")) params_.min_filter = to_resample_filter(spec.get<int64_t>("min_filter"), spec, "min_filter");
      if (spec.has("mag_filter")) params_.mag_filter = to_resample_filter(spec.get<int64_t>("mag_filter"), spec, "mag_filter");
    }
    if (spec.has("dtype")) {
      dtype_ = static_cast<DType>(spec.get<int64_t>("dtype"));
      if (!supported_dtype(dtype_))
        spec.arg_error("dtype", std::string("must be UINT8, INT16, UINT16 or FLOAT, got ") + dtype_name(dtype_) + ".");
    }
    if (spec.has("mode")) base_.mode = parse_resize_mode(spec.get<std::string>("mode"));
    if (spec.has("max_size")) {
      auto m = spec.get<std::vector<double>>("max_size");
      base_.max_size.assign(m.begin(), m.end());
    }
    base_.subpixel_scale = spec.get<bool>("subpixel_scale");
    base_.roi_relative = spec.get<bool>("roi_relative");
    try {
      // The number of spatial axes is known per batch; until then, volumes' if the arguments
      // speak of three axes. setup() checks again against the data.
      const ResizeArgs a = sample_args_template();
      auto three = [](const std::optional<std::vector<float>>& v) { return v && v->size() == 3; };
      const bool volume = a.resize_z || three(a.size) || three(a.roi_start) ||
                          a.max_size.size() == 3;
      check_resize_args(a, volume ? 3 : 2);
    } catch (const Error& e) {
      throw e.with_context(spec.display_name());
    }
  }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const std::string& layout = in.layout();
    if (!resize_layout_supported(layout, in.ndim()))
      spec_.arg_error("input", "must be images (HWC or CHW), sequences of images (FHWC, FCHW or "
                               "CFHW), volumes (DHWC or CDHW) or sequences of volumes (FDHWC, "
                               "FCDHW or CFDHW), got layout '" + layout + "' with " +
                               std::to_string(in.ndim()) + " dimensions.");
    DType out_t = dtype_ == DType::kNone ? in.dtype() : dtype_;
    if (!supported_dtype(in.dtype()))
      spec_.arg_error("input", std::string("must be uint8, int16, uint16 or float32, got ") + dtype_name(in.dtype()) + ".");
    results_.resize(in.size());
    depth_.assign(in.size(), {});
    planes_.assign(in.size(), {});
    OutputDesc d{out_t, layout, {}};
    for (size_t i = 0; i < in.size(); ++i) {
      const Shape& s = in.shape(i);
      const ResizePlanes g = planes_[i] = resize_planes(layout, s);
      const int64_t h = g.h, w = g.w;
      ResizeArgs a = sample_args(ws, static_cast<int64_t>(i));
      Shape o = s;
      try {
        if (g.volume()) {
          const ResizeResult r = compute_resize(a, {g.d, h, w});
          results_[i] = ResizeResult2D{r.out_size[1], r.out_size[2], r.roi_lo[1], r.roi_lo[2],
                                       r.roi_hi[1], r.roi_hi[2]};
          depth_[i] = DepthWindow{r.out_size[0], r.roi_lo[0], r.roi_hi[0]};
          o[g.d_axis] = r.out_size[0];
        } else {
          results_[i] = compute_resize_2d(a, h, w);
        }
      } catch (const Error& e) {
        throw e.with_context(spec_.display_name() + ", sample " + std::to_string(i));
      }
      o[g.h_axis] = results_[i].out_h;
      o[g.w_axis] = results_[i].out_w;
      d.shapes.push_back(o);
    }
    return {d};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const Batch& in = ws.input(0);
    Batch& out = ws.output(0);
    const Shape& is = in.shape(i);
    const Shape& os = out.shape(i);
    const ResizePlanes gi = resize_planes(in.layout(), is), go = resize_planes(in.layout(), os);
    const int64_t nf = gi.planes, ih = gi.h, iw = gi.w, c = gi.c, oh = go.h, ow = go.w;
    const int64_t id = gi.d, od = go.d;  // 1 for images
    if (oh == 0 || ow == 0 || ih == 0 || iw == 0 || od == 0 || id == 0) return;
    kernels::ResampleParams p = params_;
    const ResizeResult2D& r = results_[i];
    p.roi = kernels::ResampleRoi{r.y0, r.x0, r.y1, r.x1};
    if (gi.volume())
      resample_volumes(in, out, i, nf, id, ih, iw, od, oh, ow, c, p, depth_[i].z0, depth_[i].z1,
                       "resize");
    else
      resample_frames(in, out, i, nf, ih, iw, oh, ow, c, p, "resize");
  }

  // After setup(): the filter and source window of sample i, and its images or volumes (for
  // the GPU twin).
  std::optional<kernels::ResampleParams> sample_params(int64_t i) const {
    kernels::ResampleParams p = params_;
    const ResizeResult2D& r = results_[i];
    p.roi = kernels::ResampleRoi{r.y0, r.x0, r.y1, r.x1};
    return p;
  }

  ResampleGeometry sample_geometry(int64_t i) const {
    const ResizePlanes& gi = planes_[i];
    ResampleGeometry g{gi.planes, gi.h, gi.w, results_[i].out_h, results_[i].out_w, gi.c};
    if (gi.volume()) {
      g.volume = true;
      g.id = gi.d;
      g.od = depth_[i].out_d;
      g.z0 = depth_[i].z0;
      g.z1 = depth_[i].z1;
    }
    return g;
  }

 private:
  ResizeArgs sample_args_template() const { return resize_args_for_sample(spec_, base_, nullptr, 0); }

  ResizeArgs sample_args(const Workspace& ws, int64_t i) const {
    return resize_args_for_sample(spec_, base_, &ws, i);
  }

  kernels::ResampleParams params_;
  ResizeArgs base_;
  DType dtype_ = DType::kNone;
  std::vector<ResizeResult2D> results_;
  // Volumes: the output depth and the source window along depth, per sample.
  struct DepthWindow {
    int64_t out_d = 1;
    double z0 = 0, z1 = 1;
  };
  std::vector<DepthWindow> depth_;
  std::vector<ResizePlanes> planes_;  // the input's, per sample
};

void define_resize(OpSchema& schema) {
  schema.doc("Resizes images (HWC, CHW), sequences of images (FHWC, FCHW, CFHW), volumes (DHWC, "
             "CDHW) and sequences of volumes (FDHWC, FCDHW, CFDHW). The output size follows DALI's "
             "rules for resize_x / resize_y / resize_z / size, resize_shorter / resize_longer, "
             "mode and max_size; shrinking is antialiased by default. Volumes are resampled "
             "along depth with the same filter, separably.")
      .inputs(1, 1, {"input"}).outputs(1)
      .input_layouts({"HWC", "FHWC", "CHW", "FCHW", "CFHW", "DHWC", "FDHWC", "CDHW", "FCDHW", "CFDHW"})
      .arg({.name = "resize_x", .type = ArgType::kFloat, .optional = true,
            .doc = "Output width; 0 or absent: from the other extents (keeping the aspect ratio).", .tensor = true})
      .arg({.name = "resize_y", .type = ArgType::kFloat, .optional = true,
            .doc = "Output height; 0 or absent: from the other extents.", .tensor = true})
      .arg({.name = "resize_z", .type = ArgType::kFloat, .optional = true,
            .doc = "Output depth (volumes only); 0 or absent: from the other extents.", .tensor = true})
      .arg({.name = "size", .type = ArgType::kFloatList, .optional = true,
            .doc = "Output size (H, W), or (D, H, W) for volumes; 0 for an extent computed from "
                   "the others.", .tensor = true})
      .arg({.name = "resize_shorter", .type = ArgType::kFloat, .optional = true,
            .doc = "Length of the shorter side; the aspect ratio is kept.", .tensor = true})
      .arg({.name = "resize_longer", .type = ArgType::kFloat, .optional = true,
            .doc = "Length of the longer side; the aspect ratio is kept.", .tensor = true});
  add_resize_sizing_args(schema, "(H, W), or (D, H, W) for volumes");
  schema.arg({.name = "dtype", .type = ArgType::kDType, .optional = true,
            .doc = "Output type: UINT8, INT16, UINT16 or FLOAT (default: the input's)."})
      .arg({.name = "parity", .type = ArgType::kString, .default_value = std::string("default"),
            .doc = "stoker: whose resize to reproduce: 'default' (DALI's: its filters, edge "
                   "pixels repeated at the borders), 'pil' (Image.resize exactly: borders "
                   "renormalised, 8-bit rounding between the passes) or 'opencv' (cv2.resize: "
                   "no antialiasing, replicated borders, cubic a=-0.75, INTER_NEAREST's corner "
                   "sampling).",
            .choices = {"default", "pil", "opencv"}});
  add_resize_hint_args(schema);
  schema.backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<Resize>(s); })
      STOKER_RESAMPLE_GPU_BACKEND(Resize);
  add_resample_args(schema, "of the resize");
}

}  // namespace

STOKER_REGISTER_OP_NAMED(resize, "resize") { define_resize(schema); }

// DALI's CV-CUDA resize (GPU only there), with resize's arguments: stoker's resize.
STOKER_REGISTER_OP_NAMED(experimental_resize, "experimental.resize") {
  define_resize(schema);
  schema.doc(schema.doc() + " (DALI's experimental.resize, a CV-CUDA resize with resize's "
             "arguments; in stoker the same operator as resize.)");
}

}  // namespace stoker
