// Demosaicing of Bayer mosaics as OpenCV's cv::cvtColor does it (COLOR_Bayer**2RGB and
// COLOR_Bayer**2GRAY), which is what DALI's CPU debayer calls; bit-exact with both.
//  - bilinear: a red or blue site keeps its value, takes green from the mean of its 4 edge
//    neighbours and the opposite colour from the mean of its 4 diagonal ones ((sum + 2) >> 2);
//    a green site takes each other colour from the mean of the pair of neighbours that has it
//    ((a + b + 1) >> 1).
//  - gray: the same neighbourhoods weighted by OpenCV's fixed-point luma (R 4899, G 9617,
//    B 1868, / 16384), rounded once.
// The outermost rows and columns are copies of their inner neighbours (rows after columns); an
// image narrower or shorter than 3 pixels comes out black, as in OpenCV.
#pragma once
#include <cstdint>

#include "core/host_device.h"

namespace stoker {
namespace kernels {

enum class DebayerAlgorithm { kBilinear, kGray };

// One output pixel of the interior (1 <= y < h - 1, 1 <= x < w - 1) from the rows above, at and
// below it: `out` gets 3 values (RGB) or 1 (gray). Red sits at (red_y, red_x) modulo 2 (diagonal
// to blue). The CPU kernel and the GPU twin (kernels/cuda/color_gpu.cu) both call it.
template <typename T>
STOKER_HD inline void debayer_pixel(T* out, const T* up, const T* mid, const T* down, int64_t y,
                                    int64_t x, int red_y, int red_x, bool gray) {
  constexpr int kR = 0, kG = 1, kB = 2;
  // OpenCV's RGB -> gray weights, 14-bit fixed point.
  constexpr int64_t luma[3] = {4899, 9617, 1868};
  // The non-green colour of this row, and the one of the rows above and below.
  const int row_c = (y & 1) == red_y ? kR : kB;
  const int other_c = kB - row_c;  // kR <-> kB
  const int64_t c = mid[x];
  if ((x & 1) == (row_c == kR ? red_x : 1 - red_x)) {
    // A red or blue site.
    const int64_t cross = int64_t{up[x]} + down[x] + mid[x - 1] + mid[x + 1];
    const int64_t diag = int64_t{up[x - 1]} + up[x + 1] + down[x - 1] + down[x + 1];
    if (gray) {
      out[0] = static_cast<T>((diag * luma[other_c] + cross * luma[kG] + c * 4 * luma[row_c] +
                               (1 << 15)) >> 16);
    } else {
      out[row_c] = static_cast<T>(c);
      out[kG] = static_cast<T>((cross + 2) >> 2);
      out[other_c] = static_cast<T>((diag + 2) >> 2);
    }
  } else {
    // A green site: its row's colour left and right, the other one above and below.
    const int64_t horiz = int64_t{mid[x - 1]} + mid[x + 1];
    const int64_t vert = int64_t{up[x]} + down[x];
    if (gray) {
      out[0] = static_cast<T>((horiz * luma[row_c] + vert * luma[other_c] + c * 2 * luma[kG] +
                               (1 << 14)) >> 15);
    } else {
      out[kG] = static_cast<T>(c);
      out[row_c] = static_cast<T>((horiz + 1) >> 1);
      out[other_c] = static_cast<T>((vert + 1) >> 1);
    }
  }
}

// `in`: h x w mosaic (dense); `out`: h x w x 3 (RGB) or h x w x 1 (kGray), dense. The 2x2
// pattern is given by where blue sits in the tile starting at row 1, column 1 (OpenCV's
// convention): blue at (1 + blue_y + 2i, 1 + blue_x + 2j), red diagonal to it. T: uint8_t or
// uint16_t.
template <typename T>
void debayer(T* out, const T* in, int64_t h, int64_t w, int blue_y, int blue_x, DebayerAlgorithm alg);

}  // namespace kernels
}  // namespace stoker
