// Format dispatch, limits, roi/orientation planning and the oriented output view. The format
// decoders (jpeg.cc, png.cc, tiff.cc, webp.cc, jpeg2k.cc, bmp.cc, pnm.cc) only decode a stored-orientation region; everything geometric
// that is common to all formats lives here, once.
#include "codecs/image_codec.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <string>
#include <vector>

#include "codecs/image_codec_detail.h"
#include "core/error.h"

namespace stoker::codecs {

using detail::Plan;

namespace {

std::string dims(int64_t h, int64_t w) {
  return std::to_string(h) + "x" + std::to_string(w) + " (HxW)";
}

void check_file_size(size_t size, const DecodeLimits& limits) {
  if (static_cast<uint64_t>(size) > static_cast<uint64_t>(limits.max_file_bytes))
    fail(ErrorKind::kDecode, "encoded image is " + std::to_string(size) +
                                 " bytes, over the limit of " + std::to_string(limits.max_file_bytes) +
                                 " bytes; raise the `max_file_bytes` argument to allow it");
}

void check_pixels(const ImageInfo& info, const DecodeLimits& limits) {
  if (info.height <= 0 || info.width <= 0)
    fail(ErrorKind::kDecode, std::string(format_name(info.format)) + " image has an empty size " +
                                 dims(info.height, info.width));
  // Both factors are < 2^32 for every supported format, so the unsigned product cannot overflow.
  const uint64_t pixels = static_cast<uint64_t>(info.height) * static_cast<uint64_t>(info.width);
  if (pixels > static_cast<uint64_t>(std::max<int64_t>(limits.max_pixels, 0)))
    fail(ErrorKind::kDecode, "image is " + dims(info.height, info.width) + " = " +
                                 std::to_string(pixels) + " pixels, over the limit of " +
                                 std::to_string(limits.max_pixels) +
                                 " pixels; raise the `max_pixels` argument to allow it");
}

int out_channels(const ImageInfo& info, ColorOut color) {
  switch (color) {
    case ColorOut::kRGB:
    case ColorOut::kBGR: return 3;
    case ColorOut::kGray: return 1;
    case ColorOut::kAny: return info.channels;
  }
  fail(ErrorKind::kInvalidArgument, "unknown ColorOut value " + std::to_string(static_cast<int>(color)));
}

// The caller's output seen in stored orientation: region pixel (ry, rx) is the output pixel the
// EXIF orientation sends it to. Strides may be negative, and swap for orientations 5..8, so
// decoders write the oriented image straight into the output with no temporary copy.
template <typename T>
ImageView<T> stored_view(const ImageView<T>& out, int orientation) {
  const int64_t rs = out.row_stride, ps = out.pixel_stride, oh = out.height, ow = out.width;
  const bool swap = orientation >= 5;
  ImageView<T> v = out;
  v.height = swap ? ow : oh;
  v.width = swap ? oh : ow;
  switch (orientation) {
    default:
    case 1: break;
    case 2: v.data = out.at(0, ow - 1); v.row_stride = rs; v.pixel_stride = -ps; break;
    case 3: v.data = out.at(oh - 1, ow - 1); v.row_stride = -rs; v.pixel_stride = -ps; break;
    case 4: v.data = out.at(oh - 1, 0); v.row_stride = -rs; v.pixel_stride = ps; break;
    case 5: v.data = out.at(0, 0); v.row_stride = ps; v.pixel_stride = rs; break;
    case 6: v.data = out.at(0, ow - 1); v.row_stride = -ps; v.pixel_stride = rs; break;
    case 7: v.data = out.at(oh - 1, ow - 1); v.row_stride = -ps; v.pixel_stride = -rs; break;
    case 8: v.data = out.at(oh - 1, 0); v.row_stride = ps; v.pixel_stride = -rs; break;
  }
  return v;
}

template <typename T>
void check_out(const ImageView<T>& out, const Plan& plan) {
  if (out.data == nullptr)
    fail(ErrorKind::kInvalidArgument, "decode: output view has no memory (data is null)");
  if (out.height != plan.out_h || out.width != plan.out_w || out.channels != plan.channels)
    fail(ErrorKind::kInvalidArgument,
         "decode: output view is " + std::to_string(out.height) + "x" + std::to_string(out.width) +
             "x" + std::to_string(out.channels) + " but output_shape() is " +
             std::to_string(plan.out_h) + "x" + std::to_string(plan.out_w) + "x" +
             std::to_string(plan.channels) + "; allocate the shape output_shape() returns");
  if (out.pixel_stride < out.channels || out.row_stride < out.width * out.pixel_stride)
    fail(ErrorKind::kInvalidArgument, "decode: output view strides overlap (pixel_stride " +
                                          std::to_string(out.pixel_stride) + ", row_stride " +
                                          std::to_string(out.row_stride) + ")");
}

void decode_region(const uint8_t* data, size_t size, const ImageInfo& info, const Plan& plan,
                   const ImageView<uint8_t>& region) {
  switch (info.format) {
    case ImageFormat::kJpeg: return detail::jpeg_decode(data, size, info, plan, region);
    case ImageFormat::kPng: return detail::png_decode(data, size, info, plan, region);
    case ImageFormat::kTiff: return detail::tiff_decode(data, size, info, plan, region);
    case ImageFormat::kWebp: return detail::webp_decode(data, size, info, plan, region);
    case ImageFormat::kJpeg2000: return detail::jpeg2k_decode(data, size, info, plan, region);
    case ImageFormat::kBmp: return detail::bmp_decode(data, size, info, plan, region);
    case ImageFormat::kPnm: return detail::pnm_decode(data, size, info, plan, region);
    default: break;
  }
  fail(ErrorKind::kInvalidArgument, "decode: ImageInfo has no known format; get it from peek()");
}

void decode_region(const uint8_t* data, size_t size, const ImageInfo& info, const Plan& plan,
                   const ImageView<uint16_t>& region) {
  switch (info.format) {
    case ImageFormat::kPng: return detail::png_decode(data, size, info, plan, region);
    case ImageFormat::kTiff: return detail::tiff_decode(data, size, info, plan, region);
    case ImageFormat::kJpeg2000: return detail::jpeg2k_decode(data, size, info, plan, region);
    case ImageFormat::kPnm: return detail::pnm_decode(data, size, info, plan, region);
    case ImageFormat::kJpeg:
    case ImageFormat::kWebp:
    case ImageFormat::kBmp: {
      // 8-bit formats: decode 8-bit, widen exactly (v * 257 maps 0..255 onto 0..65535).
      std::vector<uint8_t> tmp(static_cast<size_t>(region.height * region.width * region.channels));
      ImageView<uint8_t> t8(tmp.data(), region.height, region.width, region.channels);
      decode_region(data, size, info, plan, t8);
      for (int64_t y = 0; y < region.height; y++) {
        const uint8_t* s = t8.row(y);
        uint16_t* d = region.row(y);
        for (int64_t x = 0; x < region.width; x++, d += region.pixel_stride, s += region.channels)
          for (int64_t k = 0; k < region.channels; k++) d[k] = static_cast<uint16_t>(s[k] * 257);
      }
      return;
    }
    default: break;
  }
  fail(ErrorKind::kInvalidArgument, "decode: ImageInfo has no known format; get it from peek()");
}

template <typename T>
void decode_any(const uint8_t* data, size_t size, const ImageInfo& info, const DecodeParams& params,
                const ImageView<T>& out) {
  check_file_size(size, params.limits);
  check_pixels(info, params.limits);
  Plan plan = detail::make_plan(info, params);
  check_out(out, plan);
  decode_region(data, size, info, plan, stored_view(out, plan.orientation));
}

}  // namespace

ImageFormat detect_format(const uint8_t* data, size_t size) {
  static const uint8_t kPngSig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  static const uint8_t kJp2Sig[12] = {0, 0, 0, 0x0c, 'j', 'P', ' ', ' ', 0x0d, 0x0a, 0x87, 0x0a};
  static const uint8_t kJ2kSig[4] = {0xff, 0x4f, 0xff, 0x51};  // SOC, then SIZ
  if (data == nullptr) return ImageFormat::kUnknown;
  // JPEG: the SOI marker only, as libjpeg itself requires; what follows may be garbage that
  // libjpeg skips (with a warning) on its way to the next marker.
  if (size >= 2 && data[0] == 0xFF && data[1] == 0xD8) return ImageFormat::kJpeg;
  if (size >= 8 && std::memcmp(data, kPngSig, 8) == 0) return ImageFormat::kPng;
  // TIFF: byte order, then 42 (classic) or 43 (BigTIFF).
  if (size >= 4 && ((data[0] == 'I' && data[1] == 'I' && (data[2] == 42 || data[2] == 43) && data[3] == 0) ||
                    (data[0] == 'M' && data[1] == 'M' && data[2] == 0 && (data[3] == 42 || data[3] == 43))))
    return ImageFormat::kTiff;
  if (size >= 12 && std::memcmp(data, "RIFF", 4) == 0 && std::memcmp(data + 8, "WEBP", 4) == 0)
    return ImageFormat::kWebp;
  if ((size >= 12 && std::memcmp(data, kJp2Sig, 12) == 0) ||
      (size >= 4 && std::memcmp(data, kJ2kSig, 4) == 0))
    return ImageFormat::kJpeg2000;
  if (size >= 2 && data[0] == 'B' && data[1] == 'M') return ImageFormat::kBmp;
  // PNM: P1..P6 and a whitespace (or a comment), as netpbm's own magic check.
  if (size >= 3 && data[0] == 'P' && data[1] >= '1' && data[1] <= '6' &&
      (std::isspace(data[2]) || data[2] == '#'))
    return ImageFormat::kPnm;
  return ImageFormat::kUnknown;
}

const char* format_name(ImageFormat format) {
  switch (format) {
    case ImageFormat::kJpeg: return "jpeg";
    case ImageFormat::kPng: return "png";
    case ImageFormat::kTiff: return "tiff";
    case ImageFormat::kWebp: return "webp";
    case ImageFormat::kJpeg2000: return "jpeg2000";
    case ImageFormat::kBmp: return "bmp";
    case ImageFormat::kPnm: return "pnm";
    default: return "unknown";
  }
}

bool format_built_in(ImageFormat format) {
  switch (format) {
    case ImageFormat::kJpeg:
    case ImageFormat::kPng:
    case ImageFormat::kBmp:
    case ImageFormat::kPnm: return true;
    case ImageFormat::kTiff: return detail::tiff_built_in();
    case ImageFormat::kWebp: return detail::webp_built_in();
    case ImageFormat::kJpeg2000: return detail::jpeg2k_built_in();
    default: return false;
  }
}

ImageInfo peek(const uint8_t* data, size_t size, const DecodeLimits& limits) {
  check_file_size(size, limits);
  ImageInfo info;
  switch (detect_format(data, size)) {
    case ImageFormat::kJpeg: info = detail::jpeg_peek(data, size); break;
    case ImageFormat::kPng: info = detail::png_peek(data, size); break;
    case ImageFormat::kTiff: info = detail::tiff_peek(data, size); break;
    case ImageFormat::kWebp: info = detail::webp_peek(data, size); break;
    case ImageFormat::kJpeg2000: info = detail::jpeg2k_peek(data, size); break;
    case ImageFormat::kBmp: info = detail::bmp_peek(data, size); break;
    case ImageFormat::kPnm: info = detail::pnm_peek(data, size); break;
    default: {
      std::string head;
      for (size_t i = 0; i < std::min<size_t>(size, 8); i++) {
        static const char* hex = "0123456789abcdef";
        head += hex[data[i] >> 4];
        head += hex[data[i] & 15];
        head += ' ';
      }
      fail(ErrorKind::kDecode,
           size == 0 ? std::string("empty data (0 bytes) is not an image")
                     : "unknown image format (first bytes: " + head +
                           "); supported: jpeg, png, tiff, webp, jpeg2000 (.jp2, .j2k), bmp, pnm "
                           "(.pbm, .pgm, .ppm)");
    }
  }
  check_pixels(info, limits);
  return info;
}

Shape output_shape(const ImageInfo& info, const DecodeParams& params) {
  Plan p = detail::make_plan(info, params);
  return {p.out_h, p.out_w, p.channels};
}

void decode(const uint8_t* data, size_t size, const ImageInfo& info, const DecodeParams& params,
            const ImageView<uint8_t>& out) {
  decode_any(data, size, info, params, out);
}

void decode(const uint8_t* data, size_t size, const ImageInfo& info, const DecodeParams& params,
            const ImageView<uint16_t>& out) {
  decode_any(data, size, info, params, out);
}

namespace detail {

Plan make_plan(const ImageInfo& info, const DecodeParams& params) {
  Plan p;
  if (std::strcmp(format_name(info.format), "unknown") == 0)
    fail(ErrorKind::kInvalidArgument, "ImageInfo has no known format; get it from peek()");
  if (info.height <= 0 || info.width <= 0 || info.channels < 1 || info.channels > kMaxChannels)
    fail(ErrorKind::kInvalidArgument, "ImageInfo is not valid (" + dims(info.height, info.width) +
                                          ", " + std::to_string(info.channels) +
                                          " channels); get it from peek()");
  int d = params.scale_denom;
  if (d != 1 && d != 2 && d != 4 && d != 8)
    fail(ErrorKind::kInvalidArgument,
         "scale_denom must be 1, 2, 4 or 8, got " + std::to_string(d));
  if (d != 1 && info.format != ImageFormat::kJpeg)
    fail(ErrorKind::kInvalidArgument, "scale_denom=" + std::to_string(d) +
                                          " is supported for JPEG only, but the image is " +
                                          format_name(info.format) + "; use scale_denom=1");
  p.scale_denom = d;
  p.fast_idct = params.fast_idct;
  p.limits = params.limits;
  p.scaled_h = (info.height + d - 1) / d;
  p.scaled_w = (info.width + d - 1) / d;
  p.orientation = params.apply_orientation && info.orientation >= 1 && info.orientation <= 8
                      ? info.orientation : 1;
  p.color = params.color;
  p.channels = out_channels(info, params.color);
  bool swap = p.orientation >= 5;
  const int64_t oh = swap ? p.scaled_w : p.scaled_h, ow = swap ? p.scaled_h : p.scaled_w;
  const Roi& r = params.roi;
  int64_t y0 = r.y0, x0 = r.x0, y1 = r.y1 < 0 ? oh : r.y1, x1 = r.x1 < 0 ? ow : r.x1;
  if (y0 < 0 || x0 < 0 || y1 > oh || x1 > ow || y0 >= y1 || x0 >= x1 || r.y1 < -1 || r.x1 < -1)
    fail(ErrorKind::kInvalidArgument,
         "roi [y0=" + std::to_string(r.y0) + ", x0=" + std::to_string(r.x0) + ", y1=" +
             std::to_string(r.y1) + ", x1=" + std::to_string(r.x1) +
             ") is empty or outside the " + dims(oh, ow) +
             " image (after orientation and scaling); need 0 <= y0 < y1 <= height and "
             "0 <= x0 < x1 <= width (-1 for y1/x1 means to the end)");
  p.out_h = y1 - y0;
  p.out_w = x1 - x0;
  const int64_t sh = p.scaled_h, sw = p.scaled_w;
  int64_t ry0, ry1, rx0, rx1;  // stored-space rectangle
  switch (p.orientation) {
    default:
    case 1: ry0 = y0; ry1 = y1; rx0 = x0; rx1 = x1; break;
    case 2: ry0 = y0; ry1 = y1; rx0 = sw - x1; rx1 = sw - x0; break;
    case 3: ry0 = sh - y1; ry1 = sh - y0; rx0 = sw - x1; rx1 = sw - x0; break;
    case 4: ry0 = sh - y1; ry1 = sh - y0; rx0 = x0; rx1 = x1; break;
    case 5: ry0 = x0; ry1 = x1; rx0 = y0; rx1 = y1; break;
    case 6: ry0 = sh - x1; ry1 = sh - x0; rx0 = y0; rx1 = y1; break;
    case 7: ry0 = sh - x1; ry1 = sh - x0; rx0 = sw - y1; rx1 = sw - y0; break;
    case 8: ry0 = x0; ry1 = x1; rx0 = sw - y1; rx1 = sw - y0; break;
  }
  p.y0 = ry0;
  p.x0 = rx0;
  p.h = ry1 - ry0;
  p.w = rx1 - rx0;
  return p;
}

int exif_orientation(const uint8_t* data, size_t size) {
  if (data == nullptr || size < 8) return 1;
  bool le;
  if (data[0] == 'I' && data[1] == 'I') le = true;
  else if (data[0] == 'M' && data[1] == 'M') le = false;
  else return 1;
  auto u16 = [&](size_t off) -> uint32_t {
    return le ? data[off] | (data[off + 1] << 8) : (data[off] << 8) | data[off + 1];
  };
  auto u32 = [&](size_t off) -> uint64_t {
    return le ? (uint64_t{u16(off + 2)} << 16) | u16(off) : (uint64_t{u16(off)} << 16) | u16(off + 2);
  };
  if (u16(2) != 42) return 1;
  uint64_t ifd = u32(4);
  if (ifd + 2 > size) return 1;
  uint32_t n = u16(ifd);
  for (uint32_t i = 0; i < n; i++) {
    uint64_t e = ifd + 2 + 12ull * i;
    if (e + 12 > size) break;
    if (u16(e) != 0x0112) continue;
    uint32_t type = u16(e + 2);
    uint64_t v;
    if (type == 3) v = u16(e + 8);        // SHORT, as the standard says
    else if (type == 4) v = u32(e + 8);   // LONG, seen from some writers
    else return 1;
    return v >= 1 && v <= 8 ? static_cast<int>(v) : 1;
  }
  return 1;
}

template <typename T>
void convert_row(const T* src, int src_c, int64_t w, ColorOut color, T* dst, int64_t ps) {
  if (color == ColorOut::kAny) {
    if (ps == src_c) {
      std::memcpy(dst, src, static_cast<size_t>(w * src_c) * sizeof(T));
      return;
    }
    for (int64_t x = 0; x < w; x++, src += src_c, dst += ps)
      for (int k = 0; k < src_c; k++) dst[k] = src[k];
    return;
  }
  const bool gray_src = src_c <= 2;
  switch (color) {
    case ColorOut::kRGB:
    case ColorOut::kBGR: {
      const int r = color == ColorOut::kRGB ? 0 : 2, b = 2 - r;
      if (gray_src) {
        for (int64_t x = 0; x < w; x++, src += src_c, dst += ps) dst[0] = dst[1] = dst[2] = src[0];
      } else if (src_c == 3 && ps == 3 && r == 0) {
        std::memcpy(dst, src, static_cast<size_t>(w * 3) * sizeof(T));
      } else {
        for (int64_t x = 0; x < w; x++, src += src_c, dst += ps) {
          dst[r] = src[0];
          dst[1] = src[1];
          dst[b] = src[2];
        }
      }
      return;
    }
    case ColorOut::kGray:
      if (gray_src) {
        for (int64_t x = 0; x < w; x++, src += src_c, dst += ps) dst[0] = src[0];
      } else {
        for (int64_t x = 0; x < w; x++, src += src_c, dst += ps)
          dst[0] = sizeof(T) == 1 ? luma(src[0], src[1], src[2]) : luma16(src[0], src[1], src[2]);
      }
      return;
    default: return;
  }
}

template <typename T>
void scale_convert_row(const uint16_t* src, int src_c, int64_t w, uint32_t maxv, ColorOut color,
                       T* dst, int64_t ps, std::vector<T>& tmp) {
  const size_t n = static_cast<size_t>(w) * static_cast<size_t>(src_c);
  if (tmp.size() < n) tmp.resize(n);
  constexpr uint32_t tmax = sizeof(T) == 1 ? 255u : 65535u;
  if (maxv == tmax) {
    for (size_t k = 0; k < n; k++) tmp[k] = static_cast<T>(src[k]);
  } else if (maxv == 255 && tmax == 65535) {
    for (size_t k = 0; k < n; k++) tmp[k] = static_cast<T>(src[k] * 257u);
  } else {
    for (size_t k = 0; k < n; k++) tmp[k] = scale_sample<T>(src[k], maxv);
  }
  convert_row(tmp.data(), src_c, w, color, dst, ps);
}

template void scale_convert_row<uint8_t>(const uint16_t*, int, int64_t, uint32_t, ColorOut,
                                         uint8_t*, int64_t, std::vector<uint8_t>&);
template void scale_convert_row<uint16_t>(const uint16_t*, int, int64_t, uint32_t, ColorOut,
                                          uint16_t*, int64_t, std::vector<uint16_t>&);

void fail_built_without(const char* library, const char* format, const char* package) {
  fail(ErrorKind::kUnsupported, std::string("stoker was built without ") + library + ": " + format +
                                    " images cannot be decoded; install " + package +
                                    " and rebuild stoker");
}

template void convert_row<uint8_t>(const uint8_t*, int, int64_t, ColorOut, uint8_t*, int64_t);
template void convert_row<uint16_t>(const uint16_t*, int, int64_t, ColorOut, uint16_t*, int64_t);

}  // namespace detail
}  // namespace stoker::codecs
