// hsv, hue, saturation, color_twist: DALI's linear approximation of HSV adjustments, done in YIQ
// space (hue rotates the chroma plane, saturation scales it, value scales everything), with
// brightness and contrast folded in: one 3x3 matrix and offset per sample, one pass per pixel.
#include "kernels/cpu/color/color_affine.h"
#include "kernels/cuda/color_gpu.h"
#include "ops/color/color_common.h"
#include "ops/generic/gpu_twin.h"
#include "ops/image/image_types.h"
#include "pipeline/gpu_batch.h"
#include "pipeline/operator.h"

namespace stoker {
namespace {

using namespace color_ops;  // NOLINT

enum class Kind { kHsv, kHue, kSaturation, kColorTwist };

class ColorTwist : public Operator {
 public:
  ColorTwist(const OpSpec& spec, Kind kind) : Operator(spec), kind_(kind), dtype_(dtype_arg(spec)) {
    if (spec.has("image_type")) {
      auto t = static_cast<ImageType>(spec.get<int64_t>("image_type"));
      if (t != ImageType::kRGB && t != ImageType::kBGR)
        spec.arg_error("image_type", std::string("must be RGB or BGR, got ") + image_type_name(t) +
                                         ". Convert the images with fn.color_space_conversion first.");
      bgr_ = t == ImageType::kBGR;
    }
  }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    check_image_input(spec_, in);
    for (size_t i = 0; i < in.size(); ++i)
      if (in.shape(i).back() != 3)
        fail(ErrorKind::kInvalidArgument,
             std::string("input 0 must have 3 channels (RGB or BGR), but sample ") +
                 std::to_string(i) + " has shape " + to_string(in.shape(i)) + ".");
    out_dtype_ = dtype_.value_or(in.dtype());
    // One colour map per sample, computed here so that both backends share it.
    maps_.assign(in.size(), {});
    const bool twist = kind_ == Kind::kColorTwist;
    // DALI's contrast centre here: 0.5 for float inputs, 128 for any integer input.
    const float half_range = is_float(in.dtype()) ? 0.5f : 128.0f;
    for (size_t k = 0; k < in.size(); ++k) {
      const int64_t i = static_cast<int64_t>(k);
      float hue = kind_ == Kind::kSaturation ? 0.0f : checked_scalar(ws, "hue", i, 0.0);
      float sat = kind_ == Kind::kHue ? 1.0f : checked_scalar(ws, "saturation", i, 1.0, kind_ != Kind::kHsv);
      float value = kind_ == Kind::kHsv ? checked_scalar(ws, "value", i, 1.0) : 1.0f;
      float brightness = twist ? checked_scalar(ws, "brightness", i, 1.0, true) : 1.0f;
      float contrast = twist ? checked_scalar(ws, "contrast", i, 1.0, true) : 1.0f;
      kernels::ColorAffine t = kernels::color_twist_affine(brightness, contrast, hue, sat, value, half_range);
      if (bgr_) t = kernels::swap_output_rb(kernels::swap_input_rb(t));
      maps_[k] = t;
    }
    return {OutputDesc{out_dtype_, in.layout(), in.shapes()}};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const Batch& in = ws.input(0);
    Batch& out = ws.output(0);
    const kernels::ColorAffine& t = maps_[i];
    visit_dtype(in.dtype(), [&](auto ti) {
      using In = decltype(ti);
      visit_dtype(out_dtype_, [&](auto to) {
        using Out = decltype(to);
        if constexpr (is_color_type<In>() && is_color_type<Out>())
          kernels::apply_color_affine(sample_view(out.data<Out>(i), out.shape(i)),
                                      sample_view(static_cast<const In*>(in.data<In>(i)), in.shape(i)), t);
      });
    });
  }

  void run_gpu(Workspace& ws, const std::vector<OutputDesc>& descs) {
    require_device_input(ws);
    const Batch& in = ws.input(0);
    const OutputDesc& d = descs[0];
    ws.outputs.assign(1, allocate_device_batch(ws, d.dtype, d.shapes, d.layout));
    Batch& out = ws.outputs[0];
    std::vector<kernels::cuda::ColorAffineJob> jobs(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      jobs[i].in = in[i].data;
      jobs[i].out = out[i].data;
      jobs[i].pixels = volume(in.shape(i)) / 3;  // setup checked: 3 channels
      jobs[i].t = maps_[i];
    }
    kernels::cuda::color_affine_gpu(ws, d.dtype, in.dtype(), jobs);
  }

