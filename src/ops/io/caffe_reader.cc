// readers.caffe (caffe.Datum records) and readers.caffe2 (caffe2.TensorProtos records) from LMDB.
#include <cstring>
#include <memory>

#include "ops/io/reader_base.h"
#include "readers/caffe.h"
#include "readers/lmdb.h"

namespace stoker {
namespace {

namespace cf = readers::caffe;

// One output of one sample, before the batch is assembled.
struct Piece {
  DType dtype = DType::kUInt8;
  Shape shape;
  std::vector<uint8_t> bytes;
};

template <typename T>
Piece piece_of(const std::vector<T>& v, DType t) {
  Piece p;
  p.dtype = t;
  p.shape = {static_cast<int64_t>(v.size())};
  p.bytes.resize(v.size() * sizeof(T));
  if (!v.empty()) std::memcpy(p.bytes.data(), v.data(), p.bytes.size());
  return p;
}

Piece piece_of_bytes(const cf::Bytes& b, Shape shape) {
  Piece p;
  p.shape = std::move(shape);
  p.bytes.assign(b.first, b.first + b.second);
  return p;
}

// The shared part of both readers: an LMDB database, records turned into pieces in parallel,
// and the batch of each output assembled contiguously.
class LmdbReader : public SampleReader {
 public:
  explicit LmdbReader(const OpSpec& spec) : SampleReader(spec) {
    auto path = spec.get<std::string>("path");
    try {
      db_ = std::make_unique<readers::lmdb::Database>(path);
    } catch (const Error& e) {
      throw e.with_context(spec.display_name());
    }
    if (db_->size() == 0)
      fail(ErrorKind::kInvalidArgument, spec.display_name() + ": LMDB database '" + path + "' is empty");
    init_order(db_->size());
  }

  void run_batch(Workspace& ws) override {
    const auto& picks = this->picks();
    const int64_t n = static_cast<int64_t>(picks.size());
    const int nout = spec_.num_outputs;
    std::vector<std::vector<Piece>> pieces(n);
    std::vector<std::string> sources(n);
    std::vector<char> bad(n, 0);
    ws.thread_pool->parallel_for(n, [&](int64_t i, int) {
      const int64_t idx = picks[i].index;
      sources[i] = db_->path() + "@" + db_->key(idx);
      try {
        std::vector<uint8_t> value;
        db_->get(idx, value);
        try {
          pieces[i] = parse(value);
        } catch (const Error& e) {
          throw e.with_context("'" + db_->path() + "' key '" + db_->key(idx) + "'");
        }
        if (static_cast<int>(pieces[i].size()) != nout)
          fail(ErrorKind::kInternal, "record parsed into the wrong number of outputs");
      } catch (const Error& e) {
        if (!ws.report_bad_sample(i, sources[i], e.what()))
          throw e.with_context("sample " + std::to_string(i));
        bad[i] = 1;
      }
    });
    ws.outputs.assign(nout, Batch());
    int64_t first = -1;
    for (int64_t i = 0; i < n && first < 0; ++i)
      if (!bad[i]) first = i;
    for (int o = 0; o < nout; ++o) {
      const DType t = first >= 0 ? pieces[first][o].dtype : DType::kUInt8;
      const size_t nd = first >= 0 ? pieces[first][o].shape.size() : 1;
      std::vector<Shape> shapes(n);
      for (int64_t i = 0; i < n; ++i) {
        if (bad[i]) {
          shapes[i] = Shape(nd, 0);
          continue;
        }
        const Piece& p = pieces[i][o];
        if (p.dtype != t || p.shape.size() != nd)
          fail(ErrorKind::kDecode,
               spec_.display_name() + ": output " + std::to_string(o) + " of '" + sources[i] +
                   "' is " + dtype_name(p.dtype) + " with " + std::to_string(p.shape.size()) +
                   " dimensions, but in '" + sources[first] + "' it is " + dtype_name(t) +
                   " with " + std::to_string(nd) + "; the records of a database must agree");
        shapes[i] = p.shape;
      }
      ws.outputs[o].allocate(*ws.host_pool, t, shapes, "");
      for (int64_t i = 0; i < n; ++i) {
        ws.outputs[o][i].source = sources[i];
        if (!bad[i] && !pieces[i][o].bytes.empty())
          std::memcpy(ws.outputs[o][i].data, pieces[i][o].bytes.data(), pieces[i][o].bytes.size());
      }
    }
  }

 protected:
  virtual std::vector<Piece> parse(const std::vector<uint8_t>& value) const = 0;

 private:
  std::unique_ptr<readers::lmdb::Database> db_;
};

class CaffeReader : public LmdbReader {
 public:
  explicit CaffeReader(const OpSpec& spec)
      : LmdbReader(spec), image_(spec.get<bool>("image_available")),
        label_(spec.get<bool>("label_available")) {
    if (!image_ && !label_)
      spec.arg_error("image_available", "and label_available are both False: nothing to read");
  }

