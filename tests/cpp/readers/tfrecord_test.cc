#include "readers/tfrecord.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/error.h"

namespace stoker::readers::tfrecord {
namespace {

// Protobuf wire-format writers, independent of the parser under test.
std::string varint(uint64_t v) {
  std::string s;
  while (v >= 0x80) {
    s.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  s.push_back(static_cast<char>(v));
  return s;
}
std::string field(int num, int wt, const std::string& payload) {
  std::string s = varint(static_cast<uint64_t>(num) << 3 | wt);
  if (wt == 2) s += varint(payload.size());
  return s + payload;
}
std::string entry(const std::string& key, const std::string& feature) {
  return field(1, 2, field(1, 2, key) + field(2, 2, feature));
}
std::string example(const std::string& entries) { return field(1, 2, entries); }
std::string f32(float f) {
  std::string s(4, '\0');
  std::memcpy(s.data(), &f, 4);
  return s;
}

struct Parsed {
  std::vector<FeatureView> views;
  std::vector<FeatureValues> values;
};
Parsed parse(const std::string& ex, const std::vector<std::string>& wanted) {
  Parsed p;
  find_features(reinterpret_cast<const uint8_t*>(ex.data()), ex.size(), wanted, p.views);
  p.values.resize(wanted.size());
  for (size_t i = 0; i < wanted.size(); ++i) decode_values(p.views[i], p.values[i]);
  return p;
}

TEST(TFRecordCrc, KnownVectors) {
  EXPECT_EQ(crc32c("123456789", 9), 0xe3069283u);  // the CRC-32C check value
  EXPECT_EQ(crc32c("", 0), 0u);
  std::string zeros(32, '\0');
  EXPECT_EQ(crc32c(zeros.data(), zeros.size()), 0x8a9136aau);  // RFC 3720 B.4
  std::string ones(32, '\xff');
  EXPECT_EQ(crc32c(ones.data(), ones.size()), 0x62a8ab43u);
  // Chaining gives the CRC of the concatenation, at any split (the SIMD path's tail handling).
  std::string text = "The quick brown fox jumps over the lazy dog, twice over.";
  for (size_t k = 0; k <= text.size(); ++k)
    EXPECT_EQ(crc32c(text.data() + k, text.size() - k, crc32c(text.data(), k)),
              crc32c(text.data(), text.size()));
}

TEST(TFRecordExample, PackedAndUnpackedValues) {
  std::string ints_packed = field(3, 2, field(1, 2, varint(1) + varint(300) + varint(uint64_t(-5))));
  std::string ints_unpacked = field(3, 2, field(1, 0, varint(7)) + field(1, 0, varint(8)));
  std::string floats_packed = field(2, 2, field(1, 2, f32(1.5f) + f32(-2.f)));
  std::string floats_unpacked = field(2, 2, field(1, 5, f32(3.25f)));
  std::string bytes = field(1, 2, field(1, 2, "abc") + field(1, 2, ""));
  std::string ex = example(entry("a", ints_packed) + entry("b", ints_unpacked) +
                           entry("c", floats_packed) + entry("d", floats_unpacked) +
                           entry("e", bytes) + entry("zz", ints_packed));
  Parsed p = parse(ex, {"a", "b", "c", "d", "e", "missing"});
  EXPECT_EQ(p.values[0].ints, (std::vector<int64_t>{1, 300, -5}));
  EXPECT_EQ(p.values[1].ints, (std::vector<int64_t>{7, 8}));
  EXPECT_EQ(p.values[2].floats, (std::vector<float>{1.5f, -2.f}));
  EXPECT_EQ(p.values[3].floats, (std::vector<float>{3.25f}));
  ASSERT_EQ(p.values[4].bytes.size(), 2u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(p.values[4].bytes[0].first), 3), "abc");
  EXPECT_EQ(p.values[4].bytes[1].second, 0u);
  EXPECT_EQ(p.values[5].kind, FeatureView::Kind::kMissing);
}

TEST(TFRecordExample, ProtobufMergeRules) {
  // A repeated map key: the last entry wins. Two Features messages: merged. Unknown fields: skipped.
  std::string first = field(3, 2, field(1, 2, varint(1)));
  std::string second = field(3, 2, field(1, 2, varint(2)));
  std::string ex = field(1, 2, entry("k", first)) + field(9, 0, varint(5)) +
                   field(1, 2, entry("k", second) + field(7, 5, "abcd"));
  Parsed p = parse(ex, {"k"});
  EXPECT_EQ(p.values[0].ints, (std::vector<int64_t>{2}));
  // oneof: a later member replaces an earlier one; the same member twice is concatenated.
  std::string feature = field(3, 2, field(1, 2, varint(1))) + field(2, 2, field(1, 2, f32(1.f))) +
                        field(2, 2, field(1, 2, f32(2.f)));
  p = parse(example(entry("k", feature)), {"k"});
  EXPECT_EQ(p.values[0].kind, FeatureView::Kind::kFloat);
  EXPECT_EQ(p.values[0].floats, (std::vector<float>{1.f, 2.f}));
}

TEST(TFRecordExample, MalformedDataRaises) {
  std::string good = example(entry("k", field(3, 2, field(1, 2, varint(1)))));
  for (size_t cut = 1; cut < good.size(); ++cut) {
    std::string bad = good.substr(0, cut);
    try {
      parse(bad, {"k"});
      // A cut at a message boundary can still be valid protobuf; anything else must raise.
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kDecode);
      EXPECT_NE(std::string(e.what()).find("at byte"), std::string::npos) << e.what();
    }
  }
  std::string overlong = example(entry("k", field(3, 2, field(1, 2, std::string(11, '\xff')))));
  EXPECT_THROW(parse(overlong, {"k"}), Error);
  std::string packed_floats_bad = example(entry("k", field(2, 2, field(1, 2, "abc"))));
  EXPECT_THROW(parse(packed_floats_bad, {"k"}), Error);
  std::string group = example(entry("k", field(3, 2, field(1, 3, ""))));
  EXPECT_THROW(parse(group, {"k"}), Error);
}

TEST(TFRecordFeatures, SpecsAndShapes) {
  FeatureSpec s = parse_feature_spec("x", "fixed;int64;2,3;-7");
  EXPECT_TRUE(s.fixed);
  EXPECT_EQ(s.shape, (Shape{2, 3}));
  EXPECT_EQ(s.default_int, -7);
  FeatureValues missing;
  EXPECT_EQ(output_shape(s, missing), (Shape{2, 3}));
  std::vector<int64_t> out(6);
  write_output(s, missing, {2, 3}, out.data());
  EXPECT_EQ(out, std::vector<int64_t>(6, -7));

  FeatureSpec v = parse_feature_spec("y", "var;float32;2;0.5");
  FeatureValues vals;
  vals.kind = FeatureView::Kind::kFloat;
  vals.floats = {1, 2, 3, 4, 5, 6};
  EXPECT_EQ(output_shape(v, vals), (Shape{3, 2}));
  vals.floats.pop_back();
  EXPECT_THROW(output_shape(v, vals), Error);

  FeatureSpec str = parse_feature_spec("z", "fixed;string;;6869");
  EXPECT_EQ(str.default_bytes, "hi");
  EXPECT_EQ(output_shape(str, missing), (Shape{2}));

  EXPECT_THROW(parse_feature_spec("w", "fixed;int32;1;0"), Error);
  EXPECT_THROW(parse_feature_spec("w", "fixed;int64;*;0"), Error);
  EXPECT_THROW(parse_feature_spec("w", "fixed;string;2;"), Error);
  EXPECT_THROW(parse_feature_spec("w", "var;int64;*;x"), Error);
}

}  // namespace
}  // namespace stoker::readers::tfrecord
