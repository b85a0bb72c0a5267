// peek_image_shape: the HWC shape an encoded image will have once decoded, from its header only
// (codecs::peek: no pixel is decoded).
#include <string>

#include "codecs/image_codec.h"
#include "ops/image/image_types.h"
#include "pipeline/operator.h"

namespace stoker {
namespace {

class PeekImageShape : public Operator {
 public:
  explicit PeekImageShape(const OpSpec& spec) : Operator(spec) {
    dtype_ = static_cast<DType>(spec.get<int64_t>("dtype"));
    switch (dtype_) {
      case DType::kInt32: case DType::kUInt32: case DType::kInt64: case DType::kUInt64:
      case DType::kFloat32: case DType::kFloat64: break;
      default:
        spec.arg_error("dtype", std::string("must be INT32, UINT32, INT64, UINT64, FLOAT or FLOAT64, got ") +
                                    dtype_name(dtype_) + ".");
    }
    const auto t = static_cast<ImageType>(spec.get<int64_t>("image_type"));
    switch (t) {
      case ImageType::kRGB: case ImageType::kBGR: case ImageType::kYCbCr: case ImageType::kHSV:
        params_.color = codecs::ColorOut::kRGB;  // three channels whatever the colour space
        break;
      case ImageType::kGray: params_.color = codecs::ColorOut::kGray; break;
      case ImageType::kAnyData: params_.color = codecs::ColorOut::kAny; break;
      default:
        spec.arg_error("image_type", "must be RGB, BGR, YCbCr, GRAY or ANY_DATA, got " +
                                         std::to_string(static_cast<int>(t)) + ".");
    }
    params_.apply_orientation = spec.get<bool>("adjust_orientation");
  }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    if (in.dtype() != DType::kUInt8)
      spec_.arg_error("input", std::string("must be encoded image bytes (uint8), got ") +
                                   dtype_name(in.dtype()) + ".");
    return {OutputDesc{dtype_, "", std::vector<Shape>(in.size(), Shape{3})}};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const Batch& in = ws.input(0);
    const codecs::ImageInfo info = codecs::peek(in.data<uint8_t>(i), in.sample_bytes(i), limits_);
    const Shape s = codecs::output_shape(info, params_);
    visit_dtype(dtype_, [&](auto tag) {
      using T = decltype(tag);
      T* out = ws.output(0).data<T>(i);
      for (int k = 0; k < 3; k++) out[k] = static_cast<T>(s[k]);
    });
  }

 private:
  DType dtype_;
  codecs::DecodeParams params_;
  codecs::DecodeLimits limits_{.max_pixels = INT64_MAX};  // nothing is allocated from it here
};

}  // namespace

STOKER_REGISTER_OP_NAMED(peek_image_shape, "peek_image_shape") {
  schema.doc("Returns the shape (height, width, channels) that an encoded image will have once "
             "decoded, read from its header only: JPEG, PNG, TIFF, WebP, JPEG 2000, BMP and PNM. "
             "Width and height follow the EXIF orientation unless adjust_orientation=False; the "
             "channels follow image_type as in the decoders.")
      .inputs(1, 1, {"encoded"}).outputs(1)
      .arg({.name = "dtype", .type = ArgType::kDType, .default_value = int64_t{static_cast<int>(DType::kInt64)},
            .doc = "Type of the sizes: INT64 (default), INT32, UINT32, UINT64, FLOAT or FLOAT64."})
      .arg({.name = "image_type", .type = ArgType::kImageType, .default_value = int64_t{0},
            .doc = "Colour format the image would be decoded to: RGB, BGR or YCbCr give 3 channels, "
                   "GRAY 1, ANY_DATA the file's own (1 gray, 2 gray+alpha, 3, 4 with alpha, more "
                   "for multi-channel TIFF and JPEG 2000)."})
      .arg({.name = "adjust_orientation", .type = ArgType::kBool, .default_value = true,
            .doc = "Use the EXIF orientation metadata when calculating the shape."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<PeekImageShape>(s); });
}

}  // namespace stoker
