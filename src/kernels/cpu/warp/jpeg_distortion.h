// JPEG compression artefacts: the image is encoded with libjpeg at a given quality (baseline,
// 4:2:0 chroma subsampling for colour, the library's defaults like OpenCV's imencode and
// Pillow's save) and decoded back.
#pragma once
#include <cstdint>
#include <string>

#include "core/shape.h"

namespace stoker {
namespace kernels {

// Sides above this are not representable in a JPEG file.
constexpr int64_t kJpegMaxSide = 65500;

// in and out: 8-bit images of the same size with 1 (gray) or 3 (RGB) channels, pixels packed
// within a row. quality in [1, 100]. Returns an empty string, or libjpeg's message on failure.
std::string jpeg_compression_distortion(const ImageView<uint8_t>& out, const ImageView<const uint8_t>& in,
                                        int quality);

}  // namespace kernels
}  // namespace stoker
