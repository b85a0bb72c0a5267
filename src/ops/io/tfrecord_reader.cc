// readers.tfrecord: tf.train.Example records from TFRecord files, one output per feature.
#include <algorithm>
#include <memory>

#include "ops/io/reader_base.h"
#include "readers/tfrecord.h"

namespace stoker {
namespace {

namespace tfr = readers::tfrecord;

DType output_dtype(tfr::FeatureType t) {
  switch (t) {
    case tfr::FeatureType::kInt64: return DType::kInt64;
    case tfr::FeatureType::kFloat32: return DType::kFloat32;
    case tfr::FeatureType::kString: return DType::kUInt8;
  }
  return DType::kNone;
}

size_t output_ndim(const tfr::FeatureSpec& s) {
  if (s.type == tfr::FeatureType::kString) return 1;
  if (s.fixed) return std::max<size_t>(1, s.shape.size());
  return 1 + (s.has_partial ? s.partial_shape.size() : 0);
}

class TFRecordReader : public SampleReader {
 public:
  explicit TFRecordReader(const OpSpec& spec) : SampleReader(spec) {
    auto names = spec.get<std::vector<std::string>>("feature_names");
    auto encoded = spec.get<std::vector<std::string>>("features");
    if (names.size() != encoded.size())
      spec.arg_error("features", "has " + std::to_string(encoded.size()) + " declarations for " +
                                     std::to_string(names.size()) + " feature_names");
    if (names.empty())
      spec.arg_error("features", "is empty; declare at least one feature, e.g. "
                                 "{'image/encoded': tfrecord.FixedLenFeature((), tfrecord.string, '')}");
    if (static_cast<int>(names.size()) != spec.num_outputs)
      fail(ErrorKind::kInternal, spec.display_name() + ": " + std::to_string(names.size()) +
                                     " features but " + std::to_string(spec.num_outputs) +
                                     " outputs (the Python layer must give one output per feature)");
    try {
      for (size_t i = 0; i < names.size(); ++i)
        specs_.push_back(tfr::parse_feature_spec(names[i], encoded[i]));
    } catch (const Error& e) {
      spec.arg_error("features", e.what());
    }
    wanted_ = names;
    std::sort(wanted_.begin(), wanted_.end());
    if (std::adjacent_find(wanted_.begin(), wanted_.end()) != wanted_.end())
      spec.arg_error("features", "names a feature twice");
    for (const auto& s : specs_)
      slot_.push_back(std::lower_bound(wanted_.begin(), wanted_.end(), s.name) - wanted_.begin());

    open_record_files(spec, "path", "index_path", "TFRecord file", files_,
                      [&](int f, const readers::RandomAccessFile& file, const std::string& index) {
      auto recs = index.empty() ? tfr::scan_records(file) : tfr::read_index(index, file.path(), file.size());
      for (const auto& r : recs) records_.push_back({f, r});
    });
    if (records_.empty())
      fail(ErrorKind::kInvalidArgument,
           spec.display_name() + ": the TFRecord files hold no records (" +
               std::to_string(files_.size()) + " file(s), first '" + files_[0]->path() + "')");
    init_order(static_cast<int64_t>(records_.size()));
  }

