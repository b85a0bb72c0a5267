// MXNet RecordIO (dmlc-core recordio.h) with MXNet's image records (im2rec, mx.recordio.pack).
//
// Framing: each part is  uint32 magic 0xced7230a | uint32 lrec | data | zero padding to 4 bytes,
// lrec = cflag << 29 | length. A record whose data contains the magic number at a 4-byte
// aligned position is written in parts, split there with the magic left out: cflag 0 = whole
// record, 1 = first part, 2 = middle part, 3 = last part; readers put the magic back between
// parts. MXNet's .idx files hold "<key>\t<offset>" lines.
// Image records start with IRHeader { uint32 flag; float label; uint64 id; uint64 id2 }
// (24 bytes, little-endian); flag > 0 means `flag` float labels follow the header (and
// `label` is unused); then the encoded image.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "readers/random_access_file.h"

namespace stoker::readers::recordio {

inline constexpr uint32_t kMagic = 0xced7230au;
inline constexpr size_t kImageHeaderBytes = 24;

struct RecordRef {
  int64_t offset = 0;  // of the record's first part
  int64_t size = 0;    // bytes up to the next record (or the end of the file)
};

// Walks all parts of the file. Errors (Error(kDecode)) name the file and the offset.
std::vector<RecordRef> scan_records(const RandomAccessFile& file);

// Reads an MXNet .idx file; records are taken in the order of their offsets, each spanning to
// the next offset. Errors name the index file and the line.
std::vector<RecordRef> read_index(const std::string& index_path, const std::string& data_path,
                                  int64_t data_file_size);

// Reads one record (all its parts) and puts its data, parts joined, in `payload`.
void read_record(const RandomAccessFile& file, const RecordRef& rec, std::vector<uint8_t>& raw,
                 std::vector<uint8_t>& payload);

struct ImageRecord {
  uint32_t flag = 0;
  float label = 0;
  uint64_t id = 0, id2 = 0;
  std::vector<float> labels;     // flag == 0: {label}; else the `flag` labels after the header
  const uint8_t* image = nullptr;
  size_t image_size = 0;
};
// Splits a payload into header, labels and image bytes. Raises Error(kDecode) for a payload too
// short for its header and labels.
ImageRecord parse_image_record(const std::vector<uint8_t>& payload);

}  // namespace stoker::readers::recordio
