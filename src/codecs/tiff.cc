// TIFF through libtiff, read from memory (TIFFClientOpen with a mapped buffer: strips and tiles
// are decoded straight from the caller's bytes, never copied whole).
//
// What is decoded natively, at full precision: unsigned-integer samples of 1, 2, 4, 8 or 16 bits,
// any number of samples per pixel (gray, gray+alpha, RGB, RGBA, multi-channel up to
// kMaxChannels), contiguous or planar (one plane per sample), in strips or in tiles, with any
// compression this libtiff has (none, LZW, deflate, PackBits, zstd, JPEG, ...), and palettes.
//  - 1/2/4-bit samples are scaled to the full range (1-bit: 0/255); MinIsWhite is inverted.
//  - palette images give RGB from the colour map (its high byte, or the values themselves when
//    the map is 8-bit, as libtiff and Pillow read it).
//  - JPEG-compressed YCbCr is converted to RGB by libjpeg (TIFFTAG_JPEGCOLORMODE).
//  - only the strips or tiles that hold the roi are read and decoded.
// Other photometric interpretations (uncompressed or subsampled YCbCr, CMYK, CIE Lab, LogLuv)
// go through libtiff's TIFFRGBAImage: 8-bit RGB, libtiff's conversion, alpha dropped.
// Float, signed and complex samples, and bit depths other than 1/2/4/8/16, are refused.
// Orientation comes from the TIFF Orientation tag (the same numbering as EXIF). Only the first
// image (directory) of a multi-page file is read.
//
// Errors: libtiff reports through per-handle error handlers (libtiff >= 4.5) or through one
// process-wide handler that finds our handle in its client data (older libtiff); nothing is
// printed. A truncated strip or tile is an error (libtiff refuses a mapped strip that ends past
// the data, and its decoders fail on short input).
#include "codecs/image_codec_detail.h"
#include "core/error.h"

#ifdef STOKER_WITH_TIFF
#include <tiffio.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>
#endif

