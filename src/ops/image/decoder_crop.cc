// decoders.image_crop, decoders.image_slice, decoders.image_random_crop: decode only a window
// of each image (libjpeg-turbo's cropped scanlines; PNG decodes rows up to the window's bottom
// and keeps its columns). The windows follow fn.crop, fn.slice and DALI's random crop generator
// exactly, on the oriented image, so each equals decoders.image followed by the crop.
#include <cmath>
#include <string>
#include <vector>

#include "ops/geometry/geometry_common.h"
#include "ops/image/decoder.h"
#include "ops/image/decoder_mixed.h"
#include "ops/image/random_crop_attr.h"
#include "ops/image/resample_args.h"

namespace stoker {
namespace {

// ---- decoders.image_crop: fn.crop's window (crop / crop_h, crop_w; crop_pos_x, crop_pos_y)
class ImageCropDecoder : public ImageDecoderBase {
 public:
  explicit ImageCropDecoder(const OpSpec& spec) : ImageDecoderBase(spec), crop_(spec_) {
    if (!spec.has("crop") && !spec.is_tensor_arg("crop") && !given(spec, "crop_h") && !given(spec, "crop_w"))
      spec.arg_error("crop", "is required: give crop=(h, w), or crop_h and crop_w.");
  }

 protected:
  CropWindow2D window(Workspace& ws, int64_t i, int64_t height, int64_t width) override {
    std::vector<int64_t> anchor, extent;
    crop_.compute(ws, i, Shape{height, width, 1}, "HWC", anchor, extent);
    CropWindow2D w{anchor[0], anchor[1], extent[0], extent[1]};
    if (w.y < 0 || w.x < 0 || w.y + w.h > height || w.x + w.w > width)
      spec_.arg_error(spec_.has("crop") || spec_.is_tensor_arg("crop") ? "crop" : "crop_h",
                      "gives a " + std::to_string(w.h) + "x" + std::to_string(w.w) +
                          " window, larger than the " + std::to_string(height) + "x" +
                          std::to_string(width) + " (HxW) image of sample " + std::to_string(i) +
                          "; the decoder crops inside the image only (for padding, decode and "
                          "then use fn.crop with out_of_bounds_policy='pad').");
    return w;
  }

 private:
  static bool given(const OpSpec& s, const char* n) {
    return s.is_tensor_arg(n) || (s.has(n) && s.get<double>(n) != 0.0);
  }
  geometry::CropWindow crop_;
};

// ---- decoders.image_slice: fn.slice's window over the H and W axes
class ImageSliceDecoder : public ImageDecoderBase {
 public:
  explicit ImageSliceDecoder(const OpSpec& spec) : ImageDecoderBase(spec), window_(spec_) {
    // The output is HWC: only H (0) and W (1) can be sliced. axis_names wins over axes, as in
    // DALI; the default is "WH".
    if (spec.has("axis_names") || !spec.has("axes")) {
      std::string names = spec.has("axis_names") ? spec.get<std::string>("axis_names") : "WH";
      for (char c : names) {
        if (c != 'H' && c != 'W')
          spec.arg_error("axis_names", "names axis '" + std::string(1, c) +
                                           "'; a decoded image (HWC) can be sliced in H and W only.");
        axes_.push_back(c == 'H' ? 0 : 1);
      }
    } else {
      for (int64_t a : spec.get<std::vector<int64_t>>("axes")) {
        if (a < -3 || a > 2)
          spec.arg_error("axes", "has axis " + std::to_string(a) + ", out of range for HWC images.");
        int64_t d = a < 0 ? a + 3 : a;
        if (d == 2)
          spec.arg_error("axes", "has the channel axis (2); a decoded image (HWC) can be sliced in "
                                 "H (0) and W (1) only.");
        axes_.push_back(static_cast<int>(d));
      }
    }
    if (axes_.empty()) spec.arg_error(spec.has("axis_names") ? "axis_names" : "axes", "must name at least one axis.");
    if (axes_.size() == 2 && axes_[0] == axes_[1])
      spec.arg_error(spec.has("axis_names") ? "axis_names" : "axes", "names the same axis twice.");
  }

 protected:
  CropWindow2D window(Workspace& ws, int64_t i, int64_t height, int64_t width) override {
    const int64_t ext[2] = {height, width};
    int64_t lo[2] = {0, 0}, hi[2] = {height, width};
    std::vector<int64_t> start, end;
    window_.compute(ws, i, axes_, {height, width}, start, end);
    for (size_t j = 0; j < axes_.size(); ++j) {
      lo[axes_[j]] = start[j];
      hi[axes_[j]] = end[j];
    }
    for (int d = 0; d < 2; ++d) {
      if (lo[d] < 0 || hi[d] > ext[d] || hi[d] <= lo[d])
        fail(ErrorKind::kInvalidArgument,
             "the slice of " + std::string(d == 0 ? "rows (H)" : "columns (W)") + " is [" +
                 std::to_string(lo[d]) + ", " + std::to_string(hi[d]) + "), which is empty or "
                 "reaches outside the " + std::to_string(height) + "x" + std::to_string(width) +
                 " (HxW) image of sample " + std::to_string(i) +
                 "; the decoder slices inside the image only (for padding, decode and then use "
                 "fn.slice with out_of_bounds_policy='pad').");
    }
    return CropWindow2D{lo[0], lo[1], hi[0] - lo[0], hi[1] - lo[1]};
  }

