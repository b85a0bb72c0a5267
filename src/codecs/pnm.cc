// PBM, PGM and PPM (netpbm P1..P6, ASCII and binary): stoker's own reader.
//
// Header: magic, width, height and (except for PBM) maxval, separated by whitespace, with
// '#' comments to the end of a line anywhere between them; binary rasters start after exactly
// one whitespace character. Only the first image of a multi-image file is read.
// Samples: maxval 1..65535; two bytes, big-endian, when maxval > 255. They are scaled to the
// output range by round(v * max / maxval) (exact for maxval 255 to 8-bit and 65535 to 16-bit),
// which is what Pillow does. PBM: 1 is black (0), 0 white (255 or 65535). PGM and PBM give one
// channel, PPM three. ASCII rasters may hold comments too; a sample above maxval is an error,
// and so is a raster that ends before the last row of the roi.
#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "codecs/image_codec_detail.h"
#include "core/error.h"

namespace stoker::codecs::detail {
namespace {

[[noreturn]] void corrupt(const std::string& what) { fail(ErrorKind::kDecode, "corrupt PNM: " + what); }

struct Header {
  int kind = 0;  // 1..6 as in the magic number P1..P6
  int64_t width = 0, height = 0;
  uint32_t maxval = 1;
  int channels = 1;
  size_t raster = 0;  // offset of the first sample
  bool ascii() const { return kind <= 3; }
};

// Reads whitespace-separated tokens, skipping '#' comments.
struct Reader {
  const uint8_t* data;
  size_t size, pos;

