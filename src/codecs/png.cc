// PNG through libpng.
//
// Errors: libpng's error callback records the message and longjmps back to a setjmp in a small
// C-style function (run_peek / run_decode) that owns no C++ object with a destructor; its
// buffers are malloc'd into the Ctx and freed by the caller's guard. Warnings (bad ancillary
// chunk CRCs, unknown chunks, ...) are ignored, as libpng's defaults and Pillow do; errors in
// critical data (IHDR, IDAT, truncation) are errors. IEND is not required once all rows are
// read.
//
// Samples: libpng expands palette, 1/2/4-bit gray and tRNS (to an alpha channel); 16-bit data
// goes to 8-bit with png_set_scale_16 (v * 255 / 65535 rounded, not the high byte), or stays
// exact for 16-bit output; 8-bit data to 16-bit is v * 257 (png_set_expand_16). Colour
// conversion (gray <-> RGB, luma, alpha drop) is convert_row, shared with the other formats.
// No gamma or ICC processing, as in Pillow.
#include <png.h>

#include <cctype>
#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "codecs/image_codec_detail.h"
#include "core/error.h"

namespace stoker::codecs::detail {
namespace {

struct Ctx {
  png_structp png;
  png_infop info;
  const uint8_t* data;
  size_t size, pos;
  void* rowbuf;   // malloc'd; freed by CtxGuard
  bool mismatch;  // the data does not match the ImageInfo given (a caller mistake)
  char message[256];
};

void on_error(png_structp png, png_const_charp msg) {
  auto* c = static_cast<Ctx*>(png_get_error_ptr(png));
  if (msg != c->message)
    std::snprintf(c->message, sizeof(c->message), "%s", msg ? msg : "unknown libpng error");
  png_longjmp(png, 1);
}

void on_warning(png_structp, png_const_charp) {}

void on_read(png_structp png, png_bytep out, size_t n) {
  auto* c = static_cast<Ctx*>(png_get_io_ptr(png));
  if (n > c->size - c->pos) png_error(png, "premature end of data: the file is truncated");
  std::memcpy(out, c->data + c->pos, n);
  c->pos += n;
}

struct CtxGuard {
  Ctx* c;
  ~CtxGuard() {
    if (c->png) png_destroy_read_struct(&c->png, c->info ? &c->info : nullptr, nullptr);
    std::free(c->rowbuf);
  }
};

// Creates the libpng structs; false on allocation failure (message set).
bool init_ctx(Ctx* c, const uint8_t* data, size_t size) {
  std::memset(c, 0, sizeof(*c));
  c->data = data;
  c->size = size;
  c->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, c, on_error, on_warning);
  if (c->png) c->info = png_create_info_struct(c->png);
  if (!c->png || !c->info) {
    std::snprintf(c->message, sizeof(c->message), "libpng could not allocate its state");
    return false;
  }
  png_set_read_fn(c->png, c, on_read);
  // Our own max_pixels limit is the guard; libpng's default 1e6 x 1e6 would be a second one.
  png_set_user_limits(c->png, PNG_UINT_31_MAX, PNG_UINT_31_MAX);
  return true;
}

int channels_after_expand(int color_type, bool trns) {
  switch (color_type) {
    case PNG_COLOR_TYPE_GRAY: return trns ? 2 : 1;
    case PNG_COLOR_TYPE_GRAY_ALPHA: return 2;
    case PNG_COLOR_TYPE_PALETTE: return trns ? 4 : 3;
    case PNG_COLOR_TYPE_RGB: return trns ? 4 : 3;
    case PNG_COLOR_TYPE_RGB_ALPHA: return 4;
    default: return 0;
  }
}

bool run_peek(Ctx* c, ImageInfo* out) {
  if (setjmp(png_jmpbuf(c->png))) return false;
  png_read_info(c->png, c->info);
  png_uint_32 w = 0, h = 0;
  int depth = 0, color_type = 0;
  png_get_IHDR(c->png, c->info, &w, &h, &depth, &color_type, nullptr, nullptr, nullptr);
  out->format = ImageFormat::kPng;
  out->height = h;
  out->width = w;
  out->bit_depth = depth;
  out->channels =
      channels_after_expand(color_type, png_get_valid(c->png, c->info, PNG_INFO_tRNS) != 0);
  out->orientation = 1;
#ifdef PNG_eXIf_SUPPORTED
  png_uint_32 n = 0;
  png_bytep exif = nullptr;
  if (png_get_eXIf_1(c->png, c->info, &n, &exif) && exif != nullptr)
    out->orientation = exif_orientation(exif, n);
#endif
  return true;
}

template <typename T>
struct Job {
  int64_t expect_h, expect_w;
  int expect_c;
  ColorOut color;
  int64_t y0, x0, h, w;
  ImageView<T> out;
};

template <typename T>
bool run_decode(Ctx* c, const Job<T>* j) {
  if (setjmp(png_jmpbuf(c->png))) return false;
  png_structp png = c->png;
  png_read_info(png, c->info);
  png_uint_32 width = 0, height = 0;
  int depth = 0, color_type = 0, interlace = 0;
  png_get_IHDR(png, c->info, &width, &height, &depth, &color_type, &interlace, nullptr, nullptr);
  if (height != j->expect_h || width != j->expect_w) {
    std::snprintf(c->message, sizeof(c->message),
                  "the data is %ux%u but ImageInfo says %lldx%lld; pass the ImageInfo from peek() "
                  "of the same data", height, width, static_cast<long long>(j->expect_h),
                  static_cast<long long>(j->expect_w));
    c->mismatch = true;
    png_error(png, c->message);
  }
  if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
  if (color_type == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
  if (png_get_valid(png, c->info, PNG_INFO_tRNS)) png_set_tRNS_to_alpha(png);
  if (sizeof(T) == 1) {
    if (depth == 16) png_set_scale_16(png);
  } else {
    if (depth < 16) png_set_expand_16(png);
    const uint16_t one = 1;
    if (*reinterpret_cast<const uint8_t*>(&one) == 1) png_set_swap(png);  // to host order
  }
  const int passes = interlace != PNG_INTERLACE_NONE ? png_set_interlace_handling(png) : 1;
  png_read_update_info(png, c->info);
  const int ch = png_get_channels(png, c->info);
  const size_t rowbytes = png_get_rowbytes(png, c->info);
  if (ch != j->expect_c || rowbytes != static_cast<size_t>(width) * ch * sizeof(T)) {
    std::snprintf(c->message, sizeof(c->message),
                  "libpng gives %d channels, %zu bytes a row; expected %d channels of %zu bytes; "
                  "pass the ImageInfo from peek() of the same data",
                  ch, rowbytes, j->expect_c, sizeof(T));
    c->mismatch = true;
    png_error(png, c->message);
  }
  const int64_t y_end = j->y0 + j->h;
  const ImageView<T>& out = j->out;
  if (passes == 1) {
    c->rowbuf = std::malloc(rowbytes);
    if (!c->rowbuf) png_error(png, "out of memory for a row");
    // Straight into the output when no conversion and no column crop is needed.
    const bool same = j->color == ColorOut::kAny || (j->color == ColorOut::kRGB && ch == 3) ||
                      (j->color == ColorOut::kGray && ch == 1);
    const bool direct = same && j->x0 == 0 && j->w == width && out.pixel_stride == ch;
    for (int64_t y = 0; y < y_end; y++) {
      if (direct && y >= j->y0) {
        png_read_row(png, reinterpret_cast<png_bytep>(out.row(y - j->y0)), nullptr);
        continue;
      }
      png_read_row(png, static_cast<png_bytep>(c->rowbuf), nullptr);
      if (y >= j->y0)
        convert_row(static_cast<const T*>(c->rowbuf) + j->x0 * ch, ch, j->w, j->color,
                    out.row(y - j->y0), out.pixel_stride);
    }
    return true;  // rows after the roi and IEND are not needed
  }
  // Adam7: every pass touches every row, so the rows of the roi are kept whole until the end;
  // rows outside it go through one scratch row.
  const size_t keep = static_cast<size_t>(j->h) + 1;
  c->rowbuf = std::calloc(keep, rowbytes);
  if (!c->rowbuf) png_error(png, "out of memory for the interlaced rows");
  auto* rows = static_cast<png_bytep>(c->rowbuf);
  png_bytep scratch = rows + j->h * rowbytes;
  for (int p = 0; p < passes; p++)
    for (int64_t y = 0; y < height; y++)
      png_read_row(png, y >= j->y0 && y < y_end ? rows + (y - j->y0) * rowbytes : scratch,
                   nullptr);
  for (int64_t y = 0; y < j->h; y++)
    convert_row(reinterpret_cast<const T*>(rows + y * rowbytes) + j->x0 * ch, ch, j->w, j->color,
                out.row(y), out.pixel_stride);
  return true;
}

// libpng allocates a whole ancillary chunk (or, when it is over libpng's own limit, a buffer to
// skip it) of the length its header declares before reading it: a 114-byte file whose zTXt
// chunk claimed 1.9 GB took the process to 1.9 GB of RSS (found by fuzz/png_fuzzer). No chunk
// can be longer than what follows it in the file, so such a file is refused here, before
// libpng sees it. IDAT is left out: libpng streams it in pieces, and a file cut in its last
// IDAT still decodes a roi above the cut.
void check_chunk_lengths(const uint8_t* data, size_t size) {
  size_t pos = 8;  // after the signature
  while (pos + 8 <= size) {
    const uint32_t len = (uint32_t{data[pos]} << 24) | (uint32_t{data[pos + 1]} << 16) |
                         (uint32_t{data[pos + 2]} << 8) | data[pos + 3];
    const uint8_t* type = data + pos + 4;
    if (std::memcmp(type, "IEND", 4) == 0) return;
    const size_t left = size - pos - 8;
    if (len > left) {
      if (std::memcmp(type, "IDAT", 4) == 0) return;
      std::string name;
      for (int i = 0; i < 4; i++) name += std::isalnum(type[i]) ? static_cast<char>(type[i]) : '?';
      fail(ErrorKind::kDecode, "corrupt PNG: chunk '" + name + "' at byte " + std::to_string(pos) +
                                   " says it holds " + std::to_string(len) + " bytes, but only " +
                                   std::to_string(left) + " follow; the file is truncated or corrupt");
    }
    pos += size_t{12} + len;
  }
}

template <typename T>
void decode_t(const uint8_t* data, size_t size, const ImageInfo& info, const Plan& plan,
              const ImageView<T>& region) {
  check_chunk_lengths(data, size);
  Ctx c;
  bool ok = init_ctx(&c, data, size);
  CtxGuard guard{&c};
  if (!ok) fail(ErrorKind::kOutOfMemory, c.message);
  Job<T> j{info.height, info.width, info.channels, plan.color, plan.y0, plan.x0, plan.h, plan.w,
           region};
  if (!run_decode(&c, &j)) {
    if (c.mismatch)
      fail(ErrorKind::kInvalidArgument, std::string("png decode: ") + c.message);
    fail(ErrorKind::kDecode, std::string("corrupt PNG: ") + c.message);
  }
}

}  // namespace

ImageInfo png_peek(const uint8_t* data, size_t size) {
  check_chunk_lengths(data, size);
  Ctx c;
  bool ok = init_ctx(&c, data, size);
  CtxGuard guard{&c};
  if (!ok) fail(ErrorKind::kOutOfMemory, c.message);
  ImageInfo info;
  if (!run_peek(&c, &info)) fail(ErrorKind::kDecode, std::string("corrupt PNG: ") + c.message);
  if (info.channels == 0)
    fail(ErrorKind::kDecode, "unsupported PNG colour type");
  return info;
}

void png_decode(const uint8_t* data, size_t size, const ImageInfo& info, const Plan& plan,
                const ImageView<uint8_t>& region) {
  decode_t(data, size, info, plan, region);
}

void png_decode(const uint8_t* data, size_t size, const ImageInfo& info, const Plan& plan,
                const ImageView<uint16_t>& region) {
  decode_t(data, size, info, plan, region);
}

}  // namespace stoker::codecs::detail
