// An in-memory file (memfd) with a path (/proc/self/fd/N), for harnesses whose code under test
// opens files by name: readers::RandomAccessFile, index files. Fuzzing writes nothing to disk.
#pragma once
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "harness.h"

namespace stoker::fuzz {

class MemFile {
 public:
  explicit MemFile(const char* name) {
    fd_ = memfd_create(name, MFD_CLOEXEC);
    if (fd_ < 0) finding("memfd_create failed");
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  ~MemFile() { close(fd_); }
  MemFile(const MemFile&) = delete;
  MemFile& operator=(const MemFile&) = delete;

  // Replaces the contents.
  void set(const uint8_t* data, size_t size) {
    if (ftruncate(fd_, 0) != 0) finding("cannot truncate the memfd");
    size_t done = 0;
    while (done < size) {
      ssize_t n = pwrite(fd_, data + done, size - done, static_cast<off_t>(done));
      if (n <= 0) finding("cannot write the memfd");
      done += static_cast<size_t>(n);
    }
  }
  const std::string& path() const { return path_; }

 private:
  int fd_ = -1;
  std::string path_;
};

}  // namespace stoker::fuzz
