#include "readers/file_list.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>
#include <utility>

#include "core/error.h"
#include "readers/remote.h"

namespace stoker::readers {
namespace fs = std::filesystem;
namespace {

[[noreturn]] void bad_arg(const std::string& msg) { fail(ErrorKind::kInvalidArgument, msg); }

std::string quoted(const std::string& s) { return "'" + s + "'"; }

std::string filter_list(const std::vector<std::string>& filters) {
  std::string s = "[";
  for (size_t i = 0; i < filters.size(); ++i) s += (i ? ", " : "") + quoted(filters[i]);
  return s + "]";
}

bool matches_any(const std::string& name, const std::vector<std::string>& filters,
                 bool case_sensitive) {
  const int flags = case_sensitive ? 0 : FNM_CASEFOLD;
  for (const auto& f : filters)
    if (fnmatch(f.c_str(), name.c_str(), flags) == 0) return true;
  return false;
}

[[noreturn]] void fs_fail(const std::string& what, const std::error_code& ec) {
  fail(ErrorKind::kIO, what + ": " + ec.message());
}

// Files under `dir` (relative paths, generic form) whose name matches the filters.
std::vector<std::string> matching_files(const fs::path& dir, const std::vector<std::string>& filters,
                                        bool case_sensitive, bool recursive) {
  std::vector<std::string> out;
  std::error_code ec;
  auto consider = [&](const fs::directory_entry& e) {
    std::error_code ec2;
    // Regular files and links to them; as DALI, whatever else is in the folder is ignored.
    if (!e.is_regular_file(ec2)) return;
    if (matches_any(e.path().filename().string(), filters, case_sensitive))
      out.push_back(e.path().lexically_relative(dir).generic_string());
  };
  if (recursive) {
    fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
    if (ec) fs_fail("cannot list " + quoted(dir.string()), ec);
    for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (ec) fs_fail("cannot list " + quoted(dir.string()), ec);
      consider(*it);
    }
    if (ec) fs_fail("cannot list " + quoted(dir.string()), ec);
  } else {
    fs::directory_iterator it(dir, ec);
    if (ec) fs_fail("cannot list " + quoted(dir.string()), ec);
    for (; it != fs::directory_iterator(); it.increment(ec)) {
      if (ec) fs_fail("cannot list " + quoted(dir.string()), ec);
      consider(*it);
    }
    if (ec) fs_fail("cannot list " + quoted(dir.string()), ec);
  }
  std::sort(out.begin(), out.end());  // byte order, as DALI's std::sort of the names
  return out;
}

// The files under a remote folder (relative names, sorted) whose name matches the filters;
// `recursive` descends into its sub-folders.
std::vector<std::string> matching_remote_files(const std::string& dir,
                                               const std::vector<std::string>& filters,
                                               bool case_sensitive, bool recursive) {
  std::vector<std::string> out;
  std::vector<std::pair<std::string, std::string>> todo = {{dir, ""}};  // (url, relative prefix)
  std::shared_ptr<RemoteFiles> remote = remote_files(dir);
  while (!todo.empty()) {
    auto [url, prefix] = todo.back();
    todo.pop_back();
    for (const RemoteEntry& e : remote->list(url)) {
      const std::string name = url_name(e.url);
      if (e.is_dir) {
        if (recursive) todo.emplace_back(e.url, prefix + name + "/");
      } else if (matches_any(name, filters, case_sensitive)) {
        out.push_back(prefix + name);
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The class folders of file_root (names, sorted), local or remote.
std::vector<std::string> class_folders(const std::string& file_root,
                                       const std::vector<std::string>& dir_filters,
                                       bool case_sensitive_filter) {
  std::vector<std::string> classes;
  auto keep = [&](const std::string& name) {
    if (dir_filters.empty() || matches_any(name, dir_filters, case_sensitive_filter))
      classes.push_back(name);
  };
  if (is_url(file_root)) {
    std::vector<RemoteEntry> entries;
    try {
      entries = remote_files(file_root)->list(file_root);
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::kNotFound)
        fail(ErrorKind::kNotFound, "file_root " + quoted(file_root) + " does not exist");
      if (e.kind() == ErrorKind::kInvalidArgument)
        bad_arg("file_root " + quoted(file_root) + " is not a directory; give the folder that "
                "holds one sub-folder per class, or use file_list / files");
      throw e.with_context("cannot list file_root " + quoted(file_root));
    }
    for (const RemoteEntry& e : entries)
      if (e.is_dir) keep(url_name(e.url));
  } else {
    std::error_code ec;
    auto st = fs::status(file_root, ec);
    if (st.type() == fs::file_type::not_found)
      fail(ErrorKind::kNotFound, "file_root " + quoted(file_root) + " does not exist");
    if (ec) fs_fail("cannot access file_root " + quoted(file_root), ec);
    if (!fs::is_directory(st))
      bad_arg("file_root " + quoted(file_root) + " is not a directory; give the folder that "
              "holds one sub-folder per class, or use file_list / files");
    fs::directory_iterator it(file_root, ec);
    if (ec) fs_fail("cannot list file_root " + quoted(file_root), ec);
    for (; it != fs::directory_iterator(); it.increment(ec)) {
      if (ec) fs_fail("cannot list file_root " + quoted(file_root), ec);
      std::error_code ec2;
      if (it->is_directory(ec2)) keep(it->path().filename().string());
    }
    if (ec) fs_fail("cannot list file_root " + quoted(file_root), ec);
  }
  std::sort(classes.begin(), classes.end());
  return classes;
}

struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// Opens a regular file for reading and returns its size.
int open_regular(const std::string& path, int64_t* size) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT || err == ENOTDIR)
      fail(ErrorKind::kNotFound, "file " + quoted(path) + " does not exist");
    fail(ErrorKind::kIO, "cannot open " + quoted(path) + ": " + std::strerror(err));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    fail(ErrorKind::kIO, "cannot stat " + quoted(path) + ": " + std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    bad_arg(quoted(path) + " is not a regular file");
  }
  *size = static_cast<int64_t>(st.st_size);
  return fd;
}

// Reads exactly n bytes (the size fstat gave) with plain read(): no mmap, so a file on a network
// file system or one truncated meanwhile gives an error rather than a SIGBUS.
void read_exact(int fd, const std::string& path, uint8_t* dst, size_t n) {
  size_t done = 0;
  while (done < n) {
    ssize_t r = ::read(fd, dst + done, std::min<size_t>(n - done, size_t{1} << 30));
    if (r < 0) {
      if (errno == EINTR) continue;
      fail(ErrorKind::kIO, "cannot read " + quoted(path) + ": " + std::strerror(errno));
    }
    if (r == 0)
      fail(ErrorKind::kIO, quoted(path) + " became shorter while being read (expected " +
                               std::to_string(n) + " bytes, got " + std::to_string(done) + ")");
    done += static_cast<size_t>(r);
  }
}

}  // namespace

const std::vector<std::string>& default_file_filters() {
  static const std::vector<std::string> filters = {
      "*.jpg", "*.jpeg", "*.png", "*.bmp", "*.tif", "*.tiff", "*.pnm", "*.ppm",
      "*.pgm", "*.pbm",  "*.jp2", "*.webp", "*.flac", "*.ogg", "*.wav"};
  return filters;
}

std::string join_path(const std::string& dir, const std::string& path) {
  if (dir.empty()) return path;
  if (path.empty()) return dir;
  if (path[0] == '/' || is_url(path)) return path;
  if (dir.back() == '/') return dir + path;
  return dir + "/" + path;
}

std::vector<FileEntry> list_class_folders(const std::string& file_root,
                                          const std::vector<std::string>& file_filters,
                                          bool case_sensitive_filter,
                                          const std::vector<std::string>& dir_filters,
                                          bool recursive) {
  if (file_filters.empty()) bad_arg("file_filters cannot be an empty list");
  const std::vector<std::string> classes = class_folders(file_root, dir_filters, case_sensitive_filter);
  if (classes.size() > static_cast<size_t>(INT_MAX))
    bad_arg("file_root " + quoted(file_root) + " has more class folders than labels can count");

  std::vector<FileEntry> entries;
  for (size_t label = 0; label < classes.size(); ++label) {
    const std::string class_dir = join_path(file_root, classes[label]);
    const std::vector<std::string> files =
        is_url(class_dir)
            ? matching_remote_files(class_dir, file_filters, case_sensitive_filter, recursive)
            : matching_files(class_dir, file_filters, case_sensitive_filter, recursive);
    for (const std::string& rel : files)
      entries.push_back({join_path(class_dir, rel), static_cast<int>(label)});
  }
  if (entries.empty()) {
    std::string where = classes.empty()
        ? "it has no class sub-folders" + std::string(dir_filters.empty() ? "" : " matching "
              "dir_filters " + filter_list(dir_filters))
        : "none in its " + std::to_string(classes.size()) + " class sub-folder" +
              (classes.size() == 1 ? "" : "s") + " matches file_filters " +
              filter_list(file_filters) +
              (case_sensitive_filter ? " (case-sensitive)" : " (case-insensitive)");
    bad_arg("file_root " + quoted(file_root) + " has no files to read: " + where +
            "; files must sit in one sub-folder per class (file_root/<class>/<file>); "
            "set file_filters to match their names");
  }
  return entries;
}

std::vector<FileEntry> parse_file_list(const std::string& file_list,
                                       const std::optional<std::string>& file_root) {
  if (file_list.empty()) bad_arg("file_list cannot be an empty string");
  std::ifstream file;
  std::istringstream text;
  if (is_url(file_list)) {
    try {
      text.str(read_remote(file_list));
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::kNotFound)
        fail(ErrorKind::kNotFound, "file_list " + quoted(file_list) + " does not exist");
      throw e.with_context("cannot read file_list " + quoted(file_list));
    }
  } else {
    std::error_code ec;
    auto st = fs::status(file_list, ec);
    if (st.type() == fs::file_type::not_found)
      fail(ErrorKind::kNotFound, "file_list " + quoted(file_list) + " does not exist");
    if (fs::is_directory(st))
      bad_arg("file_list " + quoted(file_list) + " is a directory; give a text file of "
              "'<path> <label>' lines (or use file_root for a folder of class folders)");
    file.open(file_list);
    if (!file) fail(ErrorKind::kIO, "cannot open file_list " + quoted(file_list));
  }
  std::istream& in = is_url(file_list) ? static_cast<std::istream&>(text) : file;

