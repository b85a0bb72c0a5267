#include "ops/io/reader_base.h"

namespace stoker {

void open_record_files(
    const OpSpec& spec, const char* path_arg, const char* index_arg, const std::string& what,
    RecordFiles& files,
    const std::function<void(int, const readers::RandomAccessFile&, const std::string&)>& list) {
  auto paths = spec.get<std::vector<std::string>>(path_arg);
  std::vector<std::string> index_paths;
  if (spec.has(index_arg)) index_paths = spec.get<std::vector<std::string>>(index_arg);
  if (paths.empty()) spec.arg_error(path_arg, "is empty; give at least one " + what);
  if (!index_paths.empty() && index_paths.size() != paths.size())
    spec.arg_error(index_arg, "has " + std::to_string(index_paths.size()) + " entries for " +
                                  std::to_string(paths.size()) + " files in '" + path_arg +
                                  "'; give one index file per " + what +
                                  ", or none (stoker then scans the files)");
  try {
    for (size_t f = 0; f < paths.size(); ++f) {
      files.push_back(std::make_unique<readers::RandomAccessFile>(paths[f]));
      list(static_cast<int>(f), *files.back(), index_paths.empty() ? "" : index_paths[f]);
    }
  } catch (const Error& e) {
    throw e.with_context(spec.display_name());
  }
}

}  // namespace stoker
