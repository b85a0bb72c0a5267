// A file read at offsets (pread), shared by the threads of a reader: the record formats
// (TFRecord, RecordIO, tar, NumPy) read a record or a slice at a known offset, never the whole
// file, and every short read is reported with the file and the offset.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace stoker::readers {

class RandomAccessFile {
 public:
  // Opens `path` for reading. kNotFound when it does not exist, kIO for other failures,
  // kInvalidArgument when it is not a regular file.
  explicit RandomAccessFile(const std::string& path);
  ~RandomAccessFile();
  RandomAccessFile(const RandomAccessFile&) = delete;
  RandomAccessFile& operator=(const RandomAccessFile&) = delete;

  const std::string& path() const { return path_; }
  int64_t size() const { return size_; }

  // Reads exactly n bytes at `offset`; `what` names the thing read in the error message
  // ("record", "tar header", ...). Reading past the end raises Error(kDecode) naming the file,
  // the offset and how many bytes were missing (a truncated file); I/O errors raise kIO.
  void read_exact(int64_t offset, void* dst, size_t n, const char* what) const;
  // Reads up to n bytes at `offset`; returns how many were read (fewer only at the end).
  size_t read_some(int64_t offset, void* dst, size_t n) const;

 private:
  std::string path_;
  int fd_ = -1;
  int64_t size_ = 0;
};

}  // namespace stoker::readers
