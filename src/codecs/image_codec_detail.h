// Shared between the format decoders of image_codec.h; not for use outside src/codecs.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "codecs/image_codec.h"

namespace stoker::codecs::detail {

// What a decoder has to produce: the roi in STORED orientation (after DCT scaling), with the
// final channels. The view it writes to is the caller's output seen through the orientation,
// so its strides may be negative or swapped: decoders write pixel by pixel through
// row()/pixel_stride and copy whole rows only when pixel_stride == channels.
struct Plan {
  int64_t scaled_h = 0, scaled_w = 0;  // the stored image after scaling
  int scale_denom = 1;
  bool fast_idct = false;
  int orientation = 1;                 // the one to apply; 1 when not applied
  ColorOut color = ColorOut::kRGB;
  int channels = 3;                    // output channels
  int64_t out_h = 0, out_w = 0;        // output size (oriented roi)
  int64_t y0 = 0, x0 = 0, h = 0, w = 0;  // the roi in stored (scaled) coordinates
  DecodeLimits limits;                 // the caller's, for buffers a format allocates itself
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

// round(v * max(T) / maxv): a sample of range 0..maxv to the full range of T (uint8/uint16).
template <typename T>
inline T scale_sample(uint32_t v, uint32_t maxv) {
  constexpr uint64_t tmax = sizeof(T) == 1 ? 255u : 65535u;
  if (maxv == tmax) return static_cast<T>(v);
  return static_cast<T>((uint64_t{v} * tmax + maxv / 2) / maxv);
}

// Scales `w` pixels of `src_c` samples of range 0..maxv (scale_sample) into `tmp` and converts
// them to `color` as convert_row does. `tmp` is the caller's scratch (grown as needed).
template <typename T>
void scale_convert_row(const uint16_t* src, int src_c, int64_t w, uint32_t maxv, ColorOut color,
                       T* dst, int64_t pixel_stride, std::vector<T>& tmp);

// Throws Error(kUnsupported) saying that stoker was built without `library` (for `format`)
// and which package to install.
[[noreturn]] void fail_built_without(const char* library, const char* format, const char* package);

// Format entry points. Each throws Error(kDecode) for bad data. Formats with no 16-bit decode
// are decoded 8-bit and widened by image_codec.cc.
ImageInfo jpeg_peek(const uint8_t* data, size_t size);
void jpeg_decode(const uint8_t* data, size_t size, const ImageInfo& info, const Plan& plan,
                 const ImageView<uint8_t>& region);

ImageInfo png_peek(const uint8_t* data, size_t size);
void png_decode(const uint8_t* data, size_t size, const ImageInfo& info, const Plan& plan,
                const ImageView<uint8_t>& region);
void png_decode(const uint8_t* data, size_t size, const ImageInfo& info, const Plan& plan,
                const ImageView<uint16_t>& region);

// Whether the optional libraries were found at build time (each file's STOKER_WITH_* define).
bool tiff_built_in();
bool webp_built_in();
bool jpeg2k_built_in();

// TIFF through libtiff (tiff.cc).
ImageInfo tiff_peek(const uint8_t* data, size_t size);
void tiff_decode(const uint8_t* data, size_t size, const ImageInfo& info, const Plan& plan,
                 const ImageView<uint8_t>& region);
void tiff_decode(const uint8_t* data, size_t size, const ImageInfo& info, const Plan& plan,
                 const ImageView<uint16_t>& region);

// WebP through libwebp (webp.cc); 8-bit only.
ImageInfo webp_peek(const uint8_t* data, size_t size);
void webp_decode(const uint8_t* data, size_t size, const ImageInfo& info, const Plan& plan,
                 const ImageView<uint8_t>& region);

// JPEG 2000 (.jp2 files and raw .j2k codestreams) through OpenJPEG (jpeg2k.cc).
ImageInfo jpeg2k_peek(const uint8_t* data, size_t size);
void jpeg2k_decode(const uint8_t* data, size_t size, const ImageInfo& info, const Plan& plan,
                   const ImageView<uint8_t>& region);
void jpeg2k_decode(const uint8_t* data, size_t size, const ImageInfo& info, const Plan& plan,
                   const ImageView<uint16_t>& region);

// BMP (bmp.cc); 8-bit only.
ImageInfo bmp_peek(const uint8_t* data, size_t size);
void bmp_decode(const uint8_t* data, size_t size, const ImageInfo& info, const Plan& plan,
                const ImageView<uint8_t>& region);

// PBM/PGM/PPM, ASCII and binary (pnm.cc).
ImageInfo pnm_peek(const uint8_t* data, size_t size);
void pnm_decode(const uint8_t* data, size_t size, const ImageInfo& info, const Plan& plan,
                const ImageView<uint8_t>& region);
void pnm_decode(const uint8_t* data, size_t size, const ImageInfo& info, const Plan& plan,
                const ImageView<uint16_t>& region);

}  // namespace stoker::codecs::detail
