// How the file readers that take a folder, a list or names (readers.numpy,
// experimental.readers.fits) choose their files, as DALI's do: `files` (relative to file_root
// when it is given), or the lines of `file_list` (relative to file_root, or to the list's own
// folder), or every file under `file_root` (and its sub-folders, local or a URL) that matches
// `file_filter`, in sorted order. Errors name the operator and the argument.
#pragma once
#include <string>
#include <vector>

#include "pipeline/operator.h"

namespace stoker {

std::vector<std::string> select_files(const OpSpec& spec);

// The arguments select_files reads: file_root, file_filter (default `filter`), file_list, files.
void add_file_selection_args(OpSchema& schema, const std::string& filter);

}  // namespace stoker
