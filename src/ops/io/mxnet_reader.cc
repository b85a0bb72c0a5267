// readers.mxnet: MXNet RecordIO image records (im2rec) -> encoded image bytes and labels.
#include <cstring>
#include <memory>

#include "ops/io/reader_base.h"
#include "readers/recordio.h"

namespace stoker {
namespace {

namespace rio = readers::recordio;

class MXNetReader : public SampleReader {
 public:
  explicit MXNetReader(const OpSpec& spec) : SampleReader(spec) {
    open_record_files(spec, "path", "index_path", ".rec file", files_,
                      [&](int f, const readers::RandomAccessFile& file, const std::string& index) {
      auto recs = index.empty() ? rio::scan_records(file) : rio::read_index(index, file.path(), file.size());
      for (const auto& r : recs) records_.push_back({f, r});
    });
    if (records_.empty())
      fail(ErrorKind::kInvalidArgument, spec.display_name() + ": the RecordIO files hold no "
                                                              "records (first '" + files_[0]->path() + "')");
    init_order(static_cast<int64_t>(records_.size()));
  }

  void run_batch(Workspace& ws) override {
    const auto& picks = this->picks();
    const int64_t n = static_cast<int64_t>(picks.size());
    struct Parsed {
      std::vector<uint8_t> raw, payload;
      rio::ImageRecord rec;
      std::string source;
      bool bad = false;
    };
    prefetch_records(files_, records_, picks);  // the batch's records together, from URLs
    std::vector<Parsed> parsed(n);
    ws.thread_pool->parallel_for(n, [&](int64_t i, int) {
      const Record& r = records_[picks[i].index];
      const readers::RandomAccessFile& file = *files_[r.file];
      Parsed& p = parsed[i];
      p.source = file.path() + "@" + std::to_string(r.ref.offset);
      try {
        rio::read_record(file, r.ref, p.raw, p.payload);
        try {
          p.rec = rio::parse_image_record(p.payload);
        } catch (const Error& e) {
          throw e.with_context("'" + file.path() + "' record at offset " + std::to_string(r.ref.offset));
        }
      } catch (const Error& e) {
        if (!ws.report_bad_sample(i, p.source, e.what()))
          throw e.with_context("sample " + std::to_string(i));
        p.bad = true;
      }
    });
    ws.outputs.assign(2, Batch());
    std::vector<Shape> data_shapes(n), label_shapes(n);
    for (int64_t i = 0; i < n; ++i) {
      data_shapes[i] = {parsed[i].bad ? 0 : static_cast<int64_t>(parsed[i].rec.image_size)};
      label_shapes[i] = {parsed[i].bad ? 0 : static_cast<int64_t>(parsed[i].rec.labels.size())};
    }
    Batch& data = ws.outputs[0];
    Batch& label = ws.outputs[1];
    data.allocate(*ws.host_pool, DType::kUInt8, data_shapes, "");
    label.allocate(*ws.host_pool, DType::kFloat32, label_shapes, "");
    ws.thread_pool->parallel_for(n, [&](int64_t i, int) {
      data[i].source = label[i].source = parsed[i].source;
      if (parsed[i].bad) return;
      const rio::ImageRecord& r = parsed[i].rec;
      std::memcpy(data[i].data, r.image, r.image_size);
      std::memcpy(label[i].data, r.labels.data(), r.labels.size() * sizeof(float));
    });
  }

 private:
  struct Record {
    int file;
    rio::RecordRef ref;
  };
  RecordFiles files_;
  std::vector<Record> records_;
};

}  // namespace

STOKER_REGISTER_OP_NAMED(readers_mxnet, "readers.mxnet") {
  add_reader_args(schema);
  schema.doc("Reads MXNet RecordIO image records (as im2rec writes them): the encoded image "
             "bytes (uint8) and the labels (float32: one, or the `flag` labels of the record "
             "header). Multi-part records are joined. A corrupt record raises an error naming "
             "the file and the offset.")
      .inputs(0, 0).outputs(2, {"data", "labels"})
      .arg({.name = "path", .type = ArgType::kStringList,
            .doc = "RecordIO (.rec) files to read.", .list_min = 1})
      .arg({.name = "index_path", .type = ArgType::kStringList, .optional = true,
            .doc = "MXNet index (.idx) files, one per .rec file ('<key>\\t<offset>' lines). "
                   "stoker: may be left out; the files are then scanned when the pipeline is built."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<MXNetReader>(s); });
  add_on_error_arg(schema, /*can_replace=*/false);
}

}  // namespace stoker
