// NumPy .npy files (format versions 1.0, 2.0 and 3.0): the header, and reading a region of the
// array straight from the file, so that a region of interest costs what it reads, not the
// whole array.
//
// Arrays come out in C order: a Fortran-order file is transposed while it is read (as DALI
// does). Big-endian files are byte-swapped. Element types: bool, int8..int64, uint8..uint64,
// float16, float32, float64; others (complex, structured, object) are refused by name.
#pragma once
#include <cstdint>
#include <string>

#include "core/dtype.h"
#include "core/shape.h"
#include "readers/random_access_file.h"

namespace stoker::readers::npy {

struct Header {
  DType dtype = DType::kNone;
  bool swap_bytes = false;      // stored with the other byte order
  bool fortran_order = false;
  Shape shape;                  // the array's shape (as NumPy reports it)
  int64_t data_offset = 0;
  std::string descr;            // as written, e.g. "<f4"
};

// Parses the header. Errors (Error(kDecode)) name the file and what is wrong with it.
Header read_header(const RandomAccessFile& file);

// Writes the array elements of the box [start, start + count) to `dst`, a dense C-order array of
// shape `out_shape`, at `out_start` (so a box that lies partly outside the array can be placed
// in a padded output). The box must lie inside the array. Reads each contiguous run once.
void read_box(const RandomAccessFile& file, const Header& h, const Shape& start,
              const Shape& count, void* dst, const Shape& out_shape, const Shape& out_start);

// Fills a dense array of `n` elements of `t` with `value` (converted as static_cast does).
void fill(void* dst, DType t, int64_t n, double value);

}  // namespace stoker::readers::npy
