// libFuzzer harness: NumPy .npy files (readers/npy.h), as readers.numpy drives them: the header,
// then reading the whole array and a region of it (roi_start/roi_end) straight from the file.
//
// Input: 4 bytes choose the region (start and extent on each axis as fractions /255 of the
// array's), then the .npy file.
// Oracle, beyond sanitizer reports: read_header throws only Error(kDecode) or kUnsupported (an
// element type stoker does not read, named); an accepted header describes data that the file
// holds; read_box of a region placed inside a larger output (one element of margin around it,
// filled with a guard value) writes exactly the region's elements, equal to the same elements of
// the whole array read at once, C order and byte order applied, and leaves the margin alone; the
// same bytes read from memory (decoders.numpy) give the same header and array.
#include <cstring>
#include <string>
#include <vector>

#include "harness.h"
#include "memfile.h"
#include "readers/npy.h"

namespace {

using namespace stoker;
using namespace stoker::readers;

fuzz::MemFile* g_file = nullptr;
constexpr int64_t kMaxBytes = 1 << 20;  // larger arrays: header only (reads cost time, not bugs)
constexpr uint8_t kGuard = 0xA5;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4) return 0;
  const uint8_t* p = data;
  g_file->set(data + 4, size - 4);
  RandomAccessFile file(g_file->path());
  npy::Header h;
  if (!fuzz::expect_ok_or("read_header", {ErrorKind::kDecode, ErrorKind::kUnsupported},
                          [&] { h = npy::read_header(file); }))
    return 0;
  const int n = static_cast<int>(h.shape.size());
  const int64_t elem = static_cast<int64_t>(dtype_size(h.dtype));
  if (elem < 1 || h.data_offset < 10 || h.data_offset > file.size())
    fuzz::finding("read_header accepted a header whose data starts outside the file");
  int64_t count = 1;
  for (int64_t d : h.shape) {
    if (d < 0) fuzz::finding("read_header accepted a negative extent");
    if (d && count > kMaxBytes / d) return 0;  // too large to read here (the header is checked)
    count *= d;
  }
  if (count * elem > file.size() - h.data_offset)
    fuzz::finding("read_header accepted an array larger than the data in the file");
  if (count * elem > kMaxBytes) return 0;

  // The whole array.
  std::vector<uint8_t> whole(static_cast<size_t>(count * elem));
  fuzz::expect_ok_or("read_box (whole array)", {}, [&] {
    npy::read_box(file, h, Shape(n, 0), h.shape, whole.data(), h.shape, Shape(n, 0));
  });
  // decoders.numpy's path: the same bytes parsed from memory give the same header and array.
  npy::MemorySource mem("fuzz input", data + 4, static_cast<int64_t>(size - 4));
  npy::Header hm;
  fuzz::expect_ok_or("read_header (memory)", {}, [&] { hm = npy::read_header(mem); });
  if (hm.shape != h.shape || hm.dtype != h.dtype || hm.data_offset != h.data_offset ||
      hm.fortran_order != h.fortran_order || hm.swap_bytes != h.swap_bytes)
    fuzz::finding("read_header from memory disagrees with the same bytes read from a file");
  std::vector<uint8_t> whole_mem(whole.size());
  fuzz::expect_ok_or("read_box (memory)", {}, [&] {
    npy::read_box(mem, h, Shape(n, 0), h.shape, whole_mem.data(), h.shape, Shape(n, 0));
  });
  if (whole_mem != whole) fuzz::finding("read_box from memory disagrees with the file's");
  if (n == 0) return 0;
  for (int64_t d : h.shape)
    if (d > kMaxBytes) return 0;  // empty, beside a huge extent: nothing to read in a region

  // A region, inside an output with one element of margin on every side.
  Shape start(n), extent(n), out_shape(n), out_start(n, 1);
  for (int a = 0; a < n; ++a) {
    const int64_t d = h.shape[a];
    start[a] = d ? p[a % 2] * (d - 1) / 255 : 0;
    extent[a] = d ? 1 + p[2 + a % 2] * (d - start[a] - 1) / 255 : 0;
    out_shape[a] = extent[a] + 2;
  }
  int64_t out_count = 1;
  for (int64_t d : out_shape)
    if (__builtin_mul_overflow(out_count, d, &out_count) || out_count > kMaxBytes) return 0;
  std::vector<uint8_t> out(static_cast<size_t>(out_count * elem), kGuard);
  fuzz::expect_ok_or("read_box (region)", {}, [&] {
    npy::read_box(file, h, start, extent, out.data(), out_shape, out_start);
  });
  // Compare element by element: out[o] is the region's element when o is inside the margin,
  // else the guard.
  std::vector<int64_t> idx(n, 0);
  for (int64_t o = 0; o < out_count; ++o) {
    bool in = true;
    int64_t src = 0;
    for (int a = 0; a < n; ++a) {
      if (idx[a] < 1 || idx[a] > extent[a]) in = false;
      src = src * h.shape[a] + (start[a] + idx[a] - 1);
    }
    const uint8_t* got = out.data() + o * elem;
    for (int64_t b = 0; b < elem; ++b) {
      const uint8_t want = in ? whole[static_cast<size_t>(src * elem + b)] : kGuard;
      if (got[b] != want)
        fuzz::finding(std::string(in ? "the region differs from the whole array" :
                                       "read_box wrote outside the region") +
                      " at output element " + std::to_string(o) + " (shape " +
                      to_string(h.shape) + ", region at " + to_string(start) + " of " +
                      to_string(extent) + (h.fortran_order ? ", Fortran order" : "") + ")");
    }
    for (int a = n - 1; a >= 0; --a) {
      if (++idx[a] < out_shape[a]) break;
      idx[a] = 0;
    }
  }
  return 0;
}

namespace {

std::vector<uint8_t> npy_file(const std::string& dict, size_t data_bytes) {
  std::vector<uint8_t> v = {0, 0, 255, 255};  // region: the whole array
  std::string header = dict;
  while ((10 + header.size() + 1) % 64) header += ' ';
  header += '\n';
  const char magic[] = "\x93NUMPY\x01\x00";
  v.insert(v.end(), magic, magic + 8);
  v.push_back(static_cast<uint8_t>(header.size() & 0xff));
  v.push_back(static_cast<uint8_t>(header.size() >> 8));
  v.insert(v.end(), header.begin(), header.end());
  v.resize(v.size() + data_bytes, 7);
  return v;
}

// Inputs that fuzzing found and that are fixed; each is made here, not stored as a file.
std::vector<fuzz::Regression> regressions() {
  return {
      // The element count of a huge shape overflowed int64 (UBSan), and could wrap to a small
      // number that passed the size check. Fixed in npy.cc: the count is checked as it is made.
      {"npy: shape whose element count overflows",
       npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4), }", 16)},
      {"npy: a zero extent beside huge ones",
       npy_file("{'descr': '<i8', 'fortran_order': True, 'shape': (0, 9223372036854775807, 9223372036854775807), }", 0)},
  };
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_file = new fuzz::MemFile("stoker_fuzz_npy");
  fuzz::replay(regressions(), LLVMFuzzerTestOneInput);
  return 0;
}