 private:
  geometry::SliceWindow window_;
  std::vector<int> axes_;
};

// ---- decoders.image_random_crop: DALI's random window; stoker's optional fused resize
class ImageRandomCropDecoder : public ImageDecoderBase {
 public:
  explicit ImageRandomCropDecoder(const OpSpec& spec)
      : ImageDecoderBase(spec), args_(random_crop_args(spec)) {
    if (spec.has("size")) {
      std::vector<int64_t> s = spec.get<std::vector<int64_t>>("size");
      FusedResize r;
      r.height = s[0];
      r.width = s.size() > 1 ? s[1] : s[0];
      r.params = resample_params(spec);
      r.dct_downscale = spec.get<bool>("dct_downscale");
      resize_ = r;
    }
  }

 protected:
  CropWindow2D window(Workspace& ws, int64_t i, int64_t height, int64_t width) override {
    Philox rng = ws.rng(i);
    return random_crop_window(height, width, args_, rng);
  }

 private:
  RandomCropArgs args_;
};

}  // namespace

STOKER_REGISTER_OP_NAMED(decoders_image_crop, "decoders.image_crop") {
  schema.doc("Decodes images and crops them, decoding only the window (as fn.crop's: crop or "
             "crop_h/crop_w at crop_pos_x/crop_pos_y of the oriented image). Equals "
             "decoders.image followed by crop, faster.")
      .inputs(1, 1, {"encoded"}).outputs(1);
  ImageDecoderBase::add_args(schema);
  geometry::add_crop_args(schema);
  schema.backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<ImageCropDecoder>(s); })
      STOKER_MIXED_DECODER_BACKEND(ImageCropDecoder);
}

STOKER_REGISTER_OP_NAMED(decoders_image_slice, "decoders.image_slice") {
  schema.doc("Decodes images and slices them, decoding only the slice (as fn.slice's: the anchor "
             "and shape inputs, normalized or absolute, or start/rel_start with end/rel_end/shape/"
             "rel_shape, over the H and W axes of the oriented image).")
      .inputs(1, 3, {"data", "anchor", "shape"}).outputs(1)
      .arg({.name = "axes", .type = ArgType::kIntList, .optional = true,
            .doc = "Axes (indices: 0 = H, 1 = W) the slice values refer to, in order. Default "
                   "[1, 0]; axis_names wins when both are given."})
      .arg({.name = "axis_names", .type = ArgType::kString, .optional = true,
            .doc = "Axes (layout letters H, W) the slice values refer to, in order. Default 'WH'."});
  geometry::add_slice_args(schema, "image's", "pixels");
  ImageDecoderBase::add_args(schema);
  schema.backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<ImageSliceDecoder>(s); })
      STOKER_MIXED_DECODER_BACKEND(ImageSliceDecoder);
}

STOKER_REGISTER_OP_NAMED(decoders_image_random_crop, "decoders.image_random_crop") {
  schema.doc("Decodes images and crops a random window of each, decoding only the window. The "
             "window's area (a fraction of the image's, random_area) and aspect ratio "
             "(random_aspect_ratio) are drawn as DALI's random crop generator does. stoker "
             "extension: with `size`, the window is also resized to that size in the same pass, "
             "and a JPEG is decoded at 1/2, 1/4 or 1/8 scale (libjpeg DCT scaling) when the "
             "window still has at least `size` pixels at that scale (dct_downscale); this is "
             "decoders.image_random_crop followed by resize, fused and much faster.")
      .inputs(1, 1, {"encoded"}).outputs(1);
  ImageDecoderBase::add_args(schema);
  add_random_crop_args(schema);
  schema.arg({.name = "size", .type = ArgType::kIntList, .optional = true,
              .doc = "stoker extension: resize each window to this size, (H, W) or one value "
                     "for both, in the same pass as the decode.",
              .min = 1, .list_min = 1, .list_max = 2})
      .arg({.name = "dct_downscale", .type = ArgType::kBool, .default_value = true,
            .doc = "stoker extension, with `size`: let a JPEG decode at 1/2, 1/4 or 1/8 scale "
                   "when the window keeps at least `size` pixels; False decodes at full size "
                   "(exactly decode, crop, resize)."});
  add_resample_args(schema, "of the fused resize (stoker extension, only with `size`)");
  schema.backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<ImageRandomCropDecoder>(s); })
      STOKER_MIXED_DECODER_BACKEND(ImageRandomCropDecoder);
}

}  // namespace stoker
