// decoders.numpy: NumPy .npy files held as bytes (a 1-D uint8 sample, e.g. from readers.file or
// a webdataset's "npy" component) to their arrays, on the CPU, as DALI 2.4's. The header is
// parsed at setup (shapes); run_sample copies the data out in C order, transposing Fortran-order
// arrays and swapping the bytes of the other endianness (readers/npy.h, the parser readers.numpy
// uses), then casts when `dtype` is given.
//
// As DALI: every sample of a batch must hold the same element type and number of dimensions
// unless `dtype` casts them all; no layout. Where stoker differs: DALI reads format version 1.0
// only, stoker also 2.0 and 3.0 (NumPy writes them for headers past 64 KiB and non-Latin-1
// field names); the cast is fn.cast's (floats rounded half away from zero, saturated), which
// DALI's documentation does not spell out.
#include <string>
#include <vector>

#include "core/cast_value.h"
#include "pipeline/operator.h"
#include "readers/npy.h"

namespace stoker {
namespace {

namespace npy = readers::npy;

class NumpyDecoder : public Operator {
 public:
  explicit NumpyDecoder(const OpSpec& spec) : Operator(spec) {
    if (spec.has("dtype")) dtype_ = static_cast<DType>(spec.get<int64_t>("dtype"));
  }

  bool setup_reads_input_data() const override { return true; }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const std::string op = spec_.display_name();
    if (in.dtype() != DType::kUInt8 && in.dtype() != DType::kInt8)
      fail(ErrorKind::kTypeMismatch,
           op + ": the input must be the bytes of .npy files (uint8), got " +
               dtype_name(in.dtype()) + "; read the files with fn.readers.file");
    const size_t n = in.size();
    headers_.assign(n, {});
    OutputDesc out{dtype_, "", {}};
    for (size_t i = 0; i < n; ++i) {
      if (in.shape(i).size() != 1)
        fail(ErrorKind::kInvalidArgument,
             op + ": " + where(in, i) + " must be 1-D bytes of a .npy file, got shape " +
                 to_string(in.shape(i)));
      try {
        headers_[i] = npy::read_header(source(in, i));
      } catch (const Error& e) {
        throw Error(e.kind(), op + ": " + where(in, i) + ": " + e.what());
      }
      const npy::Header& h = headers_[i];
      if (i > 0 && dtype_ == DType::kNone && h.dtype != headers_[0].dtype)
        fail(ErrorKind::kTypeMismatch,
             op + ": " + where(in, i) + " holds " + dtype_name(h.dtype) + " elements, " +
                 where(in, 0) + " " + dtype_name(headers_[0].dtype) +
                 "; the arrays of a batch must have one type: give dtype= to cast them all");
      if (i > 0 && h.shape.size() != headers_[0].shape.size())
        fail(ErrorKind::kInvalidArgument,
             op + ": " + where(in, i) + " is a " + std::to_string(h.shape.size()) + "-D array, " +
                 where(in, 0) + " a " + std::to_string(headers_[0].shape.size()) +
                 "-D one; the arrays of a batch must have the same number of dimensions");
      out.shapes.push_back(h.shape);
    }
    if (out.dtype == DType::kNone) out.dtype = n ? headers_[0].dtype : DType::kUInt8;
    return {out};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const Batch& in = ws.input(0);
    Batch& out = ws.output(0);
    const npy::Header& h = headers_[i];
    const Shape zeros(h.shape.size(), 0);
    const npy::MemorySource src = source(in, i);
    if (out.dtype() == h.dtype) {
      npy::read_box(src, h, zeros, h.shape, out[i].data, h.shape, zeros);
      return;
    }
    const int64_t count = volume(h.shape);
    std::vector<uint8_t> tmp(static_cast<size_t>(count) * dtype_size(h.dtype));
    npy::read_box(src, h, zeros, h.shape, tmp.data(), h.shape, zeros);
    visit_dtype(h.dtype, [&](auto ti) {
      using In = decltype(ti);
      visit_dtype(out.dtype(), [&](auto to) {
        using Out = decltype(to);
        const In* s = reinterpret_cast<const In*>(tmp.data());
        Out* d = out.data<Out>(i);
        for (int64_t k = 0; k < count; ++k) d[k] = cast_value<Out>(s[k]);
      });
    });
  }

 private:
  static std::string where(const Batch& in, size_t i) {
    return "sample " + std::to_string(i) + (in[i].source.empty() ? "" : " ('" + in[i].source + "')");
  }
  static npy::MemorySource source(const Batch& in, size_t i) {
    const std::string name = in[i].source.empty() ? "sample " + std::to_string(i) : in[i].source;
    return npy::MemorySource(name, static_cast<const uint8_t*>(in[i].data), in.shape(i)[0]);
  }

  DType dtype_ = DType::kNone;
  std::vector<npy::Header> headers_;
};

}  // namespace

STOKER_REGISTER_OP_NAMED(decoders_numpy, "decoders.numpy") {
  schema.doc("Decodes NumPy .npy files given as bytes (1-D uint8 samples, e.g. from "
             "fn.readers.file) into their arrays: the file's shape and element type (bool, "
             "integers, float16/32/64), C order (Fortran-order arrays are transposed), native "
             "byte order. All samples of a batch must have one element type and number of "
             "dimensions, unless dtype casts them all.")
      .inputs(1, 1, {"input"}).outputs(1)
      .arg({.name = "dtype", .type = ArgType::kDType, .optional = true,
            .doc = "Cast every array to this type (as fn.cast does); default: the files' own "
                   "type."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<NumpyDecoder>(s); });
}

}  // namespace stoker
