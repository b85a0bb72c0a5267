// Listing the files of a tar archive (POSIX ustar, GNU and pax), read at offsets: the records of
// WebDataset shards. Only headers are read; a file's data is read later at its offset.
//
// Handled: ustar name prefixes, GNU long names ('L'), pax extended headers ('x': path, size),
// GNU base-256 sizes, archives without the two closing zero blocks. Not handled (an error that
// says so): GNU sparse files and multi-volume continuations. Compressed archives (gzip, bzip2,
// xz, zstd) are recognised and refused with the fix, as DALI reads plain tar only.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "readers/random_access_file.h"

namespace stoker::readers::tar {

inline constexpr int64_t kBlockSize = 512;

struct Entry {
  std::string name;        // full path inside the archive
  int64_t header_offset;   // of its (first) header block
  int64_t data_offset;     // of its data, a multiple of 512
  int64_t size;            // bytes of data
  char type;               // '0' regular file (also for '\0' and '7'), '5' directory, ...
};

// Every entry of the archive in order, regular files and others (directories, links) alike;
// metadata entries (long names, pax headers) are applied to the entry they describe.
// Errors (Error(kDecode)) name the file and the offset: a header whose checksum fails, a
// size field that is not a number, an entry or header cut short by the end of the file.
std::vector<Entry> list_entries(const RandomAccessFile& file);

}  // namespace stoker::readers::tar
