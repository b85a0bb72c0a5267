// Rank filters over a rectangular window of interleaved (HWC) images on the CPU: erosion and
// dilation (the window's minimum and maximum) and the median.
//
// Erosion and dilation are separable on a rectangle: a row pass then a column pass, each a
// sliding minimum (or maximum) made of loops the compiler vectorises: direct for short windows;
// along rows, extremes of doubling runs (log k passes); down columns, van Herk / Gil-Werman's
// prefix and suffix extrema over blocks of the window's length (O(1) per element, any window).
// The median of a 3x3 window is a min/max network over sorted columns (each column sorted once
// for three windows); windows of up to 25 pixels (49 beyond uint8) run Batcher's sorting network,
// pruned to the middle element, on whole stretches of a row at once; larger uint8 windows slide a
// histogram along the row (Huang); other types select the middle element of each window.
//
// Borders follow OpenCV's names (and CV-CUDA's, which DALI wraps): constant (here: the pixels
// outside do not count, i.e. the identity of min / max), replicate (aaa|abcd|ddd), reflect
// (cba|abcd|dcb), reflect_101 (dcb|abcd|cba) and wrap (bcd|abcd|abc), for windows of any size.
#pragma once
#include <cstdint>

#include "core/shape.h"

namespace stoker {
namespace kernels {

enum class MorphOp : int8_t { kErode, kDilate };
enum class FilterBorder : int8_t { kConstant, kReplicate, kReflect, kReflect101, kWrap };

// A rectangular window of `width` x `height` pixels whose pixel (anchor_x, anchor_y) sits on the
// output pixel (0 <= anchor < size).
struct FilterWindow {
  int64_t width = 3, height = 3, anchor_x = 1, anchor_y = 1;
};

// out = `iterations` erosions (dilations) of `in` by the window. `out` and `in` have the same
// size and channels, are dense and do not overlap. T: uint8_t, int16_t, uint16_t or float.
template <typename T>
void morphology(const ImageView<T>& out, const ImageView<const T>& in, MorphOp op,
                const FilterWindow& window, int64_t iterations, FilterBorder border);

// out = the median of each pixel's window (centred; width and height odd), with the edge pixels
// replicated outside the image. Same views and types as morphology().
template <typename T>
void median_blur(const ImageView<T>& out, const ImageView<const T>& in, int64_t width, int64_t height);

}  // namespace kernels
}  // namespace stoker
