#include "ops/io/file_selection.h"

#include <fnmatch.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <sstream>

#include "readers/file_list.h"
#include "readers/random_access_file.h"
#include "readers/remote.h"

namespace stoker {
namespace {

namespace fs = std::filesystem;

bool matches(const std::string& filter, const std::string& rel) {
  const size_t slash = rel.rfind('/');
  const std::string name = slash == std::string::npos ? rel : rel.substr(slash + 1);
  return fnmatch(filter.c_str(), rel.c_str(), 0) == 0 || fnmatch(filter.c_str(), name.c_str(), 0) == 0;
}

// A URL's files, in it and its sub-folders, relative to it.
std::vector<std::string> list_remote(const std::string& root) {
  std::string base = root;
  while (!base.empty() && base.back() == '/') base.pop_back();
  std::vector<std::string> rel, folders{base};
  auto files = readers::remote_files(root);
  while (!folders.empty()) {
    const std::string dir = folders.back();
    folders.pop_back();
    for (const readers::RemoteEntry& e : files->list(dir)) {
      if (e.is_dir) {
        folders.push_back(e.url);
      } else if (e.url.size() > base.size() + 1 && e.url.compare(0, base.size() + 1, base + "/") == 0) {
        rel.push_back(e.url.substr(base.size() + 1));
      }
    }
  }
  return rel;
}

std::vector<std::string> list_local(const OpSpec& spec, const std::string& root,
                                    const std::string& filter) {
  std::error_code ec;
  auto st = fs::status(root, ec);
  if (st.type() == fs::file_type::not_found)
    fail(ErrorKind::kNotFound, spec.display_name() + ": file_root '" + root + "' does not exist");
  if (!fs::is_directory(st)) spec.arg_error("file_root", "'" + root + "' is not a directory");
  std::vector<std::string> rel;
  fs::recursive_directory_iterator it(root, fs::directory_options::follow_directory_symlink, ec);
  if (ec) fail(ErrorKind::kIO, spec.display_name() + ": cannot list '" + root + "': " + ec.message());
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) fail(ErrorKind::kIO, spec.display_name() + ": cannot list '" + root + "': " + ec.message());
    std::error_code ec2;
    if (!it->is_regular_file(ec2)) continue;
    std::string r = it->path().lexically_relative(root).generic_string();
    if (matches(filter, r)) rel.push_back(r);
  }
  return rel;
}

std::vector<std::string> list_root(const OpSpec& spec, const std::string& root,
                                   const std::string& filter) {
  std::vector<std::string> rel;
  if (readers::is_url(root)) {
    try {
      for (std::string& r : list_remote(root))
        if (matches(filter, r)) rel.push_back(std::move(r));
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::kNotFound)
        fail(ErrorKind::kNotFound, spec.display_name() + ": file_root '" + root + "' does not exist");
      if (e.kind() == ErrorKind::kInvalidArgument) spec.arg_error("file_root", "'" + root + "' is not a directory");
      throw e.with_context(spec.display_name());
    }
  } else {
    rel = list_local(spec, root, filter);
  }
  std::sort(rel.begin(), rel.end());
  std::vector<std::string> out;
  for (const auto& r : rel) out.push_back(readers::join_path(root, r));
  if (out.empty())
    spec.arg_error("file_root", "'" + root + "' has no files matching file_filter '" + filter +
                                    "' (in it or its sub-folders)");
  return out;
}

std::vector<std::string> read_list(const OpSpec& spec, const std::string& list,
                                   const std::optional<std::string>& root) {
  std::optional<std::string> text;
  try {
    text = readers::read_text_file(list);
  } catch (const Error& e) {
    throw e.with_context(spec.display_name());
  }
  if (!text)
    fail(ErrorKind::kNotFound, spec.display_name() + ": file_list '" + list + "' does not exist");
  std::istringstream in(*text);
  std::string base = root ? *root
                          : readers::is_url(list) ? list.substr(0, list.rfind('/'))
                                                  : fs::path(list).parent_path().string();
  std::vector<std::string> out;
  std::string line;
  while (std::getline(in, line)) {
    size_t a = line.find_first_not_of(" \t\r"), b = line.find_last_not_of(" \t\r");
    if (a == std::string::npos) continue;
    out.push_back(readers::join_path(base, line.substr(a, b - a + 1)));
  }
  if (out.empty()) spec.arg_error("file_list", "'" + list + "' lists no files; put one path per line");
  return out;
}

}  // namespace

std::vector<std::string> select_files(const OpSpec& spec) {
  std::optional<std::string> root;
  if (spec.has("file_root")) root = spec.get<std::string>("file_root");
  const bool has_files = spec.has("files"), has_list = spec.has("file_list");
  if (has_files && has_list)
    spec.arg_error("files", "and file_list cannot both be given; name the files one way");
  if (has_files) {
    auto files = spec.get<std::vector<std::string>>("files");
    if (files.empty()) spec.arg_error("files", "is an empty list; give at least one path");
    std::vector<std::string> paths;
    for (const auto& f : files) paths.push_back(readers::join_path(root.value_or(""), f));
    return paths;
  }
  if (has_list) return read_list(spec, spec.get<std::string>("file_list"), root);
  if (root) return list_root(spec, *root, spec.get<std::string>("file_filter"));
  spec.arg_error("file_root", "is required when neither files nor file_list is given");
}

void add_file_selection_args(OpSchema& schema, const std::string& filter) {
  schema
      .arg({.name = "file_root", .type = ArgType::kString, .optional = true,
            .doc = "Folder to read (with file_filter), or the base of relative paths in files/file_list."})
      .arg({.name = "file_filter", .type = ArgType::kString, .default_value = filter,
            .doc = "Glob pattern of the files to take under file_root (matched against the path "
                   "relative to file_root and against the file name)."})
      .arg({.name = "file_list", .type = ArgType::kString, .optional = true,
            .doc = "Text file with one path per line."})
      .arg({.name = "files", .type = ArgType::kStringList, .optional = true,
            .doc = "Paths of the files to read."});
}

}  // namespace stoker
