#include "readers/tfrecord.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <sstream>

#include "core/error.h"
#include "readers/random_access_file.h"
#include "readers/protobuf_wire.h"

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace stoker::readers::tfrecord {
namespace {

[[noreturn]] void bad_data(const std::string& msg) { fail(ErrorKind::kDecode, msg); }

// ---- CRC-32C

constexpr uint32_t kCastagnoli = 0x82f63b78u;  // reflected polynomial

struct CrcTables {
  std::array<std::array<uint32_t, 256>, 8> t{};
  CrcTables() {
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kCastagnoli : c >> 1;
      t[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; ++i)
      for (int s = 1; s < 8; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xff];
  }
};

uint32_t crc32c_sw(const uint8_t* p, size_t n, uint32_t c) {
  static const CrcTables tables;
  const auto& t = tables.t;
  while (n >= 8) {  // slicing-by-8
    uint64_t v;
    std::memcpy(&v, p, 8);
    v ^= c;
    c = t[7][v & 0xff] ^ t[6][(v >> 8) & 0xff] ^ t[5][(v >> 16) & 0xff] ^ t[4][(v >> 24) & 0xff] ^
        t[3][(v >> 32) & 0xff] ^ t[2][(v >> 40) & 0xff] ^ t[1][(v >> 48) & 0xff] ^ t[0][v >> 56];
    p += 8;
    n -= 8;
  }
  while (n--) c = (c >> 8) ^ t[0][(c ^ *p++) & 0xff];
  return c;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t crc32c_hw(const uint8_t* p, size_t n, uint32_t c) {
  uint64_t c64 = c;
  while (n >= 8) {
    uint64_t v;
    std::memcpy(&v, p, 8);
    c64 = _mm_crc32_u64(c64, v);
    p += 8;
    n -= 8;
  }
  uint32_t c32 = static_cast<uint32_t>(c64);
  while (n--) c32 = _mm_crc32_u8(c32, *p++);
  return c32;
}
bool have_sse42() {
  static const bool has = __builtin_cpu_supports("sse4.2");
  return has;
}
#endif

uint64_t load_u64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);  // TFRecord is little-endian, as every platform stoker builds for
  return v;
}
uint32_t load_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

std::string where(const RandomAccessFile& f, int64_t offset) {
  return "'" + f.path() + "' record at offset " + std::to_string(offset);
}

// ---- protobuf wire format

struct Wire : proto::Reader {
  Wire(const uint8_t* begin, const uint8_t* end, const uint8_t* record_start)
      : proto::Reader(begin, end, record_start, "tf.train.Example") {}
};

FeatureView::Kind kind_of_field(uint64_t field) {
  switch (field) {
    case 1: return FeatureView::Kind::kBytes;
    case 2: return FeatureView::Kind::kFloat;
    case 3: return FeatureView::Kind::kInt64;
    default: return FeatureView::Kind::kMissing;
  }
}

void parse_feature(Wire w, FeatureView& view) {
  // A new occurrence of the map entry replaces the old value (protobuf map semantics).
  view = FeatureView{};
  while (!w.done()) {
    uint64_t tag = w.varint("field tag");
    FeatureView::Kind k = kind_of_field(tag >> 3);
    if (k == FeatureView::Kind::kMissing || (tag & 7) != 2) {
      w.skip(static_cast<uint32_t>(tag & 7));
      continue;
    }
    auto list = w.bytes("a value list");
    if (view.kind != k) view.parts.clear();  // oneof: the last member set wins
    view.kind = k;
    view.parts.push_back(list);  // the same member again: merged by concatenation
  }
}

const char* kind_name(FeatureView::Kind k) {
  switch (k) {
    case FeatureView::Kind::kBytes: return "bytes_list";
    case FeatureView::Kind::kFloat: return "float_list";
    case FeatureView::Kind::kInt64: return "int64_list";
    default: return "nothing";
  }
}

FeatureView::Kind kind_for(FeatureType t) {
  switch (t) {
    case FeatureType::kInt64: return FeatureView::Kind::kInt64;
    case FeatureType::kFloat32: return FeatureView::Kind::kFloat;
    case FeatureType::kString: return FeatureView::Kind::kBytes;
  }
  return FeatureView::Kind::kMissing;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (;;) {
    size_t p = s.find(sep, start);
    out.push_back(s.substr(start, p == std::string::npos ? std::string::npos : p - start));
    if (p == std::string::npos) return out;
    start = p + 1;
  }
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

uint32_t crc32c(const void* data, size_t n, uint32_t crc) {
  const auto* p = static_cast<const uint8_t*>(data);
#if defined(__x86_64__)
  if (have_sse42()) return ~crc32c_hw(p, n, ~crc);
#endif
  return ~crc32c_sw(p, n, ~crc);
}

uint32_t masked_crc32c(const void* data, size_t n) {
  uint32_t c = crc32c(data, n);
  return ((c >> 15) | (c << 17)) + 0xa282ead8u;
}

std::vector<RecordRef> scan_records(const RandomAccessFile& file) {
  std::vector<RecordRef> out;
  int64_t off = 0;
  const int64_t size = file.size();
  while (off < size) {
    uint8_t head[12];
    file.read_exact(off, head, sizeof(head), "record header");
    uint64_t len = load_u64(head);
    if (masked_crc32c(head, 8) != load_u32(head + 8))
      bad_data(where(file, off) + ": the CRC of the length field does not match (the file is "
               "corrupt or not a TFRecord file)");
    const int64_t left = size - off - 12;  // after the header, which was read whole
    if (left < 4 || len > static_cast<uint64_t>(left - 4))
      bad_data(where(file, off) + " is truncated: it claims " + std::to_string(len) +
               " bytes of data, but the file has " + std::to_string(size - off - 12) +
               " bytes left after its header (at least 4 more are needed for its CRC)");
    out.push_back({off, static_cast<int64_t>(len) + kFramingBytes});
    off += static_cast<int64_t>(len) + kFramingBytes;
  }
  return out;
}

std::vector<RecordRef> read_index(const std::string& index_path, const std::string& data_path,
                                  int64_t data_file_size) {
  const std::optional<std::string> text = read_text_file(index_path);
  if (!text)
    fail(ErrorKind::kNotFound, "index file '" + index_path + "' does not exist; make it with "
                                 "'python -m stoker.tfrecord index " + data_path + " " +
                                 index_path + "'");
  std::istringstream in(*text);
  std::vector<RecordRef> out;
  std::string line;
  for (int64_t n = 1; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    std::istringstream ls(line);
    long long offset = -1, size = -1;
    std::string rest;
    auto bad = [&](const std::string& why) {
      fail(ErrorKind::kInvalidArgument,
           "index file '" + index_path + "' line " + std::to_string(n) + ": " + why +
               "; expected '<offset> <size>' (as tfrecord2idx or 'python -m stoker.tfrecord "
               "index' write), got '" + line + "'");
    };
    if (!(ls >> offset >> size)) bad("it is not two integers");
    if (ls >> rest) bad("it has more than two fields");
    if (offset < 0 || size < kFramingBytes) bad("the offset or the size is out of range");
    if (offset > data_file_size || size > data_file_size - offset)
      bad("the record ends at byte " +
          std::to_string(static_cast<unsigned long long>(offset) + static_cast<unsigned long long>(size)) +
          ", past the end of '" +
          data_path + "' (" + std::to_string(data_file_size) + " bytes): the index does not "
          "belong to this file or the file is truncated");
    out.push_back({offset, size});
  }
  if (in.bad()) fail(ErrorKind::kIO, "cannot read index file '" + index_path + "'");
  return out;
}

std::pair<size_t, size_t> read_record(const RandomAccessFile& file, const RecordRef& rec,
                                      std::vector<uint8_t>& buf, bool check_data_crc) {
  buf.resize(static_cast<size_t>(rec.size));
  file.read_exact(rec.offset, buf.data(), buf.size(), "record");
  uint64_t len = load_u64(buf.data());
  if (masked_crc32c(buf.data(), 8) != load_u32(buf.data() + 8))
    bad_data(where(file, rec.offset) + ": the CRC of the length field does not match (the file is "
             "corrupt, not a TFRecord file, or the index points into the middle of a record)");
  if (len != static_cast<uint64_t>(rec.size - kFramingBytes))
    bad_data(where(file, rec.offset) + ": the record holds " + std::to_string(len) +
             " bytes of data, but the index gives it " + std::to_string(rec.size) +
             " bytes in all (" + std::to_string(rec.size - kFramingBytes) + " of data); "
             "the index does not match the file, make it again");
  if (check_data_crc && masked_crc32c(buf.data() + 12, len) != load_u32(buf.data() + 12 + len))
    bad_data(where(file, rec.offset) + ": the CRC of the data does not match (the record is corrupt)");
  return {12, static_cast<size_t>(len)};
}

const char* feature_type_name(FeatureType t) {
  switch (t) {
    case FeatureType::kInt64: return "int64";
    case FeatureType::kString: return "string";
    case FeatureType::kFloat32: return "float32";
  }
  return "?";
}

FeatureSpec parse_feature_spec(const std::string& name, const std::string& encoded) {
  auto bad = [&](const std::string& why) {
    fail(ErrorKind::kInvalidArgument,
         "feature '" + name + "': " + why + " (got '" + encoded + "'); declare features with "
         "stoker.tfrecord.FixedLenFeature / VarLenFeature");
  };
  auto f = split(encoded, ';');
  if (f.size() != 4) bad("the declaration is not of the form '<fixed|var>;<type>;<dims>;<default>'");
  FeatureSpec s;
  s.name = name;
  if (f[0] == "fixed") s.fixed = true;
  else if (f[0] != "var") bad("the kind must be 'fixed' or 'var'");
  if (f[1] == "int64") s.type = FeatureType::kInt64;
  else if (f[1] == "string") s.type = FeatureType::kString;
  else if (f[1] == "float32") s.type = FeatureType::kFloat32;
  else bad("the type must be int64, string or float32");
  if (f[2] != "*") {
    Shape dims;
    if (!f[2].empty())
      for (const std::string& d : split(f[2], ',')) {
        char* end = nullptr;
        errno = 0;
        long long v = std::strtoll(d.c_str(), &end, 10);
        if (d.empty() || *end || errno || v < 0) bad("dimension '" + d + "' is not a non-negative integer");
        dims.push_back(v);
      }
    if (s.fixed) {
      s.shape = dims;
    } else {
      s.has_partial = true;
      s.partial_shape = dims;
      if (volume(dims) == 0) bad("a partial shape cannot contain 0");
    }
  } else if (s.fixed) {
    bad("a FixedLenFeature needs a shape");
  }
  const std::string& d = f[3];
  switch (s.type) {
    case FeatureType::kInt64: {
      char* end = nullptr;
      errno = 0;
      long long v = std::strtoll(d.c_str(), &end, 10);
      if (d.empty() || *end || errno) bad("the default value '" + d + "' is not an int64");
      s.default_int = v;
      break;
    }
    case FeatureType::kFloat32: {
      char* end = nullptr;
      double v = std::strtod(d.c_str(), &end);
      if (d.empty() || *end) bad("the default value '" + d + "' is not a number");
      s.default_float = static_cast<float>(v);
      break;
    }
    case FeatureType::kString: {
      if (d.size() % 2) bad("the default value is not hex-encoded");
      for (size_t i = 0; i < d.size(); i += 2) {
        int hi = hex_value(d[i]), lo = hex_value(d[i + 1]);
        if (hi < 0 || lo < 0) bad("the default value is not hex-encoded");
        s.default_bytes.push_back(static_cast<char>(hi * 16 + lo));
      }
      break;
    }
  }
  if (s.type == FeatureType::kString && s.fixed && volume(s.shape) > 1)
    bad("a string FixedLenFeature holds one bytes value (shape [] or [1]); tensors of strings "
        "are not supported, as in DALI");
  return s;
}

void find_features(const uint8_t* data, size_t size, const std::vector<std::string>& wanted,
                   std::vector<FeatureView>& views) {
  views.assign(wanted.size(), FeatureView{});
  const uint8_t* end = data + size;
  Wire example(data, end, data);
  while (!example.done()) {
    uint64_t tag = example.varint("field tag");
    if (tag >> 3 != 1 || (tag & 7) != 2) {  // Example.features
      example.skip(static_cast<uint32_t>(tag & 7));
      continue;
    }
    auto feats = example.bytes("Example.features");
    Wire features(feats.first, feats.first + feats.second, data);
    while (!features.done()) {
      uint64_t ftag = features.varint("field tag");
      if (ftag >> 3 != 1 || (ftag & 7) != 2) {  // Features.feature (map entries)
        features.skip(static_cast<uint32_t>(ftag & 7));
        continue;
      }
      auto entry = features.bytes("a Features.feature map entry");
      Wire e(entry.first, entry.first + entry.second, data);
      std::pair<const uint8_t*, size_t> key{nullptr, 0}, value{nullptr, 0};
      bool has_value = false;
      while (!e.done()) {
        uint64_t etag = e.varint("field tag");
        if ((etag & 7) == 2 && etag >> 3 == 1) {
          key = e.bytes("a feature name");
        } else if ((etag & 7) == 2 && etag >> 3 == 2) {
          value = e.bytes("a Feature");
          has_value = true;
        } else {
          e.skip(static_cast<uint32_t>(etag & 7));
        }
      }
      std::string_view k(reinterpret_cast<const char*>(key.first), key.second);
      auto it = std::lower_bound(wanted.begin(), wanted.end(), k,
                                 [](const std::string& a, std::string_view b) { return a < b; });
      if (it == wanted.end() || *it != k) continue;
      FeatureView& v = views[it - wanted.begin()];
      if (has_value) parse_feature(Wire(value.first, value.first + value.second, data), v);
      else v = FeatureView{};  // an entry without a value is a Feature with no list set
      v.record = data;
    }
  }
}

size_t FeatureValues::count() const {
  switch (kind) {
    case FeatureView::Kind::kBytes: return bytes.size();
    case FeatureView::Kind::kFloat: return floats.size();
    case FeatureView::Kind::kInt64: return ints.size();
    default: return 0;
  }
}

void decode_values(const FeatureView& view, FeatureValues& out) {
  out.kind = view.kind;
  out.ints.clear();
  out.floats.clear();
  out.bytes.clear();
  for (const auto& part : view.parts) {
    const uint8_t* base = view.record ? view.record : part.first;
    Wire w(part.first, part.first + part.second, base);
    while (!w.done()) {
      uint64_t tag = w.varint("field tag");
      uint32_t wt = static_cast<uint32_t>(tag & 7);
      if (tag >> 3 != 1) {
        w.skip(wt);
        continue;
      }
      switch (view.kind) {
        case FeatureView::Kind::kBytes:
          if (wt != 2) w.fail_at("a BytesList value has wire type " + std::to_string(wt));
          out.bytes.push_back(w.bytes("a bytes value"));
          break;
        case FeatureView::Kind::kFloat:
          if (wt == 2) {
            auto packed = w.bytes("packed floats");
            if (packed.second % 4)
              w.fail_at("packed floats take " + std::to_string(packed.second) +
                        " bytes, not a multiple of 4");
            size_t n0 = out.floats.size();
            out.floats.resize(n0 + packed.second / 4);
            if (packed.second)  // an empty list may leave floats without memory (data() null)
              std::memcpy(out.floats.data() + n0, packed.first, packed.second);
          } else if (wt == 5) {
            float f;
            std::memcpy(&f, w.fixed(4, "a float"), 4);
            out.floats.push_back(f);
          } else {
            w.fail_at("a FloatList value has wire type " + std::to_string(wt));
          }
          break;
        case FeatureView::Kind::kInt64:
          if (wt == 2) {
            auto packed = w.bytes("packed int64s");
            Wire pw(packed.first, packed.first + packed.second, base);
            while (!pw.done()) out.ints.push_back(static_cast<int64_t>(pw.varint("an int64")));
          } else if (wt == 0) {
            out.ints.push_back(static_cast<int64_t>(w.varint("an int64")));
          } else {
            w.fail_at("an Int64List value has wire type " + std::to_string(wt));
          }
          break;
        default:
          break;
      }
    }
  }
}

Shape output_shape(const FeatureSpec& spec, const FeatureValues& v) {
  const bool missing = v.kind == FeatureView::Kind::kMissing;
  auto bad = [&](const std::string& why) {
    bad_data("feature '" + spec.name + "': " + why);
  };
  if (!missing && v.kind != kind_for(spec.type))
    bad("the record holds a " + std::string(kind_name(v.kind)) + ", but the feature is declared " +
        feature_type_name(spec.type) + " (which reads a " + kind_name(kind_for(spec.type)) + ")");
  if (spec.type == FeatureType::kString) {
    if (missing) return {static_cast<int64_t>(spec.default_bytes.size())};
    if (v.bytes.size() != 1)
      bad("the record holds " + std::to_string(v.bytes.size()) + " bytes values; a string "
          "feature reads exactly one (tensors of strings are not supported, as in DALI)");
    return {static_cast<int64_t>(v.bytes[0].second)};
  }
  if (spec.fixed) {
    Shape s = spec.shape.empty() ? Shape{1} : spec.shape;
    if (!missing && static_cast<int64_t>(v.count()) != volume(s))
      bad("the record holds " + std::to_string(v.count()) + " values, but the FixedLenFeature "
          "has shape " + to_string(spec.shape) + " (" + std::to_string(volume(s)) + " values); "
          "use a VarLenFeature for lists whose length varies");
    return s;
  }
  const int64_t n = missing ? 1 : static_cast<int64_t>(v.count());  // missing: the default
  if (!spec.has_partial) return {n};
  const int64_t m = volume(spec.partial_shape);
  if (n % m)
    bad("the record holds " + std::to_string(n) + " values, not a multiple of the partial shape " +
        to_string(spec.partial_shape) + " (" + std::to_string(m) + " values)");
  Shape s{n / m};
  s.insert(s.end(), spec.partial_shape.begin(), spec.partial_shape.end());
  return s;
}

void write_output(const FeatureSpec& spec, const FeatureValues& v, const Shape& shape, void* dst) {
  const bool missing = v.kind == FeatureView::Kind::kMissing;
  const int64_t n = volume(shape);
  switch (spec.type) {
    case FeatureType::kString:
      if (!n) break;  // an empty value may come with no memory at all (dst null)
      if (missing) std::memcpy(dst, spec.default_bytes.data(), spec.default_bytes.size());
      else std::memcpy(dst, v.bytes[0].first, v.bytes[0].second);
      break;
    case FeatureType::kInt64:
      if (missing) std::fill_n(static_cast<int64_t*>(dst), n, spec.default_int);
      else if (n) std::memcpy(dst, v.ints.data(), n * sizeof(int64_t));
      break;
    case FeatureType::kFloat32:
      if (missing) std::fill_n(static_cast<float*>(dst), n, spec.default_float);
      else if (n) std::memcpy(dst, v.floats.data(), n * sizeof(float));
      break;
  }
}

}  // namespace stoker::readers::tfrecord