 private:
  Kind kind_;
  std::optional<DType> dtype_;
  bool bgr_ = false;
  DType out_dtype_ = DType::kNone;
  std::vector<kernels::ColorAffine> maps_;
};

OpSchema& common(OpSchema& s, Kind kind) {
  s.inputs(1, 1, {"input"}).outputs(1).input_layouts({"HWC", "FHWC", "DHWC"});
  if (kind != Kind::kHsv)
    s.arg({.name = "image_type", .type = ArgType::kImageType,
           .default_value = int64_t{static_cast<int>(ImageType::kRGB)},
           .doc = "The colour space of the input and the output image: RGB or BGR."});
  if (kind == Kind::kHsv)
    s.arg({.name = "dtype", .type = ArgType::kDType,
           .default_value = int64_t{static_cast<int>(DType::kUInt8)},
           .doc = "The output data type (DALI's default: UINT8, whatever the input type). Integer "
                  "outputs are rounded (halves away from zero, as DALI) and saturated."});
  else
    s.arg({.name = "dtype", .type = ArgType::kDType, .optional = true,
           .doc = "Output data type. If not set, the input type is used. Integer outputs are "
                  "rounded (halves away from zero, as DALI) and saturated."});
  s.backend(Backend::kCPU, [kind](const OpSpec& sp) { return std::make_unique<ColorTwist>(sp, kind); })
      STOKER_GPU_TWIN_WITH(ColorTwist, kind);
  return s;
}

ArgDef hue_arg(const char* doc) {
  return {.name = "hue", .type = ArgType::kFloat, .default_value = 0.0, .doc = doc, .tensor = true};
}
ArgDef saturation_arg(bool non_negative) {
  ArgDef a{.name = "saturation", .type = ArgType::kFloat, .default_value = 1.0,
           .doc = "The saturation multiplier: 0 gives a grey image, 1 leaves it unchanged.",
           .tensor = true};
  if (non_negative) a.min = 0.0;
  return a;
}

const char* kApprox =
    "For speed the adjustment is DALI's linear approximation in RGB space: the colour is moved to "
    "YIQ, the IQ (chroma) plane is rotated by the hue and scaled by the saturation, everything "
    "is scaled by the value, and the result goes back to RGB; one 3x3 matrix per sample.";

}  // namespace

STOKER_REGISTER_OP_NAMED(hsv, "hsv") {
  schema.doc(std::string("Adjusts hue, saturation and value (brightness) of RGB images. The hue "
                         "is an additive delta in degrees; saturation and value are multipliers.\n\n") +
             kApprox)
      .arg(hue_arg("Hue delta, in degrees; angles outside 0..360 wrap around."))
      .arg(saturation_arg(false))
      .arg({.name = "value", .type = ArgType::kFloat, .default_value = 1.0,
            .doc = "The value (brightness) multiplier.", .tensor = true});
  common(schema, Kind::kHsv);
}

STOKER_REGISTER_OP_NAMED(hue, "hue") {
  schema.doc(std::string("Changes the hue of images.\n\n") + kApprox)
      .arg(hue_arg("The hue change, in degrees."));
  common(schema, Kind::kHue);
}

STOKER_REGISTER_OP_NAMED(saturation, "saturation") {
  schema.doc(std::string("Changes the saturation of images.\n\n") + kApprox)
      .arg(saturation_arg(true));
  common(schema, Kind::kSaturation);
}

STOKER_REGISTER_OP_NAMED(color_twist, "color_twist") {
  schema.doc(std::string("Adjusts hue, saturation, brightness and contrast of images:\n\n"
                         "    out = brightness * (contrast * HS(in) + half_range * (1 - contrast))\n\n"
                         "where HS is the hue/saturation map below and half_range is 128 for "
                         "integer inputs, 0.5 for floats.\n\n") + kApprox)
      .arg(hue_arg("Hue change, in degrees."))
      .arg(saturation_arg(true))
      .arg({.name = "contrast", .type = ArgType::kFloat, .default_value = 1.0,
            .doc = "Contrast factor, non-negative: 0 gives a uniform grey image, 1 no change.",
            .tensor = true, .min = 0.0})
      .arg({.name = "brightness", .type = ArgType::kFloat, .default_value = 1.0,
            .doc = "Brightness factor, non-negative: 0 gives a black image, 1 no change.",
            .tensor = true, .min = 0.0});
  common(schema, Kind::kColorTwist);
}

}  // namespace stoker
