// libFuzzer harness: FITS files (readers/fits.h), as experimental.readers.fits drives them: find
// an image HDU, then read its pixels.
//
// Input: 1 byte chooses the HDU (1 to 4), then the FITS file.
// Oracle, beyond sanitizer reports: find_image throws only Error(kDecode), kUnsupported (a table,
// a compressed image) or kInvalidArgument (no such HDU, no data), never loops or allocates what
// the file cannot hold; an accepted image lies inside the file, and read_image then reads it
// (kDecode at most).
#include <string>
#include <vector>

#include "harness.h"
#include "memfile.h"
#include "readers/fits.h"

namespace {

using namespace stoker;
using namespace stoker::readers;

fuzz::MemFile* g_file = nullptr;
constexpr int64_t kMaxBytes = 1 << 22;  // larger images: found, not read (reads cost time)

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const int hdu = 1 + data[0] % 4;
  g_file->set(data + 1, size - 1);
  RandomAccessFile file(g_file->path());
  fits::Image im;
  if (!fuzz::expect_ok_or("find_image",
                          {ErrorKind::kDecode, ErrorKind::kUnsupported, ErrorKind::kInvalidArgument},
                          [&] { im = fits::find_image(file, hdu); }))
    return 0;
  int64_t pixels = 1;
  for (int64_t d : im.shape) {
    if (d < 0) fuzz::finding("find_image accepted a negative extent");
    pixels *= d;
  }
  const int64_t bytes = pixels * (im.bitpix < 0 ? -im.bitpix : im.bitpix) / 8;
  if (im.data_offset < 2880 || im.data_offset % 2880 || im.data_offset + bytes > file.size())
    fuzz::finding("find_image accepted an image outside the file");
  if (static_cast<int64_t>(pixels * dtype_size(im.dtype)) > kMaxBytes) return 0;
  std::vector<uint8_t> out(static_cast<size_t>(pixels) * dtype_size(im.dtype));
  fuzz::expect_ok_or("read_image", {ErrorKind::kDecode}, [&] { fits::read_image(file, im, out.data()); });
  return 0;
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_file = new fuzz::MemFile("stoker_fuzz_fits");
  return 0;
}
