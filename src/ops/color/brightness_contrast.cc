// brightness_contrast, brightness, contrast: out = brightness_shift * output_range +
// brightness * (contrast_center + contrast * (in - contrast_center)), as DALI defines them, in
// one multiply-add per element.
#include <limits>

#include "kernels/cpu/color/color_affine.h"
#include "kernels/cuda/color_gpu.h"
#include "ops/color/color_common.h"
#include "ops/generic/gpu_twin.h"
#include "pipeline/gpu_batch.h"
#include "pipeline/operator.h"

namespace stoker {
namespace {

using namespace color_ops;  // NOLINT

// DALI's defaults: the contrast centre is half the input type's positive range (0.5 for
// floats, 2^(bits - 1 - signed) for integers: 128 for uint8); a brightness shift of 1 is the
// output type's maximum (1 for floats).
double half_range(DType t) {
  if (is_float(t)) return 0.5;
  int bits = static_cast<int>(dtype_size(t)) * 8;
  return std::ldexp(1.0, bits - 1 - (is_signed(t) ? 1 : 0));
}
double full_range(DType t) {
  if (is_float(t)) return 1.0;
  return visit_dtype(t, [](auto v) { return static_cast<double>(std::numeric_limits<decltype(v)>::max()); });
}

class BrightnessContrast : public Operator {
 public:
  explicit BrightnessContrast(const OpSpec& spec) : Operator(spec), dtype_(dtype_arg(spec)) {
    if (spec.has("contrast_center")) contrast_center_ = spec.get<double>("contrast_center");
  }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    check_image_input(spec_, in);
    out_dtype_ = dtype_.value_or(in.dtype());
    // out = in * mul + add per sample, computed here so that both backends share it.
    mul_.assign(in.size(), 1.0f);
    add_.assign(in.size(), 0.0f);
    for (size_t k = 0; k < in.size(); ++k) {
      const int64_t i = static_cast<int64_t>(k);
      double brightness = checked_scalar(ws, "brightness", i, 1.0);
      double shift = checked_scalar(ws, "brightness_shift", i, 0.0);
      double contrast = checked_scalar(ws, "contrast", i, 1.0);
      double center = contrast_center_ ? *contrast_center_ : half_range(in.dtype());
      mul_[k] = static_cast<float>(brightness * contrast);
      add_[k] = static_cast<float>(shift * full_range(out_dtype_) +
                                   brightness * (center - contrast * center));
    }
    return {OutputDesc{out_dtype_, in.layout(), in.shapes()}};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const Batch& in = ws.input(0);
    Batch& out = ws.output(0);
    int64_t n = volume(in.shape(i));
    visit_dtype(in.dtype(), [&](auto ti) {
      using In = decltype(ti);
      visit_dtype(out_dtype_, [&](auto to) {
        using Out = decltype(to);
        if constexpr (is_color_type<In>() && is_color_type<Out>())
          kernels::multiply_add(out.data<Out>(i), in.data<In>(i), n, mul_[i], add_[i]);
      });
    });
  }

  // GPU twin: multiply_add is the 1x1 affine map over all elements.
  void run_gpu(Workspace& ws, const std::vector<OutputDesc>& descs) {
    require_device_input(ws);
    const Batch& in = ws.input(0);
    const OutputDesc& d = descs[0];
    ws.outputs.assign(1, allocate_device_batch(ws, d.dtype, d.shapes, d.layout));
    Batch& out = ws.outputs[0];
    std::vector<kernels::cuda::ColorAffineJob> jobs(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      kernels::cuda::ColorAffineJob& j = jobs[i];
      j.in = in[i].data;
      j.out = out[i].data;
      j.pixels = volume(in.shape(i));
      j.t.in_channels = j.t.out_channels = 1;
      j.t.m[0][0] = mul_[i];
      j.t.offset[0] = add_[i];
    }
    kernels::cuda::color_affine_gpu(ws, d.dtype, in.dtype(), jobs);
  }

 private:
  std::optional<DType> dtype_;
  std::optional<double> contrast_center_;
  DType out_dtype_ = DType::kNone;
  std::vector<float> mul_, add_;
};

void brightness_args(OpSchema& s) {
  s.arg({.name = "brightness", .type = ArgType::kFloat, .default_value = 1.0,
         .doc = "Brightness multiplier.", .tensor = true})
      .arg({.name = "brightness_shift", .type = ArgType::kFloat, .default_value = 0.0,
            .doc = "The brightness shift, in units of the output range: 1.0 is the output type's "
                   "maximum value (1.0 for floats).",
            .tensor = true});
}

void contrast_args(OpSchema& s) {
  s.arg({.name = "contrast", .type = ArgType::kFloat, .default_value = 1.0,
         .doc = "The contrast multiplier; 0.0 gives a uniform grey image.", .tensor = true})
      .arg({.name = "contrast_center", .type = ArgType::kFloat, .optional = true,
            .doc = "The intensity that contrast leaves unchanged (and that every pixel takes when "
                   "contrast is 0). When not set: half the input type's positive range (128 for "
                   "uint8, 0.5 for floats)."});
}

void common_args(OpSchema& s) {
  s.inputs(1, 1, {"input"}).outputs(1).input_layouts({"HWC", "FHWC", "DHWC"})
      .arg({.name = "dtype", .type = ArgType::kDType, .optional = true,
            .doc = "Output data type. If not set, the input type is used. Integer outputs are "
                   "rounded (halves away from zero, as DALI) and saturated."})
      .backend(Backend::kCPU, [](const OpSpec& sp) { return std::make_unique<BrightnessContrast>(sp); })
      STOKER_GPU_TWIN(BrightnessContrast);
}

}  // namespace

STOKER_REGISTER_OP_NAMED(brightness_contrast, "brightness_contrast") {
  schema.doc("Adjusts the brightness and contrast of images:\n\n"
             "    out = brightness_shift * output_range +\n"
             "          brightness * (contrast_center + contrast * (in - contrast_center))\n\n"
             "where output_range is 1 for float outputs and the type's maximum for integers. "
             "Sequences (FHWC) and volumes (DHWC) get the same parameters on every frame.");
  brightness_args(schema);
  contrast_args(schema);
  common_args(schema);
}

STOKER_REGISTER_OP_NAMED(brightness, "brightness") {
  schema.doc("Adjusts the brightness of images: out = brightness_shift * output_range + "
             "brightness * in, where output_range is 1 for float outputs and the type's maximum "
             "for integers.");
  brightness_args(schema);
  common_args(schema);
}

STOKER_REGISTER_OP_NAMED(contrast, "contrast") {
  schema.doc("Adjusts the contrast of images: out = contrast_center + contrast * (in - "
             "contrast_center).");
  contrast_args(schema);
  common_args(schema);
}

}  // namespace stoker