  // As DALI: paths relative to file_root when given, else to the folder of the list file.
  std::string base;
  if (file_root) {
    base = *file_root;
  } else {
    auto slash = file_list.rfind('/');
    if (slash != std::string::npos) base = file_list.substr(0, slash);
  }

  std::vector<FileEntry> entries;
  std::string line;
  for (int64_t n = 1; std::getline(in, line); ++n) {
    auto is_space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
    // Parsed from the end, as DALI does, so that paths may contain spaces.
    int64_t i = static_cast<int64_t>(line.size()) - 1;
    while (i >= 0 && is_space(line[i])) --i;
    if (i < 0) continue;  // blank line
    const int64_t label_end = i + 1;
    while (i >= 0 && std::isdigit(static_cast<unsigned char>(line[i]))) --i;
    const int64_t label_start = i + 1;
    const int64_t sep_end = i + 1;
    while (i >= 0 && is_space(line[i])) --i;
    const int64_t name_end = i + 1;
    int64_t name_start = 0;
    while (name_start < name_end && is_space(line[name_start])) ++name_start;
    auto bad_line = [&](const std::string& why) {
      bad_arg("file_list " + quoted(file_list) + " line " + std::to_string(n) + ": " + why +
              "; expected '<path> <label>' with a non-negative integer label, got '" + line + "'");
    };
    if (label_start == label_end) bad_line("the line does not end with an integer label");
    if (name_end <= name_start) bad_line("there is no path before the label");
    if (name_end == sep_end)
      bad_line("the line does not end with an integer label separated from the path by a space");
    const std::string digits = line.substr(label_start, label_end - label_start);
    errno = 0;
    long long value = std::strtoll(digits.c_str(), nullptr, 10);
    if (errno == ERANGE || value > INT_MAX) bad_line("the label " + digits + " is too large");
    entries.push_back({join_path(base, line.substr(name_start, name_end - name_start)),
                       static_cast<int>(value)});
  }
  if (in.bad()) fail(ErrorKind::kIO, "cannot read file_list " + quoted(file_list));
  if (entries.empty())
    bad_arg("file_list " + quoted(file_list) + " lists no files; add '<path> <label>' lines");
  return entries;
}

