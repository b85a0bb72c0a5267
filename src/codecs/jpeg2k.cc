// JPEG 2000 through OpenJPEG: JP2 files and raw J2K codestreams, read from memory.
//
// Pixels: components of up to 16 bits, unsigned or signed (shifted by 2^(prec-1) to unsigned),
// kept exact for 16-bit output when 16 bits deep; other depths are scaled to the output's full
// range (scale_sample). 1 component is gray, 2 gray+alpha, 3 RGB, 4 RGBA, more a multi-channel
// image (ColorOut::kAny); JP2 palettes (pclr/cmap) and channel definitions (cdef) are applied
// by OpenJPEG. Subsampled components are upsampled by replication. sYCC images are converted to
// RGB; CMYK and e-YCC are refused. The multi-component transform (RCT/ICT) is OpenJPEG's.
// Roi: opj_set_decode_area, so only the code-blocks that reach the roi are decoded.
// Errors: strict mode (OpenJPEG >= 2.5), so a truncated codestream is an error, not a partly
// gray image; OpenJPEG's messages go to a per-codec handler, never to stderr.
#include "codecs/image_codec_detail.h"
#include "core/error.h"

#ifdef STOKER_WITH_OPENJPEG
#include <openjpeg.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>
#endif

namespace stoker::codecs::detail {

#ifndef STOKER_WITH_OPENJPEG

bool jpeg2k_built_in() { return false; }

ImageInfo jpeg2k_peek(const uint8_t*, size_t) {
  fail_built_without("OpenJPEG", "JPEG 2000", "libopenjp2-7-dev");
}
void jpeg2k_decode(const uint8_t*, size_t, const ImageInfo&, const Plan&, const ImageView<uint8_t>&) {
  fail_built_without("OpenJPEG", "JPEG 2000", "libopenjp2-7-dev");
}
void jpeg2k_decode(const uint8_t*, size_t, const ImageInfo&, const Plan&, const ImageView<uint16_t>&) {
  fail_built_without("OpenJPEG", "JPEG 2000", "libopenjp2-7-dev");
}

#else  // STOKER_WITH_OPENJPEG

bool jpeg2k_built_in() { return true; }

namespace {

struct Source {
  const uint8_t* data;
  uint64_t size, pos;
  std::string error;
};

OPJ_SIZE_T on_read(void* buf, OPJ_SIZE_T n, void* user) {
  auto* s = static_cast<Source*>(user);
  if (s->pos >= s->size) return static_cast<OPJ_SIZE_T>(-1);
  const uint64_t k = std::min<uint64_t>(n, s->size - s->pos);
  std::memcpy(buf, s->data + s->pos, k);
  s->pos += k;
  return static_cast<OPJ_SIZE_T>(k);
}
OPJ_OFF_T on_skip(OPJ_OFF_T n, void* user) {
  auto* s = static_cast<Source*>(user);
  if (n < 0) {
    const uint64_t back = std::min<uint64_t>(static_cast<uint64_t>(-n), s->pos);
    s->pos -= back;
    return -static_cast<OPJ_OFF_T>(back);
  }
  const uint64_t k = std::min<uint64_t>(static_cast<uint64_t>(n), s->size - std::min(s->pos, s->size));
  s->pos += k;
  return static_cast<OPJ_OFF_T>(k);
}
OPJ_BOOL on_seek(OPJ_OFF_T pos, void* user) {
  auto* s = static_cast<Source*>(user);
  if (pos < 0 || static_cast<uint64_t>(pos) > s->size) return OPJ_FALSE;
  s->pos = static_cast<uint64_t>(pos);
  return OPJ_TRUE;
}
void on_error(const char* msg, void* user) {
  auto* s = static_cast<Source*>(user);
  if (!s->error.empty() || msg == nullptr) return;  // keep the first: it is the cause
  s->error = msg;
  while (!s->error.empty() && (s->error.back() == '\n' || s->error.back() == ' ')) s->error.pop_back();
}
void on_quiet(const char*, void*) {}

bool is_jp2(const uint8_t* data, size_t size) {
  return size >= 12 && data[4] == 'j' && data[5] == 'P' && data[6] == ' ' && data[7] == ' ';
}

// One OpenJPEG decoder over the data, with its header read. Owns everything it creates.
class Decoder {
 public:
  Decoder(const uint8_t* data, size_t size) : src_{data, size, 0, {}} {
    stream_.reset(opj_stream_create(OPJ_J2K_STREAM_CHUNK_SIZE, OPJ_TRUE));
    codec_.reset(opj_create_decompress(is_jp2(data, size) ? OPJ_CODEC_JP2 : OPJ_CODEC_J2K));
    if (!stream_ || !codec_) fail(ErrorKind::kOutOfMemory, "OpenJPEG could not allocate its decoder");
    opj_stream_t* st = stream_.get();
    opj_stream_set_user_data(st, &src_, nullptr);
    opj_stream_set_user_data_length(st, size);
    opj_stream_set_read_function(st, on_read);
    opj_stream_set_skip_function(st, on_skip);
    opj_stream_set_seek_function(st, on_seek);
    opj_codec_t* codec = codec_.get();
    opj_set_error_handler(codec, on_error, &src_);
    opj_set_warning_handler(codec, on_quiet, nullptr);
    opj_set_info_handler(codec, on_quiet, nullptr);
    opj_dparameters_t params;
    opj_set_default_decoder_parameters(&params);
    if (!opj_setup_decoder(codec, &params)) fail_here("cannot set up the decoder");
#if OPJ_VERSION_MAJOR > 2 || (OPJ_VERSION_MAJOR == 2 && OPJ_VERSION_MINOR >= 5)
    opj_decoder_set_strict_mode(codec, OPJ_TRUE);
#endif
    opj_image_t* img = nullptr;
    const OPJ_BOOL ok = opj_read_header(st, codec, &img);
    image_.reset(img);
    if (!ok || img == nullptr) fail_here("cannot read the header");
  }