  void skip_space() {
    while (pos < size) {
      if (data[pos] == '#') {
        while (pos < size && data[pos] != '\n' && data[pos] != '\r') pos++;
      } else if (std::isspace(data[pos])) {
        pos++;
      } else {
        break;
      }
    }
  }
  // An unsigned decimal number; false at the end of the data. Throws on anything else.
  bool number(uint64_t* v, uint64_t max, const char* what) {
    skip_space();
    if (pos >= size) return false;
    if (!std::isdigit(data[pos]))
      corrupt(std::string("expected ") + what + " at byte " + std::to_string(pos) + ", found '" +
              (std::isprint(data[pos]) ? std::string(1, static_cast<char>(data[pos])) : "\\x" + std::to_string(data[pos])) + "'");
    uint64_t r = 0;
    while (pos < size && std::isdigit(data[pos])) {
      r = r * 10 + (data[pos++] - '0');
      if (r > max) corrupt(std::string(what) + " is larger than " + std::to_string(max));
    }
    *v = r;
    return true;
  }
};

Header parse(const uint8_t* data, size_t size) {
  if (size < 3 || data[0] != 'P' || data[1] < '1' || data[1] > '6') corrupt("no P1..P6 magic number");
  Header h;
  h.kind = data[1] - '0';
  h.channels = h.kind == 3 || h.kind == 6 ? 3 : 1;
  Reader r{data, size, 2};
  uint64_t w = 0, ht = 0, mv = 1;
  constexpr uint64_t kMaxSide = 0x7fffffff;
  if (!r.number(&w, kMaxSide, "the width") || !r.number(&ht, kMaxSide, "the height"))
    corrupt("the header ends before the image size; the file is truncated");
  if (h.kind != 1 && h.kind != 4) {
    if (!r.number(&mv, 65535, "maxval")) corrupt("the header ends before maxval; the file is truncated");
    if (mv == 0) corrupt("maxval is 0; it must be 1..65535");
  }
  if (w == 0 || ht == 0) corrupt("the size " + std::to_string(ht) + "x" + std::to_string(w) + " (HxW) is empty");
  h.width = static_cast<int64_t>(w);
  h.height = static_cast<int64_t>(ht);
  h.maxval = static_cast<uint32_t>(mv);
  if (!h.ascii()) {
    // Exactly one whitespace character ends the header of a binary file.
    if (r.pos >= size || !std::isspace(data[r.pos])) {
      if (r.pos >= size) corrupt("the file ends after its header; it is truncated");
      corrupt("no whitespace after the header");
    }
    r.pos++;
  }
  h.raster = r.pos;
  return h;
}

int bits_for(uint32_t maxval) {
  int b = 0;
  while ((uint64_t{1} << b) <= maxval) b++;
  return b;
}

template <typename T>
void decode_t(const uint8_t* data, size_t size, const ImageInfo& info, const Plan& plan,
              const ImageView<T>& out) {
  const Header h = parse(data, size);
  if (h.height != info.height || h.width != info.width || h.channels != info.channels)
    fail(ErrorKind::kInvalidArgument, "pnm decode: the data does not match the ImageInfo given; "
                                      "pass the ImageInfo from peek() of the same data");
  const int c = h.channels;
  const uint64_t W = static_cast<uint64_t>(h.width);
  const size_t n = static_cast<size_t>(plan.w) * c;
  std::vector<uint16_t> row(n);
  std::vector<T> tmp;
  const bool bitmap = h.kind == 1 || h.kind == 4;
  auto truncated = [&](int64_t y) {
    corrupt("the raster ends in row " + std::to_string(y) + " of " + std::to_string(h.height) +
            "; the file is truncated");
  };

  if (h.ascii()) {
    Reader r{data, size, h.raster};
    const uint64_t per_row = W * c;
    for (int64_t y = 0; y < plan.y0 + plan.h; y++) {
      const bool keep = y >= plan.y0;
      for (uint64_t i = 0; i < per_row; i++) {
        uint64_t v = 0;
        if (h.kind == 1) {  // P1: single digits, whitespace optional between them
          r.skip_space();
          if (r.pos >= size) truncated(y);
          const uint8_t ch = data[r.pos++];
          if (ch != '0' && ch != '1') corrupt("a PBM sample is '" + std::string(1, static_cast<char>(ch)) + "', not 0 or 1");
          v = ch == '1' ? 0 : 1;  // 1 is black
        } else {
          if (!r.number(&v, 65535, "a sample")) truncated(y);
          if (v > h.maxval)
            corrupt("sample " + std::to_string(v) + " in row " + std::to_string(y) +
                    " is larger than maxval " + std::to_string(h.maxval));
        }
        const uint64_t x = i / c;
        if (keep && x >= static_cast<uint64_t>(plan.x0) && x < static_cast<uint64_t>(plan.x0 + plan.w))
          row[(x - plan.x0) * c + i % c] = static_cast<uint16_t>(v);
      }
      if (keep) scale_convert_row(row.data(), c, plan.w, h.maxval, plan.color, out.row(y - plan.y0), out.pixel_stride, tmp);
    }
    return;
  }

  const uint64_t bytes_per_sample = h.maxval > 255 ? 2 : 1;
  const uint64_t stride = bitmap ? (W + 7) / 8 : W * c * bytes_per_sample;
  for (int64_t y = 0; y < plan.h; y++) {
    const int64_t fy = plan.y0 + y;
    const uint64_t start = h.raster + static_cast<uint64_t>(fy) * stride;
    const uint64_t need = bitmap ? (static_cast<uint64_t>(plan.x0 + plan.w) + 7) / 8
                                 : static_cast<uint64_t>(plan.x0 + plan.w) * c * bytes_per_sample;
    if (start > size || need > size - start) truncated(fy);
    const uint8_t* s = data + start;
    T* dst = out.row(y);
    if (!bitmap && bytes_per_sample == 1 && h.maxval == 255 && sizeof(T) == 1) {
      convert_row(reinterpret_cast<const T*>(s + plan.x0 * c), c, plan.w, plan.color, dst, out.pixel_stride);
      continue;
    }
    if (bitmap) {
      for (int64_t x = 0; x < plan.w; x++) {
        const int64_t sx = plan.x0 + x;
        row[x] = static_cast<uint16_t>(((s[sx >> 3] >> (7 - (sx & 7))) & 1) ^ 1);
      }
    } else if (bytes_per_sample == 1) {
      const uint8_t* p = s + plan.x0 * c;
      for (size_t k = 0; k < n; k++) row[k] = std::min<uint16_t>(p[k], static_cast<uint16_t>(h.maxval));
    } else {
      const uint8_t* p = s + plan.x0 * c * 2;
      for (size_t k = 0; k < n; k++)
        row[k] = std::min<uint16_t>(static_cast<uint16_t>((p[2 * k] << 8) | p[2 * k + 1]),
                                    static_cast<uint16_t>(h.maxval));
    }
    scale_convert_row(row.data(), c, plan.w, h.maxval, plan.color, dst, out.pixel_stride, tmp);
  }
}

}  // namespace

ImageInfo pnm_peek(const uint8_t* data, size_t size) {
  const Header h = parse(data, size);
  ImageInfo info;
  info.format = ImageFormat::kPnm;
  info.height = h.height;
  info.width = h.width;
  info.channels = h.channels;
  info.bit_depth = bits_for(h.maxval);
  info.orientation = 1;
  return info;
}

void pnm_decode(const uint8_t* data, size_t size, const ImageInfo& info, const Plan& plan,
                const ImageView<uint8_t>& region) {
  decode_t(data, size, info, plan, region);
}

void pnm_decode(const uint8_t* data, size_t size, const ImageInfo& info, const Plan& plan,
                const ImageView<uint16_t>& region) {
  decode_t(data, size, info, plan, region);
}

}  // namespace stoker::codecs::detail
