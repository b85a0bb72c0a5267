// libjpeg reports fatal errors through error_exit, which must not return: it longjmps back to
// the setjmp in roundtrip(), which holds no C++ object with a destructor, and everything that
// must be released afterwards lives in a State reached through a pointer.
#include "kernels/cpu/warp/jpeg_distortion.h"

#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include <jpeglib.h>

namespace stoker {
namespace kernels {
namespace {

struct ErrorMgr {
  jpeg_error_mgr pub;
  std::jmp_buf jmp;
  char message[JMSG_LENGTH_MAX];
};

void on_error_exit(j_common_ptr ci) {
  ErrorMgr* e = reinterpret_cast<ErrorMgr*>(ci->err);
  (*ci->err->format_message)(ci, e->message);
  std::longjmp(e->jmp, 1);
}

void on_output_message(j_common_ptr) {}  // warnings are not worth a line on stderr

struct State {
  jpeg_compress_struct comp;
  jpeg_decompress_struct decomp;
  ErrorMgr err;
  unsigned char* encoded = nullptr;
  unsigned long encoded_size = 0;
  volatile bool comp_made = false, decomp_made = false;
};

void release(State* s) {
  if (s->comp_made) jpeg_destroy_compress(&s->comp);
  if (s->decomp_made) jpeg_destroy_decompress(&s->decomp);
  std::free(s->encoded);
  s->encoded = nullptr;
}

// False on a libjpeg error (message in s->err.message).
bool roundtrip(State* s, const ImageView<uint8_t>* out, const ImageView<const uint8_t>* in, int quality) {
  s->comp.err = jpeg_std_error(&s->err.pub);
  s->decomp.err = &s->err.pub;
  s->err.pub.error_exit = on_error_exit;
  s->err.pub.output_message = on_output_message;
  if (setjmp(s->err.jmp)) return false;

  jpeg_create_compress(&s->comp);
  s->comp_made = true;
  jpeg_mem_dest(&s->comp, &s->encoded, &s->encoded_size);
  s->comp.image_width = static_cast<JDIMENSION>(in->width);
  s->comp.image_height = static_cast<JDIMENSION>(in->height);
  s->comp.input_components = static_cast<int>(in->channels);
  s->comp.in_color_space = in->channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&s->comp);
  jpeg_set_quality(&s->comp, quality, TRUE);
  jpeg_start_compress(&s->comp, TRUE);
  while (s->comp.next_scanline < s->comp.image_height) {
    JSAMPROW row = const_cast<JSAMPLE*>(in->row(s->comp.next_scanline));
    jpeg_write_scanlines(&s->comp, &row, 1);
  }
  jpeg_finish_compress(&s->comp);

  jpeg_create_decompress(&s->decomp);
  s->decomp_made = true;
  jpeg_mem_src(&s->decomp, s->encoded, s->encoded_size);
  jpeg_read_header(&s->decomp, TRUE);
  s->decomp.out_color_space = in->channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_start_decompress(&s->decomp);
  while (s->decomp.output_scanline < s->decomp.output_height) {
    JSAMPROW row = out->row(s->decomp.output_scanline);
    jpeg_read_scanlines(&s->decomp, &row, 1);
  }
  jpeg_finish_decompress(&s->decomp);
  return true;
}

}  // namespace

std::string jpeg_compression_distortion(const ImageView<uint8_t>& out, const ImageView<const uint8_t>& in,
                                        int quality) {
  if (in.channels != 1 && in.channels != 3) return "JPEG distortion takes 1 or 3 channels";
  if (in.pixel_stride != in.channels || out.pixel_stride != out.channels || out.channels != in.channels ||
      out.height != in.height || out.width != in.width)
    return "JPEG distortion needs packed rows of the same shape in and out";
  if (in.height == 0 || in.width == 0) return {};
  if (in.height > kJpegMaxSide || in.width > kJpegMaxSide) return "image too large for JPEG";
  auto s = std::make_unique<State>();
  bool ok = roundtrip(s.get(), &out, &in, quality < 1 ? 1 : quality > 100 ? 100 : quality);
  std::string msg = ok ? std::string() : std::string(s->err.message);
  release(s.get());
  return msg;
}

}  // namespace kernels
}  // namespace stoker
