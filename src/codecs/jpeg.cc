// JPEG through libjpeg-turbo's jpeglib API.
//
// Errors: libjpeg reports fatal errors through error_exit, which must not return. We longjmp
// back to a setjmp in a small C-style function (run_peek / run_decode) that owns no C++ object
// with a destructor; every buffer is allocated by the caller before it, and the C++ exception
// is thrown only after that function has returned.
//
// Warnings (corrupt but decodable data): premature end of data (JWRN_JPEG_EOF: a truncated
// file, which libjpeg would otherwise pad with gray) is an error. Every other warning
// (extraneous bytes before a marker, bad Huffman code, bogus progression, ...) is tolerated and
// the image decodes as libjpeg repairs it, which is what Pillow and OpenCV give for such files.
// A progressive file with more than kMaxScans scans is refused (a known CPU-exhaustion trick).
// A full decode ends with jpeg_finish_decompress, so like Pillow it needs the EOI marker and
// valid markers after the last scan (bytes after EOI are ignored); a roi that ends above the
// bottom stops reading there.
//
// Pixels: ISLOW DCT and fancy upsampling (libjpeg's defaults) so RGB output equals Pillow's.
// CMYK/YCCK are taken as Adobe-inverted (as Pillow and TurboJPEG assume) and converted with
// Pillow's formula.
#include <algorithm>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

// jpeglib.h needs FILE and size_t declared first.
#include <jpeglib.h>
#include <jerror.h>

#include "codecs/image_codec_detail.h"
#include "core/error.h"

