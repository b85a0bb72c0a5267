// decoders.image: encoded images (JPEG, PNG) to HWC pixels on the CPU.
#include "codecs/image_codec.h"
#include "ops/image/image_types.h"
#include "pipeline/operator.h"

namespace stoker {
namespace {

class ImageDecoder : public Operator {
 public:
  explicit ImageDecoder(const OpSpec& spec) : Operator(spec) {
    auto t = static_cast<ImageType>(spec.get<int64_t>("output_type"));
    switch (t) {
      case ImageType::kRGB: params_.color = codecs::ColorOut::kRGB; break;
      case ImageType::kBGR: params_.color = codecs::ColorOut::kBGR; break;
      case ImageType::kGray: params_.color = codecs::ColorOut::kGray; break;
      case ImageType::kAnyData: params_.color = codecs::ColorOut::kAny; break;
      default:
        spec.arg_error("output_type", std::string("must be RGB, BGR, GRAY or ANY_DATA, got ") +
                                          image_type_name(t) + ".");
    }
    dtype_ = static_cast<DType>(spec.get<int64_t>("dtype"));
    if (dtype_ != DType::kUInt8 && dtype_ != DType::kUInt16)
      spec.arg_error("dtype", std::string("must be UINT8 or UINT16, got ") + dtype_name(dtype_) + ".");
    params_.apply_orientation = spec.get<bool>("adjust_orientation");
    params_.limits.max_pixels = spec.get<int64_t>("max_pixels");
  }

  bool setup_reads_input_data() const override { return true; }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    if (in.dtype() != DType::kUInt8)
      spec_.arg_error("input", std::string("must be encoded bytes (uint8), got ") + dtype_name(in.dtype()) + ".");
    infos_.resize(in.size());
    OutputDesc d{dtype_, "HWC", {}};
    for (size_t i = 0; i < in.size(); ++i) {
      try {
        infos_[i] = codecs::peek(in.data<uint8_t>(i), in.sample_bytes(i), params_.limits);
        d.shapes.push_back(codecs::output_shape(infos_[i], params_));
      } catch (const Error& e) {
        throw e.with_context("sample " + std::to_string(i) + describe_source(in, i));
      }
    }
    return {d};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const Batch& in = ws.input(0);
    Batch& out = ws.output(0);
    const Shape& s = out.shape(i);
    if (dtype_ == DType::kUInt8)
      codecs::decode(in.data<uint8_t>(i), in.sample_bytes(i), infos_[i], params_,
                     ImageView<uint8_t>(out.data<uint8_t>(i), s[0], s[1], s[2]));
    else
      codecs::decode(in.data<uint8_t>(i), in.sample_bytes(i), infos_[i], params_,
                     ImageView<uint16_t>(out.data<uint16_t>(i), s[0], s[1], s[2]));
  }

 private:
  static std::string describe_source(const Batch& b, size_t i) {
    return b[i].source.empty() ? "" : " ('" + b[i].source + "')";
  }

  codecs::DecodeParams params_;
  DType dtype_;
  std::vector<codecs::ImageInfo> infos_;
};

}  // namespace

STOKER_REGISTER_OP_NAMED(decoders_image, "decoders.image") {
  schema.doc("Decodes JPEG and PNG images to HWC pixels (libjpeg-turbo, libpng). EXIF orientation "
             "is applied unless adjust_orientation=False.")
      .inputs(1, 1, {"encoded"}).outputs(1)
      .legacy_name("ImageDecoder").legacy_name("decoders.Image")
      .arg({.name = "output_type", .type = ArgType::kImageType, .default_value = int64_t{0},
            .doc = "Color space of the output: RGB, BGR, GRAY or ANY_DATA (the file's own channels)."})
      .arg({.name = "dtype", .type = ArgType::kDType, .default_value = int64_t{0},
            .doc = "Output element type: UINT8, or UINT16 (16-bit PNGs kept exact)."})
      .arg({.name = "adjust_orientation", .type = ArgType::kBool, .default_value = true,
            .doc = "Rotate and flip as the image's EXIF orientation says."})
      .arg({.name = "max_pixels", .type = ArgType::kInt, .default_value = int64_t{128000000},
            .doc = "stoker: refuse images with more pixels than this (checked from the header, "
                   "before any allocation).", .min = 1})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<ImageDecoder>(s); });
}

}  // namespace stoker
