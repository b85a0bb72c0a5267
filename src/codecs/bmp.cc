// BMP (Windows and OS/2 bitmaps): stoker's own reader; the format is a header and raw rows.
//
// Headers: OS/2 core (12 bytes), BITMAPINFOHEADER (40) and its V2/V3/V4/V5 extensions (52, 56,
// 108, 124), OS/2 2.x (16..64, without its Huffman/RLE24 modes). Pixels: 1, 2, 4 and 8 bits
// through a palette, RLE8 and RLE4, 16 bits (5-5-5, or bit fields), 24 bits, 32 bits (BGRX, or
// bit fields with an alpha mask). Rows bottom-up, or top-down for a negative height.
// Channels (ColorOut::kAny): a palette of grays only gives 1 (as OpenCV and Pillow's "L"/"1"),
// any other palette 3; 32-bit bit fields with a non-zero alpha mask give RGBA (4), as in
// Pillow; everything else RGB (3). A field of n bits is scaled to 8 bits as round(v*255/(2^n-1)).
// RLE: pixels that the runs skip (delta and end-of-line codes) are palette index 0, as Pillow.
// Embedded JPEG/PNG (compression 4/5) are refused.
// Hostile files: sizes come from 32-bit fields and are checked against the data before use;
// the caller's max_pixels limit is checked on the header (peek) before any allocation.
// Missing pixel data is an error when a row of the roi needs it.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "codecs/image_codec_detail.h"
#include "core/error.h"

