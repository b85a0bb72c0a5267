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

namespace stoker {
namespace kernels {

enum class DebayerAlgorithm { kBilinear, kGray };

// `in`: h x w mosaic (dense); `out`: h x w x 3 (RGB) or h x w x 1 (kGray), dense. The 2x2
// pattern is given by where blue sits in the tile starting at row 1, column 1 (OpenCV's
// convention): blue at (1 + blue_y + 2i, 1 + blue_x + 2j), red diagonal to it. T: uint8_t or
// uint16_t.
template <typename T>
void debayer(T* out, const T* in, int64_t h, int64_t w, int blue_y, int blue_x, DebayerAlgorithm alg);

}  // namespace kernels
}  // namespace stoker
