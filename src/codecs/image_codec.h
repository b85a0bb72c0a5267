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

enum class ImageFormat { kUnknown, kJpeg, kPng };  // later: tiff, webp, jpeg2000, bmp, pnm

// By magic bytes only; kUnknown when no format matches.
ImageFormat detect_format(const uint8_t* data, size_t size);
const char* format_name(ImageFormat format);  // "jpeg", "png", "unknown"

// Channels of the output. kGray from colour uses ITU-R 601 luma with Pillow's rounding
// (convert('L')); kAny keeps the file's own channels: gray 1, gray+alpha 2, RGB 3, RGBA 4
// (JPEG CMYK/YCCK give RGB 3). Alpha is dropped (not composited) for kRGB/kBGR/kGray.
enum class ColorOut { kRGB, kBGR, kGray, kAny };

// Guards against hostile files; checked by peek and again by decode before any big allocation.
struct DecodeLimits {
  int64_t max_pixels = 128'000'000;    // height * width as stored
  int64_t max_file_bytes = 1ll << 31;  // size of the encoded data
};

struct ImageInfo {
  ImageFormat format = ImageFormat::kUnknown;
  int64_t height = 0, width = 0;  // as stored (before orientation and scaling)
  int channels = 0;               // what ColorOut::kAny produces
  int bit_depth = 8;              // bits per sample in the file (PNG 1..16, JPEG 8)
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
// 16-bit output: 16-bit PNG samples kept exact; 8-bit sources scaled by 257 (255 -> 65535).
void decode(const uint8_t* data, size_t size, const ImageInfo& info, const DecodeParams& params,
            const ImageView<uint16_t>& out);

}  // namespace stoker::codecs
