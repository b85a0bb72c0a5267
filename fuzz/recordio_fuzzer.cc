// libFuzzer harness: MXNet RecordIO files (readers/recordio.h), as readers.mxnet drives them:
// scan_records (or read_index), read_record for each record (joining split parts), and
// parse_image_record (MXNet's IRHeader, labels, image bytes).
//
// Input: one mode byte, then the bytes. bit 0: 0 a .rec file; 1 a .rec file and its .idx file
// ("<key>\t<offset>" lines): two bytes (little-endian) give the .rec file's length, then come
// the .rec bytes, then the index text; the records the index delimits are read too.
// Oracle, beyond sanitizer reports: the file's parsers throw only Error(kDecode), the index
// parser only kInvalidArgument; scanned records tile the file exactly; a record's payload is
// no longer than its parts; labels and image bytes lie inside the payload and partition it.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "harness.h"
#include "memfile.h"
#include "readers/recordio.h"

namespace {

using namespace stoker;
using namespace stoker::readers;

fuzz::MemFile* g_rec = nullptr;
fuzz::MemFile* g_idx = nullptr;

void check_records(const RandomAccessFile& file, const std::vector<recordio::RecordRef>& recs) {
  std::vector<uint8_t> raw, payload;
  for (size_t i = 0; i < recs.size() && i < 64; ++i) {
    if (!fuzz::expect_ok_or("read_record", {ErrorKind::kDecode},
                            [&] { recordio::read_record(file, recs[i], raw, payload); }))
      continue;
    if (payload.size() > static_cast<size_t>(recs[i].size))
      fuzz::finding("a record's payload (" + std::to_string(payload.size()) +
                    " bytes) is larger than the record (" + std::to_string(recs[i].size) + ")");
    // Exactly its size, so that ASan sees a read past the payload.
    const std::vector<uint8_t> exact(payload);
    recordio::ImageRecord r;
    if (!fuzz::expect_ok_or("parse_image_record", {ErrorKind::kDecode},
                            [&] { r = recordio::parse_image_record(exact); }))
      continue;
    const size_t labels = r.flag == 0 ? 1 : r.flag;
    if (r.labels.size() != labels) fuzz::finding("parse_image_record gave the wrong number of labels");
    const size_t header = recordio::kImageHeaderBytes + (r.flag == 0 ? 0 : 4 * size_t{r.flag});
    if (r.image != exact.data() + header || header + r.image_size != exact.size())
      fuzz::finding("the image bytes are not the rest of the record after its header and labels");
  }
}

void check_rec() {
  RandomAccessFile file(g_rec->path());
  std::vector<recordio::RecordRef> recs;
  if (!fuzz::expect_ok_or("scan_records", {ErrorKind::kDecode},
                          [&] { recs = recordio::scan_records(file); }))
    return;
  int64_t at = 0;
  for (const auto& r : recs) {
    if (r.offset != at || r.size < 8)
      fuzz::finding("scan_records gave a record at " + std::to_string(r.offset) + " of " +
                    std::to_string(r.size) + " bytes where one was due at " + std::to_string(at));
    at += r.size;
  }
  if (at != file.size()) fuzz::finding("scan_records' records do not end where the file does");
  check_records(file, recs);
}

void check_idx(const uint8_t* data, size_t size) {
  if (size < 2) return;
  const size_t n = std::min<size_t>(size - 2, data[0] | (size_t{data[1]} << 8));
  g_rec->set(data + 2, n);
  g_idx->set(data + 2 + n, size - 2 - n);
  RandomAccessFile file(g_rec->path());
  std::vector<recordio::RecordRef> recs;
  if (!fuzz::expect_ok_or("read_index", {ErrorKind::kInvalidArgument}, [&] {
        recs = recordio::read_index(g_idx->path(), g_rec->path(), file.size());
      }))
    return;
  for (const auto& r : recs)
    if (r.offset < 0 || r.offset % 4 || r.size < 8 || r.offset > file.size() - r.size)
      fuzz::finding("read_index gave a record outside the data file: offset " +
                    std::to_string(r.offset) + ", size " + std::to_string(r.size));
  check_records(file, recs);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  if (data[0] & 1) {
    check_idx(data + 1, size - 1);
  } else {
    g_rec->set(data + 1, size - 1);
    check_rec();
  }
  return 0;
}

namespace {

// Inputs that fuzzing found and that are fixed; each is made here, not stored as a file.
std::vector<fuzz::Regression> regressions() {
  return {
      // read_index added 8 to the offset in int64 before comparing: overflow (UBSan).
      {"recordio index: offset + 8 overflows", fuzz::bytes_of(std::string("\x01\x00\x00", 3) + "0\t9223372036854775804\n")},
  };
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_rec = new fuzz::MemFile("stoker_fuzz_rec");
  g_idx = new fuzz::MemFile("stoker_fuzz_idx");
  fuzz::replay(regressions(), LLVMFuzzerTestOneInput);
  return 0;
}
