// libFuzzer harness: the records of Caffe and Caffe2 LMDB databases (readers/caffe.h), parsed
// from the protobuf wire format by stoker's own code: caffe.Datum and caffe2.TensorProtos.
//
// The LMDB file around the records (its B-tree, which stoker checks before liblmdb maps it) is
// lmdb_fuzzer's; the value bytes, which stoker parses itself, are fuzzed here.
//
// Input: one mode byte (bit 0: 0 caffe.Datum, 1 caffe2.TensorProtos), then one record's bytes.
// Oracle, beyond sanitizer reports: the parsers throw only Error(kDecode); every bytes field
// they return points inside the record.
#include <string>
#include <vector>

#include "harness.h"
#include "readers/caffe.h"

namespace {

using namespace stoker;
using namespace stoker::readers;

void inside(const caffe::Bytes& b, const uint8_t* data, size_t size, const char* what) {
  if (b.second && (b.first < data || b.first + b.second > data + size))
    fuzz::finding(std::string(what) + " points outside the record");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* input, size_t input_size) {
  if (input_size < 1) return 0;
  // Exactly the record's size, so that ASan sees a read past it.
  const std::vector<uint8_t> rec(input + 1, input + input_size);
  const uint8_t* data = rec.data();
  const size_t size = rec.size();
  if (input[0] & 1) {
    std::vector<caffe::TensorProto> protos;
    if (!fuzz::expect_ok_or("parse_tensor_protos", {ErrorKind::kDecode},
                            [&] { protos = caffe::parse_tensor_protos(data, size); }))
      return 0;
    for (const auto& t : protos) {
      inside(t.byte_data, data, size, "TensorProto.byte_data");
      for (const auto& s : t.string_data) inside(s, data, size, "TensorProto.string_data");
    }
  } else {
    caffe::Datum d;
    if (!fuzz::expect_ok_or("parse_datum", {ErrorKind::kDecode},
                            [&] { d = caffe::parse_datum(data, size); }))
      return 0;
    inside(d.data, data, size, "Datum.data");
  }
  return 0;
}

namespace {

// Inputs that fuzzing found and that are fixed; each is made here, not stored as a file.
std::vector<fuzz::Regression> regressions() { return {}; }

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::replay(regressions(), LLVMFuzzerTestOneInput);
  return 0;
}
