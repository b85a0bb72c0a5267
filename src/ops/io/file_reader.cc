// readers.file: files from a folder of class folders, a list file, or a list of paths; and
// io.file.read: files whose paths are data. Paths may be URLs (readers/remote.h): a batch's
// remote files are fetched in one call, all in flight at once, before the worker threads copy
// them out.
#include <cstring>

#include "ops/io/reader_base.h"
#include "readers/file_list.h"
#include "readers/remote.h"

namespace stoker {
namespace {

// The files at `paths` as a batch of 1-D uint8 samples, read on the worker threads; a batch's
// URLs are fetched in one call first. A file that cannot be read is an error naming it, or an
// empty sample where on_error='skip' lets the pipeline drop it.
Batch read_files(Workspace& ws, const OpSpec& spec, const std::vector<std::string>& paths) {
  Batch data(DType::kUInt8, "");
  data.resize(paths.size());
  std::vector<int64_t> remote_at(paths.size(), -1);
  std::vector<std::string> urls;
  for (size_t i = 0; i < paths.size(); ++i)
    if (readers::is_url(paths[i])) {
      remote_at[i] = static_cast<int64_t>(urls.size());
      urls.push_back(paths[i]);
    }
  std::vector<readers::RemoteRead> fetched;
  if (!urls.empty()) {
    try {
      fetched = readers::remote_files(urls[0])->read(urls);
    } catch (const Error& e) {
      throw e.with_context(spec.display_name());
    }
    if (fetched.size() != urls.size())
      fail(ErrorKind::kInternal, spec.display_name() + ": the remote file system returned " +
                                     std::to_string(fetched.size()) + " files for " +
                                     std::to_string(urls.size()));
  }
  ws.thread_pool->parallel_for(static_cast<int64_t>(paths.size()), [&](int64_t i, int) {
    const std::string& path = paths[i];
    Sample& s = data[i];
    s.source = path;
    try {
      if (remote_at[i] >= 0) {
        readers::RemoteRead& r = fetched[static_cast<size_t>(remote_at[i])];
        if (!r.ok) fail(r.error, r.message);
        s.owner = ws.host_pool->allocate(r.data.size());
        s.data = s.owner.get();
        s.shape = {static_cast<int64_t>(r.data.size())};
        std::memcpy(s.data, r.data.data(), r.data.size());
        std::string().swap(r.data);
      } else {
        int64_t size = readers::file_size(path);
        s.owner = ws.host_pool->allocate(static_cast<size_t>(size));
        s.data = s.owner.get();
        s.shape = {size};
        readers::read_file_into(path, s.data, static_cast<size_t>(size));
      }
    } catch (const Error& e) {
      if (!ws.report_bad_sample(i, path, e.what())) throw e.with_context("sample " + std::to_string(i));
      s.owner = ws.host_pool->allocate(0);
      s.data = s.owner.get();
      s.shape = {0};
    }
  });
  return data;
}

class FileReader : public SampleReader {
 public:
  explicit FileReader(const OpSpec& spec) : SampleReader(spec) {
    readers::FileListOptions o;
    if (spec.has("file_root")) o.file_root = spec.get<std::string>("file_root");
    if (spec.has("file_list")) o.file_list = spec.get<std::string>("file_list");
    if (spec.has("files")) o.files = spec.get<std::vector<std::string>>("files");
    if (spec.has("labels")) {
      auto l = spec.get<std::vector<int64_t>>("labels");
      o.labels = std::vector<int>(l.begin(), l.end());
    }
    if (spec.has("file_filters")) o.file_filters = spec.get<std::vector<std::string>>("file_filters");
    o.case_sensitive_filter = spec.get<bool>("case_sensitive_filter");
    o.recursive = spec.get<bool>("recursive");
    try {
      files_ = readers::build_file_list(o);
    } catch (const Error& e) {
      throw e.with_context(spec.display_name());
    }
    init_order(static_cast<int64_t>(files_.size()));
  }

