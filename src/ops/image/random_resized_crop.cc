// random_resized_crop: DALI's random window (random_crop_attr.h) resampled to `size` in one pass:
// the window is the resampling kernel's source roi, so nothing is cropped or copied first.
#include <cstring>

#include "kernels/cpu/imgproc/resample.h"
#include "ops/image/random_crop_attr.h"
#include "ops/image/resample_args.h"
#include "ops/image/resample_gpu.h"
#include "pipeline/operator.h"

namespace stoker {
namespace {

bool supported_input(DType t) {
  return t == DType::kUInt8 || t == DType::kInt16 || t == DType::kUInt16 || t == DType::kFloat32;
}

class RandomResizedCrop : public Operator {
 public:
  explicit RandomResizedCrop(const OpSpec& spec)
      : Operator(spec), args_(random_crop_args(spec)), params_(resample_params(spec)) {
    std::vector<int64_t> s = spec.get<std::vector<int64_t>>("size");
    out_h_ = s[0];
    out_w_ = s.size() > 1 ? s[1] : s[0];
    if (spec.has("dtype")) dtype_ = static_cast<DType>(spec.get<int64_t>("dtype"));
  }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const std::string& layout = in.layout();
    const bool frames = layout == "FHWC";
    if (!(layout == "HWC" || frames || (layout.empty() && in.ndim() == 3)))
      spec_.arg_error("input", "must be images (HWC) or sequences of images (FHWC), got layout '" +
                                   layout + "' with " + std::to_string(in.ndim()) + " dimensions.");
    if (!supported_input(in.dtype()))
      spec_.arg_error("input", std::string("must be uint8, int16, uint16 or float32, got ") +
                                   dtype_name(in.dtype()) + ".");
    const DType out_t = dtype_ == DType::kNone ? in.dtype() : dtype_;
    if (out_t != in.dtype() && out_t != DType::kFloat32)
      spec_.arg_error("dtype", std::string("must be the input's type (") + dtype_name(in.dtype()) +
                                   ") or FLOAT, got " + dtype_name(out_t) + ".");
    windows_.resize(in.size());
    OutputDesc d{out_t, layout, {}};
    for (size_t i = 0; i < in.size(); ++i) {
      const Shape& s = in.shape(i);
      Philox rng = ws.rng(static_cast<int64_t>(i));
      // One window per sample: every frame of a sequence gets the same.
      windows_[i] = random_crop_window(s[frames ? 1 : 0], s[frames ? 2 : 1], args_, rng);
      Shape o = s;
      o[frames ? 1 : 0] = out_h_;
      o[frames ? 2 : 1] = out_w_;
      d.shapes.push_back(o);
    }
    return {d};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const Batch& in = ws.input(0);
    Batch& out = ws.output(0);
    const Shape& is = in.shape(i);
    const bool frames = in.layout() == "FHWC";
    const int64_t nf = frames ? is[0] : 1;
    const int64_t ih = is[frames ? 1 : 0], iw = is[frames ? 2 : 1], c = is.back();
    const CropWindow2D& w = windows_[i];
    if (w.h == 0 || w.w == 0) {  // an empty image: nothing to sample, so zeros
      std::memset(out.data<uint8_t>(i), 0, out.sample_bytes(i));
      return;
    }
    kernels::ResampleParams p = params_;
    p.roi = kernels::ResampleRoi{static_cast<double>(w.y), static_cast<double>(w.x),
                                 static_cast<double>(w.y + w.h), static_cast<double>(w.x + w.w)};
    resample_frames(in, out, i, nf, ih, iw, out_h_, out_w_, c, p, "random_resized_crop");
  }

  // After setup(): the filter and window of sample i, nullopt for an empty image (for the GPU
  // twin).
  std::optional<kernels::ResampleParams> sample_params(int64_t i) const {
    const CropWindow2D& w = windows_[i];
    if (w.h == 0 || w.w == 0) return std::nullopt;
    kernels::ResampleParams p = params_;
    p.roi = kernels::ResampleRoi{static_cast<double>(w.y), static_cast<double>(w.x),
                                 static_cast<double>(w.y + w.h), static_cast<double>(w.x + w.w)};
    return p;
  }

 private:
  RandomCropArgs args_;
  kernels::ResampleParams params_;
  int64_t out_h_ = 0, out_w_ = 0;
  DType dtype_ = DType::kNone;
  std::vector<CropWindow2D> windows_;
};

}  // namespace

STOKER_REGISTER_OP_NAMED(random_resized_crop, "random_resized_crop") {
  schema.doc("Crops a random window of each image (area and aspect ratio drawn as DALI's random "
             "crop generator does) and resizes it to `size`, in one resampling pass. Sequences "
             "(FHWC) get one window for all their frames.")
      .inputs(1, 1, {"input"}).outputs(1).input_layouts({"HWC", "FHWC"})
      .arg({.name = "size", .type = ArgType::kIntList,
            .doc = "Output size (H, W), or one value for both.", .min = 1, .list_min = 1, .list_max = 2});
  add_random_crop_args(schema);
  add_resample_args(schema, "of the resize");
  schema.arg({.name = "dtype", .type = ArgType::kDType, .optional = true,
              .doc = "Output type: the input's (default) or FLOAT."})
      .arg({.name = "minibatch_size", .type = ArgType::kInt, .default_value = int64_t{32},
            .doc = "Accepted for DALI compatibility (a GPU batching hint).", .min = 1})
      .arg({.name = "temp_buffer_hint", .type = ArgType::kInt, .default_value = int64_t{0},
            .doc = "Accepted for DALI compatibility; scratch memory is sized by use.", .min = 0});
  schema.backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<RandomResizedCrop>(s); })
      STOKER_RESAMPLE_GPU_BACKEND(RandomResizedCrop);
}

}  // namespace stoker
