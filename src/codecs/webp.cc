// WebP through libwebp (lossy VP8, lossless VP8L, with or without alpha; still images only).
//
// Pixels: libwebp's default decode (fancy chroma upsampling, non-premultiplied RGB/RGBA), the
// same as Pillow and dwebp give. Images with alpha have 4 channels for ColorOut::kAny.
// Orientation: the EXIF chunk of an extended (VP8X) file, when it has one.
// Roi: libwebp's cropping, widened by a few pixels (and to even offsets) so that the chroma
// upsampler sees the same neighbours as in the full decode; the kept pixels then equal it.
// Animated files are refused (decode their frames with a WebP demuxer instead).
// libwebp reports errors as status codes; nothing longjmps and nothing is printed.
#include "codecs/image_codec_detail.h"
#include "core/error.h"

#ifdef STOKER_WITH_WEBP
#include <webp/decode.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>
#endif

namespace stoker::codecs::detail {

#ifndef STOKER_WITH_WEBP

bool webp_built_in() { return false; }

ImageInfo webp_peek(const uint8_t*, size_t) { fail_built_without("libwebp", "WebP", "libwebp-dev"); }
void webp_decode(const uint8_t*, size_t, const ImageInfo&, const Plan&, const ImageView<uint8_t>&) {
  fail_built_without("libwebp", "WebP", "libwebp-dev");
}

#else  // STOKER_WITH_WEBP

bool webp_built_in() { return true; }

namespace {

const char* status_text(VP8StatusCode s) {
  switch (s) {
    case VP8_STATUS_OUT_OF_MEMORY: return "out of memory";
    case VP8_STATUS_INVALID_PARAM: return "invalid parameter";
    case VP8_STATUS_BITSTREAM_ERROR: return "bitstream error";
    case VP8_STATUS_UNSUPPORTED_FEATURE: return "unsupported feature";
    case VP8_STATUS_SUSPENDED: return "suspended";
    case VP8_STATUS_USER_ABORT: return "aborted";
    case VP8_STATUS_NOT_ENOUGH_DATA: return "premature end of data: the file is truncated";
    default: return "unknown error";
  }
}

[[noreturn]] void fail_status(VP8StatusCode s) {
  if (s == VP8_STATUS_OUT_OF_MEMORY) fail(ErrorKind::kOutOfMemory, "libwebp ran out of memory");
  fail(ErrorKind::kDecode, std::string(s == VP8_STATUS_UNSUPPORTED_FEATURE ? "unsupported WebP: "
                                                                           : "corrupt WebP: ") +
                               status_text(s));
}

uint32_t le32(const uint8_t* p) {
  return uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24);
}

// The EXIF orientation of an extended file's EXIF chunk; 1 when there is none.
int webp_orientation(const uint8_t* data, size_t size) {
  if (size < 30 || std::memcmp(data + 12, "VP8X", 4) != 0 || !(data[20] & 0x08)) return 1;
  const uint64_t riff_end = std::min<uint64_t>(size, uint64_t{le32(data + 4)} + 8);
  uint64_t pos = 12;
  while (pos + 8 <= riff_end) {
    const uint64_t len = le32(data + pos + 4);
    if (len > riff_end - pos - 8) return 1;
    if (std::memcmp(data + pos, "EXIF", 4) == 0) {
      const uint8_t* e = data + pos + 8;
      size_t n = static_cast<size_t>(len);
      if (n >= 6 && std::memcmp(e, "Exif\0\0", 6) == 0) {  // some writers keep JPEG's prefix
        e += 6;
        n -= 6;
      }
      return exif_orientation(e, n);
    }
    pos += 8 + len + (len & 1);  // chunks are padded to an even size
  }
  return 1;
}

}  // namespace

