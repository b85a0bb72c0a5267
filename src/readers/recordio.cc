#include "readers/recordio.h"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "core/error.h"
#include "readers/random_access_file.h"

namespace stoker::readers::recordio {
namespace {

uint32_t load_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

std::string hex32(uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof(b), "0x%08x", v);
  return b;
}

int64_t padded(int64_t n) { return (n + 3) / 4 * 4; }

[[noreturn]] void bad(const std::string& path, int64_t offset, const std::string& what) {
  fail(ErrorKind::kDecode, "'" + path + "' record at offset " + std::to_string(offset) + ": " + what);
}

// Checks a part's header; returns (cflag, length).
std::pair<uint32_t, int64_t> part_header(const std::string& path, int64_t record, int64_t at,
                                         const uint8_t* h) {
  uint32_t magic = load_u32(h);
  if (magic != kMagic)
    bad(path, record, (at == record ? std::string("") : "the part at offset " + std::to_string(at) + " has ") +
                          "magic number " + hex32(magic) + " instead of " + hex32(kMagic) +
                          " (not a RecordIO file, a corrupt one, or an index that points into a record)");
  uint32_t lrec = load_u32(h + 4);
  return {lrec >> 29, static_cast<int64_t>(lrec & ((1u << 29) - 1))};
}

// cflag 0 or 1 starts a record; 2 and 3 continue one.
void check_sequence(const std::string& path, int64_t record, int64_t at, bool first, uint32_t cflag) {
  if (first && (cflag == 2 || cflag == 3))
    bad(path, record, "the record starts with a continuation part (cflag " + std::to_string(cflag) + ")");
  if (!first && (cflag == 0 || cflag == 1))
    bad(path, record, "the part at offset " + std::to_string(at) + " starts a new record (cflag " +
                          std::to_string(cflag) + ") before the record's last part");
  if (cflag > 3) bad(path, record, "cflag " + std::to_string(cflag) + " is not valid");
}

}  // namespace

std::vector<RecordRef> scan_records(const RandomAccessFile& f) {
  std::vector<RecordRef> out;
  const int64_t size = f.size();
  int64_t off = 0;
  while (off < size) {
    const int64_t start = off;
    bool first = true;
    for (;;) {
      uint8_t h[8];
      if (size - off < 8)
        fail(ErrorKind::kDecode, "'" + f.path() + "' is truncated: the RecordIO part header at offset " +
                                     std::to_string(off) + " needs 8 bytes, the file has " +
                                     std::to_string(size - off));
      f.read_exact(off, h, 8, "RecordIO part header");
      auto [cflag, len] = part_header(f.path(), start, off, h);
      check_sequence(f.path(), start, off, first, cflag);
      if (off + 8 + len > size)
        fail(ErrorKind::kDecode, "'" + f.path() + "' is truncated: the RecordIO record at offset " +
                                     std::to_string(start) + " has a part of " + std::to_string(len) +
                                     " bytes at offset " + std::to_string(off) + ", but the file ends " +
                                     std::to_string(size - off - 8) + " bytes after its header");
      off += 8 + padded(len);
      first = false;
      if (cflag == 0 || cflag == 3) break;
      if (off >= size)
        fail(ErrorKind::kDecode, "'" + f.path() + "' is truncated: the RecordIO record at offset " +
                                     std::to_string(start) + " ends before its last part");
    }
    out.push_back({start, std::min(off, size) - start});
  }
  return out;
}

