// CPU image decoding: one interface for every still-image format.
//
// Two steps, so that the pipeline can size and allocate its outputs before any pixel work:
//   ImageInfo info = peek(data, size, limits);          // header only, cheap
//   Shape shape = output_shape(info, params);           // HWC after orientation, scale and roi
//   ... allocate `shape` ...
//   decode(data, size, info, params, view_of_that_memory);
// All functions are thread-safe (no shared state); many threads may decode different images.
// Corrupt, truncated or unsupported data throws Error(kDecode, reason); bad params throw
// Error(kInvalidArgument, ...). Messages do not name the file: the caller adds that.
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/shape.h"

namespace stoker::codecs {

// TIFF, WebP and JPEG 2000 need libtiff, libwebp and OpenJPEG at build time; a build without
// one still detects the format, and peek/decode throw Error(kUnsupported, "stoker was built
// without ...") for it (format_built_in() tells beforehand). BMP and PNM are stoker's own.
enum class ImageFormat { kUnknown, kJpeg, kPng, kTiff, kWebp, kJpeg2000, kBmp, kPnm };

// By magic bytes only; kUnknown when no format matches.
ImageFormat detect_format(const uint8_t* data, size_t size);
// "jpeg", "png", "tiff", "webp", "jpeg2000", "bmp", "pnm", "unknown"
const char* format_name(ImageFormat format);
// Whether this build decodes `format` (false for kUnknown, and for TIFF/WebP/JPEG 2000 when
// their library was not found at build time).
bool format_built_in(ImageFormat format);

// Most channels an image may have (multi-channel TIFF and JPEG 2000 with ColorOut::kAny).
constexpr int kMaxChannels = 64;

// Channels of the output. kGray from colour uses ITU-R 601 luma with Pillow's rounding
// (convert('L')); kAny keeps the file's own channels: gray 1, gray+alpha 2, RGB 3, RGBA 4
// (JPEG CMYK/YCCK give RGB 3, palettes RGB 3), or up to kMaxChannels for multi-channel TIFF
// and JPEG 2000. Alpha is dropped (not composited) for kRGB/kBGR/kGray; of a multi-channel
// image (5 or more), kRGB/kBGR/kGray use the first three channels.
enum class ColorOut { kRGB, kBGR, kGray, kAny };

// Guards against hostile files; checked by peek and again by decode before any big allocation.
struct DecodeLimits {
  int64_t max_pixels = 128'000'000;    // height * width as stored
  int64_t max_file_bytes = 1ll << 31;  // size of the encoded data
};

struct ImageInfo {
  ImageFormat format = ImageFormat::kUnknown;
  int64_t height = 0, width = 0;  // as stored (before orientation and scaling)
  int channels = 0;               // what ColorOut::kAny produces (1..kMaxChannels)
  int bit_depth = 8;              // bits per sample in the file (PNG/TIFF 1..16, JPEG 8,
                                  // JPEG 2000 1..16, PNM 1..16, BMP 1..32 per pixel)
  int orientation = 1;            // EXIF orientation 1..8; 1 when absent or invalid
};

// Reads the header only. Throws kDecode for data that is not a supported image, is over the
// limits, or whose header is corrupt.
ImageInfo peek(const uint8_t* data, size_t size, const DecodeLimits& limits = {});

// Region of interest in OUTPUT coordinates (after orientation and scaling); half-open
// [y0, y1) x [x0, x1). y1/x1 = -1 mean "to the end".
struct Roi {
  int64_t y0 = 0, x0 = 0, y1 = -1, x1 = -1;
  bool is_full() const { return y0 == 0 && x0 == 0 && y1 < 0 && x1 < 0; }
};

struct DecodeParams {
  ColorOut color = ColorOut::kRGB;
  bool apply_orientation = true;  // rotate/flip as the EXIF orientation says
  // DCT-domain downscaling by 1/scale_denom (1, 2, 4 or 8), JPEG only: output size is
  // ceil(stored / scale_denom). Any other value, or a non-JPEG with scale_denom != 1, is an
  // invalid argument.
  int scale_denom = 1;
  // JPEG only: libjpeg's fast integer IDCT (JDCT_IFAST), less exact; DALI's use_fast_idct.
  bool fast_idct = false;
  Roi roi;
  DecodeLimits limits;
};

// Output shape {H, W, C} after orientation, scaling and roi; channels from `color` and `info`.
// Throws kInvalidArgument for a roi outside the image or an unsupported scale_denom.
Shape output_shape(const ImageInfo& info, const DecodeParams& params);

// Decodes into `out`, whose height/width/channels must equal output_shape(info, params). `out`
// may be strided (a window of a larger image) but channels must be contiguous
// (pixel_stride >= channels). `info` must come from peek() of the same data.
void decode(const uint8_t* data, size_t size, const ImageInfo& info, const DecodeParams& params,
            const ImageView<uint8_t>& out);
// 16-bit output: 16-bit PNG, TIFF, JPEG 2000 and PNM samples kept exact; other depths scaled
// to the full range, round(v * 65535 / (2^bits - 1)) (8-bit: v * 257; PNM: by its maxval).
// The 8-bit output of deeper samples is round(v * 255 / max) likewise.
void decode(const uint8_t* data, size_t size, const ImageInfo& info, const DecodeParams& params,
            const ImageView<uint16_t>& out);

}  // namespace stoker::codecs
