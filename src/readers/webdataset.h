// WebDataset shards: samples are runs of consecutive tar entries sharing a key, the entry's path
// up to the first dot of its file name ("a/b/000123.seg.png": key "a/b/000123", extension
// "seg.png"), as webdataset and DALI's readers.webdataset group them. Entries whose key is empty
// or ends in '/' (hidden files, ".foo") and non-regular entries are not samples.
//
// Index files are DALI's (wds2idx): a first line "v1.2 <samples>" (or "v1.1"), then one line per
// sample listing its components as "<ext> <data offset> <size> <file name>" ("v1.1": without the
// file name).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "readers/tar.h"

namespace stoker::readers::webdataset {

struct Component {
  std::string ext;
  int64_t offset = 0;  // of the data in the tar file
  int64_t size = 0;
  std::string filename;
};

struct Sample {
  std::vector<Component> components;
  int64_t index_line = 0;  // the line in the index file (0: from the tar itself)
};

// "key", "ext" of an entry's path.
std::pair<std::string, std::string> split_name(const std::string& path);

// Groups a tar's regular files into samples.
std::vector<Sample> samples_from_entries(const std::vector<tar::Entry>& entries);

// Reads an index file; checks offsets against the tar's size (an index that does not belong
// to the archive is reported with its line). Errors: Error(kInvalidArgument) naming file and line.
std::vector<Sample> read_index(const std::string& index_path, const std::string& tar_path,
                               int64_t tar_size);

}  // namespace stoker::readers::webdataset