  void run_batch(Workspace& ws) override {
    const std::vector<readers::Pick>& picks = this->picks();
    ws.outputs.assign(2, Batch());
    Batch& labels = ws.outputs[1];
    labels.allocate(*ws.host_pool, DType::kInt32, std::vector<Shape>(picks.size(), Shape{1}), "");
    std::vector<std::string> paths;
    for (const readers::Pick& p : picks) paths.push_back(files_[p.index].path);
    ws.outputs[0] = read_files(ws, spec_, paths);
    for (size_t i = 0; i < picks.size(); ++i) {
      *labels.data<int32_t>(i) = files_[picks[i].index].label;
      labels[i].source = paths[i];
    }
  }

 private:
  std::vector<readers::FileEntry> files_;
};


// io.file.read: the files whose paths are the input's samples (1-D uint8 or int8, UTF-8, as
// `np.frombuffer(path.encode(), np.uint8)` makes them), as 1-D uint8 bytes, like DALI 2.4's.
class FileRead : public Operator {
 public:
  explicit FileRead(const OpSpec& spec) : Operator(spec) {
    if (spec.get<bool>("use_o_direct") && !spec.get<bool>("dont_use_mmap"))
      spec.arg_error("use_o_direct", "needs dont_use_mmap=True (as in DALI, the two cannot be "
                                     "combined with memory-mapped reading).");
  }

  bool sample_wise() const override { return false; }

