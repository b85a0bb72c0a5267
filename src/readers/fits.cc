#include "readers/fits.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include "core/error.h"

namespace stoker::readers::fits {
namespace {

constexpr int64_t kBlock = 2880;
constexpr int kCard = 80;
constexpr int kMaxAxes = 999;

[[noreturn]] void bad(const RandomAccessFile& f, int hdu, const std::string& what) {
  fail(ErrorKind::kDecode, "'" + f.path() + "' HDU " + std::to_string(hdu) +
                               " is not valid FITS: " + what);
}

// One HDU's header: its keywords (value text, strings unquoted) and where its data starts.
struct Header {
  std::map<std::string, std::string> keys;
  int64_t data_offset = 0;
};

Header read_header(const RandomAccessFile& f, int64_t offset, int hdu) {
  Header h;
  char block[kBlock];
  for (int64_t at = offset;; at += kBlock) {
    if (at + kBlock > f.size())
      fail(ErrorKind::kDecode, "'" + f.path() + "' is truncated: the header of HDU " +
                                   std::to_string(hdu) + " has no END card before the file ends");
    f.read_exact(at, block, kBlock, "FITS header block");
    for (int c = 0; c < kBlock / kCard; ++c) {
      const char* card = block + c * kCard;
      std::string key(card, 8);
      key.erase(key.find_last_not_of(' ') + 1);
      if (key == "END") {
        h.data_offset = at + kBlock;
        return h;
      }
      if (key.empty() || card[8] != '=' || card[9] != ' ') continue;  // COMMENT, HISTORY, ...
      std::string v(card + 10, kCard - 10);
      size_t a = v.find_first_not_of(' ');
      if (a == std::string::npos) continue;
      if (v[a] == '\'') {  // a string: '' is a quote inside it
        std::string s;
        for (size_t i = a + 1; i < v.size(); ++i) {
          if (v[i] == '\'') {
            if (i + 1 < v.size() && v[i + 1] == '\'') {
              s += '\'';
              ++i;
              continue;
            }
            break;
          }
          s += v[i];
        }
        s.erase(s.find_last_not_of(' ') + 1);
        h.keys[key] = s;
      } else {
        size_t e = v.find('/', a);
        std::string s = v.substr(a, e == std::string::npos ? std::string::npos : e - a);
        s.erase(s.find_last_not_of(' ') + 1);
        h.keys[key] = s;
      }
    }
  }
}

bool has(const Header& h, const std::string& k) { return h.keys.count(k) != 0; }

int64_t int_key(const RandomAccessFile& f, int hdu, const Header& h, const std::string& k,
                int64_t dflt, bool required) {
  auto it = h.keys.find(k);
  if (it == h.keys.end()) {
    if (required) bad(f, hdu, "its header has no " + k);
    return dflt;
  }
  char* end = nullptr;
  const long long v = std::strtoll(it->second.c_str(), &end, 10);
  if (end == it->second.c_str() || *end)
    bad(f, hdu, k + " is '" + it->second + "', not an integer");
  return v;
}

double real_key(const RandomAccessFile& f, int hdu, const Header& h, const std::string& k, double dflt) {
  auto it = h.keys.find(k);
  if (it == h.keys.end()) return dflt;
  std::string s = it->second;
  std::replace(s.begin(), s.end(), 'D', 'E');  // Fortran's double exponent
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end || !std::isfinite(v))
    bad(f, hdu, k + " is '" + it->second + "', not a number");
  return v;
}

// Bytes of the HDU's data (before padding): |BITPIX|/8 * GCOUNT * (PCOUNT + NAXIS1*...*NAXISn).
int64_t data_bytes(const RandomAccessFile& f, int hdu, const Header& h) {
  const int64_t bitpix = int_key(f, hdu, h, "BITPIX", 0, true);
  const int64_t naxis = int_key(f, hdu, h, "NAXIS", 0, true);
  if (bitpix != 8 && bitpix != 16 && bitpix != 32 && bitpix != 64 && bitpix != -32 && bitpix != -64)
    bad(f, hdu, "BITPIX is " + std::to_string(bitpix) + " (8, 16, 32, 64, -32 or -64)");
  if (naxis < 0 || naxis > kMaxAxes) bad(f, hdu, "NAXIS is " + std::to_string(naxis));
  if (naxis == 0) return 0;
  // Every product checked: a hostile header must not wrap around to a size that fits the file.
  auto too_big = [&] { bad(f, hdu, "its axes hold more bytes than a file can"); };
  const bool groups = int_key(f, hdu, h, "NAXIS1", 0, true) == 0 && has(h, "GROUPS");
  int64_t n = 1;
  for (int64_t a = groups ? 2 : 1; a <= naxis; ++a) {  // random groups count from NAXIS2
    const int64_t d = int_key(f, hdu, h, "NAXIS" + std::to_string(a), 0, true);
    if (d < 0) bad(f, hdu, "NAXIS" + std::to_string(a) + " is negative");
    if (__builtin_mul_overflow(n, d, &n)) too_big();
  }
  const int64_t pcount = int_key(f, hdu, h, "PCOUNT", 0, false);
  const int64_t gcount = int_key(f, hdu, h, "GCOUNT", 1, false);
  if (pcount < 0 || gcount < 0) bad(f, hdu, "PCOUNT or GCOUNT is negative");
  int64_t bytes = 0;
  if (__builtin_add_overflow(pcount, n, &bytes) || __builtin_mul_overflow(bytes, gcount, &bytes) ||
      __builtin_mul_overflow(bytes, std::abs(bitpix) / 8, &bytes) ||
      bytes > std::numeric_limits<int64_t>::max() - 2 * kBlock)
    too_big();
  return bytes;
}

// cfitsio's equivalent type of a scaled integer image.
DType equivalent(int bitpix, double bscale, double bzero) {
  switch (bitpix) {
    case -32: return DType::kFloat32;
    case -64: return DType::kFloat64;
    default: break;
  }
  const DType stored = bitpix == 8 ? DType::kUInt8 : bitpix == 16 ? DType::kInt16
                       : bitpix == 32 ? DType::kInt32 : DType::kInt64;
  if (bscale == 1.0 && bzero == 0.0) return stored;
  if (bitpix == 8 && bscale == 1.0 && bzero == -128.0) return DType::kInt8;
  if (bitpix == 16 && bscale == 1.0 && bzero == 32768.0) return DType::kUInt16;
  if (bitpix == 32 && bscale == 1.0 && bzero == 2147483648.0) return DType::kUInt32;
  if (bitpix == 64 && bscale == 1.0 && bzero == 9223372036854775808.0) return DType::kUInt64;
  const bool integral = std::floor(bscale) == bscale && std::floor(bzero) == bzero;
  if (!integral || bitpix == 64) return bitpix <= 16 ? DType::kFloat32 : DType::kFloat64;
  const double lo_s = bitpix == 8 ? 0 : bitpix == 16 ? -32768.0 : -2147483648.0;
  const double hi_s = bitpix == 8 ? 255 : bitpix == 16 ? 32767.0 : 2147483647.0;
  const double a = bzero + bscale * lo_s, b = bzero + bscale * hi_s;
  const double lo = std::min(a, b), hi = std::max(a, b);
  if (lo >= 0 && hi <= 255) return DType::kUInt8;
  if (lo >= -128 && hi <= 127) return DType::kInt8;
  if (lo >= 0 && hi <= 65535) return DType::kUInt16;
  if (lo >= -32768 && hi <= 32767) return DType::kInt16;
  if (lo >= 0 && hi <= 4294967295.0) return DType::kUInt32;
  if (lo >= -2147483648.0 && hi <= 2147483647.0) return DType::kInt32;
  return DType::kFloat64;
}

template <typename S>
S load_be(const uint8_t* p) {
  uint8_t b[sizeof(S)];
  for (size_t i = 0; i < sizeof(S); ++i) b[i] = p[sizeof(S) - 1 - i];
  S v;
  std::memcpy(&v, b, sizeof(S));
  return v;
}

}  // namespace

