// A file read at offsets (pread), shared by the threads of a reader: the record formats
// (TFRecord, RecordIO, tar, NumPy) read a record or a slice at a known offset, never the whole
// file, and every short read is reported with the file and the offset.
//
// A URL (readers/remote.h: s3://, gs://, https://...) is read in ranges through the installed
// remote file system. Reads under kSmallRead bytes (record and tar headers, NumPy headers:
// scanning a file reads thousands) are served from aligned blocks of kRemoteBlock bytes fetched
// whole, the last kRemoteBlocks of them kept per file, so that a scan makes one request per
// block rather than one per header; so is any read that a kept block holds. Other reads (a
// record, a JPEG in a tar, an array) fetch just their range: in shuffled order a block would
// mostly carry bytes that nobody reads.
#pragma once
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace stoker::readers {

class RemoteFiles;

// The whole of a small text file (an index, a file list), a local path or a URL; nullopt when
// it does not exist. Error(kIO) when it cannot be read.
std::optional<std::string> read_text_file(const std::string& path);

class RandomAccessFile;

// A part of one of a reader's files: files[file], `size` bytes from `offset`.
struct ByteRange {
  int file = 0;
  int64_t offset = 0;
  int64_t size = 0;
};

// For the files of `files` read through URLs: fetches `ranges` (a batch's records) in one call
// to the remote file system, which keeps them in flight together, and keeps them until the
// next prefetch over these files; the reads that follow are served from them. Ranges of local
// files are left out; a range that cannot be fetched is left to its own read, which reports
// why. Called by one thread per reader (its batch), before the batch's reads.
void prefetch(const std::vector<std::unique_ptr<RandomAccessFile>>& files,
              const std::vector<ByteRange>& ranges);

class RandomAccessFile {
 public:
  static constexpr int64_t kRemoteBlock = int64_t{1} << 20;
  static constexpr size_t kRemoteBlocks = 4;
  static constexpr int64_t kSmallRead = 4096;

  // Opens `path` (or a URL) for reading. kNotFound when it does not exist, kIO for other
  // failures, kInvalidArgument when it is not a regular file.
  explicit RandomAccessFile(const std::string& path);
  ~RandomAccessFile();
  RandomAccessFile(const RandomAccessFile&) = delete;
  RandomAccessFile& operator=(const RandomAccessFile&) = delete;

  const std::string& path() const { return path_; }
  bool remote() const { return remote_ != nullptr; }
  int64_t size() const { return size_; }

  // Reads exactly n bytes at `offset`; `what` names the thing read in the error message
  // ("record", "tar header", ...). Reading past the end raises Error(kDecode) naming the file,
  // the offset and how many bytes were missing (a truncated file); I/O errors raise kIO.
  void read_exact(int64_t offset, void* dst, size_t n, const char* what) const;
  // Reads up to n bytes at `offset`; returns how many were read (fewer only at the end).
  size_t read_some(int64_t offset, void* dst, size_t n) const;

 private:
  friend void prefetch(const std::vector<std::unique_ptr<RandomAccessFile>>& files,
                       const std::vector<ByteRange>& ranges);
  size_t read_remote_some(int64_t offset, uint8_t* dst, size_t n) const;

  std::string path_;
  int fd_ = -1;
  int64_t size_ = 0;
  // A URL's file system and its cached blocks (offset, bytes), the most recent first.
  std::shared_ptr<RemoteFiles> remote_;
  mutable std::mutex blocks_mu_;
  mutable std::list<std::pair<int64_t, std::shared_ptr<const std::string>>> blocks_;
  // The last prefetch's ranges of this file (offset, bytes).
  std::vector<std::pair<int64_t, std::shared_ptr<const std::string>>> prefetched_;
};

}  // namespace stoker::readers