  void run_batch(Workspace& ws) override {
    const auto& picks = this->picks();
    const int64_t n = static_cast<int64_t>(picks.size());
    const size_t nf = specs_.size();
    struct Parsed {
      std::vector<uint8_t> buf;
      std::vector<tfr::FeatureView> views;
      std::vector<tfr::FeatureValues> values;
      std::vector<Shape> shapes;
      std::string source;
      bool bad = false;  // skipped under on_error='skip': an empty placeholder
    };
    prefetch_records(files_, records_, picks);  // the batch's records together, from URLs
    std::vector<Parsed> parsed(n);
    ws.thread_pool->parallel_for(n, [&](int64_t i, int) {
      const Record& r = records_[picks[i].index];
      const readers::RandomAccessFile& file = *files_[r.file];
      Parsed& p = parsed[i];
      p.source = file.path() + "@" + std::to_string(r.ref.offset);
      p.values.resize(nf);
      p.shapes.assign(nf, Shape{0});
      try {
        auto [start, len] = tfr::read_record(file, r.ref, p.buf);
        try {
          tfr::find_features(p.buf.data() + start, len, wanted_, p.views);
          for (size_t j = 0; j < nf; ++j) {
            tfr::decode_values(p.views[slot_[j]], p.values[j]);
            p.shapes[j] = tfr::output_shape(specs_[j], p.values[j]);
          }
        } catch (const Error& e) {
          throw e.with_context("'" + file.path() + "' record at offset " + std::to_string(r.ref.offset));
        }
      } catch (const Error& e) {
        if (!ws.report_bad_sample(i, p.source, e.what()))
          throw e.with_context("sample " + std::to_string(i));
        p.bad = true;
        for (size_t j = 0; j < nf; ++j) p.shapes[j] = Shape(output_ndim(specs_[j]), 0);
      }
    });

    ws.outputs.assign(nf, Batch());
    for (size_t j = 0; j < nf; ++j) {
      std::vector<Shape> shapes(n);
      for (int64_t i = 0; i < n; ++i) shapes[i] = parsed[i].shapes[j];
      ws.outputs[j].allocate(*ws.host_pool, output_dtype(specs_[j].type), shapes, "");
      for (int64_t i = 0; i < n; ++i) ws.outputs[j][i].source = parsed[i].source;
    }
    ws.thread_pool->parallel_for(n, [&](int64_t i, int) {
      if (parsed[i].bad) return;
      for (size_t j = 0; j < nf; ++j)
        tfr::write_output(specs_[j], parsed[i].values[j], ws.outputs[j].shape(i), ws.outputs[j][i].data);
    });
  }

 private:
  struct Record {
    int file;
    tfr::RecordRef ref;
  };
  RecordFiles files_;
  std::vector<Record> records_;
  std::vector<tfr::FeatureSpec> specs_;
  std::vector<std::string> wanted_;  // feature names, sorted
  std::vector<size_t> slot_;         // feature j -> its index in wanted_
};

}  // namespace

STOKER_REGISTER_OP_NAMED(readers_tfrecord, "readers.tfrecord") {
  add_reader_args(schema);
  schema.doc("Reads tf.train.Example records from TFRecord files. Returns a dict with one output "
             "per declared feature (int64 -> int64, float32 -> float32, string -> the bytes as "
             "uint8). A record that lacks a feature gives its default value (FixedLenFeature: "
             "its shape filled with it; VarLenFeature: one element). Each record's length and "
             "data CRCs are checked; a corrupt record raises an error naming the file and offset.")
      .inputs(0, 0).outputs(1)
      .arg({.name = "path", .type = ArgType::kStringList,
            .doc = "TFRecord files to read (a string or a list).", .list_min = 1})
      .arg({.name = "index_path", .type = ArgType::kStringList, .optional = true,
            .doc = "Index files, one per TFRecord file, as DALI's tfrecord2idx or "
                   "'python -m stoker.tfrecord index FILE INDEX' make them (lines '<offset> "
                   "<size>'). stoker: may be left out; the files are then scanned when the "
                   "pipeline is built."})
      .arg({.name = "features", .type = ArgType::kStringList,
            .doc = "dict of feature name -> tfrecord.FixedLenFeature / tfrecord.VarLenFeature "
                   "(the Python layer passes each declaration in text form)."})
      .arg({.name = "feature_names", .type = ArgType::kStringList,
            .doc = "Filled in by the Python layer from the keys of `features`: the name of "
                   "each output, in order."})
      .arg({.name = "use_o_direct", .type = ArgType::kBool, .default_value = false,
            .doc = "Accepted for DALI compatibility; stoker reads records with pread()."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<TFRecordReader>(s); });
  add_on_error_arg(schema, /*can_replace=*/false);
}

}  // namespace stoker
