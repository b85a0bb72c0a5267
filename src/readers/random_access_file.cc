#include "readers/random_access_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/error.h"
#include "readers/remote.h"

namespace stoker::readers {

std::optional<std::string> read_text_file(const std::string& path) {
  if (is_url(path)) {
    try {
      return read_remote(path);
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::kNotFound) return std::nullopt;
      throw;
    }
  }
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return std::nullopt;
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(ErrorKind::kIO, "cannot open '" + path + "'");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) fail(ErrorKind::kIO, "cannot read '" + path + "'");
  return text;  // (an empty file is an empty text: what it lacks, its reader says)
}

RandomAccessFile::RandomAccessFile(const std::string& path) : path_(path) {
  if (is_url(path)) {
    remote_ = remote_files(path);
    size_ = remote_->size(path);
    return;
  }
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

void prefetch(const std::vector<std::unique_ptr<RandomAccessFile>>& files,
              const std::vector<ByteRange>& ranges) {
  std::vector<std::string> urls;
  std::vector<int64_t> offsets, sizes;
  std::vector<int> which;
  for (const auto& f : files)
    if (f && f->remote_) {
      std::lock_guard<std::mutex> g(f->blocks_mu_);
      f->prefetched_.clear();
    }
  for (const ByteRange& r : ranges) {
    if (r.file < 0 || r.file >= static_cast<int>(files.size())) continue;
    const RandomAccessFile& f = *files[r.file];
    if (!f.remote_ || r.size <= 0 || r.offset < 0 || r.offset >= f.size_) continue;
    urls.push_back(f.path_);
    offsets.push_back(r.offset);
    sizes.push_back(std::min(r.size, f.size_ - r.offset));
    which.push_back(r.file);
  }
  if (urls.empty()) return;
  std::vector<RemoteRead> got;
  try {
    got = files[which[0]]->remote_->read_ranges(urls, offsets, sizes);
  } catch (const Error&) {
    return;  // each read then fetches its own range and says what is wrong
  }
  for (size_t i = 0; i < got.size() && i < urls.size(); ++i) {
    if (!got[i].ok) continue;
    RandomAccessFile& f = *files[which[i]];
    std::lock_guard<std::mutex> g(f.blocks_mu_);
    f.prefetched_.emplace_back(offsets[i], std::make_shared<const std::string>(std::move(got[i].data)));
  }
}

size_t RandomAccessFile::read_remote_some(int64_t offset, uint8_t* dst, size_t n) const {
  if (offset >= size_) return 0;
  n = static_cast<size_t>(std::min<int64_t>(static_cast<int64_t>(n), size_ - offset));
  {  // held by a prefetched range (a record of this batch)?
    std::lock_guard<std::mutex> g(blocks_mu_);
    for (const auto& [start, data] : prefetched_)
      if (start <= offset && offset + static_cast<int64_t>(n) <= start + static_cast<int64_t>(data->size())) {
        std::memcpy(dst, data->data() + (offset - start), n);
        return n;
      }
  }
  if (static_cast<int64_t>(n) >= kSmallRead) {
    {  // held whole by a kept block (an array in the block its header came from, say)?
      std::lock_guard<std::mutex> g(blocks_mu_);
      for (auto it = blocks_.begin(); it != blocks_.end(); ++it)
        if (it->first <= offset &&
            offset + static_cast<int64_t>(n) <= it->first + static_cast<int64_t>(it->second->size())) {
          std::memcpy(dst, it->second->data() + (offset - it->first), n);
          blocks_.splice(blocks_.begin(), blocks_, it);
          return n;
        }
    }
    const std::string got = remote_->read_range(path_, offset, static_cast<int64_t>(n));
    const size_t k = std::min(n, got.size());
    std::memcpy(dst, got.data(), k);
    return k;
  }
  size_t done = 0;
  while (done < n) {
    const int64_t at = offset + static_cast<int64_t>(done);
    const int64_t start = at - at % kRemoteBlock;
    std::shared_ptr<const std::string> block;
    {
      std::lock_guard<std::mutex> g(blocks_mu_);
      for (auto it = blocks_.begin(); it != blocks_.end(); ++it)
        if (it->first == start) {
          block = it->second;
          blocks_.splice(blocks_.begin(), blocks_, it);
          break;
        }
    }
    if (!block) {  // fetched without the lock: other threads read other blocks meanwhile
      block = std::make_shared<const std::string>(
          remote_->read_range(path_, start, std::min(kRemoteBlock, size_ - start)));
      std::lock_guard<std::mutex> g(blocks_mu_);
      blocks_.emplace_front(start, block);
      while (blocks_.size() > kRemoteBlocks) blocks_.pop_back();
    }
    const auto in_block = static_cast<size_t>(at - start);
    if (in_block >= block->size()) break;  // the file ended early (it shrank)
    const size_t k = std::min(n - done, block->size() - in_block);
    std::memcpy(dst + done, block->data() + in_block, k);
    done += k;
  }
  return done;
}

size_t RandomAccessFile::read_some(int64_t offset, void* dst, size_t n) const {
  if (remote_) return read_remote_some(offset, static_cast<uint8_t*>(dst), n);
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
    const int64_t now = fd_ >= 0 && ::fstat(fd_, &st) == 0 ? static_cast<int64_t>(st.st_size) : size_;
    fail(ErrorKind::kDecode, "'" + path_ + "' is truncated: the " + what + " at offset " +
                                 std::to_string(offset) + " needs " + std::to_string(n) +
                                 " bytes, but the file ends after " + std::to_string(got) +
                                 " (file size " + std::to_string(now) + ")");
  }
}

}  // namespace stoker::readers