 protected:
  std::vector<Piece> parse(const std::vector<uint8_t>& value) const override {
    cf::Datum d = cf::parse_datum(value.data(), value.size());
    std::vector<Piece> out;
    if (image_) {
      if (!d.has_data) fail(ErrorKind::kDecode, "the Datum has no image data");
      const bool encoded = !(d.has_encoded && !d.encoded);  // as DALI: encoded unless it says not
      if (encoded) {
        out.push_back(piece_of_bytes(d.data, {static_cast<int64_t>(d.data.second)}));
      } else {
        // Caffe stores raw images channel-major (CHW); the output is HWC like decoded images.
        const int64_t c = d.channels, h = d.height, w = d.width;
        if (c <= 0 || h <= 0 || w <= 0 || static_cast<uint64_t>(c * h * w) != d.data.second)
          fail(ErrorKind::kDecode, "the raw Datum holds " + std::to_string(d.data.second) +
                                       " bytes for channels x height x width = " + std::to_string(c) +
                                       " x " + std::to_string(h) + " x " + std::to_string(w));
        Piece p;
        p.shape = {h, w, c};
        p.bytes.resize(d.data.second);
        for (int64_t ch = 0; ch < c; ++ch)
          for (int64_t y = 0; y < h; ++y)
            for (int64_t x = 0; x < w; ++x)
              p.bytes[(y * w + x) * c + ch] = d.data.first[(ch * h + y) * w + x];
        out.push_back(std::move(p));
      }
    }
    if (label_) {
      if (!d.has_label) fail(ErrorKind::kDecode, "the Datum has no label (set label_available=False)");
      out.push_back(piece_of(std::vector<int32_t>{d.label}, DType::kInt32));
    }
    return out;
  }

 private:
  bool image_, label_;
};

enum LabelType { kSingle = 0, kSparse = 1, kDense = 2, kWeightedSparse = 3, kNoLabel = 4 };

class Caffe2Reader : public LmdbReader {
 public:
  explicit Caffe2Reader(const OpSpec& spec)
      : LmdbReader(spec), image_(spec.get<bool>("image_available")),
        label_type_(spec.get<int>("label_type")), num_labels_(spec.get<int>("num_labels")),
        additional_(spec.get<int>("additional_inputs")), bbox_(spec.get<bool>("bbox")) {}

 protected:
  std::vector<Piece> parse(const std::vector<uint8_t>& value) const override {
    std::vector<cf::TensorProto> protos = cf::parse_tensor_protos(value.data(), value.size());
    size_t next = 0;
    auto take = [&](const char* what) -> const cf::TensorProto& {
      if (next >= protos.size())
        fail(ErrorKind::kDecode, "the record has " + std::to_string(protos.size()) +
                                     " TensorProtos; the " + what + " would be number " +
                                     std::to_string(next + 1) + " (check image_available, "
                                     "label_type, additional_inputs and bbox)");
      return protos[next++];
    };
    std::vector<Piece> out;
    if (image_) {
      const cf::TensorProto& t = take("image");
      if (t.data_type == cf::TensorType::kString) {
        if (t.string_data.empty()) fail(ErrorKind::kDecode, "the image TensorProto has no string_data");
        out.push_back(piece_of_bytes(t.string_data[0], {static_cast<int64_t>(t.string_data[0].second)}));
      } else if (t.data_type == cf::TensorType::kByte || t.data_type == cf::TensorType::kUInt8) {
        if (t.dims.size() < 2 || t.dims.size() > 3)
          fail(ErrorKind::kDecode, "a raw image TensorProto needs dims (H, W) or (H, W, C)");
        Shape s{t.dims[0], t.dims[1], t.dims.size() == 3 ? t.dims[2] : 1};
        if (static_cast<uint64_t>(volume(s)) != t.byte_data.second)
          fail(ErrorKind::kDecode, "the raw image TensorProto has " + std::to_string(t.byte_data.second) +
                                       " bytes for dims " + to_string(s));
        out.push_back(piece_of_bytes(t.byte_data, s));
      } else {
        fail(ErrorKind::kDecode, "the image TensorProto has data_type " +
                                     std::to_string(static_cast<int>(t.data_type)) +
                                     "; expected STRING (encoded) or BYTE (raw)");
      }
    }
    if (label_type_ != kNoLabel) {
      const cf::TensorProto& l = take("label");
      const bool is_float = l.data_type == cf::TensorType::kFloat;
      if (!is_float && l.data_type != cf::TensorType::kInt32)
        fail(ErrorKind::kDecode, "the label TensorProto must be FLOAT or INT32");
      const size_t count = is_float ? l.float_data.size() : l.int32_data.size();
      auto value_at = [&](size_t k) { return is_float ? double(l.float_data[k]) : double(l.int32_data[k]); };
      if (label_type_ == kSingle || label_type_ == kDense) {
        if (label_type_ == kSingle && count != 1)
          fail(ErrorKind::kDecode, "label_type=0 (single label) but the label holds " +
                                       std::to_string(count) + " values");
        out.push_back(is_float ? piece_of(l.float_data, DType::kFloat32)
                               : piece_of(l.int32_data, DType::kInt32));
      } else {
        const cf::TensorProto* weights = label_type_ == kWeightedSparse ? &take("label weights") : nullptr;
        std::vector<float> dense_f(num_labels_, 0.f);
        std::vector<int32_t> dense_i(num_labels_, 0);
        for (size_t k = 0; k < count; ++k) {
          const double v = value_at(k);
          if (v < 0 || v >= num_labels_)
            fail(ErrorKind::kDecode, "label index " + std::to_string(v) + " is outside [0, num_labels=" +
                                         std::to_string(num_labels_) + ")");
          const size_t idx = static_cast<size_t>(v);
          if (weights) {
            if (k >= weights->float_data.size())
              fail(ErrorKind::kDecode, "the label weights TensorProto has fewer values than indices");
            dense_f[idx] = weights->float_data[k];
          } else {
            dense_f[idx] = 1.f;
            dense_i[idx] = 1;
          }
        }
        out.push_back(weights || is_float ? piece_of(dense_f, DType::kFloat32)
                                          : piece_of(dense_i, DType::kInt32));
      }
    }
    for (int a = 0; a < additional_; ++a) {
      const cf::TensorProto& t = take("additional input");
      switch (t.data_type) {
        case cf::TensorType::kFloat: out.push_back(piece_of(t.float_data, DType::kFloat32)); break;
        case cf::TensorType::kInt32: out.push_back(piece_of(t.int32_data, DType::kInt32)); break;
        case cf::TensorType::kInt64: out.push_back(piece_of(t.int64_data, DType::kInt64)); break;
        default:
          fail(ErrorKind::kDecode, "additional input " + std::to_string(a) + " has data_type " +
                                       std::to_string(static_cast<int>(t.data_type)) +
                                       "; FLOAT, INT32 and INT64 are supported");
      }
    }
    if (bbox_) {
      const cf::TensorProto& b = take("bounding box");
      if (b.data_type != cf::TensorType::kInt32 || b.int32_data.size() % 4)
        fail(ErrorKind::kDecode, "the bounding box TensorProto must be INT32 with 4 values per box");
      Piece p = piece_of(b.int32_data, DType::kInt32);
      p.shape = {static_cast<int64_t>(b.int32_data.size() / 4), 4};
      out.push_back(std::move(p));
    }
    return out;
  }

