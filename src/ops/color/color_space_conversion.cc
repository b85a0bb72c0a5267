// color_space_conversion: RGB, BGR, YCbCr (ITU-R BT.601, studio range) and GRAY, as DALI
// converts them; each conversion is one per-pixel affine map (kernels/cpu/color).
#include "kernels/cpu/color/color_affine.h"
#include "ops/color/color_common.h"
#include "ops/image/image_types.h"
#include "pipeline/operator.h"

namespace stoker {
namespace {

using namespace color_ops;  // NOLINT

kernels::ColorSpace to_color_space(const OpSpec& spec, const char* arg) {
  auto t = static_cast<ImageType>(spec.get<int64_t>(arg));
  switch (t) {
    case ImageType::kRGB: return kernels::ColorSpace::kRGB;
    case ImageType::kBGR: return kernels::ColorSpace::kBGR;
    case ImageType::kYCbCr: return kernels::ColorSpace::kYCbCr;
    case ImageType::kGray: return kernels::ColorSpace::kGray;
    default:
      spec.arg_error(arg, std::string("must be RGB, BGR, YCbCr or GRAY, got ") + image_type_name(t) + ".");
  }
}

int channels_of(kernels::ColorSpace s) { return s == kernels::ColorSpace::kGray ? 1 : 3; }

class ColorSpaceConversion : public Operator {
 public:
  explicit ColorSpaceConversion(const OpSpec& spec)
      : Operator(spec),
        from_(to_color_space(spec, "image_type")),
        to_(to_color_space(spec, "output_type")) {
    STOKER_ASSERT(kernels::color_space_affine(from_, to_, true, 255.0f).has_value(),
                  "no colour space conversion for this pair");
  }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    check_image_input(spec_, in);
    if (in.dtype() != DType::kUInt8 && in.dtype() != DType::kUInt16 &&
        in.dtype() != DType::kFloat16 && in.dtype() != DType::kFloat32)
      fail(ErrorKind::kTypeMismatch,
           std::string("input 0 must be of type UINT8, UINT16, FLOAT16 or FLOAT, got ") +
               dtype_name(in.dtype()) + ". Convert it first with fn.cast.");
    // The affine map for this input type: 8-bit data use DALI's 8-bit offsets (16, 128), the
    // others are normalised to their range (1 for floats: values in [0, 1]).
    float range = in.dtype() == DType::kUInt16 ? 65535.0f : 1.0f;
    affine_ = *kernels::color_space_affine(from_, to_, in.dtype() == DType::kUInt8, range);
    OutputDesc d{in.dtype(), in.layout(), {}};
    int want = channels_of(from_);
    for (size_t i = 0; i < in.size(); ++i) {
      Shape s = in.shape(i);
      if (s.back() != want)
        fail(ErrorKind::kInvalidArgument,
             "sample " + std::to_string(i) + " has " +
                 std::to_string(s.back()) + " channels (shape " + to_string(s) + "), but image_type " +
                 image_type_name(static_cast<ImageType>(spec_.get<int64_t>("image_type"))) +
                 " needs " + std::to_string(want) + ". Set image_type to the input's colour space.");
      s.back() = channels_of(to_);
      d.shapes.push_back(s);
    }
    return {d};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const Batch& in = ws.input(0);
    Batch& out = ws.output(0);
    visit_dtype(in.dtype(), [&](auto tv) {
      using T = decltype(tv);
      if constexpr (is_color_type<T>())
        kernels::apply_color_affine(sample_view(out.data<T>(i), out.shape(i)),
                                    sample_view(static_cast<const T*>(in.data<T>(i)), in.shape(i)),
                                    affine_);
    });
  }

 private:
  kernels::ColorSpace from_, to_;
  kernels::ColorAffine affine_;
};

}  // namespace

STOKER_REGISTER_OP_NAMED(color_space_conversion, "color_space_conversion") {
  schema.doc("Converts images between colour spaces: RGB, BGR, YCbCr and GRAY, any to any.\n\n"
             "YCbCr is ITU-R BT.601 with studio range (Y in 16..235, Cb and Cr in 16..240 for "
             "uint8), as in DALI: Y = 0.257 R + 0.504 G + 0.098 B + 16, Cb = -0.148 R - 0.291 G + "
             "0.439 B + 128, Cr = 0.439 R - 0.368 G - 0.071 B + 128. GRAY is full range: "
             "0.299 R + 0.587 G + 0.114 B. Float images are taken to be in [0, 1] (offsets "
             "0.0625 and 0.5), uint16 images in [0, 65535]. Integer results are rounded (ties to "
             "even) and saturated. Sequences (FHWC) and volumes (DHWC) are converted frame by "
             "frame.")
      .inputs(1, 1, {"input"}).outputs(1).input_layouts({"HWC", "FHWC", "DHWC"})
      .legacy_name("ColorSpaceConversion")
      .arg({.name = "image_type", .type = ArgType::kImageType,
            .doc = "The colour space of the input image."})
      .arg({.name = "output_type", .type = ArgType::kImageType,
            .doc = "The colour space of the output image."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<ColorSpaceConversion>(s); });
}

}  // namespace stoker
