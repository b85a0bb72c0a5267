// color_space_conversion: RGB, BGR, YCbCr (ITU-R BT.601, studio range) and GRAY, as DALI
// converts them; each conversion is one per-pixel affine map (kernels/cpu/color). HSV is
// OpenCV's (kernels/cpu/color/hsv_convert.h), to and from RGB or BGR directly, and to and from
// YCbCr and GRAY through an RGB image of the input's type (the same as two conversions in a row).
#include <vector>

#include "kernels/cpu/color/color_affine.h"
#include "kernels/cpu/color/hsv_convert.h"
#include "kernels/cuda/color_gpu.h"
#include "ops/color/color_common.h"
#include "ops/generic/gpu_twin.h"
#include "ops/image/image_types.h"
#include "pipeline/gpu_batch.h"
#include "pipeline/operator.h"

namespace stoker {
namespace {

using namespace color_ops;  // NOLINT

ImageType image_type_arg(const OpSpec& spec, const char* arg) {
  auto t = static_cast<ImageType>(spec.get<int64_t>(arg));
  switch (t) {
    case ImageType::kRGB: case ImageType::kBGR: case ImageType::kYCbCr: case ImageType::kGray:
    case ImageType::kHSV:
      return t;
    default:
      spec.arg_error(arg, std::string("must be RGB, BGR, YCbCr, GRAY or HSV, got ") +
                              image_type_name(t) + ".");
  }
}

// The affine colour space of `t`; HSV maps to RGB (its conversions go through RGB).
kernels::ColorSpace affine_space(ImageType t) {
  switch (t) {
    case ImageType::kBGR: return kernels::ColorSpace::kBGR;
    case ImageType::kYCbCr: return kernels::ColorSpace::kYCbCr;
    case ImageType::kGray: return kernels::ColorSpace::kGray;
    default: return kernels::ColorSpace::kRGB;
  }
}

int channels_of(ImageType t) { return t == ImageType::kGray ? 1 : 3; }

class ColorSpaceConversion : public Operator {
 public:
  explicit ColorSpaceConversion(const OpSpec& spec)
      : Operator(spec),
        from_(image_type_arg(spec, "image_type")),
        to_(image_type_arg(spec, "output_type")),
        hsv_(from_ != to_ && (from_ == ImageType::kHSV || to_ == ImageType::kHSV)) {
    // The affine part: the whole conversion, or the leg to / from RGB of an HSV conversion.
    if (hsv_) {
      affine_from_ = from_ == ImageType::kHSV ? kernels::ColorSpace::kRGB : affine_space(from_);
      affine_to_ = to_ == ImageType::kHSV ? kernels::ColorSpace::kRGB : affine_space(to_);
    } else {
      affine_from_ = affine_space(from_);
      affine_to_ = affine_space(to_);
    }
    STOKER_ASSERT(kernels::color_space_affine(affine_from_, affine_to_, true, 255.0f).has_value(),
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
    if (hsv_ && in.dtype() == DType::kUInt16)
      fail(ErrorKind::kTypeMismatch,
           std::string("input 0 must be of type UINT8, FLOAT16 or FLOAT to convert from or to "
                       "HSV, got ") + dtype_name(in.dtype()) + ". Convert it first with fn.cast.");
    // The affine map for this input type: 8-bit data use DALI's 8-bit offsets (16, 128), the
    // others are normalised to their range (1 for floats: values in [0, 1]).
    float range = in.dtype() == DType::kUInt16 ? 65535.0f : 1.0f;
    affine_ = *kernels::color_space_affine(affine_from_, affine_to_, in.dtype() == DType::kUInt8,
                                          range);
    OutputDesc d{in.dtype(), in.layout(), {}};
    int want = channels_of(from_);
    for (size_t i = 0; i < in.size(); ++i) {
      Shape s = in.shape(i);
      if (s.back() != want)
        fail(ErrorKind::kInvalidArgument,
             "sample " + std::to_string(i) + " has " +
                 std::to_string(s.back()) + " channels (shape " + to_string(s) + "), but image_type " +
                 image_type_name(from_) +
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
      if constexpr (is_color_type<T>()) {
        auto dst = sample_view(out.data<T>(i), out.shape(i));
        auto src = sample_view(static_cast<const T*>(in.data<T>(i)), in.shape(i));
        if (!hsv_) {
          kernels::apply_color_affine(dst, src, affine_);
          return;
        }
        if constexpr (std::is_same_v<T, uint8_t> || std::is_same_v<T, float16> ||
                      std::is_same_v<T, float>) {
          const bool eight_bit = std::is_same_v<T, uint8_t>;
          const ImageType other = to_ == ImageType::kHSV ? from_ : to_;
          const bool bgr = other == ImageType::kBGR;
          const bool direct = bgr || other == ImageType::kRGB;  // no affine leg
          if (direct) {
            if (to_ == ImageType::kHSV)
              kernels::rgb_to_hsv(dst, src, bgr, eight_bit);
            else
              kernels::hsv_to_rgb(dst, src, bgr, eight_bit);
            return;
          }
          // Through an RGB image of the same type, as two conversions in a row would do.
          std::vector<T> tmp(static_cast<size_t>(src.height * src.width * 3));
          ImageView<T> rgb(tmp.data(), src.height, src.width, 3);
          ImageView<const T> crgb(tmp.data(), src.height, src.width, 3);
          if (to_ == ImageType::kHSV) {
            kernels::apply_color_affine(rgb, src, affine_);
            kernels::rgb_to_hsv(dst, crgb, false, eight_bit);
          } else {
            kernels::hsv_to_rgb(rgb, src, false, eight_bit);
            kernels::apply_color_affine(dst, crgb, affine_);
          }
        }
      }
    });
  }

  // GPU twin: the same maps, one launch for the batch (the HSV path fuses its affine leg).
  void run_gpu(Workspace& ws, const std::vector<OutputDesc>& descs) {
    require_device_input(ws);
    const Batch& in = ws.input(0);
    const OutputDesc& d = descs[0];
    ws.outputs.assign(1, allocate_device_batch(ws, d.dtype, d.shapes, d.layout));
    Batch& out = ws.outputs[0];
    auto pixels = [&](size_t i) {
      const Shape& s = in.shape(i);
      return s.back() > 0 ? volume(s) / s.back() : 0;
    };
    if (!hsv_) {
      std::vector<kernels::cuda::ColorAffineJob> jobs(in.size());
      for (size_t i = 0; i < in.size(); ++i) {
        jobs[i].in = in[i].data;
        jobs[i].out = out[i].data;
        jobs[i].pixels = pixels(i);
        jobs[i].t = affine_;
      }
      kernels::cuda::color_affine_gpu(ws, d.dtype, in.dtype(), jobs);
      return;
    }
    const ImageType other = to_ == ImageType::kHSV ? from_ : to_;
    const bool bgr = other == ImageType::kBGR;
    const bool direct = bgr || other == ImageType::kRGB;
    std::vector<kernels::cuda::HsvJob> jobs(in.size());
    for (size_t i = 0; i < in.size(); ++i) jobs[i] = {in[i].data, out[i].data, pixels(i)};
    kernels::cuda::hsv_gpu(ws, in.dtype(), jobs, to_ == ImageType::kHSV, bgr,
                           direct ? nullptr : &affine_);
  }

 private:
  ImageType from_, to_;
  bool hsv_;  // one side is HSV, the other not
  kernels::ColorSpace affine_from_, affine_to_;
  kernels::ColorAffine affine_;
};

}  // namespace

STOKER_REGISTER_OP_NAMED(color_space_conversion, "color_space_conversion") {
  schema.doc("Converts images between colour spaces: RGB, BGR, YCbCr, GRAY and HSV, any to any.\n\n"
             "YCbCr is ITU-R BT.601 with studio range (Y in 16..235, Cb and Cr in 16..240 for "
             "uint8), as in DALI: Y = 0.257 R + 0.504 G + 0.098 B + 16, Cb = -0.148 R - 0.291 G + "
             "0.439 B + 128, Cr = 0.439 R - 0.368 G - 0.071 B + 128. GRAY is full range: "
             "0.299 R + 0.587 G + 0.114 B. Float images are taken to be in [0, 1] (offsets "
             "0.0625 and 0.5), uint16 images in [0, 65535]. Integer results are rounded (ties to "
             "even) and saturated. Sequences (FHWC) and volumes (DHWC) are converted frame by "
             "frame.\n\n"
             "HSV is OpenCV's (cv2.cvtColor with COLOR_RGB2HSV / COLOR_HSV2RGB): V = max(R, G, B), "
             "S = (V - min(R, G, B)) / V, H the hue angle. For uint8, H is in [0, 180) (degrees / "
             "2) and S, V in [0, 255]; for float16 and float (RGB in [0, 1]), H is in degrees "
             "[0, 360) and S, V in [0, 1]. uint16 is not supported for HSV. HSV to or from YCbCr "
             "and GRAY goes through RGB of the input's type (rounded for uint8).")
      .inputs(1, 1, {"input"}).outputs(1).input_layouts({"HWC", "FHWC", "DHWC"})
      .arg({.name = "image_type", .type = ArgType::kImageType,
            .doc = "The colour space of the input image."})
      .arg({.name = "output_type", .type = ArgType::kImageType,
            .doc = "The colour space of the output image."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<ColorSpaceConversion>(s); })
      STOKER_GPU_TWIN(ColorSpaceConversion);
}

}  // namespace stoker
