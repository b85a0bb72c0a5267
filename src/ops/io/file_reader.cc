// readers.file: files from a folder of class folders, a list file, or a list of paths. Paths
// may be URLs (readers/remote.h): a batch's remote files are fetched in one call, all in flight
// at once, before the worker threads copy them out.
#include <cstring>

#include "ops/io/reader_base.h"
#include "readers/file_list.h"
#include "readers/remote.h"

namespace stoker {
namespace {

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
    Batch& data = ws.outputs[0];
    Batch& labels = ws.outputs[1];
    data = Batch(DType::kUInt8, "");
    data.resize(picks.size());
    labels.allocate(*ws.host_pool, DType::kInt32, std::vector<Shape>(picks.size(), Shape{1}), "");
    // The batch's remote files, fetched together.
    std::vector<int64_t> remote_at(picks.size(), -1);
    std::vector<std::string> urls;
    for (size_t i = 0; i < picks.size(); ++i)
      if (readers::is_url(files_[picks[i].index].path)) {
        remote_at[i] = static_cast<int64_t>(urls.size());
        urls.push_back(files_[picks[i].index].path);
      }
    std::vector<readers::RemoteRead> fetched;
    if (!urls.empty()) {
      try {
        fetched = readers::remote_files(urls[0])->read(urls);
      } catch (const Error& e) {
        throw e.with_context(spec_.display_name());
      }
      if (fetched.size() != urls.size())
        fail(ErrorKind::kInternal, spec_.display_name() + ": the remote file system returned " +
                                       std::to_string(fetched.size()) + " files for " +
                                       std::to_string(urls.size()));
    }
    ws.thread_pool->parallel_for(static_cast<int64_t>(picks.size()), [&](int64_t i, int) {
      const readers::FileEntry& f = files_[picks[i].index];
      Sample& s = data[i];
      s.source = f.path;
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
          int64_t size = readers::file_size(f.path);
          s.owner = ws.host_pool->allocate(static_cast<size_t>(size));
          s.data = s.owner.get();
          s.shape = {size};
          readers::read_file_into(f.path, s.data, static_cast<size_t>(size));
        }
      } catch (const Error& e) {
        if (!ws.report_bad_sample(i, f.path, e.what())) throw e.with_context("sample " + std::to_string(i));
        s.owner = ws.host_pool->allocate(0);
        s.data = s.owner.get();
        s.shape = {0};
      }
      *labels.data<int32_t>(i) = f.label;
      labels[i].source = f.path;
    });
  }

 private:
  std::vector<readers::FileEntry> files_;
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

}  // namespace stoker