namespace stoker::codecs::detail {
namespace {

constexpr int kMaxScans = 500;  // libjpeg-turbo's own suggested limit (tjbench -limitscans)

enum class Status { kOk, kError, kUnsupported, kMismatch };

struct JpegErrorMgr {
  jpeg_error_mgr pub;
  jmp_buf jmp;
  Status status;
  char message[JMSG_LENGTH_MAX + 64];
};

bool is_unsupported_code(int code) {
  switch (code) {
    case JERR_BAD_PRECISION:       // 12-bit / 16-bit samples in an 8-bit build
    case JERR_SOF_UNSUPPORTED:     // lossless, hierarchical
    case JERR_NOT_COMPILED:
#if JPEG_LIB_VERSION < 70  // the libjpeg 6b API (Debian); the 8 API (Ubuntu) has no such code
    case JERR_ARITH_NOTIMPL:
#endif
    case JERR_CONVERSION_NOTIMPL:
    case JERR_BAD_J_COLORSPACE:
    case JERR_NO_ARITH_TABLE:
      return true;
    default:
      return false;
  }
}

void on_error_exit(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<JpegErrorMgr*>(cinfo->err);
  (*cinfo->err->format_message)(cinfo, err->message);
  err->status = is_unsupported_code(cinfo->err->msg_code) ? Status::kUnsupported : Status::kError;
  longjmp(err->jmp, 1);
}

void on_emit_message(j_common_ptr cinfo, int msg_level) {
  if (msg_level >= 0) return;  // trace messages
  auto* err = reinterpret_cast<JpegErrorMgr*>(cinfo->err);
  if (cinfo->err->msg_code == JWRN_JPEG_EOF) {
    std::snprintf(err->message, sizeof(err->message),
                  "premature end of data: the file is truncated");
    err->status = Status::kError;
    longjmp(err->jmp, 1);
  }
  cinfo->err->num_warnings++;
}

void on_output_message(j_common_ptr) {}  // never print to stderr

void on_progress(j_common_ptr cinfo) {
  auto* d = reinterpret_cast<j_decompress_ptr>(cinfo);
  if (cinfo->is_decompressor && d->input_scan_number > kMaxScans) {
    auto* err = reinterpret_cast<JpegErrorMgr*>(cinfo->err);
    std::snprintf(err->message, sizeof(err->message),
                  "progressive JPEG has more than %d scans; refusing it as malicious", kMaxScans);
    err->status = Status::kError;
    longjmp(err->jmp, 1);
  }
}

// One libjpeg decompressor; trivially destructible so it may live across the longjmp.
struct Ctx {
  jpeg_decompress_struct cinfo;
  JpegErrorMgr err;
  jpeg_progress_mgr progress;
  bool created;
};

void init_ctx(Ctx* c) {
  std::memset(c, 0, sizeof(*c));
  c->cinfo.err = jpeg_std_error(&c->err.pub);
  c->err.pub.error_exit = on_error_exit;
  c->err.pub.emit_message = on_emit_message;
  c->err.pub.output_message = on_output_message;
  c->err.status = Status::kOk;
  c->progress.progress_monitor = on_progress;
}

// Destroys the decompressor whatever happens; the only RAII around the C state.
struct CtxGuard {
  Ctx* c;
  ~CtxGuard() {
    if (c->created) jpeg_destroy_decompress(&c->cinfo);
  }
};

struct PeekOut {
  int64_t height, width;
  int components;
  J_COLOR_SPACE color_space;
  int precision;
};

Status run_peek(Ctx* c, const uint8_t* data, size_t size, PeekOut* out) {
  if (setjmp(c->err.jmp)) return c->err.status;
  jpeg_create_decompress(&c->cinfo);
  c->created = true;
  jpeg_mem_src(&c->cinfo, data, static_cast<unsigned long>(size));
  jpeg_save_markers(&c->cinfo, JPEG_APP0 + 1, 0xFFFF);
  jpeg_read_header(&c->cinfo, TRUE);
  out->height = c->cinfo.image_height;
  out->width = c->cinfo.image_width;
  out->components = c->cinfo.num_components;
  out->color_space = c->cinfo.jpeg_color_space;
  out->precision = c->cinfo.data_precision;
  return Status::kOk;
}

enum class Conv { kDirect, kRgbToGray, kCmyk };

struct Job {
  int64_t expect_h, expect_w;  // stored size from peek
  int scale_denom;
  bool fast_idct;
  J_COLOR_SPACE out_space;
  int decoded_c;               // components libjpeg writes per pixel
  Conv conv;
  ColorOut color;
  int64_t y0, x0, h, w;        // region, in scaled stored coordinates
  int64_t scaled_h, scaled_w;
  uint8_t* rowbuf;             // >= scaled_w * 4 bytes
  ImageView<uint8_t> out;      // h x w, trivially destructible
};

void emit(const Job& j, const uint8_t* src, uint8_t* dst) {
  const int64_t ps = j.out.pixel_stride;
  switch (j.conv) {
    case Conv::kDirect:
      if (ps == j.decoded_c) {
        std::memcpy(dst, src, static_cast<size_t>(j.w * j.decoded_c));
      } else if (j.decoded_c == 3) {  // mirrored/transposed output: walk pixel by pixel
        for (int64_t x = 0; x < j.w; x++, src += 3, dst += ps) {
          dst[0] = src[0];
          dst[1] = src[1];
          dst[2] = src[2];
        }
      } else {
        for (int64_t x = 0; x < j.w; x++, src += 1, dst += ps) dst[0] = src[0];
      }
      return;
    case Conv::kRgbToGray:
      for (int64_t x = 0; x < j.w; x++, src += 3, dst += ps) dst[0] = luma(src[0], src[1], src[2]);
      return;
    case Conv::kCmyk:
      // Adobe-inverted CMYK: stored values are 255 - ink. Pillow: R = nk - nk*C/255 with
      // nk = 255 - K (K, C the true inks), using its MULDIV255 rounding.
      for (int64_t x = 0; x < j.w; x++, src += 4, dst += ps) {
        int nk = src[3];
        int rgb[3];
        for (int k = 0; k < 3; k++) {
          int t = (255 - src[k]) * nk + 128;
          rgb[k] = nk - (((t >> 8) + t) >> 8);
        }
        if (j.color == ColorOut::kGray) {
          dst[0] = luma(rgb[0], rgb[1], rgb[2]);
        } else if (j.color == ColorOut::kBGR) {
          dst[0] = rgb[2]; dst[1] = rgb[1]; dst[2] = rgb[0];
        } else {
          dst[0] = rgb[0]; dst[1] = rgb[1]; dst[2] = rgb[2];
        }
      }
      return;
  }
}

// Colour: what libjpeg writes, and what we do after. ColorOut::kAny is RGB or gray here.
void choose_output(J_COLOR_SPACE file_space, Job* j) {
  if (file_space == JCS_CMYK || file_space == JCS_YCCK) {
    j->out_space = JCS_CMYK;
    j->decoded_c = 4;
    j->conv = Conv::kCmyk;
  } else if (file_space == JCS_GRAYSCALE) {
    j->conv = Conv::kDirect;
    if (j->color == ColorOut::kGray || j->color == ColorOut::kAny) {
      j->out_space = JCS_GRAYSCALE;
      j->decoded_c = 1;
    } else {
      j->out_space = j->color == ColorOut::kBGR ? JCS_EXT_BGR : JCS_EXT_RGB;
      j->decoded_c = 3;
    }
  } else if (j->color == ColorOut::kGray) {
    j->out_space = JCS_EXT_RGB;  // then Pillow's luma, not libjpeg's Y channel
    j->decoded_c = 3;
    j->conv = Conv::kRgbToGray;
  } else {
    j->out_space = j->color == ColorOut::kBGR ? JCS_EXT_BGR : JCS_EXT_RGB;
    j->decoded_c = 3;
    j->conv = Conv::kDirect;
  }
}

Status run_decode(Ctx* c, const uint8_t* data, size_t size, Job* j) {
  if (setjmp(c->err.jmp)) return c->err.status;
  j_decompress_ptr ci = &c->cinfo;
  jpeg_create_decompress(ci);
  c->created = true;
  ci->progress = &c->progress;
  jpeg_mem_src(ci, data, static_cast<unsigned long>(size));
  jpeg_read_header(ci, TRUE);
  if (ci->image_height != j->expect_h || ci->image_width != j->expect_w) {
    std::snprintf(c->err.message, sizeof(c->err.message),
                  "the data is %ux%u but ImageInfo says %lldx%lld; pass the ImageInfo from peek() "
                  "of the same data", ci->image_height, ci->image_width,
                  static_cast<long long>(j->expect_h), static_cast<long long>(j->expect_w));
    return Status::kMismatch;
  }
  choose_output(ci->jpeg_color_space, j);
  const int produced = j->conv == Conv::kDirect ? j->decoded_c : j->color == ColorOut::kGray ? 1 : 3;
  if (produced != j->out.channels) {
    std::snprintf(c->err.message, sizeof(c->err.message),
                  "the data gives %d channels but the output has %lld; pass the ImageInfo from "
                  "peek() of the same data", produced, static_cast<long long>(j->out.channels));
    return Status::kMismatch;
  }
  ci->out_color_space = j->out_space;
  ci->dct_method = j->fast_idct ? JDCT_IFAST : JDCT_ISLOW;
  ci->do_fancy_upsampling = TRUE;
  ci->scale_num = 1;
  ci->scale_denom = static_cast<unsigned>(j->scale_denom);
  jpeg_start_decompress(ci);
  if (ci->output_height != j->scaled_h || ci->output_width != j->scaled_w ||
      ci->output_components != j->decoded_c) {
    std::snprintf(c->err.message, sizeof(c->err.message),
                  "libjpeg output is %ux%ux%d, expected %lldx%lldx%d", ci->output_height,
                  ci->output_width, ci->output_components, static_cast<long long>(j->scaled_h),
                  static_cast<long long>(j->scaled_w), j->decoded_c);
    return Status::kMismatch;
  }
  int64_t skip_x = 0;  // columns to drop at the left of each decoded row
  if (j->x0 != 0 || j->w != j->scaled_w) {
    // libjpeg upsamples the first and last columns of a crop as image edges (chroma
    // replicated), so decode kCropMargin more columns than kept on each side.
    constexpr int64_t kCropMargin = 16;
    const int64_t cx0 = std::max<int64_t>(0, j->x0 - kCropMargin);
    const int64_t cx1 = std::min(j->scaled_w, j->x0 + j->w + kCropMargin);
    JDIMENSION xoff = static_cast<JDIMENSION>(cx0), cw = static_cast<JDIMENSION>(cx1 - cx0);
    jpeg_crop_scanline(ci, &xoff, &cw);  // moves xoff left to an iMCU boundary
    skip_x = j->x0 - xoff;
  }
  if (j->y0 > 0) {
    JDIMENSION want = static_cast<JDIMENSION>(j->y0);
    JDIMENSION got = jpeg_skip_scanlines(ci, want);
    if (got != want) {
      std::snprintf(c->err.message, sizeof(c->err.message), "could skip only %u of %u rows",
                    got, want);
      return Status::kError;
    }
  }
  const bool direct_ok = j->conv == Conv::kDirect && skip_x == 0 && ci->output_width == j->w &&
                         j->out.pixel_stride == j->decoded_c;
  for (int64_t y = 0; y < j->h; y++) {
    uint8_t* dst = j->out.row(y);
    JSAMPROW row = direct_ok ? dst : j->rowbuf;
    if (jpeg_read_scanlines(ci, &row, 1) != 1) {
      std::snprintf(c->err.message, sizeof(c->err.message), "decoder returned no row %lld",
                    static_cast<long long>(j->y0 + y));
      return Status::kError;
    }
    if (!direct_ok) emit(*j, j->rowbuf + skip_x * j->decoded_c, dst);
  }
  // As Pillow does: a full decode also reads the markers after the last scan up to EOI, so a
  // missing EOI or a broken marker there is an error. A roi that stops above the bottom does
  // not read on (jpeg_destroy_decompress aborts cleanly), so it may succeed on a file whose
  // end is damaged.
  if (ci->output_scanline == ci->output_height) jpeg_finish_decompress(ci);
  return Status::kOk;
}

[[noreturn]] void throw_status(Status s, const char* msg, const char* what) {
  switch (s) {
    case Status::kUnsupported:
      fail(ErrorKind::kDecode, std::string("unsupported JPEG: ") + msg);
    case Status::kMismatch:
      fail(ErrorKind::kInvalidArgument, std::string(what) + ": " + msg);
    default:
      fail(ErrorKind::kDecode, std::string("corrupt JPEG: ") + msg);
  }
}

}  // namespace

ImageInfo jpeg_peek(const uint8_t* data, size_t size) {
  Ctx c;
  init_ctx(&c);
  CtxGuard guard{&c};
  PeekOut p{};
  Status s = run_peek(&c, data, size, &p);
  if (s != Status::kOk) throw_status(s, c.err.message, "jpeg peek");
  ImageInfo info;
  info.format = ImageFormat::kJpeg;
  info.height = p.height;
  info.width = p.width;
  info.bit_depth = p.precision;
  switch (p.color_space) {
    case JCS_GRAYSCALE: info.channels = 1; break;
    case JCS_YCbCr:
    case JCS_RGB: info.channels = 3; break;
    case JCS_CMYK:
    case JCS_YCCK: info.channels = 3; break;  // converted to RGB
    default:
      fail(ErrorKind::kDecode, "unsupported JPEG: " + std::to_string(p.components) +
                                   " components in an unknown colour space");
  }
  for (jpeg_saved_marker_ptr m = c.cinfo.marker_list; m != nullptr; m = m->next) {
    if (m->marker == JPEG_APP0 + 1 && m->data_length >= 6 &&
        std::memcmp(m->data, "Exif\0", 5) == 0) {
      info.orientation = exif_orientation(m->data + 6, m->data_length - 6);
      break;
    }
  }
  return info;
}

void jpeg_decode(const uint8_t* data, size_t size, const ImageInfo& info, const Plan& plan,
                 const ImageView<uint8_t>& region) {
  Job j{};
  j.expect_h = info.height;
  j.expect_w = info.width;
  j.scale_denom = plan.scale_denom;
  j.fast_idct = plan.fast_idct;
  j.color = plan.color;
  j.y0 = plan.y0;
  j.x0 = plan.x0;
  j.h = plan.h;
  j.w = plan.w;
  j.scaled_h = plan.scaled_h;
  j.scaled_w = plan.scaled_w;
  j.out = region;
  std::vector<uint8_t> rowbuf(static_cast<size_t>(plan.scaled_w) * 4 + 64);
  j.rowbuf = rowbuf.data();

  Ctx c;
  init_ctx(&c);
  CtxGuard guard{&c};
  Status s = run_decode(&c, data, size, &j);
  if (s != Status::kOk) throw_status(s, c.err.message, "jpeg decode");
}

}  // namespace stoker::codecs::detail
