// readers.webdataset: samples of WebDataset tar shards, one output per set of extensions.
#include <algorithm>
#include <cctype>
#include <memory>
#include <set>

#include "ops/io/reader_base.h"
#include "readers/tar.h"
#include "readers/webdataset.h"

namespace stoker {
namespace {

namespace wds = readers::webdataset;

enum class MissingComponent { kEmpty, kSkip, kError };

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

class WebdatasetReader : public SampleReader {
 public:
  explicit WebdatasetReader(const OpSpec& spec) : SampleReader(spec) {
    const bool case_sensitive = spec.get<bool>("case_sensitive_extensions");
    auto ext = spec.get<std::vector<std::string>>("ext");
    if (ext.empty()) spec.arg_error("ext", "is empty; give one extension set per output");
    if (static_cast<int>(ext.size()) != spec.num_outputs)
      fail(ErrorKind::kInternal, spec.display_name() + ": " + std::to_string(ext.size()) +
                                     " extension sets but " + std::to_string(spec.num_outputs) +
                                     " outputs (the Python layer must give one output per set)");
    for (const std::string& set : ext) {
      std::set<std::string> exts;
      size_t start = 0;
      for (;;) {
        size_t p = set.find(';', start);
        std::string e = set.substr(start, p == std::string::npos ? std::string::npos : p - start);
        if (!e.empty()) exts.insert(case_sensitive ? e : lower(e));
        if (p == std::string::npos) break;
        start = p + 1;
      }
      if (exts.empty()) spec.arg_error("ext", "entry '" + set + "' names no extension");
      ext_sets_.push_back(exts);
    }
    const size_t nout = ext_sets_.size();
    if (spec.has("dtypes")) {
      for (int64_t d : spec.get<std::vector<int64_t>>("dtypes")) {
        DType t = static_cast<DType>(d);
        if (d < 0 || d > static_cast<int64_t>(DType::kBool))
          spec.arg_error("dtypes", "holds " + std::to_string(d) + ", which is not a stoker type; "
                                   "use types.UINT8, types.INT32, types.FLOAT, ...");
        dtypes_.push_back(t);
      }
      if (dtypes_.size() != nout)
        spec.arg_error("dtypes", "has " + std::to_string(dtypes_.size()) + " types for " +
                                     std::to_string(nout) + " outputs (entries of 'ext')");
    } else {
      dtypes_.assign(nout, DType::kUInt8);
    }
    const std::string mcb = lower(spec.get<std::string>("missing_component_behavior"));
    MissingComponent missing;
    if (mcb.empty() || mcb == "empty") missing = MissingComponent::kEmpty;
    else if (mcb == "skip") missing = MissingComponent::kSkip;
    else if (mcb == "error") missing = MissingComponent::kError;
    else
      spec.arg_error("missing_component_behavior",
                     "must be 'empty' (the default), 'skip' or 'error', got '" + mcb + "'");

    open_record_files(spec, "paths", "index_paths", "archive", files_,
                      [&](int f, const readers::RandomAccessFile& file, const std::string& index) {
      std::vector<wds::Sample> samples =
          index.empty() ? wds::samples_from_entries(readers::tar::list_entries(file))
                        : wds::read_index(index, file.path(), file.size());
      for (wds::Sample& s : samples) add_sample(f, s, missing, index);
    });
    if (samples_.empty())
      fail(ErrorKind::kInvalidArgument,
           spec.display_name() + ": no samples to read: the archives (first '" + files_[0]->path() +
               "') have no sample" + (missing == MissingComponent::kSkip
                                          ? " with a component for every output (ext)" : "") +
               "; check ext and the archives' file names");
    init_order(static_cast<int64_t>(samples_.size()));
  }

  void run_batch(Workspace& ws) override {
    const auto& picks = this->picks();
    const int64_t n = static_cast<int64_t>(picks.size());
    const size_t nout = ext_sets_.size();
    ws.outputs.assign(nout, Batch());
    for (size_t o = 0; o < nout; ++o) {
      std::vector<Shape> shapes(n);
      for (int64_t i = 0; i < n; ++i) {
        const Picked& s = samples_[picks[i].index];
        int c = s.component[o];
        shapes[i] = {c < 0 ? 0 : s.components[c].size / static_cast<int64_t>(dtype_size(dtypes_[o]))};
      }
      ws.outputs[o].allocate(*ws.host_pool, dtypes_[o], shapes, "");
      for (int64_t i = 0; i < n; ++i) {
        const Picked& s = samples_[picks[i].index];
        int c = s.component[o] < 0 ? 0 : s.component[o];
        ws.outputs[o][i].source = source(s, c);
      }
    }
    if (any_remote(files_)) {  // the batch's members fetched together
      std::vector<readers::ByteRange> ranges;
      for (int64_t i = 0; i < n; ++i) {
        const Picked& s = samples_[picks[i].index];
        for (size_t o = 0; o < nout; ++o)
          if (s.component[o] >= 0)
            ranges.push_back({s.file, s.components[s.component[o]].offset, s.components[s.component[o]].size});
      }
      readers::prefetch(files_, ranges);
    }
    ws.thread_pool->parallel_for(n, [&](int64_t i, int) {
      const Picked& s = samples_[picks[i].index];
      const readers::RandomAccessFile& file = *files_[s.file];
      try {
        for (size_t o = 0; o < nout; ++o) {
          int c = s.component[o];
          if (c < 0) continue;
          const wds::Component& comp = s.components[c];
          file.read_exact(comp.offset, ws.outputs[o][i].data, static_cast<size_t>(comp.size),
                          "sample component");
        }
      } catch (const Error& e) {
        if (!ws.report_bad_sample(i, source(s, 0), e.what()))
          throw e.with_context("sample " + std::to_string(i));
        for (size_t o = 0; o < nout; ++o) ws.outputs[o][i].shape = {0};
      }
    });
  }