  opj_image_t* image() const { return image_.get(); }

  // Decodes the rectangle [x0, x1) x [y0, y1) of the image (image coordinates).
  void decode(int64_t y0, int64_t x0, int64_t y1, int64_t x1, bool full) {
    opj_image_t* img = image_.get();
    const auto gx = static_cast<OPJ_INT32>(img->x0), gy = static_cast<OPJ_INT32>(img->y0);
    if (!full && !opj_set_decode_area(codec_.get(), img, gx + static_cast<OPJ_INT32>(x0),
                                      gy + static_cast<OPJ_INT32>(y0), gx + static_cast<OPJ_INT32>(x1),
                                      gy + static_cast<OPJ_INT32>(y1)))
      fail_here("cannot set the decode area");
    if (!opj_decode(codec_.get(), stream_.get(), img))
      fail_here("cannot decode the image; the file is truncated or corrupt");
    if (!opj_end_decompress(codec_.get(), stream_.get()))
      fail_here("cannot finish decoding; the file is truncated or corrupt");
  }

  [[noreturn]] void fail_here(const std::string& what) const {
    fail(ErrorKind::kDecode, "corrupt JPEG 2000: " + what + (src_.error.empty() ? "" : " (" + src_.error + ")"));
  }

 private:
  template <typename X, void (*F)(X*)>
  struct Del {
    void operator()(X* p) const { F(p); }
  };
  Source src_;
  // Destroyed in reverse order: image, codec, then the stream they read.
  std::unique_ptr<opj_stream_t, Del<opj_stream_t, opj_stream_destroy>> stream_;
  std::unique_ptr<opj_codec_t, Del<opj_codec_t, opj_destroy_codec>> codec_;
  std::unique_ptr<opj_image_t, Del<opj_image_t, opj_image_destroy>> image_;
};

uint32_t be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

// Channels after OpenJPEG applies a JP2 palette: the number of cmap entries when the header
// box (jp2h) has both pclr and cmap; 0 when there is no palette.
int jp2_palette_channels(const uint8_t* data, size_t size) {
  auto walk = [&](uint64_t pos, uint64_t end, const char* type, uint64_t* body, uint64_t* len) {
    while (pos + 8 <= end) {
      uint64_t l = be32(data + pos), hdr = 8;
      if (l == 1) {
        if (pos + 16 > end) return false;
        l = (uint64_t{be32(data + pos + 8)} << 32) | be32(data + pos + 12);
        hdr = 16;
      } else if (l == 0) {
        l = end - pos;
      }
      if (l < hdr || l > end - pos) return false;
      if (std::memcmp(data + pos + 4, type, 4) == 0) {
        *body = pos + hdr;
        *len = l - hdr;
        return true;
      }
      pos += l;
    }
    return false;
  };
  uint64_t hb = 0, hl = 0, pb = 0, pl = 0, cb = 0, cl = 0;
  if (!is_jp2(data, size) || !walk(0, size, "jp2h", &hb, &hl)) return 0;
  if (!walk(hb, hb + hl, "pclr", &pb, &pl) || !walk(hb, hb + hl, "cmap", &cb, &cl)) return 0;
  return static_cast<int>(cl / 4);
}

struct Comps {
  int channels = 0, bit_depth = 0;
  bool sycc = false;
};

Comps check_components(const opj_image_t* img, const Decoder& d) {
  Comps c;
  c.channels = static_cast<int>(img->numcomps);
  if (c.channels < 1 || c.channels > kMaxChannels)
    fail(ErrorKind::kDecode, "unsupported JPEG 2000: " + std::to_string(img->numcomps) +
                                 " components; stoker decodes 1 to " + std::to_string(kMaxChannels));
  if (img->color_space == OPJ_CLRSPC_CMYK || img->color_space == OPJ_CLRSPC_EYCC)
    fail(ErrorKind::kDecode, std::string("unsupported JPEG 2000: colour space ") +
                                 (img->color_space == OPJ_CLRSPC_CMYK ? "CMYK" : "e-YCC") +
                                 "; stoker decodes gray, RGB and sYCC");
  c.sycc = img->color_space == OPJ_CLRSPC_SYCC && c.channels >= 3;
  for (int k = 0; k < c.channels; k++) {
    const opj_image_comp_t& comp = img->comps[k];
    if (comp.prec < 1 || comp.prec > 16)
      fail(ErrorKind::kDecode, "unsupported JPEG 2000: component " + std::to_string(k) + " has " +
                                   std::to_string(comp.prec) + " bits; stoker decodes 1 to 16");
    if (comp.dx == 0 || comp.dy == 0) d.fail_here("a component has a zero sampling step");
    c.bit_depth = std::max(c.bit_depth, static_cast<int>(comp.prec));
  }
  return c;
}

template <typename T>
void decode_t(const uint8_t* data, size_t size, const ImageInfo& info, const Plan& plan,
              const ImageView<T>& out) {
  Decoder d(data, size);
  opj_image_t* img = d.image();
  const uint32_t gx0 = img->x0, gy0 = img->y0;  // the image's origin on the reference grid
  if (img->x1 - gx0 != info.width || img->y1 - gy0 != info.height)
    fail(ErrorKind::kInvalidArgument, "jpeg2000 decode: the data does not match the ImageInfo given; "
                                      "pass the ImageInfo from peek() of the same data");
  const bool full = plan.y0 == 0 && plan.x0 == 0 && plan.h == info.height && plan.w == info.width;
  d.decode(plan.y0, plan.x0, plan.y0 + plan.h, plan.x0 + plan.w, full);
  const Comps c = check_components(img, d);
  if (c.channels != info.channels)
    fail(ErrorKind::kDecode, "corrupt JPEG 2000: " + std::to_string(c.channels) +
                                 " components after decoding, but the header said " +
                                 std::to_string(info.channels));
  for (int k = 0; k < c.channels; k++)
    if (img->comps[k].data == nullptr || img->comps[k].w == 0 || img->comps[k].h == 0)
      d.fail_here("component " + std::to_string(k) + " was not decoded");

  // Per output column and component: the index of the sample that covers it.
  const int n = c.channels;
  std::vector<std::vector<uint32_t>> col(n, std::vector<uint32_t>(static_cast<size_t>(plan.w)));
  for (int k = 0; k < n; k++) {
    const opj_image_comp_t& comp = img->comps[k];
    for (int64_t x = 0; x < plan.w; x++) {
      const int64_t g = (gx0 + plan.x0 + x) / comp.dx - comp.x0;
      col[k][x] = static_cast<uint32_t>(std::clamp<int64_t>(g, 0, comp.w - 1));
    }
  }
  std::vector<int32_t> raw(static_cast<size_t>(plan.w) * n);  // unsigned samples, 0..maxv[k]
  std::vector<uint32_t> maxv(n);
  for (int k = 0; k < n; k++) maxv[k] = (1u << img->comps[k].prec) - 1;
  std::vector<T> row(static_cast<size_t>(plan.w) * n);
  for (int64_t y = 0; y < plan.h; y++) {
    for (int k = 0; k < n; k++) {
      const opj_image_comp_t& comp = img->comps[k];
      const int64_t gy = std::clamp<int64_t>((gy0 + plan.y0 + y) / comp.dy - comp.y0, 0, comp.h - 1);
      const OPJ_INT32* src = comp.data + static_cast<size_t>(gy) * comp.w;
      const int32_t hi = static_cast<int32_t>(maxv[k]), shift = comp.sgnd ? 1 << (comp.prec - 1) : 0;
      const uint32_t* cx = col[k].data();
      int32_t* dst = raw.data() + k;
      for (int64_t x = 0; x < plan.w; x++, dst += n) *dst = std::clamp(src[cx[x]] + shift, 0, hi);
    }
    if (c.sycc) {
      // sYCC (ITU-R BT.601, full range) to RGB, in the precision of the Y component.
      const int32_t hi = static_cast<int32_t>(maxv[0]), mid = (hi + 1) / 2;
      for (int64_t x = 0; x < plan.w; x++) {
        int32_t* p = raw.data() + x * n;
        const double Y = p[0], cb = p[1] - mid, cr = p[2] - mid;
        const double rgb[3] = {Y + 1.402 * cr, Y - 0.344136 * cb - 0.714136 * cr, Y + 1.772 * cb};
        for (int k = 0; k < 3; k++)
          p[k] = static_cast<int32_t>(std::lround(std::clamp(rgb[k], 0.0, static_cast<double>(hi))));
      }
    }
    for (int64_t x = 0; x < plan.w; x++)
      for (int k = 0; k < n; k++) {
        const uint32_t m = c.sycc && k < 3 ? maxv[0] : maxv[k];
        row[x * n + k] = scale_sample<T>(static_cast<uint32_t>(raw[x * n + k]), m);
      }
    convert_row(row.data(), n, plan.w, plan.color, out.row(y), out.pixel_stride);
  }
}

}  // namespace

ImageInfo jpeg2k_peek(const uint8_t* data, size_t size) {
  Decoder d(data, size);
  const opj_image_t* img = d.image();
  if (img->x1 <= img->x0 || img->y1 <= img->y0)
    d.fail_here("the image area is empty (" + std::to_string(img->x0) + ".." + std::to_string(img->x1) +
                " x " + std::to_string(img->y0) + ".." + std::to_string(img->y1) + ")");
  Comps c = check_components(img, d);
  if (int pal = jp2_palette_channels(data, size); pal > 0 && img->numcomps == 1) {
    if (pal > kMaxChannels) d.fail_here("a palette with " + std::to_string(pal) + " channels");
    c.channels = pal;
    c.bit_depth = 8;
  }
  ImageInfo info;
  info.format = ImageFormat::kJpeg2000;
  info.height = img->y1 - img->y0;
  info.width = img->x1 - img->x0;
  info.channels = c.channels;
  info.bit_depth = c.bit_depth;
  info.orientation = 1;
  return info;
}

void jpeg2k_decode(const uint8_t* data, size_t size, const ImageInfo& info, const Plan& plan,
                   const ImageView<uint8_t>& region) {
  decode_t(data, size, info, plan, region);
}

void jpeg2k_decode(const uint8_t* data, size_t size, const ImageInfo& info, const Plan& plan,
                   const ImageView<uint16_t>& region) {
  decode_t(data, size, info, plan, region);
}

#endif  // STOKER_WITH_OPENJPEG

}  // namespace stoker::codecs::detail
