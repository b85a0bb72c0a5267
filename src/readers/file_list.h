// The (path, label) list behind DALI's readers.file, and reading a file's bytes.
//
// Three ways to name the files, as in DALI (file_label_loader.h, filesystem.cc):
//  - file_root alone: one sub-folder per class; classes are the sub-folder names in sorted order,
//    label = class index; the files directly inside each class folder that match file_filters,
//    sorted by name (DALI does not descend further; `recursive` is a stoker option);
//  - file_list: a text file of "path label" lines; paths are relative to file_root when given,
//    else to the list file's folder;
//  - files (+ labels, default 0..N-1): given directly, relative to file_root when given.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace stoker::readers {

struct FileEntry {
  std::string path;  // ready to open: joined with file_root (or the list's folder) when relative
  int label = 0;
};

// DALI's default file_filters: the image and audio extensions it decodes.
const std::vector<std::string>& default_file_filters();

struct FileListOptions {
  std::optional<std::string> file_root;
  std::optional<std::string> file_list;
  std::optional<std::vector<std::string>> files;
  std::optional<std::vector<int>> labels;                // only with `files`
  std::optional<std::vector<std::string>> file_filters;  // unset: default_file_filters()
  std::vector<std::string> dir_filters;                  // empty: every class folder
  bool case_sensitive_filter = false;
  bool recursive = false;  // stoker extension: also list files in folders below a class folder
};

// Validates the combination of arguments as DALI does and builds the list; errors are
// Error(kInvalidArgument) naming the argument, or kNotFound for a missing file_root / file_list.
std::vector<FileEntry> build_file_list(const FileListOptions& options);

// The class-folder mode on its own.
std::vector<FileEntry> list_class_folders(const std::string& file_root,
                                          const std::vector<std::string>& file_filters,
                                          bool case_sensitive_filter,
                                          const std::vector<std::string>& dir_filters = {},
                                          bool recursive = false);

// The file_list mode on its own; `file_root` replaces the list's folder as the base of paths.
std::vector<FileEntry> parse_file_list(const std::string& file_list,
                                       const std::optional<std::string>& file_root = {});

// DALI's join_path: `path` as is when absolute or when `dir` is empty.
std::string join_path(const std::string& dir, const std::string& path);

// Bytes of a file. kNotFound when it does not exist, kIO for any other failure.
int64_t file_size(const std::string& path);
std::vector<uint8_t> read_file(const std::string& path);
// Into caller memory; returns the file's size. Raises kInvalidArgument when `capacity` is smaller
// than the file (size it with file_size() first).
size_t read_file_into(const std::string& path, void* dst, size_t capacity);

}  // namespace stoker::readers