namespace stoker::codecs::detail {

#ifndef STOKER_WITH_TIFF

bool tiff_built_in() { return false; }

ImageInfo tiff_peek(const uint8_t*, size_t) {
  fail_built_without("libtiff", "TIFF", "libtiff-dev");
}
void tiff_decode(const uint8_t*, size_t, const ImageInfo&, const Plan&, const ImageView<uint8_t>&) {
  fail_built_without("libtiff", "TIFF", "libtiff-dev");
}
void tiff_decode(const uint8_t*, size_t, const ImageInfo&, const Plan&, const ImageView<uint16_t>&) {
  fail_built_without("libtiff", "TIFF", "libtiff-dev");
}

#else  // STOKER_WITH_TIFF

bool tiff_built_in() { return true; }

namespace {

#if TIFFLIB_VERSION >= 20221213  // libtiff 4.5.0: TIFFOpenOptions with per-handle handlers
#define STOKER_TIFF_OPEN_OPTIONS 1
#endif

// The memory "file" libtiff reads, and the first error it reported.
struct MemFile {
  const uint8_t* data;
  uint64_t size;
  uint64_t pos;
  std::string error;
};

void record(MemFile* f, const char* module, const char* fmt, va_list ap) {
  if (f == nullptr || !f->error.empty()) return;  // keep the first: it is the cause
  char buf[512];
  std::vsnprintf(buf, sizeof(buf), fmt, ap);
  f->error = module && *module ? std::string(module) + ": " + buf : std::string(buf);
}

tmsize_t on_read(thandle_t h, void* buf, tmsize_t n) {
  auto* f = static_cast<MemFile*>(h);
  if (n <= 0 || f->pos >= f->size) return 0;
  const uint64_t k = std::min<uint64_t>(static_cast<uint64_t>(n), f->size - f->pos);
  std::memcpy(buf, f->data + f->pos, k);
  f->pos += k;
  return static_cast<tmsize_t>(k);
}
tmsize_t on_write(thandle_t, void*, tmsize_t) { return 0; }
toff_t on_seek(thandle_t h, toff_t off, int whence) {
  auto* f = static_cast<MemFile*>(h);
  uint64_t base = whence == SEEK_CUR ? f->pos : whence == SEEK_END ? f->size : 0;
  if (off > UINT64_MAX - base) return static_cast<toff_t>(-1);
  f->pos = base + off;  // past the end is allowed; reads there return 0 bytes
  return f->pos;
}
int on_close(thandle_t) { return 0; }
toff_t on_size(thandle_t h) { return static_cast<MemFile*>(h)->size; }
int on_map(thandle_t h, void** base, toff_t* size) {
  auto* f = static_cast<MemFile*>(h);
  *base = const_cast<uint8_t*>(f->data);  // libtiff only reads a read-only ('r') mapping
  *size = f->size;
  return 1;
}
void on_unmap(thandle_t, void*, toff_t) {}

#ifdef STOKER_TIFF_OPEN_OPTIONS
int on_error_r(TIFF*, void* user, const char* module, const char* fmt, va_list ap) {
  record(static_cast<MemFile*>(user), module, fmt, ap);
  return 1;  // handled: libtiff's global (stderr) handler is not called
}
int on_warning_r(TIFF*, void*, const char*, const char*, va_list) { return 1; }
#else
void on_error_ext(thandle_t h, const char* module, const char* fmt, va_list ap) {
  record(static_cast<MemFile*>(h), module, fmt, ap);
}
void on_warning_ext(thandle_t, const char*, const char*, va_list) {}
#endif

struct TiffCloser {
  void operator()(TIFF* t) const { TIFFClose(t); }
};
using TiffPtr = std::unique_ptr<TIFF, TiffCloser>;

[[noreturn]] void fail_tiff(const MemFile& f, const std::string& what) {
  fail(ErrorKind::kDecode, "corrupt TIFF: " + what + (f.error.empty() ? "" : " (" + f.error + ")"));
}

TiffPtr open_tiff(MemFile* f) {
#ifdef STOKER_TIFF_OPEN_OPTIONS
  TIFFOpenOptions* opts = TIFFOpenOptionsAlloc();
  if (opts == nullptr) fail(ErrorKind::kOutOfMemory, "libtiff could not allocate its options");
  TIFFOpenOptionsSetErrorHandlerExtR(opts, on_error_r, f);
  TIFFOpenOptionsSetWarningHandlerExtR(opts, on_warning_r, f);
  // libtiff's own buffers (directory arrays, strip buffers of unmapped reads): no single one
  // may be larger than this, whatever a hostile header claims.
  TIFFOpenOptionsSetMaxSingleMemAlloc(opts, tmsize_t{1} << 30);
  TIFF* t = TIFFClientOpenExt("tiff", "r", f, on_read, on_write, on_seek, on_close, on_size,
                              on_map, on_unmap, opts);
  TIFFOpenOptionsFree(opts);
#else
  static std::once_flag once;
  std::call_once(once, [] {
    TIFFSetErrorHandler(nullptr);
    TIFFSetWarningHandler(nullptr);
    TIFFSetErrorHandlerExt(on_error_ext);
    TIFFSetWarningHandlerExt(on_warning_ext);
  });
  TIFF* t = TIFFClientOpen("tiff", "r", f, on_read, on_write, on_seek, on_close, on_size, on_map,
                           on_unmap);
#endif
  if (t == nullptr) fail_tiff(*f, "cannot read the header");
  return TiffPtr(t);
}

enum class Path { kNative, kRgba };

// Everything the decode needs from the first directory.
struct Layout {
  uint32_t width = 0, height = 0;
  uint16_t spp = 1, bps = 1, photometric = PHOTOMETRIC_MINISBLACK, planar = PLANARCONFIG_CONTIG;
  uint16_t compression = COMPRESSION_NONE, orientation = 1;
  Path path = Path::kNative;
  int channels = 0;  // output channels for ColorOut::kAny
  int bit_depth = 8;
};

std::string sample_format_name(uint16_t f) {
  switch (f) {
    case SAMPLEFORMAT_INT: return "signed integer";
    case SAMPLEFORMAT_IEEEFP: return "floating point";
    case SAMPLEFORMAT_COMPLEXINT: return "complex integer";
    case SAMPLEFORMAT_COMPLEXIEEEFP: return "complex floating point";
    default: return "code " + std::to_string(f);
  }
}

// Reads the directory and decides how to decode it. Sets JPEGCOLORMODE on `t` when needed.
Layout read_layout(TIFF* t, const MemFile& f) {
  Layout l;
  if (!TIFFGetField(t, TIFFTAG_IMAGEWIDTH, &l.width) || !TIFFGetField(t, TIFFTAG_IMAGELENGTH, &l.height))
    fail_tiff(f, "the ImageWidth or ImageLength tag is missing");
  TIFFGetFieldDefaulted(t, TIFFTAG_SAMPLESPERPIXEL, &l.spp);
  TIFFGetFieldDefaulted(t, TIFFTAG_BITSPERSAMPLE, &l.bps);
  TIFFGetFieldDefaulted(t, TIFFTAG_PLANARCONFIG, &l.planar);
  TIFFGetFieldDefaulted(t, TIFFTAG_COMPRESSION, &l.compression);
  uint16_t sample_format = SAMPLEFORMAT_UINT;
  TIFFGetFieldDefaulted(t, TIFFTAG_SAMPLEFORMAT, &sample_format);
  uint16_t orientation = ORIENTATION_TOPLEFT;
  TIFFGetFieldDefaulted(t, TIFFTAG_ORIENTATION, &orientation);
  l.orientation = orientation >= 1 && orientation <= 8 ? orientation : 1;
  if (!TIFFGetField(t, TIFFTAG_PHOTOMETRIC, &l.photometric))
    l.photometric = l.spp >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK;  // as libtiff guesses
  if (l.spp < 1 || l.spp > kMaxChannels)
    fail(ErrorKind::kDecode, "TIFF has " + std::to_string(l.spp) +
                                 " samples per pixel; stoker decodes 1 to " +
                                 std::to_string(kMaxChannels));
  if (!TIFFIsCODECConfigured(l.compression)) {
    const TIFFCodec* c = TIFFFindCODEC(l.compression);
    fail(ErrorKind::kDecode, std::string("unsupported TIFF: compression ") +
                                 (c ? c->name : std::to_string(l.compression).c_str()) +
                                 " is not built into the libtiff stoker uses");
  }
  if (sample_format != SAMPLEFORMAT_UINT && sample_format != SAMPLEFORMAT_VOID)
    fail(ErrorKind::kDecode, "unsupported TIFF: " + sample_format_name(sample_format) +
                                 " samples; stoker decodes unsigned integer samples");
  if (l.planar != PLANARCONFIG_CONTIG && l.planar != PLANARCONFIG_SEPARATE)
    fail_tiff(f, "PlanarConfiguration is " + std::to_string(l.planar));
  const bool depth_ok = l.bps == 1 || l.bps == 2 || l.bps == 4 || l.bps == 8 || l.bps == 16;
  switch (l.photometric) {
    case PHOTOMETRIC_MINISBLACK:
    case PHOTOMETRIC_MINISWHITE:
      l.channels = l.spp;
      break;
    case PHOTOMETRIC_RGB:
      if (l.spp < 3) fail_tiff(f, "an RGB image with " + std::to_string(l.spp) + " samples per pixel");
      l.channels = l.spp;
      break;
    case PHOTOMETRIC_PALETTE:
      if (l.bps > 8 && l.bps != 16) break;  // refused below
      l.channels = 3;
      break;
    case PHOTOMETRIC_YCBCR:
      if (l.compression == COMPRESSION_JPEG && l.bps == 8 && l.spp == 3 &&
          l.planar == PLANARCONFIG_CONTIG) {
        // libjpeg converts to RGB; strip and scanline sizes then count RGB samples.
        TIFFSetField(t, TIFFTAG_JPEGCOLORMODE, JPEGCOLORMODE_RGB);
        l.channels = 3;
      } else {
        l.path = Path::kRgba;
      }
      break;
    default:
      l.path = Path::kRgba;
      break;
  }
  if (l.path == Path::kRgba) {
    char msg[1024] = "";
    if (!TIFFRGBAImageOK(t, msg))
      fail(ErrorKind::kDecode, std::string("unsupported TIFF: ") + msg);
    l.channels = 3;
    l.bit_depth = 8;
    return l;
  }
  if (!depth_ok)
    fail(ErrorKind::kDecode, "unsupported TIFF: " + std::to_string(l.bps) +
                                 " bits per sample; stoker decodes 1, 2, 4, 8 and 16");
  if (l.photometric == PHOTOMETRIC_PALETTE && l.spp != 1)
    fail_tiff(f, "a palette image with " + std::to_string(l.spp) + " samples per pixel");
  l.bit_depth = l.photometric == PHOTOMETRIC_PALETTE ? 8 : l.bps;
  return l;
}

// The colour map as 8-bit RGB triples: the values themselves when every entry is < 256 (an
// old-style 8-bit map), else their high byte, as libtiff's RGBA reader decides.
std::vector<uint16_t> read_palette(TIFF* t, const Layout& l, const MemFile& f) {
  uint16_t *r = nullptr, *g = nullptr, *b = nullptr;
  if (!TIFFGetField(t, TIFFTAG_COLORMAP, &r, &g, &b) || !r || !g || !b)
    fail_tiff(f, "a palette image without a ColorMap");
  const size_t n = size_t{1} << l.bps;
  bool eight = true;
  for (size_t i = 0; i < n && eight; i++) eight = r[i] < 256 && g[i] < 256 && b[i] < 256;
  std::vector<uint16_t> pal(3 * n);
  for (size_t i = 0; i < n; i++) {
    pal[3 * i] = eight ? r[i] : r[i] >> 8;
    pal[3 * i + 1] = eight ? g[i] : g[i] >> 8;
    pal[3 * i + 2] = eight ? b[i] : b[i] >> 8;
  }
  return pal;
}

// Sample `k` (of `stride` interleaved samples) of pixels [x0, x0 + w) of one decoded row, as
// raw values, into dst[x * dst_c + dst_k].
void unpack(const uint8_t* row, int bps, int stride, int k, int64_t x0, int64_t w, uint16_t* dst,
            int dst_c, int dst_k) {
  dst += dst_k;
  if (bps == 8) {
    const uint8_t* s = row + x0 * stride + k;
    for (int64_t x = 0; x < w; x++, s += stride, dst += dst_c) *dst = *s;
  } else if (bps == 16) {
    const uint16_t* s = reinterpret_cast<const uint16_t*>(row) + x0 * stride + k;  // host order
    for (int64_t x = 0; x < w; x++, s += stride, dst += dst_c) *dst = *s;
  } else {
    const unsigned mask = (1u << bps) - 1;
    uint64_t bit = static_cast<uint64_t>(x0 * stride + k) * bps;
    const uint64_t step = static_cast<uint64_t>(stride) * bps;
    for (int64_t x = 0; x < w; x++, bit += step, dst += dst_c)
      *dst = static_cast<uint16_t>((row[bit >> 3] >> (8 - bps - (bit & 7))) & mask);
  }
}

// Reads one strip or tile into buf; throws on failure.
void read_unit(TIFF* t, const MemFile& f, bool tiled, uint32_t index, std::vector<uint8_t>& buf) {
  const tmsize_t n = tiled ? TIFFReadEncodedTile(t, index, buf.data(), static_cast<tmsize_t>(buf.size()))
                           : TIFFReadEncodedStrip(t, index, buf.data(), static_cast<tmsize_t>(buf.size()));
  if (n < 0)
    fail_tiff(f, std::string("cannot decode ") + (tiled ? "tile " : "strip ") +
                     std::to_string(index) + "; the file is truncated or corrupt");
}

template <typename T>
void decode_native(TIFF* t, const MemFile& f, const Layout& l, const Plan& plan,
                   const ImageView<T>& out) {
  const bool tiled = TIFFIsTiled(t) != 0;
  const bool separate = l.planar == PLANARCONFIG_SEPARATE && l.spp > 1;
  const int planes = separate ? l.spp : 1;
  const int stride = separate ? 1 : l.spp;  // samples per pixel within one plane's row
  const bool palette = l.photometric == PHOTOMETRIC_PALETTE;
  const bool white = l.photometric == PHOTOMETRIC_MINISWHITE;
  const uint32_t maxv = palette ? 255u : (1u << l.bps) - 1;
  const int src_c = palette ? 3 : l.spp;
  std::vector<uint16_t> pal;
  if (palette) pal = read_palette(t, l, f);

  // Units: strips (unit_w = image width) or tiles.
  uint32_t unit_w = l.width, unit_h = 0;
  if (tiled) {
    if (!TIFFGetField(t, TIFFTAG_TILEWIDTH, &unit_w) || !TIFFGetField(t, TIFFTAG_TILELENGTH, &unit_h) ||
        unit_w == 0 || unit_h == 0)
      fail_tiff(f, "a tiled image without a valid TileWidth/TileLength");
  } else {
    uint32_t rps = 0;
    TIFFGetFieldDefaulted(t, TIFFTAG_ROWSPERSTRIP, &rps);
    unit_h = rps == 0 || rps > l.height ? l.height : rps;
  }
  // A tile may be larger than the image; refuse tiles beyond all reason before allocating.
  const uint64_t unit_px = uint64_t{unit_w} * unit_h;
  const uint64_t image_px = uint64_t{l.width} * l.height;
  if (unit_px > std::max<uint64_t>(4 * image_px, 1u << 20) ||
      unit_px > static_cast<uint64_t>(std::max<int64_t>(plan.limits.max_pixels, 1 << 20)))
    fail_tiff(f, "tiles of " + std::to_string(unit_h) + "x" + std::to_string(unit_w) +
                     " for a " + std::to_string(l.height) + "x" + std::to_string(l.width) + " image");
  const tmsize_t unit_bytes = tiled ? TIFFTileSize(t) : TIFFStripSize(t);
  const tmsize_t row_bytes = tiled ? TIFFTileRowSize(t) : TIFFScanlineSize(t);
  if (unit_bytes <= 0 || row_bytes <= 0) fail_tiff(f, "cannot size its strips or tiles");
  const uint64_t need_row = (uint64_t{unit_w} * stride * l.bps + 7) / 8;
  if (static_cast<uint64_t>(row_bytes) < need_row ||
      static_cast<uint64_t>(unit_bytes) < static_cast<uint64_t>(row_bytes) * unit_h)
    fail_tiff(f, "strip or tile sizes do not match the image layout");

  // Fast path: 8-bit contiguous samples straight from the strip/tile to the output.
  const bool direct8 = sizeof(T) == 1 && l.bps == 8 && !separate && !palette && !white;

  std::vector<std::vector<uint8_t>> bufs(planes, std::vector<uint8_t>(static_cast<size_t>(unit_bytes)));
  // One band of the roi: unit_h rows x roi width x src samples, as raw values.
  std::vector<uint16_t> band;
  if (!direct8) band.resize(static_cast<size_t>(unit_h) * plan.w * l.spp);
  std::vector<uint16_t> rgb;
  if (palette) rgb.resize(static_cast<size_t>(plan.w) * 3);
  std::vector<T> tmp;

  const int64_t y_end = plan.y0 + plan.h, x_end = plan.x0 + plan.w;
  for (int64_t by = plan.y0 / unit_h * unit_h; by < y_end; by += unit_h) {
    const int64_t r0 = std::max<int64_t>(by, plan.y0), r1 = std::min<int64_t>(by + unit_h, y_end);
    const int64_t cols_begin = tiled ? plan.x0 / unit_w * unit_w : 0;
    for (int64_t bx = cols_begin; bx < x_end; bx += unit_w) {
      const int64_t c0 = std::max<int64_t>(bx, plan.x0), c1 = std::min<int64_t>(bx + unit_w, x_end);
      for (int p = 0; p < planes; p++) {
        const uint32_t index = tiled ? TIFFComputeTile(t, static_cast<uint32_t>(bx), static_cast<uint32_t>(by), 0,
                                                       static_cast<uint16_t>(p))
                                     : TIFFComputeStrip(t, static_cast<uint32_t>(by), static_cast<uint16_t>(p));
        read_unit(t, f, tiled, index, bufs[p]);
      }
      for (int64_t y = r0; y < r1; y++) {
        const size_t off = static_cast<size_t>(y - by) * static_cast<size_t>(row_bytes);
        if (direct8) {
          convert_row(reinterpret_cast<const T*>(bufs[0].data() + off) + (c0 - bx) * l.spp, l.spp,
                      c1 - c0, plan.color, out.row(y - plan.y0) + (c0 - plan.x0) * out.pixel_stride,
                      out.pixel_stride);
          continue;
        }
        uint16_t* dst = band.data() + (static_cast<size_t>(y - r0) * plan.w + (c0 - plan.x0)) * l.spp;
        for (int p = 0; p < planes; p++) {
          const uint8_t* row = bufs[p].data() + off;
          if (separate) unpack(row, l.bps, 1, 0, c0 - bx, c1 - c0, dst, l.spp, p);
          else
            for (int k = 0; k < l.spp; k++) unpack(row, l.bps, stride, k, c0 - bx, c1 - c0, dst, l.spp, k);
        }
      }
    }
    if (direct8) continue;
    for (int64_t y = r0; y < r1; y++) {
      uint16_t* row = band.data() + static_cast<size_t>(y - r0) * plan.w * l.spp;
      const size_t n = static_cast<size_t>(plan.w) * l.spp;
      if (white)
        for (size_t k = 0; k < n; k++) row[k] = static_cast<uint16_t>(maxv - row[k]);
      const uint16_t* src = row;
      if (palette) {
        const uint32_t last = (1u << l.bps) - 1;
        for (int64_t x = 0; x < plan.w; x++) {
          const uint32_t idx = std::min<uint32_t>(row[x], last);
          std::memcpy(&rgb[3 * x], &pal[3 * idx], 3 * sizeof(uint16_t));
        }
        src = rgb.data();
      }
      scale_convert_row(src, src_c, plan.w, maxv, plan.color, out.row(y - plan.y0),
                        out.pixel_stride, tmp);
    }
  }
}

// Photometric interpretations the native path does not handle: libtiff converts to 8-bit RGBA.
template <typename T>
void decode_rgba(TIFF* t, const MemFile& f, const Plan& plan, const ImageView<T>& out) {
  char msg[1024] = "";
  TIFFRGBAImage img;
  if (!TIFFRGBAImageBegin(&img, t, 1, msg)) fail(ErrorKind::kDecode, std::string("unsupported TIFF: ") + msg);
  struct End {
    TIFFRGBAImage* i;
    ~End() { TIFFRGBAImageEnd(i); }
  } end{&img};
  img.req_orientation = img.orientation;  // rows as stored; our plan applies the orientation
  img.row_offset = static_cast<int>(plan.y0);
  img.col_offset = static_cast<int>(plan.x0);
  std::vector<uint32_t> raster(static_cast<size_t>(plan.w) * plan.h);
  if (!TIFFRGBAImageGet(&img, raster.data(), static_cast<uint32_t>(plan.w), static_cast<uint32_t>(plan.h)))
    fail_tiff(f, "cannot decode the image");
  std::vector<uint16_t> row(static_cast<size_t>(plan.w) * 3);
  std::vector<T> tmp;
  for (int64_t y = 0; y < plan.h; y++) {
    const uint32_t* s = raster.data() + static_cast<size_t>(y) * plan.w;
    for (int64_t x = 0; x < plan.w; x++) {
      row[3 * x] = static_cast<uint16_t>(TIFFGetR(s[x]));
      row[3 * x + 1] = static_cast<uint16_t>(TIFFGetG(s[x]));
      row[3 * x + 2] = static_cast<uint16_t>(TIFFGetB(s[x]));
    }
    scale_convert_row(row.data(), 3, plan.w, 255, plan.color, out.row(y), out.pixel_stride, tmp);
  }
}

template <typename T>
void decode_t(const uint8_t* data, size_t size, const ImageInfo& info, const Plan& plan,
              const ImageView<T>& out) {
  MemFile f{data, size, 0, {}};
  TiffPtr t = open_tiff(&f);
  const Layout l = read_layout(t.get(), f);
  if (l.height != info.height || l.width != info.width || l.channels != info.channels)
    fail(ErrorKind::kInvalidArgument,
         "tiff decode: the data is " + std::to_string(l.height) + "x" + std::to_string(l.width) +
             "x" + std::to_string(l.channels) + " but ImageInfo says " + std::to_string(info.height) +
             "x" + std::to_string(info.width) + "x" + std::to_string(info.channels) +
             "; pass the ImageInfo from peek() of the same data");
  if (l.path == Path::kRgba) decode_rgba(t.get(), f, plan, out);
  else decode_native(t.get(), f, l, plan, out);
}

}  // namespace

ImageInfo tiff_peek(const uint8_t* data, size_t size) {
  MemFile f{data, size, 0, {}};
  TiffPtr t = open_tiff(&f);
  const Layout l = read_layout(t.get(), f);
  ImageInfo info;
  info.format = ImageFormat::kTiff;
  info.height = l.height;
  info.width = l.width;
  info.channels = l.channels;
  info.bit_depth = l.bit_depth;
  info.orientation = l.orientation;
  return info;
}

void tiff_decode(const uint8_t* data, size_t size, const ImageInfo& info, const Plan& plan,
                 const ImageView<uint8_t>& region) {
  decode_t(data, size, info, plan, region);
}

void tiff_decode(const uint8_t* data, size_t size, const ImageInfo& info, const Plan& plan,
                 const ImageView<uint16_t>& region) {
  decode_t(data, size, info, plan, region);
}

#endif  // STOKER_WITH_TIFF

}  // namespace stoker::codecs::detail
