#include "readers/tar.h"

#include <cstring>
#include <optional>

#include "core/error.h"

namespace stoker::readers::tar {
namespace {

[[noreturn]] void bad(const RandomAccessFile& f, int64_t offset, const std::string& what) {
  fail(ErrorKind::kDecode, "'" + f.path() + "' tar header at offset " + std::to_string(offset) +
                               ": " + what);
}

std::string field_str(const uint8_t* p, size_t n) {
  size_t len = 0;
  while (len < n && p[len]) ++len;
  return std::string(reinterpret_cast<const char*>(p), len);
}

// Octal (space/NUL padded) or GNU base-256 (first byte's high bit set).
std::optional<int64_t> parse_number(const uint8_t* p, size_t n) {
  if (p[0] & 0x80) {
    if (p[0] & 0x40) return std::nullopt;  // negative
    uint64_t v = p[0] & 0x3f;
    for (size_t i = 1; i < n; ++i) {
      if (v >> 55) return std::nullopt;
      v = (v << 8) | p[i];
    }
    return static_cast<int64_t>(v);
  }
  size_t i = 0;
  while (i < n && (p[i] == ' ' || p[i] == 0)) ++i;
  if (i == n) return 0;
  uint64_t v = 0;
  bool any = false;
  for (; i < n && p[i] >= '0' && p[i] <= '7'; ++i) {
    if (v >> 60) return std::nullopt;
    v = v * 8 + (p[i] - '0');
    any = true;
  }
  for (; i < n; ++i)
    if (p[i] != ' ' && p[i] != 0) return std::nullopt;
  if (!any) return std::nullopt;
  return static_cast<int64_t>(v);
}

bool all_zero(const uint8_t* p, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (p[i]) return false;
  return true;
}

bool checksum_ok(const uint8_t* h) {
  auto stored = parse_number(h + 148, 8);
  if (!stored) return false;
  int64_t unsigned_sum = 0, signed_sum = 0;
  for (int i = 0; i < 512; ++i) {
    uint8_t b = (i >= 148 && i < 156) ? ' ' : h[i];
    unsigned_sum += b;
    signed_sum += static_cast<int8_t>(b);
  }
  return *stored == unsigned_sum || *stored == signed_sum;  // old tars summed signed chars
}

int64_t round_up(int64_t n) { return (n + kBlockSize - 1) / kBlockSize * kBlockSize; }

void check_not_compressed(const RandomAccessFile& f) {
  uint8_t m[6] = {};
  size_t got = f.read_some(0, m, sizeof(m));
  const char* kind = nullptr;
  if (got >= 2 && m[0] == 0x1f && m[1] == 0x8b) kind = "gzip";
  else if (got >= 3 && m[0] == 'B' && m[1] == 'Z' && m[2] == 'h') kind = "bzip2";
  else if (got >= 6 && std::memcmp(m, "\xfd" "7zXZ\0", 6) == 0) kind = "xz";
  else if (got >= 4 && m[0] == 0x28 && m[1] == 0xb5 && m[2] == 0x2f && m[3] == 0xfd) kind = "zstd";
  if (kind)
    fail(ErrorKind::kInvalidArgument,
         "'" + f.path() + "' is a " + kind + "-compressed archive; readers.webdataset reads plain "
         "(uncompressed) tar files, as DALI does, so that samples can be read at their offsets: "
         "decompress it first (e.g. 'gunzip -k' / 'tar -xzf' and re-tar)");
}

// Extended header records: "<len> <key>=<value>\n".
void parse_pax(const RandomAccessFile& f, int64_t offset, const std::string& data,
               std::optional<std::string>& path, std::optional<int64_t>& size) {
  size_t pos = 0;
  while (pos < data.size()) {
    if (data[pos] == '\0') break;
    size_t sp = data.find(' ', pos);
    if (sp == std::string::npos) bad(f, offset, "a pax extended header record has no length");
    size_t len = 0;
    for (size_t i = pos; i < sp; ++i) {
      if (data[i] < '0' || data[i] > '9') bad(f, offset, "a pax record length is not a number");
      len = len * 10 + (data[i] - '0');
      if (len > data.size()) break;
    }
    if (len < 4 || pos + len > data.size() || data[pos + len - 1] != '\n')
      bad(f, offset, "a pax extended header record is cut short");
    std::string rec = data.substr(sp + 1, pos + len - 1 - (sp + 1));
    size_t eq = rec.find('=');
    if (eq != std::string::npos) {
      std::string key = rec.substr(0, eq), value = rec.substr(eq + 1);
      if (key == "path") path = value;
      else if (key == "size") {
        char* end = nullptr;
        long long v = std::strtoll(value.c_str(), &end, 10);
        if (value.empty() || *end || v < 0) bad(f, offset, "the pax size '" + value + "' is not valid");
        size = v;
      }
    }
    pos += len;
  }
}

}  // namespace

std::vector<Entry> list_entries(const RandomAccessFile& f) {
  check_not_compressed(f);
  std::vector<Entry> out;
  const int64_t file_size = f.size();
  int64_t off = 0;
  std::optional<std::string> long_name, pax_path;
  std::optional<int64_t> pax_size;
  int64_t meta_start = -1;  // header offset of the first metadata entry of the next file
  uint8_t h[kBlockSize];
  while (off < file_size) {
    if (file_size - off < kBlockSize) {
      uint8_t tail[kBlockSize] = {};
      size_t got = f.read_some(off, tail, kBlockSize);
      if (all_zero(tail, got)) break;  // zero padding short of a block: accept
      fail(ErrorKind::kDecode, "'" + f.path() + "' is truncated: the tar header at offset " +
                                   std::to_string(off) + " needs 512 bytes, but the file ends after " +
                                   std::to_string(file_size - off));
    }
    f.read_exact(off, h, kBlockSize, "tar header");
    if (all_zero(h, kBlockSize)) break;  // end of archive
    if (!checksum_ok(h))
      bad(f, off, "the header checksum does not match (the archive is corrupt, or this is not a "
                  "tar file)");
    auto size = parse_number(h + 124, 12);
    if (!size) bad(f, off, "the size field is not a number");
    const char type = h[156] ? static_cast<char>(h[156]) : '0';
    int64_t data_size = *size;
    if ((type == '0' || type == '7') && pax_size) data_size = *pax_size;
    const int64_t data_off = off + kBlockSize;
    if (data_size > file_size - data_off)
      fail(ErrorKind::kDecode,
           "'" + f.path() + "' is truncated: the tar entry '" + field_str(h, 100) +
               "' at offset " + std::to_string(off) + " has " + std::to_string(data_size) +
               " bytes of data, but the file ends " + std::to_string(file_size - data_off) +
               " bytes after its header");
    if (meta_start < 0) meta_start = off;
    if (type == 'L' || type == 'x' || type == 'g' || type == 'K') {
      std::string data(static_cast<size_t>(data_size), '\0');
      f.read_exact(data_off, data.data(), data.size(), "tar extended header");
      if (type == 'L') long_name = field_str(reinterpret_cast<const uint8_t*>(data.data()), data.size());
      else if (type == 'x') parse_pax(f, off, data, pax_path, pax_size);
      // 'g' (global pax) and 'K' (long link name) say nothing readers need.
      if (type == 'g') meta_start = -1;
      off = data_off + round_up(data_size);
      continue;
    }
    if (type == 'S') bad(f, off, "GNU sparse files are not supported; re-create the archive without --sparse");
    if (type == 'M') bad(f, off, "multi-volume archives are not supported");
    std::string name;
    if (pax_path) {
      name = *pax_path;
    } else if (long_name) {
      name = *long_name;
    } else {
      name = field_str(h, 100);
      if (std::memcmp(h + 257, "ustar", 5) == 0 && h[262] == '\0') {  // POSIX: a name prefix
        std::string prefix = field_str(h + 345, 155);
        if (!prefix.empty()) name = prefix + "/" + name;
      }
    }
    const char kind = (type == '7' || type == '0') ? '0' : type;
    // Only regular files have data; other types' size fields are skipped as they say.
    out.push_back({name, meta_start, data_off, kind == '0' ? data_size : 0, kind});
    off = data_off + round_up(kind == '0' || kind == '5' ? data_size : *size);
    long_name.reset();
    pax_path.reset();
    pax_size.reset();
    meta_start = -1;
  }
  return out;
}

}  // namespace stoker::readers::tar