 private:
  struct Picked {
    int file;
    std::vector<wds::Component> components;  // the components some output takes
    std::vector<int> component;              // output -> index into components, -1: missing
  };

  std::string source(const Picked& s, int c) const {
    if (s.components.empty()) return files_[s.file]->path();
    const wds::Component& comp = s.components[c];
    return files_[s.file]->path() + "@" + std::to_string(comp.offset) +
           (comp.filename.empty() ? "" : ":" + comp.filename);
  }

  void add_sample(int file, const wds::Sample& sample, MissingComponent missing,
                  const std::string& index_path) {
    const size_t nout = ext_sets_.size();
    const bool case_sensitive = spec_.get<bool>("case_sensitive_extensions");
    Picked p;
    p.file = file;
    p.component.assign(nout, -1);
    for (const wds::Component& c : sample.components) {
      const std::string e = case_sensitive ? c.ext : lower(c.ext);
      int taken = -1;
      for (size_t o = 0; o < nout; ++o) {
        if (p.component[o] >= 0 || !ext_sets_[o].count(e)) continue;  // the first match wins
        const int64_t esize = static_cast<int64_t>(dtype_size(dtypes_[o]));
        if (c.size % esize)
          fail(ErrorKind::kInvalidArgument,
               where(file, sample, c, index_path) + ": its " + std::to_string(c.size) +
                   " bytes are not a whole number of " + dtype_name(dtypes_[o]) + " elements (" +
                   std::to_string(esize) + " bytes each) for output " + std::to_string(o) +
                   "; fix dtypes or the data");
        if (taken < 0) {
          taken = static_cast<int>(p.components.size());
          p.components.push_back(c);
        }
        p.component[o] = taken;
      }
    }
    for (size_t o = 0; o < nout; ++o) {
      if (p.component[o] >= 0) continue;
      if (missing == MissingComponent::kSkip) return;
      if (missing == MissingComponent::kError) {
        std::string exts;
        for (const auto& e : ext_sets_[o]) exts += (exts.empty() ? "" : ";") + e;
        fail(ErrorKind::kInvalidArgument,
             where(file, sample, sample.components.front(), index_path) +
                 ": the sample has no component for output " + std::to_string(o) + " (ext '" +
                 exts + "'); missing_component_behavior='error'. Use 'empty' or 'skip' to "
                 "accept such samples");
      }
    }
    samples_.push_back(std::move(p));
  }

  std::string where(int file, const wds::Sample& s, const wds::Component& c,
                    const std::string& index_path) const {
    std::string w = "'" + files_[file]->path() + "' sample component '" +
                    (c.filename.empty() ? c.ext : c.filename) + "' at offset " +
                    std::to_string(c.offset);
    if (s.index_line) w += " (index file '" + index_path + "' line " + std::to_string(s.index_line) + ")";
    return w;
  }

  RecordFiles files_;
  std::vector<std::set<std::string>> ext_sets_;
  std::vector<DType> dtypes_;
  std::vector<Picked> samples_;
};

}  // namespace

STOKER_REGISTER_OP_NAMED(readers_webdataset, "readers.webdataset") {
  add_reader_args(schema);
  schema.doc("Reads samples from WebDataset tar archives: a sample is the run of consecutive "
             "files that share a name up to the first dot; each output takes the first file of "
             "the sample whose extension is in its set. Archives must be plain tar (not "
             "compressed), as in DALI; a truncated or corrupt archive raises an error naming "
             "the file and the offset.")
      .inputs(0, 0).outputs(1)
      .arg({.name = "paths", .type = ArgType::kStringList,
            .doc = "The tar archives (a string or a list).", .list_min = 1})
      .arg({.name = "index_paths", .type = ArgType::kStringList, .optional = true,
            .doc = "Index files, one per archive, as DALI's wds2idx makes them (v1.1 or v1.2). "
                   "Without them the archives' headers are read when the pipeline is built."})
      .arg({.name = "ext", .type = ArgType::kStringList,
            .doc = "One entry per output: the extensions it takes, separated by ';' "
                   "(e.g. ['jpg;png', 'cls']).", .list_min = 1})
      .arg({.name = "missing_component_behavior", .type = ArgType::kString,
            .default_value = std::string(""),
            .doc = "What to do with a sample that has no file for some output: 'empty' (or '', "
                   "the default) gives an empty tensor, 'skip' leaves the sample out, 'error' "
                   "raises an error naming it."})
      .arg({.name = "dtypes", .type = ArgType::kIntList, .optional = true,
            .doc = "The element type of each output (types.UINT8 ...; default UINT8): a file's "
                   "bytes are read as an array of that type, and its size must be a multiple "
                   "of the type's size."})
      .arg({.name = "case_sensitive_extensions", .type = ArgType::kBool, .default_value = true,
            .doc = "Match extensions case-sensitively."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<WebdatasetReader>(s); });
  add_on_error_arg(schema, /*can_replace=*/false);
}

}  // namespace stoker
