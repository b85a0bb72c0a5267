// libFuzzer harness: tar archives as WebDataset shards (readers/tar.h, readers/webdataset.h), as
// readers.webdataset drives them: list_entries, samples_from_entries, and reading each
// component at its offset; and read_index on DALI's wds2idx index files.
//
// Input: one mode byte, then the bytes. bit 0: 0 a tar file; 1 a tar file and its index: two
// bytes (little-endian) give the tar's length, then come the tar bytes, then the index text.
// Oracle, beyond sanitizer reports: list_entries throws only Error(kDecode) (or
// kInvalidArgument for a compressed archive, which it names), read_index only kInvalidArgument;
// every entry's data lies inside the file, 512-aligned, after its header, in file order; every
// regular entry with a sample key lands in exactly one sample, in order; and every component,
// from the tar or from the index, can be read where it says it is.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "harness.h"
#include "memfile.h"
#include "readers/tar.h"
#include "readers/webdataset.h"

namespace {

using namespace stoker;
using namespace stoker::readers;

fuzz::MemFile* g_tar = nullptr;
fuzz::MemFile* g_idx = nullptr;

void read_components(const RandomAccessFile& file, const std::vector<webdataset::Sample>& samples) {
  std::vector<uint8_t> buf;
  size_t read = 0;
  for (const auto& s : samples)
    for (const auto& c : s.components) {
      if (c.offset < 0 || c.size < 0 || c.offset > file.size() - c.size)
        fuzz::finding("component '" + c.filename + "' at " + std::to_string(c.offset) + " (" +
                      std::to_string(c.size) + " bytes) lies outside the " +
                      std::to_string(file.size()) + "-byte file");
      if (++read > 256) return;
      buf.resize(static_cast<size_t>(c.size));
      fuzz::expect_ok_or("reading a component", {},
                         [&] { file.read_exact(c.offset, buf.data(), buf.size(), "component"); });
    }
}

void check_tar() {
  RandomAccessFile file(g_tar->path());
  std::vector<tar::Entry> entries;
  if (!fuzz::expect_ok_or("list_entries", {ErrorKind::kDecode, ErrorKind::kInvalidArgument},
                          [&] { entries = tar::list_entries(file); }))
    return;
  int64_t last_data = 0;
  size_t regular_with_key = 0;
  for (const auto& e : entries) {
    if (e.data_offset % tar::kBlockSize || e.header_offset < 0 ||
        e.header_offset >= e.data_offset || e.data_offset < last_data || e.size < 0 ||
        e.data_offset > file.size() - e.size)
      fuzz::finding("entry '" + e.name + "': header at " + std::to_string(e.header_offset) +
                    ", data at " + std::to_string(e.data_offset) + " (" + std::to_string(e.size) +
                    " bytes), in a " + std::to_string(file.size()) + "-byte file");
    last_data = e.data_offset + e.size;
    if (e.type == '0') {
      auto [key, ext] = webdataset::split_name(e.name);
      if (!key.empty() && key.back() != '/') ++regular_with_key;
      if (key + (ext.empty() && e.name.size() == key.size() ? "" : "." + ext) != e.name)
        fuzz::finding("split_name('" + e.name + "') gave ('" + key + "', '" + ext + "')");
    }
  }
  std::vector<webdataset::Sample> samples;
  fuzz::expect_ok_or("samples_from_entries", {},
                     [&] { samples = webdataset::samples_from_entries(entries); });
  size_t components = 0;
  for (const auto& s : samples) {
    if (s.components.empty()) fuzz::finding("a sample without components");
    components += s.components.size();
  }
  if (components != regular_with_key)
    fuzz::finding(std::to_string(regular_with_key) + " regular entries with a key became " +
                  std::to_string(components) + " components");
  read_components(file, samples);
}

void check_index(const uint8_t* data, size_t size) {
  if (size < 2) return;
  const size_t n = std::min<size_t>(size - 2, data[0] | (size_t{data[1]} << 8));
  g_tar->set(data + 2, n);
  g_idx->set(data + 2 + n, size - 2 - n);
  RandomAccessFile file(g_tar->path());
  std::vector<webdataset::Sample> samples;
  if (!fuzz::expect_ok_or("read_index", {ErrorKind::kInvalidArgument}, [&] {
        samples = webdataset::read_index(g_idx->path(), g_tar->path(), file.size());
      }))
    return;
  for (const auto& s : samples)
    if (s.components.empty()) fuzz::finding("read_index gave a sample without components");
  read_components(file, samples);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  if (data[0] & 1) {
    check_index(data + 1, size - 1);
  } else {
    g_tar->set(data + 1, size - 1);
    check_tar();
  }
  return 0;
}

namespace {

// Inputs that fuzzing found and that are fixed; each is made here, not stored as a file.
std::vector<fuzz::Regression> regressions() {
  auto index_only = [](const std::string& text) {
    return fuzz::bytes_of(std::string("\x01\x00\x00", 3) + text);  // an empty tar, then the index
  };
  return {
      // read_index reserved room for as many samples as the index's first line announced:
      // 10^14 of them asked for 2.9 PB (ASan: allocation over its maximum; without it,
      // std::length_error, an internal error). Fixed in webdataset.cc.
      {"wds index: announces 10^14 samples", index_only("v1.2 99999999999999\n")},
      // read_index added a component's offset and size in int64 before comparing: overflow
      // (UBSan). Fixed in webdataset.cc.
      {"wds index: offset + size overflows", index_only("v1.2 1\njpg 512 9223372036854775807 a\n")},
  };
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_tar = new fuzz::MemFile("stoker_fuzz_tar");
  g_idx = new fuzz::MemFile("stoker_fuzz_tar_idx");
  fuzz::replay(regressions(), LLVMFuzzerTestOneInput);
  return 0;
}
