// The records of Caffe and Caffe2 LMDB databases, parsed from the protobuf wire format:
//   caffe.Datum { int32 channels = 1; int32 height = 2; int32 width = 3; bytes data = 4;
//                 int32 label = 5; repeated float float_data = 6; bool encoded = 7; }
//   caffe2.TensorProtos { repeated TensorProto protos = 1; }
//   caffe2.TensorProto { repeated int64 dims = 1; DataType data_type = 2 [default FLOAT];
//                        repeated float float_data = 3; repeated int32 int32_data = 4;
//                        bytes byte_data = 5; repeated bytes string_data = 6;
//                        repeated double double_data = 9; repeated int64 int64_data = 10; }
// (caffe/src/caffe/proto/caffe.proto, caffe2/proto/caffe2.proto). Bytes point into the record.
#pragma once
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace stoker::readers::caffe {

using Bytes = std::pair<const uint8_t*, size_t>;

struct Datum {
  int32_t channels = 0, height = 0, width = 0;
  bool has_data = false;
  Bytes data{nullptr, 0};
  bool has_label = false;
  int32_t label = 0;
  bool has_encoded = false;
  bool encoded = false;
  std::vector<float> float_data;
};
// Raises Error(kDecode, "caffe.Datum is malformed at byte N of the record: ...").
Datum parse_datum(const uint8_t* data, size_t size);

// caffe2.TensorProto.DataType
enum class TensorType { kUndefined = 0, kFloat = 1, kInt32 = 2, kByte = 3, kString = 4,
                        kBool = 5, kUInt8 = 6, kInt8 = 7, kUInt16 = 8, kInt16 = 9, kInt64 = 10,
                        kFloat16 = 12, kDouble = 13 };

struct TensorProto {
  std::vector<int64_t> dims;
  TensorType data_type = TensorType::kFloat;
  std::vector<float> float_data;
  std::vector<int32_t> int32_data;
  Bytes byte_data{nullptr, 0};
  std::vector<Bytes> string_data;
  std::vector<double> double_data;
  std::vector<int64_t> int64_data;
};
std::vector<TensorProto> parse_tensor_protos(const uint8_t* data, size_t size);

}  // namespace stoker::readers::caffe
