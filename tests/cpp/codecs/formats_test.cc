// Tests of the TIFF, WebP, JPEG 2000, BMP and PNM decoders of src/codecs: files made here with
// known pixels (TIFFs written by libtiff, BMPs and PNMs written byte by byte), hostile headers
// and truncation, and every shared test file of these formats (decodes, or refuses with kDecode).
// Comparisons with Pillow/OpenCV on the real files are in tests/python/test_formats.py.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <unistd.h>

#include "codecs/image_codec.h"
#include "core/error.h"

#ifdef STOKER_WITH_TIFF
#include <tiffio.h>
#endif

#ifndef STOKER_TESTDATA
#error "STOKER_TESTDATA must name the shared test data folder"
#endif

namespace stoker::codecs {
namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<uint8_t>;

const std::string kData = STOKER_TESTDATA;

Bytes read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  EXPECT_TRUE(f.good()) << "cannot open " << path;
  return Bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

Bytes text(const std::string& s) { return Bytes(s.begin(), s.end()); }
// A string literal with its embedded NULs (all but the terminating one).
template <size_t N>
Bytes lit(const char (&s)[N]) { return Bytes(s, s + N - 1); }

template <typename T = uint8_t>
struct Img {
  int64_t h = 0, w = 0, c = 0;
  std::vector<T> px;
  T at(int64_t y, int64_t x, int64_t k) const { return px[(y * w + x) * c + k]; }
};

template <typename T = uint8_t>
Img<T> decode_all(const Bytes& b, const DecodeParams& p = {}) {
  ImageInfo info = peek(b.data(), b.size(), p.limits);
  Shape s = output_shape(info, p);
  Img<T> im{s[0], s[1], s[2], std::vector<T>(static_cast<size_t>(volume(s)), T(0x5A))};
  decode(b.data(), b.size(), info, p, ImageView<T>(im.px.data(), im.h, im.w, im.c));
  return im;
}

void expect_error(const std::function<void()>& f, ErrorKind kind, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one containing '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_EQ(static_cast<int>(e.kind()), static_cast<int>(kind)) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

// The roi decode equals the same window of the full decode, for several windows.
template <typename T>
void expect_roi_exact(const Bytes& b, ColorOut color = ColorOut::kAny) {
  DecodeParams p;
  p.color = color;
  const Img<T> full = decode_all<T>(b, p);
  const int64_t H = full.h, W = full.w;
  const int64_t wins[][4] = {{0, 0, H, W}, {1, 3, H - 2, W - 1}, {H / 3, W / 5, H / 3 + 7, W / 5 + 11},
                             {H - 1, W - 1, H, W}, {0, W / 2, 1, W}, {H / 2, 0, H, 3}};
  for (const auto& win : wins) {
    if (win[0] < 0 || win[1] < 0 || win[0] >= win[2] || win[1] >= win[3] || win[2] > H || win[3] > W)
      continue;  // a window that does not fit a small image
    p.roi = {win[0], win[1], win[2], win[3]};
    const Img<T> r = decode_all<T>(b, p);
    ASSERT_EQ(r.h, win[2] - win[0]);
    ASSERT_EQ(r.w, win[3] - win[1]);
    int bad = 0;
    for (int64_t y = 0; y < r.h; y++)
      for (int64_t x = 0; x < r.w; x++)
        for (int64_t k = 0; k < r.c; k++)
          bad += r.at(y, x, k) != full.at(win[0] + y, win[1] + x, k);
    EXPECT_EQ(bad, 0) << "roi [" << win[0] << "," << win[1] << "," << win[2] << "," << win[3] << ")";
  }
}

std::vector<std::string> files_in(const std::string& dir, const std::vector<std::string>& exts) {
  std::vector<std::string> out;
  if (!fs::exists(dir)) return out;
  for (auto& e : fs::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    const std::string ext = e.path().extension().string();
    if (std::find(exts.begin(), exts.end(), ext) != exts.end()) out.push_back(e.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// ---- detection ---------------------------------------------------------------------------

TEST(Formats, DetectFormat) {
  struct Case {
    Bytes head;
    ImageFormat f;
  } cases[] = {
      {{'I', 'I', 42, 0, 8, 0, 0, 0}, ImageFormat::kTiff},
      {{'M', 'M', 0, 42, 0, 0, 0, 8}, ImageFormat::kTiff},
      {{'I', 'I', 43, 0, 8, 0, 0, 0}, ImageFormat::kTiff},  // BigTIFF
      {lit("RIFF\x10\0\0\0WEBPVP8 "), ImageFormat::kWebp},
      {{0, 0, 0, 12, 'j', 'P', ' ', ' ', 13, 10, 0x87, 10}, ImageFormat::kJpeg2000},
      {{0xff, 0x4f, 0xff, 0x51, 0, 0}, ImageFormat::kJpeg2000},
      {lit("BM\x36\0\0\0"), ImageFormat::kBmp},
      {text("P6\n3 2\n255\n"), ImageFormat::kPnm},
      {text("P1#c\n"), ImageFormat::kPnm},
      {text("P7\n"), ImageFormat::kUnknown},
      {lit("RIFF\x10\0\0\0WAVE"), ImageFormat::kUnknown},
      {text("II*"), ImageFormat::kUnknown},
  };
  for (const auto& c : cases)
    EXPECT_EQ(static_cast<int>(detect_format(c.head.data(), c.head.size())), static_cast<int>(c.f))
        << std::string(c.head.begin(), c.head.end());
  EXPECT_STREQ(format_name(ImageFormat::kJpeg2000), "jpeg2000");
  EXPECT_STREQ(format_name(ImageFormat::kPnm), "pnm");
  EXPECT_TRUE(format_built_in(ImageFormat::kBmp));
  EXPECT_TRUE(format_built_in(ImageFormat::kPnm));
  EXPECT_FALSE(format_built_in(ImageFormat::kUnknown));
}

// Every shared test file of these formats decodes in every colour mode, or is refused with
// kDecode (or kUnsupported in a build without the library); never another error, never a crash.
TEST(Formats, SharedTestFilesDecode) {
  auto files = files_in(kData + "/images", {".tiff", ".tif", ".webp", ".jp2", ".j2k", ".bmp",
                                            ".pnm", ".pbm", ".pgm", ".ppm"});
  auto fuzz = files_in(kData + "/fuzzing/bmp", {".bmp"});
  files.insert(files.end(), fuzz.begin(), fuzz.end());
  ASSERT_GT(files.size(), 60u);
  int decoded = 0;
  for (const auto& path : files) {
    Bytes b = read_bytes(path);
    const ImageFormat f = detect_format(b.data(), b.size());
    ASSERT_NE(static_cast<int>(f), static_cast<int>(ImageFormat::kUnknown)) << path;
    if (!format_built_in(f)) {
      expect_error([&] { peek(b.data(), b.size()); }, ErrorKind::kUnsupported, "stoker was built without");
      continue;
    }
    try {
      for (ColorOut c : {ColorOut::kRGB, ColorOut::kGray, ColorOut::kAny, ColorOut::kBGR}) {
        DecodeParams p;
        p.color = c;
        Img<> im = decode_all(b, p);
        EXPECT_EQ(im.c, c == ColorOut::kGray ? 1 : c == ColorOut::kAny ? peek(b.data(), b.size()).channels : 3);
      }
      decoded++;
    } catch (const Error& e) {
      ADD_FAILURE() << path << ": " << e.what();
    }
  }
  std::printf("  %d of %zu files decoded\n", decoded, files.size());
}

// Roi decodes equal the full decode's window, for every format (one file each).
TEST(Formats, RoiIsExactOnSharedFiles) {
  const std::string img = kData + "/images/";
  for (const char* rel : {"tiff/0/cat-1046544_640.tiff", "tiff/0/cat-1046544_640_bw_bpp1.tiff",
                          "tiff/0/cat-300572_640_palette.tiff", "webp/lossy/cat-1046544_640.webp",
                          "webp/lossless-alpha/bird-4496315_640.webp", "jpeg2k/0/cat-1046544_640.jp2",
                          "jpeg2k/2/tiled-cat-1046544_640.jp2", "jpeg2k/0/cat-111793_640-16bit.jp2",
                          "bmp/0/cat-111793_640_palette_1bit.bmp", "bmp/0/cat-1046544_640.bmp",
                          "pnm/0/cat-2184682_640.pbm", "pnm/0/cat-111793_640.ppm"}) {
    SCOPED_TRACE(rel);
    Bytes b = read_bytes(img + rel);
    if (!format_built_in(detect_format(b.data(), b.size()))) continue;
    expect_roi_exact<uint8_t>(b);
    expect_roi_exact<uint16_t>(b, ColorOut::kGray);
  }
}

// ---- PNM ---------------------------------------------------------------------------------

TEST(Formats, PnmAsciiAndBinaryAgree) {
  // 3x2 RGB, maxval 1000 (16-bit samples), with comments everywhere the format allows.
  const int v[2][3][3] = {{{0, 500, 1000}, {1, 2, 3}, {999, 998, 997}},
                          {{250, 750, 125}, {1000, 0, 1000}, {7, 77, 777}}};
  std::string ascii = "P3\n# a comment\n3 # width\n2\n1000\n";
  Bytes bin = text("P6 3 2 1000\n");
  for (auto& row : v)
    for (auto& px : row)
      for (int s : px) {
        ascii += std::to_string(s) + " ";
        bin.push_back(static_cast<uint8_t>(s >> 8));
        bin.push_back(static_cast<uint8_t>(s & 255));
      }
  for (const Bytes& b : {text(ascii), bin}) {
    ImageInfo info = peek(b.data(), b.size());
    EXPECT_EQ(info.format, ImageFormat::kPnm);
    EXPECT_EQ(info.channels, 3);
    EXPECT_EQ(info.bit_depth, 10);
    Img<uint16_t> a = decode_all<uint16_t>(b);
    Img<uint8_t> e = decode_all<uint8_t>(b);
    for (int y = 0; y < 2; y++)
      for (int x = 0; x < 3; x++)
        for (int k = 0; k < 3; k++) {
          EXPECT_EQ(a.at(y, x, k), (v[y][x][k] * 65535 + 500) / 1000);
          EXPECT_EQ(e.at(y, x, k), (v[y][x][k] * 255 + 500) / 1000);
        }
  }
}

TEST(Formats, PbmAsciiAndBinary) {
  // 10x2: P1 digits may run together; P4 rows are padded to whole bytes. 1 is black.
  const std::string bits[2] = {"1010011100", "0000000001"};
  Bytes p1 = text("P1\n10 2\n" + bits[0] + "\n0 0 0 0 0 0 0 0 0 1\n");
  Bytes p4 = text("P4\n10 2\n");
  for (const auto& r : bits) {
    uint8_t b0 = 0, b1 = 0;
    for (int i = 0; i < 8; i++) b0 |= (r[i] == '1') << (7 - i);
    for (int i = 8; i < 10; i++) b1 |= (r[i] == '1') << (15 - i);
    p4.push_back(b0);
    p4.push_back(b1 | 0x3f);  // padding bits are ignored
  }
  for (const Bytes& b : {p1, p4}) {
    Img<> g = decode_all(b, {.color = ColorOut::kAny});
    ASSERT_EQ(g.c, 1);
    for (int y = 0; y < 2; y++)
      for (int x = 0; x < 10; x++) EXPECT_EQ(g.at(y, x, 0), bits[y][x] == '1' ? 0 : 255) << y << "," << x;
    expect_roi_exact<uint8_t>(b);
  }
}

TEST(Formats, PnmBadHeadersAndTruncation) {
  expect_error([] { Bytes b = text("P5\n100000 100000\n255\n"); peek(b.data(), b.size()); },
               ErrorKind::kDecode, "max_pixels");
  expect_error([] { Bytes b = text("P5\n99999999999 1\n255\n"); peek(b.data(), b.size()); },
               ErrorKind::kDecode, "larger than");
  expect_error([] { Bytes b = text("P5\n4 4\n70000\n"); peek(b.data(), b.size()); }, ErrorKind::kDecode, "maxval");
  expect_error([] { Bytes b = text("P5\n4 4\n0\n"); peek(b.data(), b.size()); }, ErrorKind::kDecode, "maxval");
  expect_error([] { Bytes b = text("P5\n0 4\n255\n"); peek(b.data(), b.size()); }, ErrorKind::kDecode, "empty");
  expect_error([] { Bytes b = text("P6\n4 x\n"); peek(b.data(), b.size()); }, ErrorKind::kDecode, "height");
  expect_error([] { Bytes b = text("P6\n4 4"); peek(b.data(), b.size()); }, ErrorKind::kDecode, "truncated");
  expect_error([] { Bytes b = text("P5\n4 4\n255\nabcdefgh"); decode_all(b); }, ErrorKind::kDecode, "truncated");
  expect_error([] { Bytes b = text("P2\n2 2\n9\n1 2 3"); decode_all(b); }, ErrorKind::kDecode, "truncated");
  expect_error([] { Bytes b = text("P2\n2 2\n9\n1 2 3 10"); decode_all(b); }, ErrorKind::kDecode, "maxval");
  expect_error([] { Bytes b = text("P1\n2 1\n1 2"); decode_all(b); }, ErrorKind::kDecode, "not 0 or 1");
  // A roi above the cut still decodes.
  Bytes b = lit("P5\n2 3\n255\n\x01\x02\x03\x04");
  DecodeParams p;
  p.roi = {0, 0, 2, -1};
  Img<> r = decode_all(b, p);
  EXPECT_EQ(r.px, (std::vector<uint8_t>{1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4}));
}

// ---- BMP ---------------------------------------------------------------------------------

void put16(Bytes& b, uint32_t v) { b.push_back(v & 255); b.push_back((v >> 8) & 255); }
void put32(Bytes& b, uint32_t v) { put16(b, v & 0xffff); put16(b, v >> 16); }

// A BITMAPINFOHEADER (or V4 when masks has 4 entries) file around `pixels` and `palette`.
Bytes make_bmp(int32_t w, int32_t h, int bpp, uint32_t compression, const Bytes& palette,
               const Bytes& pixels, const std::vector<uint32_t>& masks = {}) {
  const uint32_t hs = masks.size() == 4 ? 108 : 40;
  const uint32_t extra = masks.size() == 3 ? 12 : 0;
  const uint32_t off = 14 + hs + extra + static_cast<uint32_t>(palette.size());
  Bytes b = text("BM");
  put32(b, off + static_cast<uint32_t>(pixels.size()));
  put32(b, 0);
  put32(b, off);
  put32(b, hs);
  put32(b, static_cast<uint32_t>(w));
  put32(b, static_cast<uint32_t>(h));
  put16(b, 1);
  put16(b, bpp);
  put32(b, compression);
  put32(b, static_cast<uint32_t>(pixels.size()));
  put32(b, 2835);
  put32(b, 2835);
  put32(b, static_cast<uint32_t>(palette.size() / 4));
  put32(b, 0);
  if (hs == 108) {
    for (uint32_t m : masks) put32(b, m);
    b.resize(14 + hs, 0);
  }
  for (uint32_t m : (extra ? masks : std::vector<uint32_t>{})) put32(b, m);
  b.insert(b.end(), palette.begin(), palette.end());
  b.insert(b.end(), pixels.begin(), pixels.end());
  return b;
}

Bytes palette_of(int n) {  // BGRX entries with distinct colours
  Bytes p;
  for (int i = 0; i < n; i++) {
    p.push_back(static_cast<uint8_t>(i * 7 + 1));   // B
    p.push_back(static_cast<uint8_t>(i * 13 + 2));  // G
    p.push_back(static_cast<uint8_t>(255 - i));     // R
    p.push_back(0);
  }
  return p;
}

TEST(Formats, BmpRle8AndRle4) {
  // 5x3, bottom-up. Indices of the visual image (top row first):
  const uint8_t want[3][5] = {{0, 0, 9, 0, 0}, {3, 3, 3, 1, 2}, {4, 4, 4, 4, 4}};
  // RLE8: bottom row: run of 5 x 4; EOL; middle: run 3 x 3, absolute (1, 2) is < 3 so use runs;
  // EOL; top: delta (2, 0), run 1 x 9, EOB (rest of the row and skipped pixels are index 0).
  Bytes rle8 = {5, 4, 0, 0, 3, 3, 1, 1, 1, 2, 0, 0, 0, 2, 2, 0, 1, 9, 0, 1};
  Bytes b = make_bmp(5, 3, 8, 1, palette_of(16), rle8);
  Img<> im = decode_all(b);
  Bytes pal = palette_of(16);
  for (int y = 0; y < 3; y++)
    for (int x = 0; x < 5; x++) {
      const uint8_t i = want[y][x];
      EXPECT_EQ(im.at(y, x, 0), pal[4 * i + 2]) << y << "," << x;
      EXPECT_EQ(im.at(y, x, 1), pal[4 * i + 1]);
      EXPECT_EQ(im.at(y, x, 2), pal[4 * i]);
    }
  // RLE4: bottom: run of 5 of (4,4); EOL; middle: absolute 5 nibbles 3 3 3 1 2 (3 bytes, padded
  // to 4); EOL; top: delta (2, 0), run 1 of (9, x), EOL, EOB.
  Bytes rle4 = {5, 0x44, 0, 0, 0, 5, 0x33, 0x31, 0x20, 0, 0, 0, 0, 2, 2, 0, 1, 0x90, 0, 0, 0, 1};
  Img<> im4 = decode_all(make_bmp(5, 3, 4, 2, palette_of(16), rle4));
  EXPECT_EQ(im4.px, im.px);
  // Truncated RLE data
  Bytes cut = make_bmp(5, 3, 8, 1, palette_of(16), Bytes(rle8.begin(), rle8.begin() + 6));
  expect_error([&] { decode_all(cut); }, ErrorKind::kDecode, "truncated");
}

TEST(Formats, BmpBitfieldsAndPackedDepths) {
  // 16-bit 5-6-5 bit fields, 2x1 (row padded to 4 bytes).
  Bytes px16;
  put16(px16, 0xF800);  // red 31
  put16(px16, 0x07E0 | 0x0010);  // green 63, blue 16
  Img<> a = decode_all(make_bmp(2, 1, 16, 3, {}, px16, {0xF800, 0x07E0, 0x001F}));
  EXPECT_EQ(a.px, (std::vector<uint8_t>{255, 0, 0, 0, 255, (16 * 255 + 15) / 31}));
  // 32-bit with an alpha mask (V4 header): RGBA; top-down (negative height).
  Bytes px32;
  put32(px32, 0x80102030);
  put32(px32, 0xFF405060);
  ImageInfo info;
  Bytes b32 = make_bmp(1, -2, 32, 3, {}, px32, {0x00FF0000, 0x0000FF00, 0x000000FF, 0xFF000000});
  info = peek(b32.data(), b32.size());
  EXPECT_EQ(info.channels, 4);
  Img<> c = decode_all(b32, {.color = ColorOut::kAny});
  EXPECT_EQ(c.px, (std::vector<uint8_t>{0x10, 0x20, 0x30, 0x80, 0x40, 0x50, 0x60, 0xFF}));
  // 2-bit palette, 5x1; gray palette gives one channel.
  Bytes gray;
  for (int i = 0; i < 4; i++) gray.insert(gray.end(), {uint8_t(i * 80), uint8_t(i * 80), uint8_t(i * 80), 0});
  Bytes b2 = make_bmp(5, 1, 2, 0, gray, {0b00011011, 0b11000000, 0, 0});
  EXPECT_EQ(peek(b2.data(), b2.size()).channels, 1);
  Img<> g = decode_all(b2, {.color = ColorOut::kAny});
  EXPECT_EQ(g.px, (std::vector<uint8_t>{0, 80, 160, 240, 240}));
}

TEST(Formats, BmpHostileHeadersAndTruncation) {
  Bytes huge = make_bmp(60000, 60000, 24, 0, {}, Bytes(16, 0));
  expect_error([&] { peek(huge.data(), huge.size()); }, ErrorKind::kDecode, "max_pixels");
  Bytes neg = make_bmp(-5, 5, 24, 0, {}, Bytes(16, 0));
  expect_error([&] { peek(neg.data(), neg.size()); }, ErrorKind::kDecode, "empty or negative");
  Bytes bpp = make_bmp(5, 5, 7, 0, {}, Bytes(16, 0));
  expect_error([&] { peek(bpp.data(), bpp.size()); }, ErrorKind::kDecode, "7 bits per pixel");
  Bytes jpg = make_bmp(5, 5, 24, 4, {}, Bytes(16, 0));
  expect_error([&] { peek(jpg.data(), jpg.size()); }, ErrorKind::kDecode, "unsupported BMP");
  Bytes nopal = make_bmp(5, 5, 8, 0, {}, Bytes(40, 0));
  nopal[10] = 54;  // the pixel offset right after the header: no room for a palette
  expect_error([&] { peek(nopal.data(), nopal.size()); }, ErrorKind::kDecode, "without a palette");
  Bytes hdr = lit("BM\0\0\0\0\0\0\0\0\0\0\0\0\x28\0");
  expect_error([&] { peek(hdr.data(), hdr.size()); }, ErrorKind::kDecode, "truncated");
  Bytes real = read_bytes(kData + "/images/bmp/0/cat-1046544_640.bmp");
  Bytes cut(real.begin(), real.begin() + static_cast<std::ptrdiff_t>(real.size() / 2));
  expect_error([&] { decode_all(cut); }, ErrorKind::kDecode, "truncated");
  // The bottom half of the file holds the top rows (bottom-up): a roi at the bottom decodes.
  DecodeParams p;
  const ImageInfo info = peek(cut.data(), cut.size());
  p.roi = {info.height - 10, 0, -1, -1};
  EXPECT_EQ(decode_all(cut, p).h, 10);
}

// ---- TIFF (written here by libtiff) ------------------------------------------------------

#ifdef STOKER_WITH_TIFF

struct TiffSpec {
  int w = 37, h = 23, spp = 3, bps = 16;
  uint16_t photometric = PHOTOMETRIC_RGB, planar = PLANARCONFIG_CONTIG;
  uint16_t compression = COMPRESSION_NONE, orientation = 1;
  int tile = 0;  // 0: strips of 5 rows; else tiles of tile x tile
  bool alpha = false;
  uint16_t sample_format = SAMPLEFORMAT_UINT;
};

// Writes a TIFF of `s` with the samples `v` (h * w * spp raw values) and returns its bytes.
Bytes write_tiff(const TiffSpec& s, const std::vector<uint16_t>& v) {
  const fs::path path = fs::temp_directory_path() /
                        ("stoker_formats_" + std::to_string(::getpid()) + "_" + std::to_string(std::rand()) + ".tif");
  TIFF* t = TIFFOpen(path.c_str(), "w");
  EXPECT_NE(t, nullptr);
  TIFFSetField(t, TIFFTAG_IMAGEWIDTH, s.w);
  TIFFSetField(t, TIFFTAG_IMAGELENGTH, s.h);
  TIFFSetField(t, TIFFTAG_SAMPLESPERPIXEL, s.spp);
  TIFFSetField(t, TIFFTAG_BITSPERSAMPLE, s.bps);
  TIFFSetField(t, TIFFTAG_PHOTOMETRIC, s.photometric);
  TIFFSetField(t, TIFFTAG_PLANARCONFIG, s.planar);
  TIFFSetField(t, TIFFTAG_COMPRESSION, s.compression);
  TIFFSetField(t, TIFFTAG_ORIENTATION, s.orientation);
  TIFFSetField(t, TIFFTAG_SAMPLEFORMAT, s.sample_format);
  const int base = s.photometric == PHOTOMETRIC_RGB ? 3 : 1;
  if (s.spp > base) {
    std::vector<uint16_t> extra(s.spp - base, EXTRASAMPLE_UNSPECIFIED);
    if (s.alpha) extra[0] = EXTRASAMPLE_UNASSALPHA;
    TIFFSetField(t, TIFFTAG_EXTRASAMPLES, static_cast<uint16_t>(extra.size()), extra.data());
  }
  if (s.compression == COMPRESSION_ADOBE_DEFLATE) TIFFSetField(t, TIFFTAG_PREDICTOR, PREDICTOR_HORIZONTAL);
  const bool sep = s.planar == PLANARCONFIG_SEPARATE;
  const int planes = sep ? s.spp : 1, per_px = sep ? 1 : s.spp;
  // Packs samples [x0, x0 + n) of row y of plane p (or all samples) into bytes.
  auto pack = [&](int y, int x0, int n, int p, Bytes& out) {
    const size_t start = out.size();
    const size_t bits = static_cast<size_t>(n) * per_px * s.bps;
    out.resize(start + (bits + 7) / 8, 0);
    size_t bit = 0;
    for (int x = x0; x < x0 + n; x++)
      for (int k = 0; k < per_px; k++, bit += s.bps) {
        const uint16_t val = x < s.w && y < s.h ? v[(static_cast<size_t>(y) * s.w + x) * s.spp + (sep ? p : k)] : 0;
        if (s.bps == 16) std::memcpy(&out[start + bit / 8], &val, 2);  // host order, libtiff swabs
        else if (s.bps == 8) out[start + bit / 8] = static_cast<uint8_t>(val);
        else out[start + bit / 8] |= static_cast<uint8_t>(val << (8 - s.bps - bit % 8));
      }
  };
  if (s.tile) {
    TIFFSetField(t, TIFFTAG_TILEWIDTH, s.tile);
    TIFFSetField(t, TIFFTAG_TILELENGTH, s.tile);
    for (int p = 0; p < planes; p++)
      for (int ty = 0; ty < s.h; ty += s.tile)
        for (int tx = 0; tx < s.w; tx += s.tile) {
          Bytes buf;
          for (int y = ty; y < ty + s.tile; y++) pack(y, tx, s.tile, p, buf);
          EXPECT_GE(TIFFWriteEncodedTile(t, TIFFComputeTile(t, tx, ty, 0, p), buf.data(), buf.size()), 0);
        }
  } else {
    TIFFSetField(t, TIFFTAG_ROWSPERSTRIP, 5);
    for (int p = 0; p < planes; p++)
      for (int y = 0; y < s.h; y++) {
        Bytes buf;
        pack(y, 0, s.w, p, buf);
        EXPECT_EQ(TIFFWriteScanline(t, buf.data(), y, p), 1);
      }
  }
  TIFFClose(t);
  Bytes b = read_bytes(path.string());
  fs::remove(path);
  return b;
}

std::vector<uint16_t> random_samples(const TiffSpec& s, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint16_t> v(static_cast<size_t>(s.w) * s.h * s.spp);
  for (auto& x : v) x = static_cast<uint16_t>(rng() & ((1u << s.bps) - 1));
  return v;
}

TEST(Formats, TiffLayoutsKeepEverySample) {
  struct Case {
    const char* name;
    TiffSpec s;
  } cases[] = {
      {"rgb16 strips", {.spp = 3, .bps = 16}},
      {"rgb16 tiled", {.spp = 3, .bps = 16, .tile = 16}},
      {"rgba8 tiled deflate", {.spp = 4, .bps = 8, .compression = COMPRESSION_ADOBE_DEFLATE, .tile = 16, .alpha = true}},
      {"6 channels 16-bit planar tiled", {.spp = 6, .bps = 16, .planar = PLANARCONFIG_SEPARATE, .tile = 16}},
      {"5 channels 8-bit lzw", {.spp = 5, .bps = 8, .photometric = PHOTOMETRIC_MINISBLACK, .compression = COMPRESSION_LZW}},
      {"gray 4-bit", {.spp = 1, .bps = 4, .photometric = PHOTOMETRIC_MINISBLACK}},
      {"gray 2-bit tiled", {.spp = 1, .bps = 2, .photometric = PHOTOMETRIC_MINISBLACK, .tile = 16}},
      {"gray 1-bit miniswhite", {.spp = 1, .bps = 1, .photometric = PHOTOMETRIC_MINISWHITE}},
      {"gray+alpha 16-bit planar", {.spp = 2, .bps = 16, .photometric = PHOTOMETRIC_MINISBLACK, .planar = PLANARCONFIG_SEPARATE, .alpha = true}},
  };
  for (const auto& cs : cases) {
    SCOPED_TRACE(cs.name);
    const TiffSpec& s = cs.s;
    const auto v = random_samples(s, 7);
    const Bytes b = write_tiff(s, v);
    const ImageInfo info = peek(b.data(), b.size());
    EXPECT_EQ(info.format, ImageFormat::kTiff);
    EXPECT_EQ(info.height, s.h);
    EXPECT_EQ(info.width, s.w);
    EXPECT_EQ(info.channels, s.spp);
    EXPECT_EQ(info.bit_depth, s.bps);
    const uint32_t maxv = (1u << s.bps) - 1;
    const bool white = s.photometric == PHOTOMETRIC_MINISWHITE;
    auto expect_v = [&](size_t i) { return white ? maxv - v[i] : v[i]; };
    const Img<uint16_t> a16 = decode_all<uint16_t>(b, {.color = ColorOut::kAny});
    const Img<uint8_t> a8 = decode_all<uint8_t>(b, {.color = ColorOut::kAny});
    ASSERT_EQ(a16.px.size(), v.size());
    int bad16 = 0, bad8 = 0;
    for (size_t i = 0; i < v.size(); i++) {
      bad16 += a16.px[i] != static_cast<uint16_t>((uint64_t{expect_v(i)} * 65535 + maxv / 2) / maxv);
      bad8 += a8.px[i] != static_cast<uint8_t>((uint64_t{expect_v(i)} * 255 + maxv / 2) / maxv);
    }
    EXPECT_EQ(bad16, 0);
    EXPECT_EQ(bad8, 0);
    // RGB of a multi-channel image: its first three channels (gray ones replicated).
    const Img<uint16_t> rgb = decode_all<uint16_t>(b, {.color = ColorOut::kRGB});
    for (int64_t i = 0; i < s.w * s.h; i++)
      for (int k = 0; k < 3; k++)
        ASSERT_EQ(rgb.px[i * 3 + k], a16.px[i * s.spp + (s.spp >= 3 ? k : 0)]);
    expect_roi_exact<uint16_t>(b);
    expect_roi_exact<uint8_t>(b, ColorOut::kBGR);
  }
}

TEST(Formats, TiffOrientationTag) {
  TiffSpec s{.w = 5, .h = 3, .spp = 1, .bps = 8, .photometric = PHOTOMETRIC_MINISBLACK};
  std::vector<uint16_t> v(15);
  for (int i = 0; i < 15; i++) v[i] = static_cast<uint16_t>(i);
  s.orientation = 6;  // rotate 90 clockwise to display
  const Bytes b = write_tiff(s, v);
  EXPECT_EQ(peek(b.data(), b.size()).orientation, 6);
  const Img<> o = decode_all(b, {.color = ColorOut::kAny});
  ASSERT_EQ(o.h, 5);
  ASSERT_EQ(o.w, 3);
  for (int y = 0; y < 5; y++)
    for (int x = 0; x < 3; x++) EXPECT_EQ(o.at(y, x, 0), v[(2 - x) * 5 + y]);
  const Img<> raw = decode_all(b, {.color = ColorOut::kAny, .apply_orientation = false});
  EXPECT_EQ(raw.h, 3);
  EXPECT_EQ(std::vector<uint16_t>(raw.px.begin(), raw.px.end()), v);
}

TEST(Formats, TiffRefusedAndTruncated) {
  TiffSpec s{.spp = 3, .bps = 8, .compression = COMPRESSION_ADOBE_DEFLATE};
  const Bytes b = write_tiff(s, random_samples(s, 3));
  // The strips are written before the directory: cutting the file loses the directory.
  for (double frac : {0.5, 0.05}) {
    Bytes cut(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(b.size() * frac));
    expect_error([&] { decode_all(cut); }, ErrorKind::kDecode, "TIFF");
  }
  // Corrupt the compressed strips themselves.
  Bytes bad = b;
  for (size_t i = 16; i < bad.size() / 2; i += 3) bad[i] ^= 0xA5;
  expect_error([&] { decode_all(bad); }, ErrorKind::kDecode, "TIFF");
  // Signed samples are refused by name.
  TiffSpec f{.spp = 1, .bps = 16, .photometric = PHOTOMETRIC_MINISBLACK, .sample_format = SAMPLEFORMAT_INT};
  const Bytes fb = write_tiff(f, random_samples(f, 1));
  expect_error([&] { peek(fb.data(), fb.size()); }, ErrorKind::kDecode, "signed integer samples");
  const Bytes head = read_bytes(kData + "/images/tiff/0/cat-111793_640_gray.tiff");
  // A huge image: the header of a real file with its width and length patched.
  Bytes huge = head;
  const uint32_t ifd = huge[4] | (huge[5] << 8) | (huge[6] << 16) | (uint32_t(huge[7]) << 24);
  const int n = huge[ifd] | (huge[ifd + 1] << 8);
  for (int i = 0; i < n; i++) {
    uint8_t* e = &huge[ifd + 2 + 12 * i];
    const int tag = e[0] | (e[1] << 8), type = e[2] | (e[3] << 8);
    if (tag == 256 || tag == 257) {  // ImageWidth, ImageLength
      if (type == 3) { e[8] = 60000 & 255; e[9] = 60000 >> 8; }
      else { e[8] = 60000 & 255; e[9] = 60000 >> 8; e[10] = 0; e[11] = 0; }
    }
  }
  expect_error([&] { peek(huge.data(), huge.size()); }, ErrorKind::kDecode, "max_pixels");
}

#endif  // STOKER_WITH_TIFF

// ---- WebP and JPEG 2000 --------------------------------------------------------------------

TEST(Formats, WebpAndJpeg2000TruncatedOrCorrupt) {
  const std::string img = kData + "/images/";
  for (const char* rel : {"webp/lossy/cat-1046544_640.webp", "webp/lossless/cat-1046544_640.webp",
                          "jpeg2k/0/cat-1046544_640.jp2", "jpeg2k/2/tiled-cat-1046544_640.jp2"}) {
    SCOPED_TRACE(rel);
    Bytes b = read_bytes(img + rel);
    if (!format_built_in(detect_format(b.data(), b.size()))) {
      expect_error([&] { peek(b.data(), b.size()); }, ErrorKind::kUnsupported, "stoker was built without");
      continue;
    }
    for (double frac : {0.7, 0.2, 0.001}) {
      Bytes cut(b.begin(), b.begin() + std::max<std::ptrdiff_t>(16, static_cast<std::ptrdiff_t>(b.size() * frac)));
      expect_error([&] { decode_all(cut); }, ErrorKind::kDecode, "");
    }
  }
}

TEST(Formats, Jpeg2000RawCodestream) {
  // The codestream inside a .jp2 (its jp2c box) is a valid .j2k and decodes the same.
  Bytes jp2 = read_bytes(kData + "/images/jpeg2k/1/cat-1245673_640.jp2");
  if (!format_built_in(ImageFormat::kJpeg2000)) GTEST_SKIP() << "built without OpenJPEG";
  size_t pos = 0;
  Bytes j2k;
  while (pos + 8 <= jp2.size()) {
    const uint32_t len = (uint32_t(jp2[pos]) << 24) | (jp2[pos + 1] << 16) | (jp2[pos + 2] << 8) | jp2[pos + 3];
    if (std::memcmp(&jp2[pos + 4], "jp2c", 4) == 0) {
      j2k.assign(jp2.begin() + pos + 8, len ? jp2.begin() + pos + len : jp2.end());
      break;
    }
    ASSERT_GE(len, 8u);
    pos += len;
  }
  ASSERT_FALSE(j2k.empty());
  EXPECT_EQ(detect_format(j2k.data(), j2k.size()), ImageFormat::kJpeg2000);
  EXPECT_EQ(decode_all(j2k).px, decode_all(jp2).px);
  expect_roi_exact<uint8_t>(j2k);
}

}  // namespace
}  // namespace stoker::codecs
