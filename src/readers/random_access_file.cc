#include "readers/random_access_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/error.h"

namespace stoker::readers {

RandomAccessFile::RandomAccessFile(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) {
    int err = errno;
    if (err == ENOENT || err == ENOTDIR)
      fail(ErrorKind::kNotFound, "file '" + path + "' does not exist");
    fail(ErrorKind::kIO, "cannot open '" + path + "': " + std::strerror(err));
  }
  struct stat st;
  if (::fstat(fd_, &st) != 0) {
    int err = errno;
    ::close(fd_);
    fail(ErrorKind::kIO, "cannot stat '" + path + "': " + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd_);
    fail(ErrorKind::kInvalidArgument, "'" + path + "' is not a regular file");
  }
  size_ = static_cast<int64_t>(st.st_size);
}

RandomAccessFile::~RandomAccessFile() {
  if (fd_ >= 0) ::close(fd_);
}

size_t RandomAccessFile::read_some(int64_t offset, void* dst, size_t n) const {
  size_t done = 0;
  auto* out = static_cast<uint8_t*>(dst);
  while (done < n) {
    ssize_t r = ::pread(fd_, out + done, std::min<size_t>(n - done, size_t{1} << 30),
                        static_cast<off_t>(offset + static_cast<int64_t>(done)));
    if (r < 0) {
      if (errno == EINTR) continue;
      fail(ErrorKind::kIO, "cannot read '" + path_ + "' at offset " +
                               std::to_string(offset + static_cast<int64_t>(done)) + ": " +
                               std::strerror(errno));
    }
    if (r == 0) break;
    done += static_cast<size_t>(r);
  }
  return done;
}

void RandomAccessFile::read_exact(int64_t offset, void* dst, size_t n, const char* what) const {
  if (offset < 0)
    fail(ErrorKind::kInternal, "read of '" + path_ + "' at negative offset " + std::to_string(offset));
  size_t got = read_some(offset, dst, n);
  if (got < n) {
    struct stat st;  // the size now: the file may have shrunk since it was opened
    const int64_t now = ::fstat(fd_, &st) == 0 ? static_cast<int64_t>(st.st_size) : size_;
    fail(ErrorKind::kDecode, "'" + path_ + "' is truncated: the " + what + " at offset " +
                                 std::to_string(offset) + " needs " + std::to_string(n) +
                                 " bytes, but the file ends after " + std::to_string(got) +
                                 " (file size " + std::to_string(now) + ")");
  }
}

}  // namespace stoker::readers
