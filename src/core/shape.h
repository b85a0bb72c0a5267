// Shapes and plain views of memory. Kernels take these and nothing from the pipeline.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"

namespace stoker {

using Shape = std::vector<int64_t>;

std::string to_string(const Shape& s);  // "(375, 500, 3)"

// Sizes made from arguments and file headers (a crop of 2^31 x 2^31, a shape of 2^40 x 2^40)
// overflow 64 bits, and a product that wraps around looks like a small, valid size. So every
// product of sizes (extents, elements x dtype size, samples x bytes) goes through this: a * b
// of non-negative sizes, false where it does not fit in 63 bits.
inline bool checked_mul(int64_t a, int64_t b, int64_t* out) {
  return !__builtin_mul_overflow(a, b, out) && *out >= 0;
}

// The number of elements of a shape, or -1 where it does not fit in 63 bits or an extent is
// negative. A shape with a zero extent has none, whatever the other extents are.
inline int64_t checked_volume(const Shape& s) {
  int64_t v = 1;
  bool fits = true, empty = false;
  for (int64_t d : s) {
    if (d < 0) return -1;
    empty |= d == 0;
    fits = fits && checked_mul(v, d, &v);
  }
  return empty ? 0 : fits ? v : -1;
}

// The number of elements; throws Error(kInvalidArgument) where that does not fit in 63 bits
// (the shapes of allocated samples always fit: their allocation checked them).
inline int64_t volume(const Shape& s) {
  const int64_t v = checked_volume(s);
  if (v < 0) {
    const bool negative = std::any_of(s.begin(), s.end(), [](int64_t d) { return d < 0; });
    fail(ErrorKind::kInvalidArgument, "the shape " + to_string(s) + " has " +
                                          (negative ? "a negative extent" : "more elements than 64 bits can count"));
  }
  return v;
}

// One interleaved image (HWC); strides are in elements, so a view can be a crop of a larger image.
template <typename T>
struct ImageView {
  T* data = nullptr;
  int64_t height = 0, width = 0, channels = 0;
  int64_t row_stride = 0;    // elements between the starts of two rows
  int64_t pixel_stride = 0;  // elements between two pixels of a row (usually == channels)

  ImageView() = default;
  ImageView(T* d, int64_t h, int64_t w, int64_t c)
      : data(d), height(h), width(w), channels(c), row_stride(w * c), pixel_stride(c) {}
  T* row(int64_t y) const { return data + y * row_stride; }
  T* at(int64_t y, int64_t x) const { return data + y * row_stride + x * pixel_stride; }
  bool dense() const { return pixel_stride == channels && row_stride == width * channels; }
};

}  // namespace stoker