 private:
  bool image_;
  int label_type_, num_labels_, additional_;
  bool bbox_;
};

}  // namespace

STOKER_REGISTER_OP_NAMED(readers_caffe, "readers.caffe") {
  add_reader_args(schema);
  schema.doc("Reads caffe.Datum records from a Caffe LMDB database: the image (the encoded "
             "bytes, or a raw HWC uint8 array for Datums with encoded=False) and the label "
             "(int32). Needs stoker built with LMDB.")
      .inputs(0, 0).outputs(2, {"images", "labels"})
      .arg({.name = "path", .type = ArgType::kString, .doc = "The LMDB database (its folder)."})
      .arg({.name = "image_available", .type = ArgType::kBool, .default_value = true,
            .doc = "Whether the records hold images (the first output)."})
      .arg({.name = "label_available", .type = ArgType::kBool, .default_value = true,
            .doc = "Whether the records hold labels (the next output)."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<CaffeReader>(s); });
  add_on_error_arg(schema, /*can_replace=*/false);
}

STOKER_REGISTER_OP_NAMED(readers_caffe2, "readers.caffe2") {
  add_reader_args(schema);
  schema.doc("Reads caffe2.TensorProtos records from a Caffe2 LMDB database. Outputs, in order: "
             "the image (if image_available: encoded bytes, or raw HWC uint8), the label (unless "
             "label_type=4), `additional_inputs` more tensors, and the boxes (if bbox). Needs "
             "stoker built with LMDB.")
      .inputs(0, 0).outputs(2)
      .arg({.name = "path", .type = ArgType::kString, .doc = "The LMDB database (its folder)."})
      .arg({.name = "image_available", .type = ArgType::kBool, .default_value = true,
            .doc = "Whether the first TensorProto of each record is an image."})
      .arg({.name = "label_type", .type = ArgType::kInt, .default_value = int64_t{0},
            .doc = "0: one label; 1: sparse label indices (a multi-hot vector of num_labels); "
                   "2: dense labels; 3: sparse indices with weights (the next TensorProto); "
                   "4: no label.", .min = 0, .max = 4})
      .arg({.name = "num_labels", .type = ArgType::kInt, .default_value = int64_t{1},
            .doc = "The number of classes (label_type 1 and 3).", .min = 1})
      .arg({.name = "additional_inputs", .type = ArgType::kInt, .default_value = int64_t{0},
            .doc = "TensorProtos after the label to output as they are.", .min = 0})
      .arg({.name = "bbox", .type = ArgType::kBool, .default_value = false,
            .doc = "Whether the last TensorProto holds boxes (int32, 4 per box)."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<Caffe2Reader>(s); });
  add_on_error_arg(schema, /*can_replace=*/false);
}

}  // namespace stoker
