// Histogram equalization of 8-bit images, as OpenCV computes it (DALI's CPU operators call
// OpenCV, so these match DALI bit for bit):
//  - equalize: cv::equalizeHist on each channel of each frame. The first occupied level goes to
//    0, level i to round_half_even(cdf(i) * 255 / (N - count(first level))); a frame holding
//    one level is left unchanged.
//  - clahe: cv::createCLAHE(clip_limit, (tiles_x, tiles_y)).apply. A frame whose size is not a
//    multiple of the tile grid is first extended down and right by mirroring (OpenCV's
//    BORDER_REFLECT_101) for the histograms only, each side by tiles - size % tiles (so a side
//    that fits grows by a whole tile, OpenCV's rule); each tile's histogram is clipped at
//    max(int(clip_limit * tile_area / 256), 1) (no clipping when clip_limit <= 0), the excess
//    spread evenly with the remainder going to every (256 / remainder)-th level, and each output
//    pixel blends the four nearest tiles' lookup tables bilinearly in float32.
//    luma_only on RGB: CLAHE on the L of CIE Lab (8-bit scale, L * 255 / 100), then back to
//    RGB. The Lab conversions here are the exact float formulas, not OpenCV's fixed-point
//    tables, so that mode is within a few levels of OpenCV's (and DALI's), not bit-exact.
#pragma once
#include <cstdint>

#include "core/shape.h"

namespace stoker {
namespace kernels {

// Equalizes `channels` channels of `pixels` pixels. Channel c of pixel p is at
// c * channel_stride + p * pixel_stride, in `in` and in `out` alike (HWC: 1 and C; CHW: the
// plane size and 1). `out` may be `in`.
void equalize_hist(uint8_t* out, const uint8_t* in, int64_t pixels, int64_t channels,
                   int64_t channel_stride, int64_t pixel_stride);

struct ClaheParams {
  int64_t tiles_x = 8, tiles_y = 8;
  double clip_limit = 2.0;
  bool luma_only = true;  // for 3-channel (RGB) images; 1-channel images have only luma
};

// CLAHE of a 1- or 3-channel image (`in` and `out` alike shaped, dense, distinct). Channels are
// equalized one by one, unless `luma_only` and 3 channels (see above). tiles_x, tiles_y >= 1.
void clahe(const ImageView<uint8_t>& out, const ImageView<const uint8_t>& in, const ClaheParams& p);

}  // namespace kernels
}  // namespace stoker
