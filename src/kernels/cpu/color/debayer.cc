#include "kernels/cpu/color/debayer.h"

#include <algorithm>
#include <cstring>

namespace stoker {
namespace kernels {
namespace {

template <typename T>
void interior(T* out, const T* in, int64_t h, int64_t w, int blue_y, int blue_x, DebayerAlgorithm alg) {
  // Blue sits at (1 + blue_y, 1 + blue_x) modulo 2, so red, diagonal to it, at (blue_y, blue_x).
  const bool gray = alg == DebayerAlgorithm::kGray;
  const int64_t dc = gray ? 1 : 3;
  for (int64_t y = 1; y + 1 < h; ++y) {
    const T* up = in + (y - 1) * w;
    const T* mid = in + y * w;
    const T* down = in + (y + 1) * w;
    for (int64_t x = 1; x + 1 < w; ++x)
      debayer_pixel(out + (y * w + x) * dc, up, mid, down, y, x, blue_y, blue_x, gray);
  }
}

}  // namespace

template <typename T>
void debayer(T* out, const T* in, int64_t h, int64_t w, int blue_y, int blue_x, DebayerAlgorithm alg) {
  const int64_t dc = alg == DebayerAlgorithm::kGray ? 1 : 3;
  const int64_t row = w * dc;
  if (h < 3 || w < 3) {
    std::fill(out, out + h * row, T{0});
    return;
  }
  interior(out, in, h, w, blue_y, blue_x, alg);
  for (int64_t y = 1; y + 1 < h; ++y) {
    T* r = out + y * row;
    std::memcpy(r, r + dc, dc * sizeof(T));
    std::memcpy(r + (w - 1) * dc, r + (w - 2) * dc, dc * sizeof(T));
  }
  std::memcpy(out, out + row, row * sizeof(T));
  std::memcpy(out + (h - 1) * row, out + (h - 2) * row, row * sizeof(T));
}

template void debayer<uint8_t>(uint8_t*, const uint8_t*, int64_t, int64_t, int, int, DebayerAlgorithm);
template void debayer<uint16_t>(uint16_t*, const uint16_t*, int64_t, int64_t, int, int, DebayerAlgorithm);

}  // namespace kernels
}  // namespace stoker
