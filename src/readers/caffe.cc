#include "readers/caffe.h"

#include <cstring>

#include "readers/protobuf_wire.h"

namespace stoker::readers::caffe {
namespace {

using proto::Reader;

// A repeated scalar field, packed (wire type 2) or not.
template <typename T, typename ReadOne>
void repeated(Reader& r, uint32_t wt, uint32_t unpacked_wt, std::vector<T>& out, ReadOne one,
              const char* name) {
  if (wt == 2) {
    Reader packed = r.sub(r.bytes(name));
    while (!packed.done()) out.push_back(one(packed));
  } else if (wt == unpacked_wt) {
    out.push_back(one(r));
  } else {
    r.fail_at(std::string(name) + " has wire type " + std::to_string(wt));
  }
}

float read_float(Reader& r) {
  float f;
  std::memcpy(&f, r.fixed(4, "a float"), 4);
  return f;
}
double read_double(Reader& r) {
  double d;
  std::memcpy(&d, r.fixed(8, "a double"), 8);
  return d;
}

void expect(Reader& r, uint32_t wt, uint32_t want, const char* name) {
  if (wt != want) r.fail_at(std::string(name) + " has wire type " + std::to_string(wt));
}

}  // namespace

Datum parse_datum(const uint8_t* data, size_t size) {
  Datum d;
  Reader r(data, data + size, data, "caffe.Datum");
  while (!r.done()) {
    auto [field, wt] = r.tag();
    switch (field) {
      case 1: expect(r, wt, 0, "channels"); d.channels = static_cast<int32_t>(r.varint("channels")); break;
      case 2: expect(r, wt, 0, "height"); d.height = static_cast<int32_t>(r.varint("height")); break;
      case 3: expect(r, wt, 0, "width"); d.width = static_cast<int32_t>(r.varint("width")); break;
      case 4: expect(r, wt, 2, "data"); d.data = r.bytes("data"); d.has_data = true; break;
      case 5:
        expect(r, wt, 0, "label");
        d.label = static_cast<int32_t>(r.varint("label"));
        d.has_label = true;
        break;
      case 6: repeated(r, wt, 5, d.float_data, read_float, "float_data"); break;
      case 7:
        expect(r, wt, 0, "encoded");
        d.encoded = r.varint("encoded") != 0;
        d.has_encoded = true;
        break;
      default: r.skip(wt);
    }
  }
  return d;
}

std::vector<TensorProto> parse_tensor_protos(const uint8_t* data, size_t size) {
  std::vector<TensorProto> out;
  Reader top(data, data + size, data, "caffe2.TensorProtos");
  while (!top.done()) {
    auto [field, wt] = top.tag();
    if (field != 1 || wt != 2) {
      top.skip(wt);
      continue;
    }
    TensorProto t;
    Reader r = top.sub(top.bytes("a TensorProto"));
    while (!r.done()) {
      auto [f, w] = r.tag();
      switch (f) {
        case 1: repeated(r, w, 0, t.dims, [](Reader& x) { return static_cast<int64_t>(x.varint("dims")); }, "dims"); break;
        case 2: expect(r, w, 0, "data_type"); t.data_type = static_cast<TensorType>(r.varint("data_type")); break;
        case 3: repeated(r, w, 5, t.float_data, read_float, "float_data"); break;
        case 4: repeated(r, w, 0, t.int32_data, [](Reader& x) { return static_cast<int32_t>(x.varint("int32_data")); }, "int32_data"); break;
        case 5: expect(r, w, 2, "byte_data"); t.byte_data = r.bytes("byte_data"); break;
        case 6: expect(r, w, 2, "string_data"); t.string_data.push_back(r.bytes("string_data")); break;
        case 9: repeated(r, w, 1, t.double_data, read_double, "double_data"); break;
        case 10: repeated(r, w, 0, t.int64_data, [](Reader& x) { return static_cast<int64_t>(x.varint("int64_data")); }, "int64_data"); break;
        default: r.skip(w);
      }
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace stoker::readers::caffe
