// Shapes and plain views of memory. Kernels take these and nothing from the pipeline.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace stoker {

using Shape = std::vector<int64_t>;

inline int64_t volume(const Shape& s) {
  int64_t v = 1;
  for (int64_t d : s) v *= d;
  return v;
}

std::string to_string(const Shape& s);  // "(375, 500, 3)"

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
