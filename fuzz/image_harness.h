// The image decode path of src/codecs/image_codec.h as the pipeline drives it: peek, then
// output_shape, then decode into memory of exactly that shape, with the decode parameters taken
// from the input's first bytes.
//
// Input: kParamBytes parameter bytes, then the encoded image.
//   p[0] bits 0-1 colour (RGB, BGR, GRAY, ANY)    bit 2  apply EXIF orientation
//        bits 3-4 scale_denom 1/2/4/8 (JPEG only) bit 5  16-bit output
//        bit 6    strided output with guard bytes  bit 7  region of interest
//   p[1..4] roi top, left, height, width as fractions (/255) of the full output
//   p[5] bit 0: a tiny max_pixels (exercises the limit path)
// run.sh builds the seed corpus by putting a few such prefixes in front of each seed image.
//
// Beyond sanitizer reports, the harness checks the contract of image_codec.h: peek throws only
// kDecode (or kUnsupported saying the build lacks the format's library) and returns a sane
// ImageInfo within the limits; output_shape never throws for parameters that are valid for that
// info; decode throws only kDecode (a corrupt file must never read as the caller's mistake) and
// writes nothing outside the output view.
#pragma once
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "codecs/image_codec.h"
#include "harness.h"

namespace stoker::fuzz {

constexpr size_t kParamBytes = 6;
// Small enough that one input costs milliseconds under ASan, large enough for real photos.
constexpr int64_t kFuzzMaxPixels = int64_t{1} << 21;
constexpr int64_t kTinyMaxPixels = 4096;
constexpr uint8_t kGuard = 0xA5;
// image_codec.h: channels 1..kMaxChannels (64: multi-channel TIFF and JPEG 2000); bits per
// sample 1..16, BMP's bits per pixel 1..32.
constexpr int kMaxChannels = 64;
constexpr int kMaxBitDepth = 32;

// Runs `f`; kDecode is an accepted outcome, and so is kUnsupported when it says that this build
// lacks the format's library (any other use of kUnsupported would turn a corrupt file into
// Python's NotImplementedError instead of stoker.DecodeError). Returns true when `f` returned.
template <typename F>
bool image_step(const char* step, F&& f) {
  try {
    f();
    return true;
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::kDecode) return false;
    if (e.kind() == ErrorKind::kUnsupported &&
        std::string(e.what()).find("built without") != std::string::npos)
      return false;
    finding(std::string(step) + " threw Error(" + kind_name(e.kind()) + "): " + e.what());
  } catch (const std::exception& e) {
    finding(std::string(step) + " threw a non-stoker exception: " + e.what());
  } catch (...) {
    finding(std::string(step) + " threw something that is not a std::exception");
  }
}

template <typename T>
void decode_checked(const uint8_t* data, size_t size, const codecs::ImageInfo& info,
                    const codecs::DecodeParams& params, const Shape& shape, bool strided) {
  const int64_t h = shape[0], w = shape[1], c = shape[2];
  // Strided: the output is a window one pixel in from every side of a larger image, with one
  // spare channel per pixel, all filled with guard bytes that must survive the decode.
  const int64_t ps = strided ? c + 1 : c;
  const int64_t rs = strided ? (w + 2) * ps : w * c;
  const int64_t rows = strided ? h + 2 : h;
  std::vector<T> buf(static_cast<size_t>(rows * rs));
  std::memset(buf.data(), kGuard, buf.size() * sizeof(T));
  ImageView<T> out(buf.data(), h, w, c);
  if (strided) {
    out.data = buf.data() + rs + ps;
    out.row_stride = rs;
    out.pixel_stride = ps;
  }
  image_step("decode", [&] { codecs::decode(data, size, info, params, out); });
  if (!strided) return;
  const T* base = buf.data();
  for (int64_t y = 0; y < rows; y++)
    for (int64_t x = 0; x < w + 2; x++)
      for (int64_t k = 0; k < ps; k++) {
        const bool inside = y >= 1 && y <= h && x >= 1 && x <= w && k < c;
        T g;
        std::memset(&g, kGuard, sizeof(T));
        if (!inside && base[y * rs + x * ps + k] != g)
          finding("decode wrote outside its output view (buffer row " + std::to_string(y) +
                  ", column " + std::to_string(x) + ", channel " + std::to_string(k) + ")");
      }
}

inline int fuzz_image(const uint8_t* input, size_t input_size) {
  if (input_size < kParamBytes) return 0;
  const uint8_t* p = input;
  const uint8_t* data = input + kParamBytes;
  const size_t size = input_size - kParamBytes;

  codecs::DecodeLimits limits;
  limits.max_pixels = (p[5] & 1) ? kTinyMaxPixels : kFuzzMaxPixels;
  codecs::ImageInfo info;
  if (!image_step("peek", [&] { info = codecs::peek(data, size, limits); }))
    return 0;
  if (info.format == codecs::ImageFormat::kUnknown || info.height <= 0 || info.width <= 0 ||
      info.height * info.width > limits.max_pixels || info.channels < 1 ||
      info.channels > kMaxChannels || info.orientation < 1 || info.orientation > 8 ||
      info.bit_depth < 1 || info.bit_depth > kMaxBitDepth)
    finding("peek returned an ImageInfo outside its contract: " + std::to_string(info.height) +
            "x" + std::to_string(info.width) + ", " + std::to_string(info.channels) +
            " channels, orientation " + std::to_string(info.orientation) + ", bit depth " +
            std::to_string(info.bit_depth));

  codecs::DecodeParams params;
  params.limits = limits;
  params.color = static_cast<codecs::ColorOut>(p[0] & 3);
  params.apply_orientation = (p[0] >> 2) & 1;
  if (info.format == codecs::ImageFormat::kJpeg) params.scale_denom = 1 << ((p[0] >> 3) & 3);
  const bool wide = (p[0] >> 5) & 1, strided = (p[0] >> 6) & 1, use_roi = (p[0] >> 7) & 1;

  Shape full;
  if (!expect_ok_or("output_shape (full image)", {},
                    [&] { full = codecs::output_shape(info, params); }))
    return 0;
  const int64_t d = params.scale_denom;
  const int64_t sh = (info.height + d - 1) / d, sw = (info.width + d - 1) / d;
  const bool swap = params.apply_orientation && info.orientation >= 5;
  if (full.size() != 3 || full[0] != (swap ? sw : sh) || full[1] != (swap ? sh : sw) ||
      full[2] < 1 || full[2] > kMaxChannels)
    finding("output_shape of the full image is not the scaled, oriented size");

  Shape shape = full;
  if (use_roi) {
    const int64_t H = full[0], W = full[1];
    const int64_t y0 = p[1] * (H - 1) / 255, x0 = p[2] * (W - 1) / 255;
    const int64_t h = 1 + p[3] * (H - y0 - 1) / 255, w = 1 + p[4] * (W - x0 - 1) / 255;
    params.roi = codecs::Roi{y0, x0, y0 + h, x0 + w};
    if (!expect_ok_or("output_shape (roi inside the image)", {},
                      [&] { shape = codecs::output_shape(info, params); }))
      return 0;
    if (shape[0] != h || shape[1] != w || shape[2] != full[2])
      finding("output_shape of a roi is not the roi's size");
  }
  if (wide)
    decode_checked<uint16_t>(data, size, info, params, shape, strided);
  else
    decode_checked<uint8_t>(data, size, info, params, shape, strided);
  return 0;
}

}  // namespace stoker::fuzz