Image find_image(const RandomAccessFile& f, int hdu) {
  if (hdu < 1)
    fail(ErrorKind::kInvalidArgument, "HDU " + std::to_string(hdu) + " of '" + f.path() +
                                          "' does not exist: HDUs count from 1 (the primary HDU)");
  {
    char magic[9] = {};
    if (f.read_some(0, magic, 9) < 9 || std::memcmp(magic, "SIMPLE  =", 9) != 0)
      fail(ErrorKind::kDecode, "'" + f.path() + "' is not a FITS file: it does not start with "
                                                "the SIMPLE card");
  }
  int64_t offset = 0;
  for (int k = 1;; ++k) {
    if (offset >= f.size())
      fail(ErrorKind::kInvalidArgument,
           "HDU " + std::to_string(hdu) + " of '" + f.path() + "' does not exist: the file has " +
               std::to_string(k - 1) + " HDUs");
    const Header h = read_header(f, offset, k);
    const int64_t bytes = data_bytes(f, k, h);
    if (h.data_offset + bytes > f.size())
      fail(ErrorKind::kDecode, "'" + f.path() + "' is truncated: HDU " + std::to_string(k) +
                                   " needs " + std::to_string(bytes) + " bytes of data, the file "
                                   "has " + std::to_string(f.size() - h.data_offset) + " after its header");
    if (k == hdu) {
      const std::string xt = k == 1 ? "IMAGE" : (has(h, "XTENSION") ? h.keys.at("XTENSION") : "");
      if (xt == "BINTABLE" && has(h, "ZIMAGE") && h.keys.at("ZIMAGE") == "T")
        fail(ErrorKind::kUnsupported, "HDU " + std::to_string(hdu) + " of '" + f.path() +
                                          "' is a tile-compressed image, which stoker does not "
                                          "read yet; uncompress it (e.g. astropy, funpack)");
      if (xt != "IMAGE")
        fail(ErrorKind::kUnsupported, "HDU " + std::to_string(hdu) + " of '" + f.path() + "' is " +
                                          (xt.empty() ? "not an extension" : "a " + xt) +
                                          ", not an image; only image HDUs are read");
      Image im;
      im.bitpix = static_cast<int>(int_key(f, k, h, "BITPIX", 0, true));
      const int64_t naxis = int_key(f, k, h, "NAXIS", 0, true);
      if (naxis == 0)
        fail(ErrorKind::kInvalidArgument, "HDU " + std::to_string(hdu) + " of '" + f.path() +
                                              "' holds no data (NAXIS = 0); the primary HDU of "
                                              "a file with extensions usually does not: "
                                              "hdu_indices counts from 1, and 2 is the first extension");
      for (int64_t a = naxis; a >= 1; --a)
        im.shape.push_back(int_key(f, k, h, "NAXIS" + std::to_string(a), 0, true));
      // The pixels must lie within the HDU's data (GCOUNT 0 would make it empty).
      int64_t pixels = 1;
      for (int64_t d : im.shape) pixels *= d;  // no overflow: data_bytes checked the product
      if (pixels * (std::abs(im.bitpix) / 8) > bytes)
        bad(f, k, "its " + std::to_string(pixels) + " pixels do not fit the " +
                      std::to_string(bytes) + " bytes of data its GCOUNT and PCOUNT give");
      im.bscale = real_key(f, k, h, "BSCALE", 1.0);
      im.bzero = real_key(f, k, h, "BZERO", 0.0);
      im.dtype = equivalent(im.bitpix, im.bscale, im.bzero);
      im.data_offset = h.data_offset;
      return im;
    }
    offset = h.data_offset + (bytes + kBlock - 1) / kBlock * kBlock;
  }
}

