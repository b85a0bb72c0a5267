// Shared between the format decoders of image_codec.h; not for use outside src/codecs.
#pragma once
#include <cstddef>
#include <cstdint>

#include "codecs/image_codec.h"

namespace stoker::codecs::detail {

// What a decoder has to produce: the roi in STORED orientation (after DCT scaling), with the
// final channels. The view it writes to is the caller's output seen through the orientation,
// so its strides may be negative or swapped: decoders write pixel by pixel through
// row()/pixel_stride and copy whole rows only when pixel_stride == channels.
struct Plan {
  int64_t scaled_h = 0, scaled_w = 0;  // the stored image after scaling
  int scale_denom = 1;
  int orientation = 1;                 // the one to apply; 1 when not applied
  ColorOut color = ColorOut::kRGB;
  int channels = 3;                    // output channels
  int64_t out_h = 0, out_w = 0;        // output size (oriented roi)
  int64_t y0 = 0, x0 = 0, h = 0, w = 0;  // the roi in stored (scaled) coordinates
};

Plan make_plan(const ImageInfo& info, const DecodeParams& params);

// EXIF orientation from a TIFF-structured EXIF block (starting at "II*\0" / "MM\0*"); 1 when
// absent, malformed or out of range. Never reads outside [data, data + size).
int exif_orientation(const uint8_t* data, size_t size);

// Pillow's convert('L'): ITU-R 601 weights in 16-bit fixed point, rounded.
inline uint8_t luma(uint32_t r, uint32_t g, uint32_t b) {
  return static_cast<uint8_t>((r * 19595u + g * 38470u + b * 7471u + 0x8000u) >> 16);
}
inline uint16_t luma16(uint32_t r, uint32_t g, uint32_t b) {
  return static_cast<uint16_t>((r * 19595u + g * 38470u + b * 7471u + 0x8000u) >> 16);
}

// Converts `w` pixels of `src_c` interleaved channels (1 gray, 2 gray+alpha, 3 RGB, 4 RGBA) to
// `color`, writing pixels `pixel_stride` elements apart. Alpha is dropped unless kAny.
template <typename T>
void convert_row(const T* src, int src_c, int64_t w, ColorOut color, T* dst, int64_t pixel_stride);

// Format entry points. Each throws Error(kDecode) for bad data.
ImageInfo jpeg_peek(const uint8_t* data, size_t size);
void jpeg_decode(const uint8_t* data, size_t size, const ImageInfo& info, const Plan& plan,
                 const ImageView<uint8_t>& region);

ImageInfo png_peek(const uint8_t* data, size_t size);
void png_decode(const uint8_t* data, size_t size, const ImageInfo& info, const Plan& plan,
                const ImageView<uint8_t>& region);
void png_decode(const uint8_t* data, size_t size, const ImageInfo& info, const Plan& plan,
                const ImageView<uint16_t>& region);

}  // namespace stoker::codecs::detail
