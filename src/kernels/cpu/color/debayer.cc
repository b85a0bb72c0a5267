#include "kernels/cpu/color/debayer.h"

#include <algorithm>
#include <cstring>

namespace stoker {
namespace kernels {
namespace {

enum Colour { kR = 0, kG = 1, kB = 2 };

// OpenCV's RGB -> gray weights, 14-bit fixed point.
constexpr int64_t kLuma[3] = {4899, 9617, 1868};

template <typename T>
void interior(T* out, const T* in, int64_t h, int64_t w, int blue_y, int blue_x, DebayerAlgorithm alg) {
  // Blue sits at (1 + blue_y, 1 + blue_x) modulo 2, so red, diagonal to it, at (blue_y, blue_x).
  const int red_y = blue_y, red_x = blue_x;
  const int64_t dc = alg == DebayerAlgorithm::kGray ? 1 : 3;
  for (int64_t y = 1; y + 1 < h; ++y) {
    const T* up = in + (y - 1) * w;
    const T* mid = in + y * w;
    const T* down = in + (y + 1) * w;
    // The non-green colour of this row, and the one of the rows above and below.
    const int row_c = (y & 1) == red_y ? kR : kB;
    const int other_c = kB - row_c;  // kR <-> kB
    for (int64_t x = 1; x + 1 < w; ++x) {
      T* o = out + (y * w + x) * dc;
      const int64_t c = mid[x];
      if ((x & 1) == (row_c == kR ? red_x : 1 - red_x)) {
        // A red or blue site.
        const int64_t cross = int64_t{up[x]} + down[x] + mid[x - 1] + mid[x + 1];
        const int64_t diag = int64_t{up[x - 1]} + up[x + 1] + down[x - 1] + down[x + 1];
        if (alg == DebayerAlgorithm::kGray) {
          o[0] = static_cast<T>((diag * kLuma[other_c] + cross * kLuma[kG] + c * 4 * kLuma[row_c] +
                                 (1 << 15)) >> 16);
        } else {
          o[row_c] = static_cast<T>(c);
          o[kG] = static_cast<T>((cross + 2) >> 2);
          o[other_c] = static_cast<T>((diag + 2) >> 2);
        }
      } else {
        // A green site: its row's colour left and right, the other one above and below.
        const int64_t horiz = int64_t{mid[x - 1]} + mid[x + 1];
        const int64_t vert = int64_t{up[x]} + down[x];
        if (alg == DebayerAlgorithm::kGray) {
          o[0] = static_cast<T>((horiz * kLuma[row_c] + vert * kLuma[other_c] + c * 2 * kLuma[kG] +
                                 (1 << 14)) >> 15);
        } else {
          o[kG] = static_cast<T>(c);
          o[row_c] = static_cast<T>((horiz + 1) >> 1);
          o[other_c] = static_cast<T>((vert + 1) >> 1);
        }
      }
    }
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
