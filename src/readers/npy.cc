#include "readers/npy.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/error.h"

namespace stoker::readers::npy {
namespace {

[[noreturn]] void bad(const Source& f, const std::string& what) {
  fail(ErrorKind::kDecode, "'" + f.name() + "' is not a valid .npy file: " + what);
}

bool host_is_little() {
  const uint16_t one = 1;
  uint8_t b;
  std::memcpy(&b, &one, 1);
  return b == 1;
}

// The value of `key` in the header's dict literal, as text ('...' string, True/False, (...)).
std::string dict_value(const Source& f, const std::string& dict, const std::string& key) {
  size_t k = dict.find("'" + key + "'");
  if (k == std::string::npos) k = dict.find("\"" + key + "\"");
  if (k == std::string::npos) bad(f, "the header has no '" + key + "' entry");
  size_t colon = dict.find(':', k + key.size() + 2);
  if (colon == std::string::npos) bad(f, "the header's '" + key + "' entry has no value");
  size_t v = dict.find_first_not_of(" \t", colon + 1);
  if (v == std::string::npos) bad(f, "the header's '" + key + "' entry has no value");
  if (dict[v] == '\'' || dict[v] == '"') {
    size_t end = dict.find(dict[v], v + 1);
    if (end == std::string::npos) bad(f, "the header's '" + key + "' string is not closed");
    return dict.substr(v + 1, end - v - 1);
  }
  if (dict[v] == '(') {
    size_t end = dict.find(')', v);
    if (end == std::string::npos) bad(f, "the header's '" + key + "' tuple is not closed");
    return dict.substr(v, end - v + 1);
  }
  size_t end = dict.find_first_of(",}", v);
  std::string s = dict.substr(v, end == std::string::npos ? std::string::npos : end - v);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.pop_back();
  return s;
}

DType parse_descr(const Source& f, const std::string& descr, bool* swap) {
  if (descr.size() < 3) bad(f, "the dtype '" + descr + "' is not a simple type");
  const char order = descr[0];
  const std::string code = descr.substr(1);
  DType t = DType::kNone;
  if (code == "b1") t = DType::kBool;
  else if (code == "i1") t = DType::kInt8;
  else if (code == "i2") t = DType::kInt16;
  else if (code == "i4") t = DType::kInt32;
  else if (code == "i8") t = DType::kInt64;
  else if (code == "u1") t = DType::kUInt8;
  else if (code == "u2") t = DType::kUInt16;
  else if (code == "u4") t = DType::kUInt32;
  else if (code == "u8") t = DType::kUInt64;
  else if (code == "f2") t = DType::kFloat16;
  else if (code == "f4") t = DType::kFloat32;
  else if (code == "f8") t = DType::kFloat64;
  if (t == DType::kNone || (order != '<' && order != '>' && order != '|' && order != '='))
    fail(ErrorKind::kUnsupported,
         "'" + f.name() + "' holds elements of NumPy dtype '" + descr + "', which stoker does "
         "not read; save bool, integer or float16/32/64 arrays (e.g. arr.astype(np.float32))");
  const bool little = host_is_little();
  *swap = dtype_size(t) > 1 && ((order == '<' && !little) || (order == '>' && little));
  return t;
}

void swap_elements(uint8_t* p, int64_t n, size_t elem) {
  for (int64_t i = 0; i < n; ++i, p += elem) std::reverse(p, p + elem);
}

}  // namespace

size_t MemorySource::read_some(int64_t offset, void* dst, size_t n) const {
  if (offset < 0 || offset >= size_) return 0;
  const size_t got = std::min(n, static_cast<size_t>(size_ - offset));
  std::memcpy(dst, data_ + offset, got);
  return got;
}

void MemorySource::read_exact(int64_t offset, void* dst, size_t n, const char* what) const {
  const size_t got = read_some(offset, dst, n);
  if (got != n)
    fail(ErrorKind::kDecode, "'" + name_ + "' is truncated: the " + what + " at offset " +
                                 std::to_string(offset) + " needs " + std::to_string(n) +
                                 " bytes, " + std::to_string(n - got) + " of them are missing");
}

Header read_header(const Source& f) {
  uint8_t pre[12] = {};
  size_t got = f.read_some(0, pre, sizeof(pre));
  if (got < 10 || std::memcmp(pre, "\x93NUMPY", 6) != 0)
    bad(f, "it does not start with the .npy magic string (\\x93NUMPY)");
  const int major = pre[6];
  int64_t header_len = 0, start = 0;
  if (major == 1) {
    header_len = pre[8] | (pre[9] << 8);
    start = 10;
  } else if (major == 2 || major == 3) {
    if (got < 12) bad(f, "the header is cut short");
    header_len = static_cast<int64_t>(pre[8]) | (static_cast<int64_t>(pre[9]) << 8) |
                 (static_cast<int64_t>(pre[10]) << 16) | (static_cast<int64_t>(pre[11]) << 24);
    start = 12;
  } else {
    bad(f, "format version " + std::to_string(major) + "." + std::to_string(pre[7]) +
               " is not known (1.0, 2.0 and 3.0 are)");
  }
  if (start + header_len > f.size())
    fail(ErrorKind::kDecode, "'" + f.name() + "' is truncated: its .npy header claims " +
                                 std::to_string(header_len) + " bytes, the file has " +
                                 std::to_string(f.size() - start) + " after the preamble");
  std::string dict(static_cast<size_t>(header_len), '\0');
  f.read_exact(start, dict.data(), dict.size(), ".npy header");
  // The header is a Python literal in ASCII (format 3.0 allows UTF-8 only for the field names of
  // structured dtypes, which stoker does not read). Other bytes would reach the messages below
  // and Python as text that is not UTF-8.
  for (size_t i = 0; i < dict.size(); ++i) {
    const auto c = static_cast<unsigned char>(dict[i]);
    if ((c < 0x20 && c != '\n' && c != '\t' && c != '\r') || c > 0x7e) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "0x%02x", c);
      bad(f, std::string("its header is not ASCII text: it holds the byte ") + hex + " at offset " +
                 std::to_string(start + static_cast<int64_t>(i)) + " of the file");
    }
  }
  Header h;
  h.descr = dict_value(f, dict, "descr");
  h.dtype = parse_descr(f, h.descr, &h.swap_bytes);
  std::string fo = dict_value(f, dict, "fortran_order");
  if (fo == "True") h.fortran_order = true;
  else if (fo != "False") bad(f, "fortran_order is '" + fo + "', not True or False");
  std::string shape = dict_value(f, dict, "shape");
  if (shape.size() < 2 || shape.front() != '(') bad(f, "the shape '" + shape + "' is not a tuple");
  std::string inner = shape.substr(1, shape.size() - 2);
  size_t pos = 0;
  while (pos < inner.size()) {
    size_t comma = inner.find(',', pos);
    std::string d = inner.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    d.erase(std::remove_if(d.begin(), d.end(), [](char c) { return c == ' ' || c == 'L'; }), d.end());
    if (!d.empty()) {
      char* end = nullptr;
      long long v = std::strtoll(d.c_str(), &end, 10);
      if (*end || v < 0) bad(f, "the shape '" + shape + "' holds '" + d + "', not a size");
      h.shape.push_back(v);
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  h.data_offset = start + header_len;
  // The element count, checked as it is made (volume() would overflow on a hostile shape and
  // could wrap to a size that passes the check below). As NumPy, extents beside a zero one
  // must still multiply to a representable size.
  int64_t count = 1, need = 0;
  bool empty = false;
  for (int64_t d : h.shape) {
    if (d == 0) empty = true;
    else if (__builtin_mul_overflow(count, d, &count)) count = -1;
    if (count < 0) bad(f, "the shape '" + shape + "' has more elements than a file can hold");
  }
  if (!empty && __builtin_mul_overflow(count, static_cast<int64_t>(dtype_size(h.dtype)), &need))
    bad(f, "the shape '" + shape + "' has more elements than a file can hold");
  if (need > f.size() - h.data_offset)
    fail(ErrorKind::kDecode, "'" + f.name() + "' is truncated: an array of shape " +
                                 to_string(h.shape) + " and dtype '" + h.descr + "' needs " +
                                 std::to_string(need) + " bytes of data after its header, the file has " +
                                 std::to_string(f.size() - h.data_offset));
  return h;
}

void read_box(const Source& f, const Header& h, const Shape& start, const Shape& count,
              void* dst, const Shape& out_shape, const Shape& out_start) {
  const int n = static_cast<int>(h.shape.size());
  const size_t elem = dtype_size(h.dtype);
  if (n == 0) {  // a 0-d array: one element
    f.read_exact(h.data_offset, dst, elem, "array data");
    if (h.swap_bytes) swap_elements(static_cast<uint8_t*>(dst), 1, elem);
    return;
  }
  for (int a = 0; a < n; ++a)
    if (count[a] == 0) return;
  // Dense C strides of the output, in elements.
  std::vector<int64_t> out_stride(n);
  int64_t s = 1;
  for (int a = n - 1; a >= 0; --a) {
    out_stride[a] = s;
    s *= out_shape[a];
  }
  int64_t base = 0;
  for (int a = 0; a < n; ++a) base += out_start[a] * out_stride[a];
  // The array as stored: a Fortran-order array is the C-order array of the reversed shape.
  Shape stored = h.shape, st = start, cnt = count;
  std::vector<int64_t> dstride = out_stride;
  if (h.fortran_order) {
    std::reverse(stored.begin(), stored.end());
    std::reverse(st.begin(), st.end());
    std::reverse(cnt.begin(), cnt.end());
    std::reverse(dstride.begin(), dstride.end());
  }
  std::vector<int64_t> fstride(n);
  s = 1;
  for (int a = n - 1; a >= 0; --a) {
    fstride[a] = s;
    s *= stored[a];
  }
  // Runs: axes after `j` are read whole, so [j, n) is one contiguous range of the file.
  int j = n - 1;
  while (j > 0 && cnt[j] == stored[j]) --j;
  int64_t run = 1;
  for (int a = j; a < n; ++a) run *= a == j ? cnt[a] : stored[a];
  bool dense_dst = true;  // the run lands contiguously in dst
  {
    int64_t expect = 1;
    for (int a = n - 1; a >= j; --a) {
      if (dstride[a] != expect) dense_dst = false;
      expect *= cnt[a];
    }
  }
  auto* out = static_cast<uint8_t*>(dst);
  std::vector<uint8_t> tmp;
  if (!dense_dst || h.swap_bytes) tmp.resize(static_cast<size_t>(run) * elem);
  std::vector<int64_t> idx(j, 0);  // over axes [0, j)
  for (;;) {
    int64_t foff = 0, doff = base;
    for (int a = 0; a < j; ++a) {
      foff += (st[a] + idx[a]) * fstride[a];
      doff += idx[a] * dstride[a];
    }
    foff += st[j] * fstride[j];
    const int64_t file_pos = h.data_offset + foff * static_cast<int64_t>(elem);
    const size_t bytes = static_cast<size_t>(run) * elem;
    if (tmp.empty()) {
      f.read_exact(file_pos, out + doff * elem, bytes, "array data");
    } else {
      f.read_exact(file_pos, tmp.data(), bytes, "array data");
      if (h.swap_bytes) swap_elements(tmp.data(), run, elem);
      if (dense_dst) {
        std::memcpy(out + doff * elem, tmp.data(), bytes);
      } else {
        // Scatter the run (axes [j, n) of the box) to the output's strides.
        std::vector<int64_t> k(n - j, 0);
        for (int64_t e = 0; e < run; ++e) {
          int64_t d = doff;
          for (int a = j; a < n; ++a) d += k[a - j] * dstride[a];
          std::memcpy(out + d * elem, tmp.data() + e * elem, elem);
          for (int a = n - 1; a >= j; --a) {
            if (++k[a - j] < cnt[a]) break;
            k[a - j] = 0;
          }
        }
      }
    }
    int a = j - 1;
    for (; a >= 0; --a) {
      if (++idx[a] < cnt[a]) break;
      idx[a] = 0;
    }
    if (a < 0) break;
  }
}

void fill(void* dst, DType t, int64_t n, double value) {
  visit_dtype(t, [&](auto tag) {
    using T = decltype(tag);
    std::fill_n(static_cast<T*>(dst), n, static_cast<T>(value));
  });
}

}  // namespace stoker::readers::npy