namespace stoker::codecs::detail {
namespace {

enum Compression : uint32_t { kRgb = 0, kRle8 = 1, kRle4 = 2, kBitfields = 3, kJpeg = 4, kPngC = 5, kAlphaBitfields = 6 };

uint32_t le16(const uint8_t* p) { return uint32_t{p[0]} | (uint32_t{p[1]} << 8); }
uint32_t le32(const uint8_t* p) { return le16(p) | (le16(p + 2) << 16); }

[[noreturn]] void corrupt(const std::string& what) { fail(ErrorKind::kDecode, "corrupt BMP: " + what); }
[[noreturn]] void unsupported(const std::string& what) { fail(ErrorKind::kDecode, "unsupported BMP: " + what); }

struct Field {
  uint32_t mask = 0;
  int shift = 0, bits = 0;
  uint8_t get(uint32_t px) const {
    if (bits == 0) return 0;
    const uint32_t v = (px & mask) >> shift;
    return bits == 8 ? static_cast<uint8_t>(v) : scale_sample<uint8_t>(v, (1u << bits) - 1);
  }
};

Field make_field(uint32_t mask) {
  Field f;
  f.mask = mask;
  if (mask == 0) return f;
  while (!((mask >> f.shift) & 1)) f.shift++;
  uint32_t m = mask >> f.shift;
  while (m & 1) {
    f.bits++;
    m >>= 1;
  }
  if (m != 0) corrupt("a colour mask (" + std::to_string(mask) + ") is not one run of bits");
  if (f.bits > 16) {  // keep the top 16 bits: enough for an 8-bit result
    f.shift += f.bits - 16;
    f.bits = 16;
    f.mask = 0xffffu << f.shift;
  }
  return f;
}

struct Header {
  int64_t width = 0, height = 0;
  bool top_down = false;
  int bpp = 0;
  uint32_t compression = kRgb;
  Field fields[4];            // r, g, b, a
  std::vector<uint8_t> pal;   // RGB triples
  bool gray_palette = false;
  int channels = 3;
  uint64_t offset = 0;        // of the pixel data
  uint64_t stride = 0;        // bytes a row (uncompressed)
};

Header parse(const uint8_t* data, size_t size) {
  if (size < 18) corrupt("the file is " + std::to_string(size) + " bytes, shorter than its headers; it is truncated");
  Header h;
  const uint32_t hs = le32(data + 14);
  if (hs != 12 && !(hs >= 16 && hs <= 64) && hs != 108 && hs != 124)
    corrupt("unknown header size " + std::to_string(hs));
  if (14 + uint64_t{hs} > size) corrupt("the header is cut; the file is truncated");
  const uint8_t* d = data + 14;
  uint32_t planes;
  if (hs == 12) {
    h.width = le16(d + 4);
    h.height = le16(d + 6);
    planes = le16(d + 8);
    h.bpp = static_cast<int>(le16(d + 10));
  } else {
    h.width = static_cast<int32_t>(le32(d + 4));
    h.height = static_cast<int32_t>(le32(d + 8));
    planes = le16(d + 12);
    h.bpp = static_cast<int>(le16(d + 14));
    h.compression = hs >= 20 ? le32(d + 16) : kRgb;
  }
  (void)planes;  // writers get it wrong; Pillow and OpenCV ignore it too
  if (h.height < 0) {
    h.top_down = true;
    h.height = -h.height;
  }
  if (h.width <= 0 || h.height <= 0)
    corrupt("the size " + std::to_string(h.height) + "x" + std::to_string(h.width) + " (HxW) is empty or negative");
  if (hs == 64 && (h.compression == 3 || h.compression == 4))
    unsupported("OS/2 Huffman and RLE24 compression");
  if (h.compression == kJpeg || h.compression == kPngC)
    unsupported("embedded JPEG or PNG data (compression " + std::to_string(h.compression) + ")");
  if (h.compression > kAlphaBitfields) unsupported("compression " + std::to_string(h.compression));
  switch (h.bpp) {
    case 1: case 2: case 4: case 8: case 16: case 24: case 32: break;
    default: unsupported(std::to_string(h.bpp) + " bits per pixel");
  }
  if ((h.compression == kRle8 && h.bpp != 8) || (h.compression == kRle4 && h.bpp != 4))
    corrupt("RLE" + std::to_string(h.compression == kRle8 ? 8 : 4) + " with " + std::to_string(h.bpp) + " bits per pixel");
  if ((h.compression == kBitfields || h.compression == kAlphaBitfields) && h.bpp != 16 && h.bpp != 32)
    corrupt("bit fields with " + std::to_string(h.bpp) + " bits per pixel");
  if ((h.compression == kRle8 || h.compression == kRle4) && h.top_down)
    corrupt("an RLE image with a negative (top-down) height");

  uint64_t pos = 14 + uint64_t{hs};
  // Colour masks: in the header from V2 (52 bytes) on, after a 40-byte header otherwise.
  if (h.compression == kBitfields || h.compression == kAlphaBitfields) {
    const int n = h.compression == kAlphaBitfields ? 4 : 3;
    const uint8_t* m;
    if (hs >= 52) {
      m = d + 40;
    } else {
      if (pos + 4u * n > size) corrupt("the colour masks are cut; the file is truncated");
      m = data + pos;
      pos += 4u * n;
    }
    for (int k = 0; k < 3; k++) h.fields[k] = make_field(le32(m + 4 * k));
    if (n == 4 || hs >= 56) h.fields[3] = make_field(le32(m + 12));
  } else if (h.bpp == 16) {  // 5-5-5
    h.fields[0] = make_field(0x7c00);
    h.fields[1] = make_field(0x03e0);
    h.fields[2] = make_field(0x001f);
  }
  if (h.bpp <= 8) {
    const uint32_t max_colors = 1u << h.bpp;
    uint32_t n = hs >= 36 ? le32(d + 32) : 0;
    if (n == 0 || n > max_colors) n = max_colors;
    const int entry = hs == 12 ? 3 : 4;
    // Some writers claim more colours than they store: read what is there before the pixels.
    const uint64_t off = le32(data + 10);
    const uint64_t limit = off >= pos && off <= size ? off : size;
    const uint64_t avail = limit > pos ? limit - pos : 0;
    n = static_cast<uint32_t>(std::min<uint64_t>(n, avail / entry));
    if (n == 0) corrupt("a " + std::to_string(h.bpp) + "-bit image without a palette");
    h.pal.assign(3 * size_t{max_colors}, 0);  // indices past the palette are black
    h.gray_palette = true;
    for (uint32_t i = 0; i < n; i++) {
      const uint8_t* e = data + pos + uint64_t{i} * entry;
      h.pal[3 * i] = e[2];
      h.pal[3 * i + 1] = e[1];
      h.pal[3 * i + 2] = e[0];
      h.gray_palette = h.gray_palette && e[0] == e[1] && e[1] == e[2];
    }
    pos += uint64_t{n} * entry;
    h.channels = h.gray_palette ? 1 : 3;
  } else {
    h.channels = h.bpp == 32 && h.fields[3].bits > 0 ? 4 : 3;
  }
  const uint64_t off = le32(data + 10);
  h.offset = off >= pos ? off : pos;  // a bogus (too small) offset: the pixels follow the palette
  h.stride = (static_cast<uint64_t>(h.width) * h.bpp + 31) / 32 * 4;
  return h;
}

// Decodes an RLE8/RLE4 image into one palette index a pixel, bottom row first as in the file.
std::vector<uint8_t> decode_rle(const uint8_t* data, size_t size, const Header& h) {
  const uint64_t W = static_cast<uint64_t>(h.width), H = static_cast<uint64_t>(h.height);
  std::vector<uint8_t> idx(W * H, 0);
  const bool four = h.compression == kRle4;
  uint64_t p = h.offset, x = 0, y = 0;
  auto put = [&](uint8_t v) {
    if (x < W && y < H) idx[y * W + x] = v;
    x++;
  };
  while (y < H) {
    if (p + 2 > size) corrupt("the RLE data ends at row " + std::to_string(H - 1 - y) + "; the file is truncated");
    const uint8_t n = data[p], v = data[p + 1];
    p += 2;
    if (n > 0) {  // a run
      for (int i = 0; i < n; i++) put(four ? static_cast<uint8_t>(i & 1 ? v & 15 : v >> 4) : v);
      continue;
    }
    if (v == 0) {  // end of line
      x = 0;
      y++;
    } else if (v == 1) {  // end of bitmap
      break;
    } else if (v == 2) {  // delta
      if (p + 2 > size) corrupt("the RLE data is cut in a delta; the file is truncated");
      x += data[p];
      y += data[p + 1];
      p += 2;
    } else {  // absolute: v pixels, padded to an even number of bytes
      const uint64_t bytes = four ? (v + 1u) / 2 : v;
      if (p + bytes > size) corrupt("the RLE data is cut in a literal run; the file is truncated");
      for (int i = 0; i < v; i++) put(four ? static_cast<uint8_t>(i & 1 ? data[p + i / 2] & 15 : data[p + i / 2] >> 4) : data[p + i]);
      p += bytes + (bytes & 1);
    }
  }
  return idx;
}

}  // namespace

ImageInfo bmp_peek(const uint8_t* data, size_t size) {
  const Header h = parse(data, size);
  ImageInfo info;
  info.format = ImageFormat::kBmp;
  info.height = h.height;
  info.width = h.width;
  info.channels = h.channels;
  info.bit_depth = h.bpp;
  info.orientation = 1;
  return info;
}

void bmp_decode(const uint8_t* data, size_t size, const ImageInfo& info, const Plan& plan,
                const ImageView<uint8_t>& out) {
  const Header h = parse(data, size);
  if (h.height != info.height || h.width != info.width || h.channels != info.channels)
    fail(ErrorKind::kInvalidArgument, "bmp decode: the data does not match the ImageInfo given; "
                                      "pass the ImageInfo from peek() of the same data");
  const int c = h.channels;
  std::vector<uint8_t> row(static_cast<size_t>(plan.w) * c);
  std::vector<uint8_t> rle;
  if (h.compression == kRle8 || h.compression == kRle4) rle = decode_rle(data, size, h);
  const uint8_t* pal = h.pal.data();
  auto from_index = [&](uint8_t* dst, uint32_t i) {
    if (c == 1) dst[0] = pal[3 * i];
    else std::memcpy(dst, pal + 3 * i, 3);
  };
  const uint64_t need = (static_cast<uint64_t>(plan.x0 + plan.w) * h.bpp + 7) / 8;
  for (int64_t y = 0; y < plan.h; y++) {
    const int64_t vy = plan.y0 + y;                       // visual row, top first
    const int64_t fy = h.top_down ? vy : h.height - 1 - vy;  // row in the file
    uint8_t* dst = row.data();
    if (!rle.empty()) {
      const uint8_t* s = rle.data() + static_cast<size_t>(fy) * h.width + plan.x0;
      for (int64_t x = 0; x < plan.w; x++, dst += c) from_index(dst, s[x]);
    } else {
      const uint64_t start = h.offset + static_cast<uint64_t>(fy) * h.stride;
      if (start > size || need > size - start)
        corrupt("the pixel data ends before row " + std::to_string(vy) + " of " +
                std::to_string(h.height) + "; the file is truncated");
      const uint8_t* s = data + start;
      switch (h.bpp) {
        case 1: case 2: case 4: {
          const int b = h.bpp, per = 8 / b;
          const uint32_t mask = (1u << b) - 1;
          for (int64_t x = plan.x0; x < plan.x0 + plan.w; x++, dst += c)
            from_index(dst, (s[x / per] >> (8 - b * (x % per + 1))) & mask);
          break;
        }
        case 8:
          for (int64_t x = plan.x0; x < plan.x0 + plan.w; x++, dst += c) from_index(dst, s[x]);
          break;
        case 24:
          for (int64_t x = plan.x0; x < plan.x0 + plan.w; x++, dst += 3) {
            dst[0] = s[3 * x + 2];
            dst[1] = s[3 * x + 1];
            dst[2] = s[3 * x];
          }
          break;
        case 16:
        case 32: {
          const bool fields = h.compression == kBitfields || h.compression == kAlphaBitfields || h.bpp == 16;
          for (int64_t x = plan.x0; x < plan.x0 + plan.w; x++, dst += c) {
            if (!fields) {  // BGRX
              dst[0] = s[4 * x + 2];
              dst[1] = s[4 * x + 1];
              dst[2] = s[4 * x];
              continue;
            }
            const uint32_t px = h.bpp == 16 ? le16(s + 2 * x) : le32(s + 4 * x);
            for (int k = 0; k < c; k++) dst[k] = h.fields[k].get(px);
          }
          break;
        }
      }
    }
    convert_row(row.data(), c, plan.w, plan.color, out.row(y), out.pixel_stride);
  }
}

}  // namespace stoker::codecs::detail
