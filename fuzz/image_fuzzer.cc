// libFuzzer harness: still-image decoding through src/codecs/image_codec.h (peek, output_shape,
// decode), as the pipeline drives it, for every format detect_format() knows: JPEG, PNG, and
// each format added behind the same interface (TIFF, WebP, JPEG 2000, BMP, PNM), with no edit
// here. Input layout and the contract checked: image_harness.h.
//
// One format-specific step: for PNG with p[5] bit 1 set, the chunk CRCs are recomputed before
// decoding. libpng refuses a critical chunk (IHDR, PLTE, IDAT) whose CRC is wrong, so without
// this almost every mutation of a header field or of the pixel data would stop at the CRC check
// and never reach the code behind it.
//
// STOKER_FUZZ_FORMATS=jpeg,png (format_name() spellings) limits a run to those formats, to dig
// into one of them for longer.
#include <zlib.h>

#include <cstdlib>
#include <set>
#include <sstream>
#include <string>

#include "image_harness.h"

namespace {

using stoker::codecs::ImageFormat;

std::set<std::string> g_only;  // empty: every format

uint32_t be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

// Rewrites the CRC of every whole chunk after the 8-byte signature; stops at a chunk that runs
// past the end.
void fix_png_crcs(uint8_t* png, size_t size) {
  size_t pos = 8;
  while (pos + 12 <= size) {
    const uint64_t len = be32(png + pos);
    if (len > size - pos - 12) return;
    const uint32_t crc = static_cast<uint32_t>(
        crc32(0, png + pos + 4, static_cast<uInt>(len + 4)));
    uint8_t* c = png + pos + 8 + len;
    c[0] = crc >> 24; c[1] = crc >> 16; c[2] = crc >> 8; c[3] = crc;
    pos += 12 + len;
  }
}

void put32(std::vector<uint8_t>& v, uint32_t x) {
  for (int s = 24; s >= 0; s -= 8) v.push_back(static_cast<uint8_t>(x >> s));
}

// Parameter bytes, then a PNG: signature, a 5x5 RGBA IHDR, and a chunk of `type` whose header
// claims `claimed` bytes while only `present` bytes follow.
std::vector<uint8_t> png_with_lying_chunk(const char* type, uint32_t claimed, size_t present) {
  std::vector<uint8_t> v = {0, 0, 0, 255, 255, 0};  // RGB, full image
  const uint8_t sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  v.insert(v.end(), sig, sig + 8);
  const size_t ihdr = v.size();
  put32(v, 13);
  const uint8_t body[17] = {'I', 'H', 'D', 'R', 0, 0, 0, 5, 0, 0, 0, 5, 8, 6, 0, 0, 0};
  v.insert(v.end(), body, body + 17);
  put32(v, static_cast<uint32_t>(crc32(0, v.data() + ihdr + 4, 17)));
  put32(v, claimed);
  v.insert(v.end(), type, type + 4);
  for (size_t i = 0; i < present; i++) v.push_back(static_cast<uint8_t>('a' + i % 26));
  return v;
}

// Inputs that fuzzing found and that are fixed; each is made here, not stored as a file.
std::vector<stoker::fuzz::Regression> regressions() {
  return {
      // 114 bytes whose zTXt chunk claimed 1.9 GB: libpng allocated (and touched) that much to
      // skip it, 2 GB of RSS for one tiny file. Fixed by check_chunk_lengths in png.cc.
      {"png: zTXt claiming 1.9 GB", png_with_lying_chunk("zTXt", 1933723914u, 81)},
      {"png: iCCP claiming 1 GB", png_with_lying_chunk("iCCP", 1u << 30, 40)},
  };
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace stoker;
  constexpr size_t P = fuzz::kParamBytes;
  if (size < P) return 0;
  const ImageFormat format = codecs::detect_format(data + P, size - P);
  if (format == ImageFormat::kUnknown) return 0;  // refused before any decoder runs
  if (!g_only.empty() && !g_only.count(codecs::format_name(format))) return 0;
  if (format != ImageFormat::kPng || !(data[5] & 2)) return fuzz::fuzz_image(data, size);
  std::vector<uint8_t> copy(data, data + size);
  fix_png_crcs(copy.data() + P, size - P);
  return fuzz::fuzz_image(copy.data(), copy.size());
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* only = std::getenv("STOKER_FUZZ_FORMATS")) {
    std::istringstream in(only);
    for (std::string f; std::getline(in, f, ',');)
      if (!f.empty()) g_only.insert(f);
  }
  stoker::fuzz::replay(regressions(), LLVMFuzzerTestOneInput);
  return 0;
}