ImageInfo webp_peek(const uint8_t* data, size_t size) {
  WebPBitstreamFeatures f;
  const VP8StatusCode s = WebPGetFeatures(data, size, &f);
  if (s != VP8_STATUS_OK) fail_status(s);
  if (f.has_animation)
    fail(ErrorKind::kDecode, "unsupported WebP: the file is animated; stoker decodes still WebP images");
  ImageInfo info;
  info.format = ImageFormat::kWebp;
  info.height = f.height;
  info.width = f.width;
  info.channels = f.has_alpha ? 4 : 3;
  info.bit_depth = 8;
  info.orientation = webp_orientation(data, size);
  return info;
}

void webp_decode(const uint8_t* data, size_t size, const ImageInfo& info, const Plan& plan,
                 const ImageView<uint8_t>& out) {
  WebPDecoderConfig cfg;
  if (!WebPInitDecoderConfig(&cfg)) fail(ErrorKind::kInternal, "libwebp: header and library versions differ");
  VP8StatusCode s = WebPGetFeatures(data, size, &cfg.input);
  if (s != VP8_STATUS_OK) fail_status(s);
  const int c = cfg.input.has_alpha ? 4 : 3;
  if (cfg.input.height != info.height || cfg.input.width != info.width || c != info.channels)
    fail(ErrorKind::kInvalidArgument, "webp decode: the data does not match the ImageInfo given; "
                                      "pass the ImageInfo from peek() of the same data");
  cfg.output.colorspace = c == 4 ? MODE_RGBA : MODE_RGB;
  const bool full = plan.y0 == 0 && plan.x0 == 0 && plan.h == info.height && plan.w == info.width;
  // The decoded window: the roi plus a margin of 2 pixels, from even offsets.
  int64_t wy0 = 0, wx0 = 0, wh = info.height, ww = info.width;
  if (!full) {
    wy0 = std::max<int64_t>(0, plan.y0 - 2) & ~int64_t{1};
    wx0 = std::max<int64_t>(0, plan.x0 - 2) & ~int64_t{1};
    wh = std::min<int64_t>(info.height, plan.y0 + plan.h + 2) - wy0;
    ww = std::min<int64_t>(info.width, plan.x0 + plan.w + 2) - wx0;
    cfg.options.use_cropping = 1;
    cfg.options.crop_top = static_cast<int>(wy0);
    cfg.options.crop_left = static_cast<int>(wx0);
    cfg.options.crop_height = static_cast<int>(wh);
    cfg.options.crop_width = static_cast<int>(ww);
  }
  const bool same_color = plan.color == ColorOut::kAny || (plan.color == ColorOut::kRGB && c == 3);
  std::vector<uint8_t> tmp;
  WebPRGBABuffer& rgba = cfg.output.u.RGBA;
  cfg.output.is_external_memory = 1;
  if (full && same_color && out.pixel_stride == c && out.row_stride >= out.width * c) {
    // Straight into the caller's rows.
    rgba.rgba = out.data;
    rgba.stride = static_cast<int>(out.row_stride);
    rgba.size = static_cast<size_t>(out.row_stride) * (out.height - 1) + out.width * c;
  } else {
    tmp.resize(static_cast<size_t>(wh) * ww * c);
    rgba.rgba = tmp.data();
    rgba.stride = static_cast<int>(ww * c);
    rgba.size = tmp.size();
  }
  s = WebPDecode(data, size, &cfg);
  WebPFreeDecBuffer(&cfg.output);  // external memory: frees nothing of ours
  if (s != VP8_STATUS_OK) fail_status(s);
  if (tmp.empty()) return;
  for (int64_t y = 0; y < plan.h; y++) {
    const uint8_t* src = tmp.data() + (static_cast<size_t>(plan.y0 - wy0 + y) * ww + (plan.x0 - wx0)) * c;
    convert_row(src, c, plan.w, plan.color, out.row(y), out.pixel_stride);
  }
}

#endif  // STOKER_WITH_WEBP

}  // namespace stoker::codecs::detail