std::vector<RecordRef> read_index(const std::string& index_path, const std::string& data_path,
                                  int64_t data_file_size) {
  const std::optional<std::string> text = read_text_file(index_path);
  if (!text) fail(ErrorKind::kNotFound, "index file '" + index_path + "' does not exist");
  std::istringstream in(*text);
  std::vector<int64_t> offsets;
  std::string line;
  for (int64_t n = 1; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::istringstream ls(line);
    long long key = 0, offset = -1;
    std::string rest;
    auto badline = [&](const std::string& why) {
      fail(ErrorKind::kInvalidArgument,
           "index file '" + index_path + "' line " + std::to_string(n) + ": " + why +
               "; expected '<key>\\t<offset>' as MXNet's im2rec writes, got '" + line + "'");
    };
    if (!(ls >> key >> offset)) badline("it is not two integers");
    if (ls >> rest) badline("it has more than two fields");
    if (offset < 0 || offset % 4 || offset > data_file_size - 8)
      badline("offset " + std::to_string(offset) + " is not a 4-byte aligned position inside '" +
              data_path + "' (" + std::to_string(data_file_size) + " bytes)");
    offsets.push_back(offset);
  }
  std::sort(offsets.begin(), offsets.end());
  if (std::adjacent_find(offsets.begin(), offsets.end()) != offsets.end())
    fail(ErrorKind::kInvalidArgument, "index file '" + index_path + "' lists a record offset twice");
  std::vector<RecordRef> out;
  for (size_t i = 0; i < offsets.size(); ++i) {
    const int64_t end = i + 1 < offsets.size() ? offsets[i + 1] : data_file_size;
    if (end - offsets[i] < 8)  // a record is at least its 8-byte header
      fail(ErrorKind::kInvalidArgument,
           "index file '" + index_path + "' lists records at offsets " +
               std::to_string(offsets[i]) + " and " + std::to_string(end) +
               ", closer than a record header (8 bytes): it does not belong to '" + data_path +
               "'; rebuild the index (MXNet's im2rec, or the reader without index_path)");
    out.push_back({offsets[i], end - offsets[i]});
  }
  return out;
}

void read_record(const RandomAccessFile& f, const RecordRef& rec, std::vector<uint8_t>& raw,
                 std::vector<uint8_t>& payload) {
  raw.resize(static_cast<size_t>(rec.size));
  f.read_exact(rec.offset, raw.data(), raw.size(), "RecordIO record");
  payload.clear();
  int64_t pos = 0;
  bool first = true;
  for (;;) {
    const int64_t at = rec.offset + pos;
    if (rec.size - pos < 8)
      bad(f.path(), rec.offset, "the record ends (at offset " + std::to_string(at) +
                                    ") before its last part; the index does not match the file");
    auto [cflag, len] = part_header(f.path(), rec.offset, at, raw.data() + pos);
    check_sequence(f.path(), rec.offset, at, first, cflag);
    if (pos + 8 + len > rec.size)
      bad(f.path(), rec.offset, "a part of " + std::to_string(len) + " bytes at offset " +
                                    std::to_string(at) + " runs past the record's " +
                                    std::to_string(rec.size) + " bytes (up to the next record in "
                                    "the index, or the end of the file)");
    if (!first) {  // the writer split the data at a magic number and left it out
      const uint32_t m = kMagic;
      const auto* mp = reinterpret_cast<const uint8_t*>(&m);
      payload.insert(payload.end(), mp, mp + 4);
    }
    payload.insert(payload.end(), raw.begin() + pos + 8, raw.begin() + pos + 8 + len);
    pos += 8 + padded(len);
    first = false;
    if (cflag == 0 || cflag == 3) break;
  }
}

ImageRecord parse_image_record(const std::vector<uint8_t>& p) {
  ImageRecord r;
  if (p.size() < kImageHeaderBytes)
    fail(ErrorKind::kDecode, "the record has " + std::to_string(p.size()) +
                                 " bytes, fewer than the 24 of an image record header (IRHeader)");
  std::memcpy(&r.flag, p.data(), 4);
  std::memcpy(&r.label, p.data() + 4, 4);
  std::memcpy(&r.id, p.data() + 8, 8);
  std::memcpy(&r.id2, p.data() + 16, 8);
  size_t pos = kImageHeaderBytes;
  if (r.flag == 0) {
    r.labels = {r.label};
  } else {
    const uint64_t need = static_cast<uint64_t>(r.flag) * 4;
    if (need > p.size() - pos)
      fail(ErrorKind::kDecode, "the image record header says " + std::to_string(r.flag) +
                                   " labels follow it, but the record has only " +
                                   std::to_string(p.size() - pos) + " bytes after the header");
    r.labels.resize(r.flag);
    std::memcpy(r.labels.data(), p.data() + pos, need);
    pos += need;
  }
  r.image = p.data() + pos;
  r.image_size = p.size() - pos;
  return r;
}

}  // namespace stoker::readers::recordio