std::vector<FileEntry> build_file_list(const FileListOptions& o) {
  if (!o.file_root && !o.files && !o.file_list)
    bad_arg("file_root is required when neither files nor file_list is given");
  if (o.files && o.file_list)
    bad_arg("file paths can be given through files or file_list, but not both");
  if (o.labels && !o.files)
    bad_arg("labels is valid only when file paths are given through files");
  if (o.file_filters && o.file_filters->empty()) bad_arg("file_filters cannot be an empty list");

  if (o.files) {
    if (o.files->empty()) bad_arg("files is an empty list; give at least one path");
    if (o.labels && o.labels->size() != o.files->size())
      bad_arg("labels has " + std::to_string(o.labels->size()) + " entries for " +
              std::to_string(o.files->size()) + " files; give one label per file");
    std::vector<FileEntry> entries;
    entries.reserve(o.files->size());
    const std::string base = o.file_root.value_or("");
    for (size_t i = 0; i < o.files->size(); ++i) {
      if (o.labels && (*o.labels)[i] < 0)
        bad_arg("labels[" + std::to_string(i) + "] is " + std::to_string((*o.labels)[i]) +
                "; labels must be non-negative");
      entries.push_back({join_path(base, (*o.files)[i]),
                         o.labels ? (*o.labels)[i] : static_cast<int>(i)});
    }
    return entries;
  }
  if (o.file_list) return parse_file_list(*o.file_list, o.file_root);
  return list_class_folders(*o.file_root, o.file_filters.value_or(default_file_filters()),
                            o.case_sensitive_filter, o.dir_filters, o.recursive);
}