void read_image(const RandomAccessFile& f, const Image& im, void* dst) {
  const int64_t n = volume(im.shape);
  const size_t elem = static_cast<size_t>(std::abs(im.bitpix) / 8);
  std::vector<uint8_t> raw(static_cast<size_t>(n) * elem);
  f.read_exact(im.data_offset, raw.data(), raw.size(), "image data");
  const bool scaled = !(im.bscale == 1.0 && im.bzero == 0.0);
  visit_dtype(im.dtype, [&](auto tag) {
    using Out = decltype(tag);
    Out* out = static_cast<Out*>(dst);
    auto each = [&](auto stored_tag) {
      using S = decltype(stored_tag);
      for (int64_t i = 0; i < n; ++i) {
        const S v = load_be<S>(raw.data() + i * sizeof(S));
        if (!scaled) {
          out[i] = static_cast<Out>(v);
        } else if constexpr (std::is_same_v<S, int64_t>) {
          // BZERO 2^63: the unsigned 64-bit convention, exact (the sign bit flipped).
          if constexpr (std::is_same_v<Out, uint64_t>)
            out[i] = static_cast<uint64_t>(v) ^ (uint64_t{1} << 63);
          else
            out[i] = static_cast<Out>(im.bzero + im.bscale * static_cast<double>(v));
        } else {
          out[i] = static_cast<Out>(im.bzero + im.bscale * static_cast<double>(v));
        }
      }
    };
    switch (im.bitpix) {
      case 8: each(uint8_t{}); break;
      case 16: each(int16_t{}); break;
      case 32: each(int32_t{}); break;
      case 64: each(int64_t{}); break;
      case -32: each(float{}); break;
      default: each(double{}); break;
    }
  });
}

}  // namespace stoker::readers::fits
