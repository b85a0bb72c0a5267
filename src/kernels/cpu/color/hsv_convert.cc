#include "kernels/cpu/color/hsv_convert.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <type_traits>

namespace stoker {
namespace kernels {
namespace {

// Float to Out; integers saturate, `half_up` rounds floor(v + 0.5), otherwise half to even.
template <typename Out>
inline Out store(float v, bool half_up) {
  if constexpr (std::is_same_v<Out, float>) {
    return v;
  } else if constexpr (std::is_same_v<Out, float16>) {
    return Out(v);
  } else {
    static_assert(std::is_same_v<Out, uint8_t>);
    if (!(v >= 0.0f)) return 0;  // also NaN
    if (v >= 255.0f) return 255;
    return static_cast<uint8_t>(half_up ? std::floor(v + 0.5f) : std::nearbyint(v));
  }
}

template <typename T>
inline float load(T v) {
  return static_cast<float>(v);
}

}  // namespace

template <typename Out, typename In>
void rgb_to_hsv(const ImageView<Out>& out, const ImageView<const In>& in, bool bgr, bool eight_bit) {
  const int ri = bgr ? 2 : 0, bi = bgr ? 0 : 2;
  for (int64_t y = 0; y < in.height; ++y) {
    for (int64_t x = 0; x < in.width; ++x) {
      const In* p = in.at(y, x);
      Out* q = out.at(y, x);
      float r = load(p[ri]), g = load(p[1]), b = load(p[bi]);
      float v = std::max(r, std::max(g, b));
      float vmin = std::min(r, std::min(g, b));
      float diff = v - vmin;
      float h, s;
      if (eight_bit) {
        // H in half degrees: sector offset + 30 * (difference of the other two) / diff, rounded
        // before the wrap, as OpenCV's integer path does.
        if (diff <= 0.0f) {
          h = 0.0f;
        } else if (v == r) {
          h = (g - b) * 30.0f / diff;
        } else if (v == g) {
          h = (b - r) * 30.0f / diff + 60.0f;
        } else {
          h = (r - g) * 30.0f / diff + 120.0f;
        }
        h = std::floor(h + 0.5f);
        if (h < 0.0f) h += 180.0f;
        if (h >= 180.0f) h -= 180.0f;
        s = v > 0.0f ? diff * 255.0f / v : 0.0f;
        q[0] = store<Out>(h, true);
        q[1] = store<Out>(s, true);
        q[2] = store<Out>(v, false);  // max of the inputs: exact for 8-bit data
      } else {
        s = diff / (std::fabs(v) + FLT_EPSILON);
        float k = 60.0f / (diff + FLT_EPSILON);
        if (v == r)
          h = (g - b) * k;
        else if (v == g)
          h = (b - r) * k + 120.0f;
        else
          h = (r - g) * k + 240.0f;
        if (h < 0.0f) h += 360.0f;
        q[0] = store<Out>(h, false);
        q[1] = store<Out>(s, false);
        q[2] = store<Out>(v, false);
      }
    }
  }
}

template <typename Out, typename In>
void hsv_to_rgb(const ImageView<Out>& out, const ImageView<const In>& in, bool bgr, bool eight_bit) {
  // OpenCV's sector table: which of {v, p, q, t} goes to B, G, R in each 60-degree sector.
  static const int kSector[6][3] = {{1, 3, 0}, {1, 0, 2}, {3, 0, 1}, {0, 2, 1}, {0, 1, 3}, {2, 1, 0}};
  const float hscale = eight_bit ? 6.0f / 180.0f : 6.0f / 360.0f;
  const float in_scale = eight_bit ? 1.0f / 255.0f : 1.0f;
  const float out_scale = eight_bit ? 255.0f : 1.0f;
  const int ri = bgr ? 2 : 0, bi = bgr ? 0 : 2;
  for (int64_t y = 0; y < in.height; ++y) {
    for (int64_t x = 0; x < in.width; ++x) {
      const In* p = in.at(y, x);
      Out* q = out.at(y, x);
      float h = load(p[0]), s = load(p[1]) * in_scale, v = load(p[2]) * in_scale;
      float r, g, b;
      if (s == 0.0f || !std::isfinite(h)) {
        r = g = b = v;
      } else {
        h *= hscale;
        h = std::fmod(h, 6.0f);
        if (h < 0.0f) h += 6.0f;
        float sector = std::floor(h);
        h -= sector;
        int sec = static_cast<int>(sector);
        if (sec < 0 || sec >= 6) {
          sec = 0;
          h = 0.0f;
        }
        float tab[4] = {v, v * (1.0f - s), v * (1.0f - s * h), v * (1.0f - s * (1.0f - h))};
        b = tab[kSector[sec][0]];
        g = tab[kSector[sec][1]];
        r = tab[kSector[sec][2]];
      }
      q[ri] = store<Out>(r * out_scale, false);
      q[1] = store<Out>(g * out_scale, false);
      q[bi] = store<Out>(b * out_scale, false);
    }
  }
}

#define STOKER_HSV_INSTANTIATE(Out, In)                                                          \
  template void rgb_to_hsv<Out, In>(const ImageView<Out>&, const ImageView<const In>&, bool, bool); \
  template void hsv_to_rgb<Out, In>(const ImageView<Out>&, const ImageView<const In>&, bool, bool);
#define STOKER_HSV_IN(In) \
  STOKER_HSV_INSTANTIATE(uint8_t, In) STOKER_HSV_INSTANTIATE(float16, In) STOKER_HSV_INSTANTIATE(float, In)
STOKER_HSV_IN(uint8_t)
STOKER_HSV_IN(float16)
STOKER_HSV_IN(float)
#undef STOKER_HSV_IN
#undef STOKER_HSV_INSTANTIATE

}  // namespace kernels
}  // namespace stoker
