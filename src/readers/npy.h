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
#include <utility>

#include "core/dtype.h"
#include "core/shape.h"
#include "readers/random_access_file.h"

namespace stoker::readers::npy {

// What the parser reads: a file (a local path or a URL) or a .npy file's bytes in memory
// (decoders.numpy). `name` is what messages call it.
class Source {
 public:
  virtual ~Source() = default;
  virtual const std::string& name() const = 0;
  virtual int64_t size() const = 0;
  virtual size_t read_some(int64_t offset, void* dst, size_t n) const = 0;
  // Error(kDecode) naming the source, the offset and the missing bytes past the end.
  virtual void read_exact(int64_t offset, void* dst, size_t n, const char* what) const = 0;
};

class FileSource final : public Source {
 public:
  explicit FileSource(const RandomAccessFile& f) : f_(f) {}
  const std::string& name() const override { return f_.path(); }
  int64_t size() const override { return f_.size(); }
  size_t read_some(int64_t offset, void* dst, size_t n) const override {
    return f_.read_some(offset, dst, n);
  }
  void read_exact(int64_t offset, void* dst, size_t n, const char* what) const override {
    f_.read_exact(offset, dst, n, what);
  }

 private:
  const RandomAccessFile& f_;
};

class MemorySource final : public Source {
 public:
  MemorySource(std::string name, const uint8_t* data, int64_t size)
      : name_(std::move(name)), data_(data), size_(size) {}
  const std::string& name() const override { return name_; }
  int64_t size() const override { return size_; }
  size_t read_some(int64_t offset, void* dst, size_t n) const override;
  void read_exact(int64_t offset, void* dst, size_t n, const char* what) const override;

 private:
  std::string name_;
  const uint8_t* data_;
  int64_t size_;
};

struct Header {
  DType dtype = DType::kNone;
  bool swap_bytes = false;      // stored with the other byte order
  bool fortran_order = false;
  Shape shape;                  // the array's shape (as NumPy reports it)
  int64_t data_offset = 0;
  std::string descr;            // as written, e.g. "<f4"
};

// Parses the header. Errors (Error(kDecode)) name the file and what is wrong with it.
Header read_header(const Source& file);
inline Header read_header(const RandomAccessFile& file) { return read_header(FileSource(file)); }

// Writes the array elements of the box [start, start + count) to `dst`, a dense C-order array of
// shape `out_shape`, at `out_start` (so a box that lies partly outside the array can be placed
// in a padded output). The box must lie inside the array. Reads each contiguous run once.
void read_box(const Source& file, const Header& h, const Shape& start, const Shape& count,
              void* dst, const Shape& out_shape, const Shape& out_start);
inline void read_box(const RandomAccessFile& file, const Header& h, const Shape& start,
                     const Shape& count, void* dst, const Shape& out_shape, const Shape& out_start) {
  read_box(FileSource(file), h, start, count, dst, out_shape, out_start);
}

// Fills a dense array of `n` elements of `t` with `value` (converted as static_cast does).
void fill(void* dst, DType t, int64_t n, double value);

}  // namespace stoker::readers::npy
