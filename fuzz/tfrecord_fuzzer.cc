// libFuzzer harness: TFRecord files (readers/tfrecord.h), from the framing to the output
// tensors, as readers.tfrecord drives them: scan_records (stoker's stand-in for an index), then
// read_record, find_features, decode_values, output_shape and write_output for every declared
// feature; and read_index on index files.
//
// Input: one mode byte, then the bytes.
//   bit 0-1: 0 a TFRecord file; 1 the same with every record's two CRCs recomputed first (the
//            CRCs otherwise stop almost every mutation before the tf.Example parser); 2 one
//            serialized tf.Example (no framing); 3 an index file ("<offset> <size>" lines) for
//            a data file of 1 MiB.
// Oracle, beyond sanitizer reports: the file's parsers throw only Error(kDecode) (a corrupt
// file is a DecodeError, never a ValueError), the index parser only kInvalidArgument; scanned
// records tile the file exactly; a record's payload lies inside it; every shape output_shape
// gives holds exactly what write_output writes (the output buffer has no slack, so ASan sees
// one byte too many).
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "harness.h"
#include "memfile.h"
#include "readers/tfrecord.h"

namespace {

using namespace stoker;
using namespace stoker::readers;

fuzz::MemFile* g_file = nullptr;

// What the test records hold (tensorflow/models' pets and Pascal VOC sets), plus two that no
// record has (defaults), sorted as find_features wants them.
const std::vector<std::string>& wanted() {
  static const std::vector<std::string> w = [] {
    std::vector<std::string> v = {
        "image/encoded", "image/filename", "image/format", "image/height", "image/width",
        "image/object/bbox/xmin", "image/object/bbox/ymax", "image/object/class/label",
        "image/object/class/text", "image/segmentation/class/encoded", "missing/int",
        "missing/float", "label", "id", "x"};
    std::sort(v.begin(), v.end());
    return v;
  }();
  return w;
}

// Every feature is read with each of these declarations (DALI's tfrecord.FixedLenFeature /
// VarLenFeature kinds), so each parse path meets each kind of value list.
const std::vector<tfrecord::FeatureSpec>& specs() {
  static const std::vector<tfrecord::FeatureSpec> s = {
      tfrecord::parse_feature_spec("f", "fixed;int64;1;0"),
      tfrecord::parse_feature_spec("f", "fixed;int64;;-1"),
      tfrecord::parse_feature_spec("f", "var;int64;*;7"),
      tfrecord::parse_feature_spec("f", "fixed;float32;2,2;0.5"),
      tfrecord::parse_feature_spec("f", "var;float32;2;0"),
      tfrecord::parse_feature_spec("f", "var;float32;*;1.5"),
      tfrecord::parse_feature_spec("f", "fixed;string;;6869"),
      tfrecord::parse_feature_spec("f", "var;string;*;"),
  };
  return s;
}

size_t elem_size(tfrecord::FeatureType t) {
  return t == tfrecord::FeatureType::kInt64 ? 8 : t == tfrecord::FeatureType::kFloat32 ? 4 : 1;
}

void check_example(const uint8_t* data, size_t size) {
  std::vector<tfrecord::FeatureView> views;
  if (!fuzz::expect_ok_or("find_features", {ErrorKind::kDecode},
                          [&] { tfrecord::find_features(data, size, wanted(), views); }))
    return;
  if (views.size() != wanted().size()) fuzz::finding("find_features gave the wrong number of views");
  for (const auto& view : views) {
    for (const auto& part : view.parts)
      if (part.first < data || part.first + part.second > data + size)
        fuzz::finding("a feature's value list points outside the record");
    tfrecord::FeatureValues values;
    if (!fuzz::expect_ok_or("decode_values", {ErrorKind::kDecode},
                            [&] { tfrecord::decode_values(view, values); }))
      continue;
    for (const auto& b : values.bytes)
      if (b.first < data || b.first + b.second > data + size)
        fuzz::finding("a bytes value points outside the record");
    for (const auto& spec : specs()) {
      Shape shape;
      if (!fuzz::expect_ok_or("output_shape", {ErrorKind::kDecode},
                              [&] { shape = tfrecord::output_shape(spec, values); }))
        continue;
      for (int64_t d : shape)
        if (d < 0) fuzz::finding("output_shape gave a negative extent");
      const int64_t n = volume(shape);
      if (spec.type != tfrecord::FeatureType::kString && values.kind != tfrecord::FeatureView::Kind::kMissing &&
          n != static_cast<int64_t>(values.count()))
        fuzz::finding("output_shape holds " + std::to_string(n) + " values, the record " +
                      std::to_string(values.count()));
      // Exactly the output's size, on the heap, so that ASan sees a write past it.
      std::vector<uint8_t> out(static_cast<size_t>(n) * elem_size(spec.type));
      fuzz::expect_ok_or("write_output", {},
                         [&] { tfrecord::write_output(spec, values, shape, out.data()); });
    }
  }
}

void check_file() {
  std::vector<tfrecord::RecordRef> recs;
  RandomAccessFile file(g_file->path());
  if (!fuzz::expect_ok_or("scan_records", {ErrorKind::kDecode},
                          [&] { recs = tfrecord::scan_records(file); }))
    return;
  int64_t at = 0;
  for (const auto& r : recs) {
    if (r.offset != at || r.size < tfrecord::kFramingBytes)
      fuzz::finding("scan_records gave a record at " + std::to_string(r.offset) + " of " +
                    std::to_string(r.size) + " bytes where one was due at " + std::to_string(at));
    at += r.size;
  }
  if (at != file.size()) fuzz::finding("scan_records' records do not end where the file does");
  std::vector<uint8_t> buf;
  for (size_t i = 0; i < recs.size() && i < 64; ++i) {
    std::pair<size_t, size_t> payload;
    if (!fuzz::expect_ok_or("read_record", {ErrorKind::kDecode},
                            [&] { payload = tfrecord::read_record(file, recs[i], buf); }))
      continue;
    if (payload.first + payload.second > buf.size())
      fuzz::finding("read_record's payload runs past the record");
    check_example(buf.data() + payload.first, payload.second);
  }
}

uint32_t le32(const uint8_t* p) { uint32_t v; std::memcpy(&v, p, 4); return v; }
void put_le32(uint8_t* p, uint32_t v) { std::memcpy(p, &v, 4); }

// Rewrites both CRCs of each record, walking the framing; stops where a record runs past the end.
void fix_crcs(uint8_t* d, size_t size) {
  size_t off = 0;
  while (off + 12 <= size) {
    uint64_t len;
    std::memcpy(&len, d + off, 8);
    put_le32(d + off + 8, tfrecord::masked_crc32c(d + off, 8));
    if (len > size - off - 12 || size - off - 12 - len < 4) return;
    put_le32(d + off + 12 + len, tfrecord::masked_crc32c(d + off + 12, len));
    off += 16 + len;
  }
  (void)le32;
}

void check_index(const uint8_t* data, size_t size) {
  g_file->set(data, size);
  constexpr int64_t kDataSize = 1 << 20;
  std::vector<tfrecord::RecordRef> recs;
  if (!fuzz::expect_ok_or("read_index", {ErrorKind::kInvalidArgument}, [&] {
        recs = tfrecord::read_index(g_file->path(), "data.tfrecord", kDataSize);
      }))
    return;
  for (const auto& r : recs)
    if (r.offset < 0 || r.size < tfrecord::kFramingBytes || r.offset > kDataSize - r.size)
      fuzz::finding("read_index accepted a record outside the data file: offset " +
                    std::to_string(r.offset) + ", size " + std::to_string(r.size));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const int mode = data[0] & 3;
  data++, size--;
  switch (mode) {
    case 0:
      g_file->set(data, size);
      check_file();
      break;
    case 1: {
      std::vector<uint8_t> copy(data, data + size);
      fix_crcs(copy.data(), copy.size());
      g_file->set(copy.data(), copy.size());
      check_file();
      break;
    }
    case 2: {
      std::vector<uint8_t> copy(data, data + size);  // exactly its size: reads past it are seen
      check_example(copy.data(), copy.size());
      break;
    }
    case 3:
      check_index(data, size);
      break;
  }
  return 0;
}

namespace {

std::vector<uint8_t> record(uint64_t len_field, const std::string& body, bool good_crcs) {
  std::vector<uint8_t> v(12);
  std::memcpy(v.data(), &len_field, 8);
  put_le32(v.data() + 8, good_crcs ? tfrecord::masked_crc32c(v.data(), 8) : 0);
  v.insert(v.end(), body.begin(), body.end());
  v.resize(v.size() + 4);
  return v;
}

// Inputs that fuzzing found and that are fixed; each is made here, not stored as a file.
std::vector<fuzz::Regression> regressions() {
  auto with_mode = [](uint8_t mode, std::vector<uint8_t> v) {
    v.insert(v.begin(), mode);
    return v;
  };
  std::vector<uint8_t> short_tail = record(0, "", true);
  short_tail.resize(12);  // a last header with no room for its data CRC, claiming 2^63 bytes
  const uint64_t huge = uint64_t{1} << 63;
  std::memcpy(short_tail.data(), &huge, 8);
  put_le32(short_tail.data() + 8, tfrecord::masked_crc32c(short_tail.data(), 8));
  return {
      // scan_records compared the claimed length with "bytes left - 16" in unsigned arithmetic:
      // a file ending 12..15 bytes after a header accepted any length; 2^63 became a negative
      // record size, read at a negative offset (an internal error instead of a DecodeError).
      // Fixed in tfrecord.cc.
      {"tfrecord: header 12 bytes before the end claiming 2^63 bytes", with_mode(0, short_tail)},
      // write_output copied a missing string feature's empty default to an empty output with
      // memcpy, whose destination may then be null (UBSan). Fixed in tfrecord.cc.
      {"tfrecord: a missing string feature with an empty default", with_mode(2, {})},
      // decode_values copied an empty packed float list to the end of an empty vector with
      // memcpy, from null (UBSan). Fixed in tfrecord.cc.
      {"tfrecord: an empty packed float list",
       with_mode(2, fuzz::bytes_of(std::string("\x0a\x0b\x0a\x09\x0a\x01x\x12\x04\x12\x02\x0a\x00", 13)))},
      // read_index added offset and size in int64 before comparing: overflow (UBSan).
      {"tfrecord index: offset + size overflows",
       with_mode(3, fuzz::bytes_of("9223372036854775807 16\n"))},
  };
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_file = new fuzz::MemFile("stoker_fuzz_tfrecord");
  specs();
  fuzz::replay(regressions(), LLVMFuzzerTestOneInput);
  return 0;
}
