// jpeg_compression_distortion: JPEG artefacts by a real libjpeg encode and decode per image.
#include <algorithm>
#include <cmath>

#include "kernels/cpu/warp/jpeg_distortion.h"
#include "ops/warp/warp_common.h"

namespace stoker {
namespace {

class JpegCompressionDistortion : public Operator {
 public:
  explicit JpegCompressionDistortion(const OpSpec& spec) : Operator(spec) {}

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    std::string layout = warp_ops::image_layout(spec_, in, true);
    if (in.dtype() != DType::kUInt8)
      fail(ErrorKind::kInvalidArgument,
           spec_.display_name() + ": input 0 must be uint8 images, got " + dtype_name(in.dtype()) +
               ". Cast with fn.cast(..., dtype=types.UINT8) first.");
    for (size_t i = 0; i < in.size(); ++i) {
      warp_ops::ImageDims d = warp_ops::image_dims(in.shape(i));
      if (d.channels != 3 && d.channels != 1)
        fail(ErrorKind::kInvalidArgument,
             spec_.display_name() + ": expected RGB (3 channels) or grayscale (1 channel) images, "
                                    "got shape " + to_string(in.shape(i)) + " for sample " +
                 std::to_string(i) + ".");
      if (d.height > kernels::kJpegMaxSide || d.width > kernels::kJpegMaxSide)
        fail(ErrorKind::kInvalidArgument,
             spec_.display_name() + ": sample " + std::to_string(i) + " of shape " +
                 to_string(in.shape(i)) + " is larger than JPEG allows (" +
                 std::to_string(kernels::kJpegMaxSide) + " pixels a side).");
    }
    return {OutputDesc{DType::kUInt8, layout, in.shapes()}};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const Batch& in = ws.input(0);
    Batch& out = ws.output(0);
    warp_ops::ImageDims d = warp_ops::image_dims(in.shape(i));
    double q = ws.scalar_arg("quality", i, 50);
    // As DALI: values outside 1..100 are clamped.
    int quality = std::isnan(q) ? 50 : static_cast<int>(std::clamp(std::round(q), 1.0, 100.0));
    const uint8_t* src = in.data<uint8_t>(i);
    uint8_t* dst = out.data<uint8_t>(i);
    for (int64_t f = 0; f < d.frames; ++f) {
      std::string err = kernels::jpeg_compression_distortion(
          warp_ops::frame_view(dst, d, f), warp_ops::frame_view(src, d, f), quality);
      if (!err.empty()) fail(ErrorKind::kInternal, spec_.display_name() + ": libjpeg failed: " + err);
    }
  }
};

}  // namespace

STOKER_REGISTER_OP_NAMED(jpeg_compression_distortion, "jpeg_compression_distortion") {
  schema.doc("Produces JPEG-like distortion in RGB (or grayscale) uint8 images: each image is "
             "encoded as a JPEG with libjpeg at the given quality (4:2:0 chroma) and decoded back. "
             "Sequences (FHWC) are distorted frame by frame.")
      .inputs(1, 1, {"input"}).outputs(1).input_layouts({"HWC", "FHWC"})
      .arg({.name = "quality", .type = ArgType::kInt, .default_value = int64_t{50},
            .doc = "JPEG compression quality from 1 (lowest quality) to 100 (highest quality). Any "
                   "values outside the range 1-100 are clamped.",
            .tensor = true})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<JpegCompressionDistortion>(s); });
}

}  // namespace stoker
