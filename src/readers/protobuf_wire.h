// The protobuf wire format, read by hand: varints, length-delimited fields, fixed 32/64-bit
// fields. Record formats that carry protobuf messages (tf.train.Example, Caffe's Datum, Caffe2's
// TensorProtos) are walked with this instead of generated code: a few fields each, no protobuf
// dependency, and every malformed byte reported with its position in the record.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>

#include "core/error.h"

namespace stoker::readers::proto {

class Reader {
 public:
  // Reads [begin, end); `record_start` is where the record begins (for error offsets), `what`
  // names the message in errors ("tf.train.Example", "caffe.Datum").
  Reader(const uint8_t* begin, const uint8_t* end, const uint8_t* record_start, const char* what)
      : p_(begin), end_(end), base_(record_start), what_(what) {}

  bool done() const { return p_ >= end_; }

  // A field's tag: (field number, wire type).
  std::pair<uint64_t, uint32_t> tag() {
    uint64_t t = varint("field tag");
    return {t >> 3, static_cast<uint32_t>(t & 7)};
  }

  uint64_t varint(const char* field) {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ >= end_) fail_at("a varint (" + std::string(field) + ") runs past the end of its message");
      uint8_t b = *p_++;
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
    }
    fail_at("a varint (" + std::string(field) + ") is longer than 10 bytes");
  }

  // A length-delimited field's bytes.
  std::pair<const uint8_t*, size_t> bytes(const char* field) {
    uint64_t n = varint(field);
    if (n > static_cast<uint64_t>(end_ - p_))
      fail_at(std::string(field) + " claims " + std::to_string(n) + " bytes, but only " +
              std::to_string(end_ - p_) + " remain in its message");
    const uint8_t* d = p_;
    p_ += n;
    return {d, static_cast<size_t>(n)};
  }

  const uint8_t* fixed(size_t n, const char* field) {
    if (static_cast<size_t>(end_ - p_) < n) fail_at(std::string(field) + " runs past the end of its message");
    const uint8_t* d = p_;
    p_ += n;
    return d;
  }

  void skip(uint32_t wire_type) {
    switch (wire_type) {
      case 0: varint("an unknown field"); break;
      case 1: fixed(8, "an unknown 64-bit field"); break;
      case 2: bytes("an unknown field"); break;
      case 5: fixed(4, "an unknown 32-bit field"); break;
      default: fail_at("wire type " + std::to_string(wire_type) + " is not valid here");
    }
  }

  // A sub-message's reader over [data, data + n), reporting offsets in the same record.
  Reader sub(std::pair<const uint8_t*, size_t> m) const {
    return Reader(m.first, m.first + m.second, base_, what_);
  }

  [[noreturn]] void fail_at(const std::string& what) const {
    fail(ErrorKind::kDecode, std::string(what_) + " is malformed at byte " +
                                 std::to_string(p_ - base_) + " of the record: " + what);
  }

 private:
  const uint8_t* p_;
  const uint8_t* end_;
  const uint8_t* base_;
  const char* what_;
};

}  // namespace stoker::readers::proto