int64_t file_size(const std::string& path) {
  if (is_url(path)) return remote_files(path)->size(path);
  int64_t size = 0;
  Fd f{open_regular(path, &size)};
  return size;
}

std::vector<uint8_t> read_file(const std::string& path) {
  if (is_url(path)) {
    const std::string data = read_remote(path);
    return std::vector<uint8_t>(data.begin(), data.end());
  }
  int64_t size = 0;
  Fd f{open_regular(path, &size)};
  std::vector<uint8_t> data(static_cast<size_t>(size));
  read_exact(f.fd, path, data.data(), data.size());
  return data;
}

size_t read_file_into(const std::string& path, void* dst, size_t capacity) {
  if (is_url(path)) {
    const std::string data = read_remote(path);
    if (data.size() > capacity)
      bad_arg("file " + quoted(path) + " has " + std::to_string(data.size()) + " bytes, more than "
              "the " + std::to_string(capacity) + " bytes given to read it into");
    std::memcpy(dst, data.data(), data.size());
    return data.size();
  }
  int64_t size = 0;
  Fd f{open_regular(path, &size)};
  if (static_cast<uint64_t>(size) > capacity)
    bad_arg("file " + quoted(path) + " has " + std::to_string(size) + " bytes, more than the " +
            std::to_string(capacity) + " bytes given to read it into");
  read_exact(f.fd, path, static_cast<uint8_t*>(dst), static_cast<size_t>(size));
  return static_cast<size_t>(size);
}

}  // namespace stoker::readers
