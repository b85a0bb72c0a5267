// Files named by URL ("s3://bucket/train/x.jpg", "gs://...", "https://host/x.jpg", any protocol
// fsspec knows), for the readers that take paths. The clients of those protocols are Python's
// (fsspec with s3fs, gcsfs, aiohttp), so the file system is one that a front end installs: the
// Python module installs one backed by fsspec (python/stoker/_remote.py). Without one, a URL is
// an error that says what to install.
//
// A batch's files are fetched in one call (read()), so that the file system can keep them all
// in flight at once: one network round trip per batch rather than per file, on top of the
// pipeline's own read-ahead of prefetch_queue_depth batches.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"

namespace stoker::readers {

struct RemoteEntry {
  std::string url;  // full URL
  bool is_dir = false;
};

// One file's bytes, or why it could not be read.
struct RemoteRead {
  std::string data;
  bool ok = false;
  ErrorKind error = ErrorKind::kIO;  // kNotFound for a missing file
  std::string message;
};

class RemoteFiles {
 public:
  virtual ~RemoteFiles() = default;
  // The entries directly inside the folder `url`. Throws Error(kNotFound) when it does not
  // exist, Error(kInvalidArgument) when it is not a folder.
  virtual std::vector<RemoteEntry> list(const std::string& url) = 0;
  // The files' bytes, in the order of `urls`, fetched together.
  virtual std::vector<RemoteRead> read(const std::vector<std::string>& urls) = 0;
  // For the record formats (TFRecord, RecordIO, tar, NumPy), which read parts of a file
  // (RandomAccessFile): the file's size, and up to `n` bytes from `offset` (fewer only at the
  // end). Both throw Error(kNotFound) / Error(kIO). These defaults read the whole file; a file
  // system that can ask for a size or a range alone (fsspec's) overrides them.
  virtual int64_t size(const std::string& url);
  virtual std::string read_range(const std::string& url, int64_t offset, int64_t n);
  // Ranges of files fetched together (a batch's records), in order: each one's bytes, or why
  // it could not be read. The default reads them one by one.
  virtual std::vector<RemoteRead> read_ranges(const std::vector<std::string>& urls,
                                              const std::vector<int64_t>& offsets,
                                              const std::vector<int64_t>& sizes);
};

// "scheme://..." with a scheme of letters, digits, '+', '-', '.' (RFC 3986), two or more long
// (so that "C://" stays a path).
bool is_url(const std::string& path);

// Installs the file system URLs go to (nullptr removes it).
void set_remote_files(std::shared_ptr<RemoteFiles> files);

// The installed file system; Error(kUnsupported) naming `url` when there is none.
std::shared_ptr<RemoteFiles> remote_files(const std::string& url);

// One file's bytes; Error(kNotFound) / Error(kIO) naming the URL.
std::string read_remote(const std::string& url);

// The last part of a URL's path ("s3://b/train/cat/" -> "cat").
std::string url_name(const std::string& url);

}  // namespace stoker::readers
