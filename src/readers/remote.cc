#include "readers/remote.h"

#include <algorithm>
#include <cctype>
#include <mutex>

namespace stoker::readers {
namespace {

std::mutex g_mu;
std::shared_ptr<RemoteFiles>& installed() {
  static auto* files = new std::shared_ptr<RemoteFiles>();  // never destroyed (see set_remote_files)
  return *files;
}

}  // namespace

bool is_url(const std::string& path) {
  const size_t sep = path.find("://");
  if (sep == std::string::npos || sep < 2) return false;
  if (!std::isalpha(static_cast<unsigned char>(path[0]))) return false;
  for (size_t i = 1; i < sep; ++i) {
    const char c = path[i];
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '+' && c != '-' && c != '.') return false;
  }
  return true;
}

void set_remote_files(std::shared_ptr<RemoteFiles> files) {
  std::lock_guard<std::mutex> g(g_mu);
  installed() = std::move(files);
}

std::shared_ptr<RemoteFiles> remote_files(const std::string& url) {
  std::lock_guard<std::mutex> g(g_mu);
  if (!installed())
    fail(ErrorKind::kUnsupported,
         "'" + url + "' is a URL, and URLs are read through fsspec, from Python: this process has "
         "no file system for them (stoker's C API reads local paths only).");
  return installed();
}

std::string read_remote(const std::string& url) {
  std::vector<RemoteRead> r = remote_files(url)->read({url});
  if (r.size() != 1) fail(ErrorKind::kInternal, "the remote file system returned no result for '" + url + "'");
  if (!r[0].ok) fail(r[0].error, r[0].message);
  return std::move(r[0].data);
}

int64_t RemoteFiles::size(const std::string& url) {
  std::vector<RemoteRead> r = read({url});
  if (r.size() != 1) fail(ErrorKind::kInternal, "the remote file system returned no result for '" + url + "'");
  if (!r[0].ok) fail(r[0].error, r[0].message);
  return static_cast<int64_t>(r[0].data.size());
}

std::string RemoteFiles::read_range(const std::string& url, int64_t offset, int64_t n) {
  std::vector<RemoteRead> r = read({url});
  if (r.size() != 1) fail(ErrorKind::kInternal, "the remote file system returned no result for '" + url + "'");
  if (!r[0].ok) fail(r[0].error, r[0].message);
  const auto size = static_cast<int64_t>(r[0].data.size());
  if (offset >= size) return {};
  return r[0].data.substr(static_cast<size_t>(offset), static_cast<size_t>(std::min(n, size - offset)));
}

std::vector<RemoteRead> RemoteFiles::read_ranges(const std::vector<std::string>& urls,
                                                const std::vector<int64_t>& offsets,
                                                const std::vector<int64_t>& sizes) {
  std::vector<RemoteRead> out(urls.size());
  for (size_t i = 0; i < urls.size(); ++i) {
    try {
      out[i].data = read_range(urls[i], offsets[i], sizes[i]);
      out[i].ok = true;
    } catch (const Error& e) {
      out[i].error = e.kind();
      out[i].message = e.what();
    }
  }
  return out;
}

std::string url_name(const std::string& url) {
  size_t end = url.size();
  while (end > 0 && url[end - 1] == '/') --end;
  const size_t start = url.rfind('/', end == 0 ? 0 : end - 1);
  return url.substr(start == std::string::npos ? 0 : start + 1, end - (start == std::string::npos ? 0 : start + 1));
}

}  // namespace stoker::readers
