// RGB <-> HSV as OpenCV defines it (cv::cvtColor COLOR_RGB2HSV / COLOR_HSV2RGB), for
// color_space_conversion. Not an affine map, so not a ColorAffine.
//   V = max(R, G, B), S = (V - min) / V, H = the hexcone angle (0 for grey pixels).
// Two conventions, picked by `eight_bit`:
//   eight_bit: RGB in [0, 255], H in [0, 180) (degrees / 2), S and V in [0, 255]; H and S are
//              rounded half up (as OpenCV's 8-bit tables do), RGB from HSV half to even.
//   otherwise: RGB in [0, 1], H in degrees [0, 360), S and V in [0, 1] (OpenCV's float path,
//              with its FLT_EPSILON guards). HSV -> RGB takes any H (wrapped modulo 360).
// Integer outputs are saturated. `bgr` reverses the RGB side's channel order.
#pragma once
#include <cstdint>

#include "core/float16.h"
#include "core/shape.h"

namespace stoker {
namespace kernels {

// Both views have 3 channels and the same height and width. Instantiated for Out and In among
// uint8_t, float16 and float (mixed pairs serve float intermediates).
template <typename Out, typename In>
void rgb_to_hsv(const ImageView<Out>& out, const ImageView<const In>& in, bool bgr, bool eight_bit);

template <typename Out, typename In>
void hsv_to_rgb(const ImageView<Out>& out, const ImageView<const In>& in, bool bgr, bool eight_bit);

}  // namespace kernels
}  // namespace stoker