  void run_batch(Workspace& ws) override {
    const Batch& in = ws.input(0);
    if (in.dtype() != DType::kUInt8 && in.dtype() != DType::kInt8)
      spec_.arg_error("filepaths", std::string("must be paths as 1-D uint8 or int8 tensors, got ") +
                                       dtype_name(in.dtype()) + "; make one with "
                                       "np.frombuffer(path.encode('utf-8'), dtype=np.uint8).");
    std::vector<std::string> paths(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      if (in.shape(i).size() != 1)
        spec_.arg_error("filepaths", "must be 1-D (one path per sample), but sample " +
                                         std::to_string(i) + " has shape " + to_string(in.shape(i)) + ".");
      paths[i].assign(static_cast<const char*>(in[i].data), in.sample_bytes(i));
      if (paths[i].empty())
        spec_.arg_error("filepaths", "sample " + std::to_string(i) + " is an empty path.");
    }
    ws.outputs.assign(1, Batch());
    ws.outputs[0] = read_files(ws, spec_, paths);
  }
};
}  // namespace

// Arguments every reader shares (sharding, shuffling, padding), declared once.
void add_reader_args(OpSchema& s) {
  s.reader().random();
  s.arg({.name = "shard_id", .type = ArgType::kInt, .default_value = int64_t{0},
         .doc = "Index of the shard to read.", .min = 0});
  s.arg({.name = "num_shards", .type = ArgType::kInt, .default_value = int64_t{1},
         .doc = "Number of parts the data set is split into.", .min = 1});
  s.arg({.name = "stick_to_shard", .type = ArgType::kBool, .default_value = false,
         .doc = "Keep reading the same shard every epoch instead of moving on to the next one."});
  s.arg({.name = "pad_last_batch", .type = ArgType::kBool, .default_value = false,
         .doc = "Fill the shard's last batch by repeating its last sample, so that every epoch "
                "starts with a fresh batch."});
  s.arg({.name = "random_shuffle", .type = ArgType::kBool, .default_value = false,
         .doc = "Shuffle through a buffer of initial_fill samples (after one fixed shuffle of the list)."});
  s.arg({.name = "initial_fill", .type = ArgType::kInt, .default_value = int64_t{1024},
         .doc = "Size of the shuffle buffer used with random_shuffle.", .min = 1});
  s.arg({.name = "shuffle_after_epoch", .type = ArgType::kBool, .default_value = false,
         .doc = "Shuffle the whole data set anew at every epoch (also the first), the same way in "
                "every shard: the permutation depends on the epoch only, not on the seed, so that "
                "shards stay disjoint. The reader keeps its shard (stick_to_shard is implied); it "
                "cannot be combined with random_shuffle or stick_to_shard."});
  s.arg({.name = "read_ahead", .type = ArgType::kBool, .default_value = false,
         .doc = "Accepted for DALI compatibility; stoker always reads a batch ahead."});
  s.arg({.name = "dont_use_mmap", .type = ArgType::kBool, .default_value = false,
         .doc = "Accepted for DALI compatibility; stoker reads files with read(), not mmap."});
  s.arg({.name = "lazy_init", .type = ArgType::kBool, .default_value = false,
         .doc = "Accepted for DALI compatibility; the file list is built when the pipeline is built."});
  s.arg({.name = "prefetch_queue_depth", .type = ArgType::kInt, .default_value = int64_t{1},
         .doc = "Accepted for DALI compatibility; the pipeline's prefetch_queue_depth governs read-ahead.", .min = 1});
  s.arg({.name = "skip_cached_images", .type = ArgType::kBool, .default_value = false,
         .doc = "Accepted for DALI compatibility; stoker has no decoder cache."});
  s.arg({.name = "tensor_init_bytes", .type = ArgType::kInt, .default_value = int64_t{1048576},
         .doc = "Accepted for DALI compatibility; buffers come from a pool sized by use."});
  s.arg({.name = "seed", .type = ArgType::kInt, .default_value = int64_t{-1},
         .doc = "Random seed of the shuffle; -1 takes it from the pipeline."});
}

STOKER_REGISTER_OP_NAMED(readers_file, "readers.file") {
  add_reader_args(schema);
  schema.doc("Reads files as raw bytes with integer labels: from file_root with one sub-folder per "
             "class (labels are the folders' indices in sorted order), from file_list (lines of "
             "'path label'), or from files (and labels). Paths and folders may be URLs that "
             "fsspec reads (s3://, gs://, https://, ...; install fsspec and the protocol's "
             "package: s3fs, gcsfs, aiohttp); each batch's remote files are fetched together.")
      .inputs(0, 0).outputs(2, {"data", "labels"})
      .arg({.name = "file_root", .type = ArgType::kString, .optional = true,
            .doc = "Folder with one sub-folder per class, or the base of relative paths in file_list/files."})
      .arg({.name = "file_list", .type = ArgType::kString, .optional = true,
            .doc = "Text file with one 'path label' pair per line."})
      .arg({.name = "files", .type = ArgType::kStringList, .optional = true,
            .doc = "Paths of the files to read (relative to file_root if given)."})
      .arg({.name = "labels", .type = ArgType::kIntList, .optional = true,
            .doc = "A label per entry of files (default: 0, 1, 2, ...)."})
      .arg({.name = "file_filters", .type = ArgType::kStringList, .optional = true,
            .doc = "Glob patterns of the files to take from file_root (default: image and audio extensions)."})
      .arg({.name = "case_sensitive_filter", .type = ArgType::kBool, .default_value = false,
            .doc = "Match file_filters case-sensitively."})
      .arg({.name = "recursive", .type = ArgType::kBool, .default_value = false,
            .doc = "stoker: also take files from folders nested inside each class folder."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<FileReader>(s); });
  add_on_error_arg(schema, /*can_replace=*/false);
}

STOKER_REGISTER_OP_NAMED(io_file_read, "io.file.read") {
  schema.doc("Reads whole files whose paths are given as data: each input sample is a path as a "
             "1-D uint8 or int8 tensor of its UTF-8 bytes (np.frombuffer(path.encode('utf-8'), "
             "dtype=np.uint8)); each output sample is the file's bytes (uint8, 1-D). Paths may be "
             "URLs that fsspec reads, fetched together per batch, as in readers.file.")
      .inputs(1, 1, {"filepaths"}).outputs(1, {"data"})
      .arg({.name = "dont_use_mmap", .type = ArgType::kBool, .default_value = false,
            .doc = "Accepted for DALI compatibility; stoker reads files with read(), not mmap."})
      .arg({.name = "use_o_direct", .type = ArgType::kBool, .default_value = false,
            .doc = "Accepted for DALI compatibility (needs dont_use_mmap=True, as in DALI); stoker "
                   "reads through the page cache."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<FileRead>(s); });
  add_on_error_arg(schema, /*can_replace=*/false);
}

}  // namespace stoker
