// TFRecord files of tf.train.Example records, read without TensorFlow or protobuf.
//
// Framing (tensorflow/core/lib/io/record_writer.cc): each record is
//   uint64 length | uint32 masked_crc32c(length) | data[length] | uint32 masked_crc32c(data)
// little-endian, with masked(crc) = ((crc >> 15) | (crc << 17)) + 0xa282ead8 over CRC-32C.
// DALI's index files (tfrecord2idx) list one record per line as "<offset> <size>", size
// counting the framing. The payload is a protobuf tf.train.Example:
//   Example{ Features features = 1 }  Features{ map<string, Feature> feature = 1 }
//   Feature{ oneof { BytesList bytes_list = 1; FloatList float_list = 2; Int64List int64_list = 3 } }
// with `repeated` values packed or not; the wire format is small enough to walk by hand, and
// doing so reads only the features asked for.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/shape.h"
#include "readers/random_access_file.h"

namespace stoker::readers::tfrecord {

// CRC-32C (Castagnoli), with SSE4.2's crc32 instruction where the CPU has it.
uint32_t crc32c(const void* data, size_t n, uint32_t crc = 0);
uint32_t masked_crc32c(const void* data, size_t n);

inline constexpr int64_t kFramingBytes = 16;  // length, its CRC, and the data's CRC

// One record of a file: where its framing starts and its whole size (framing included).
struct RecordRef {
  int64_t offset = 0;
  int64_t size = 0;
};

// Walks the framing of a whole file (lengths and length CRCs, not the data): stoker's
// substitute for an index file. Errors (Error(kDecode)) name the file and the offset.
std::vector<RecordRef> scan_records(const RandomAccessFile& file);

// Reads a DALI index file. Errors name the index file and the line; entries that run past the
// end of `data_file_size` are reported as such (the index does not belong to the file).
std::vector<RecordRef> read_index(const std::string& index_path, const std::string& data_path,
                                  int64_t data_file_size);

// Reads one record into `buf`, checks its length against the index and both CRCs, and returns
// the payload's position in `buf` (offset 12, size length). Errors name the file and offset.
std::pair<size_t, size_t> read_record(const RandomAccessFile& file, const RecordRef& rec,
                                      std::vector<uint8_t>& buf, bool check_data_crc = true);

// ---- feature declarations (stoker.tfrecord / DALI's nvidia.dali.tfrecord)

enum class FeatureType { kInt64 = 0, kString = 1, kFloat32 = 2 };  // DALI's numbering
const char* feature_type_name(FeatureType t);

struct FeatureSpec {
  std::string name;
  FeatureType type = FeatureType::kInt64;
  bool fixed = false;         // FixedLenFeature: `shape` is the output shape
  Shape shape;                // fixed only; an empty shape gives a 1-element output
  bool has_partial = false;   // VarLenFeature(partial_shape, ...): outputs (n / prod, *partial)
  Shape partial_shape;
  int64_t default_int = 0;    // used where a record lacks the feature
  float default_float = 0.f;
  std::string default_bytes;
};

// Parses the text form the Python layer makes from a tfrecord.Feature:
//   "<fixed|var>;<int64|string|float32>;<dims, comma-separated, '*' for none>;<default>"
// where a string default is hex-encoded. Raises Error(kInvalidArgument) naming the feature.
FeatureSpec parse_feature_spec(const std::string& name, const std::string& encoded);

// ---- tf.train.Example

// The raw bytes of one Feature's value list, as found in a record (possibly in several parts,
// which protobuf merges by concatenation).
struct FeatureView {
  enum class Kind { kMissing, kBytes, kFloat, kInt64 };
  Kind kind = Kind::kMissing;
  std::vector<std::pair<const uint8_t*, size_t>> parts;  // serialized BytesList/FloatList/Int64List
  const uint8_t* record = nullptr;  // the payload the parts point into (for error offsets)
};

// Finds the features named in `wanted` (sorted, unique) in a serialized Example; views[i] is
// filled for wanted[i]. Raises Error(kDecode, "...at byte N of the record") for malformed data.
void find_features(const uint8_t* data, size_t size, const std::vector<std::string>& wanted,
                   std::vector<FeatureView>& views);

// A feature's values, decoded from its view (bytes point into the record).
struct FeatureValues {
  FeatureView::Kind kind = FeatureView::Kind::kMissing;
  std::vector<int64_t> ints;
  std::vector<float> floats;
  std::vector<std::pair<const uint8_t*, size_t>> bytes;
  size_t count() const;
};
void decode_values(const FeatureView& view, FeatureValues& out);

// The output shape of `spec` for these values (the defaults where the record lacks the
// feature), checking that they fit: a FixedLenFeature needs exactly prod(shape) values, a
// string feature one bytes value, the value list the declared type. Raises Error(kDecode)
// saying what the record holds and what the declaration expects.
Shape output_shape(const FeatureSpec& spec, const FeatureValues& values);
// Writes the output of `spec` (of the shape output_shape gave) to `dst`.
void write_output(const FeatureSpec& spec, const FeatureValues& values, const Shape& shape,
                  void* dst);

}  // namespace stoker::readers::tfrecord
