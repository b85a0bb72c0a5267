// Geometric warps of interleaved (HWC) images on the CPU: affine maps (warp_affine, rotate),
// perspective maps (experimental.warp_perspective) and arbitrary per-pixel maps (water, sphere)
// share one sampler.
//
// Coordinates follow DALI: pixel (i, j) covers [i, i+1) x [j, j+1), so its centre is at
// (i + 0.5, j + 0.5). A map gives, for each output pixel, the point of the source to sample:
//  - nearest: the source pixel containing the point, floor(x), floor(y);
//  - linear:  the four pixels around it, weights from (x - 0.5, y - 0.5);
//  - cubic:   the 4x4 pixels around it, Keys' cubic with a = -0.75 (OpenCV's INTER_CUBIC).
// Taps outside the source read the edge pixel (clamp) or the fill value, tap by tap, as DALI's
// samplers (and OpenCV's BORDER_REPLICATE / BORDER_CONSTANT) do; or, with a fold, the pixel
// that OpenCV's BORDER_REFLECT / BORDER_REFLECT_101 / BORDER_WRAP name. Arithmetic is in float; the
// result is rounded half to even and saturated into the output type (convert_sat).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <type_traits>
#include <vector>

#include "core/convert.h"
#include "core/error.h"
#include "core/shape.h"
#include "kernels/cpu/warp/round_sat.h"

namespace stoker {
namespace kernels {

enum class WarpInterp : int8_t { kNearest, kLinear, kCubic };

// How taps outside the source fold back into it (CPU only): reflect repeats the edge pixel
// (fedcba|abcdefgh|hgfedcb), reflect_101 does not (gfedcb|abcdefgh|gfedcba), wrap tiles
// (cdefgh|abcdefgh|abcdefg). A source one pixel wide reads that pixel.
enum class WarpFold : int8_t { kNone, kReflect, kReflect101, kWrap };

struct WarpBorder {
  bool clamp = true;  // repeat the edge pixel; otherwise read `fill` (every channel)
  float fill = 0.0f;
  WarpFold fold = WarpFold::kNone;        // when set, overrides clamp and fill
  const float* channel_fill = nullptr;    // one fill value per channel, overriding `fill`
};

// dst(x, y) = src(m[0] x + m[1] y + m[2], m[3] x + m[4] y + m[5]) in the coordinates above.
struct AffineMap2D {
  double m[6] = {1, 0, 0, 0, 1, 0};
};

// The inverse map; false when the matrix is singular (or not finite).
bool invert_affine(const AffineMap2D& a, AffineMap2D* inv);

// DALI's rotate: the output canvas (height, width) that holds the whole input rotated by
// `angle_deg`, with the parity of each side matched to the input side it mostly comes from.
void rotated_canvas_size(int64_t in_h, int64_t in_w, double angle_deg, int64_t* out_h, int64_t* out_w);
// The output-to-input map of a counter-clockwise rotation by `angle_deg` (y pointing down) that
// puts the centre of the input at the centre of the output.
AffineMap2D rotation_map(int64_t in_h, int64_t in_w, int64_t out_h, int64_t out_w, double angle_deg);

// Fills the source points of one output row: sx[x], sy[x] for x in [0, width) of row y.
using RowMap = std::function<void(int64_t y, int64_t width, float* sx, float* sy)>;

RowMap affine_row_map(const AffineMap2D& a);

// A homography in OpenCV's pixel convention (pixel (i, j) centred at (i, j)): output pixel (x, y)
// reads the source at ((m0 x + m1 y + m2) / w, (m3 x + m4 y + m5) / w), w = m6 x + m7 y + m8.
struct PerspectiveMap2D {
  double m[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
};
// The inverse map; false when the matrix is singular (or not finite).
bool invert_perspective(const PerspectiveMap2D& a, PerspectiveMap2D* inv);
// The source points in float32 arithmetic, as OpenCV 5's warpPerspective computes them (the
// row's terms rounded to float once, then a multiply-add and a division per pixel), so that
// samples near a pixel boundary fall on the same side as there. With `nearest` each point is
// snapped to the centre of the pixel OpenCV's nearest neighbour picks (rounding half to even),
// which the sampler's floor then takes.
RowMap perspective_row_map(const PerspectiveMap2D& p, bool nearest);
// DALI's water: src = (x + ampl_x sin(freq_x y + phase_x), y + ampl_y cos(freq_y x + phase_y)),
// with x, y the output pixel's integer index (DALI passes the index, not the centre).
struct WaterParams {
  float ampl_x = 10, ampl_y = 10, freq_x = 0, freq_y = 0, phase_x = 0, phase_y = 0;
};
RowMap water_row_map(const WaterParams& p);
// DALI's sphere: the centred point p = (x + 0.5, y + 0.5) - mid is scaled by |p| / d, with
// mid = (W / 2, H / 2) and d = int(max(mid)), so the centre magnifies and the corners shrink.
RowMap sphere_row_map(int64_t height, int64_t width);

namespace detail {

// floor for tamed values (std::floor is a library call without SSE4.1).
inline int64_t floor_i(float v) {
  int64_t i = static_cast<int64_t>(v);
  return i - (v < static_cast<float>(i));
}

// The source index that tap `i` folds to, for any integer `i`.
inline int64_t fold_index(int64_t i, int64_t n, WarpFold f) {
  if (n <= 1) return 0;
  int64_t p = f == WarpFold::kWrap ? n : f == WarpFold::kReflect ? 2 * n : 2 * n - 2;
  i %= p;
  if (i < 0) i += p;
  if (i < n) return i;
  return f == WarpFold::kReflect ? p - 1 - i : p - i;  // kWrap never gets here
}

// The period of a fold along an axis of `n` pixels: moving a point by it reads the same taps.
inline int64_t fold_period(int64_t n, WarpFold f) {
  if (n <= 1) return 1;
  return f == WarpFold::kWrap ? n : f == WarpFold::kReflect ? 2 * n : 2 * n - 2;
}

// Keys' cubic convolution weights for the four taps at offsets -1, 0, 1, 2 from floor.
inline void cubic_weights(float t, float w[4]) {
  constexpr float a = -0.75f;
  float t1 = t + 1, t2 = 1 - t;
  w[0] = ((a * t1 - 5 * a) * t1 + 8 * a) * t1 - 4 * a;
  w[1] = ((a + 2) * t - (a + 3)) * t * t + 1;
  w[2] = ((a + 2) * t2 - (a + 3)) * t2 * t2 + 1;
  w[3] = 1 - w[0] - w[1] - w[2];
}

template <typename Out, typename In>
class RowSampler {
 public:
  RowSampler(const ImageView<const In>& in, WarpBorder border)
      : in_(in), border_(border), c_(in.channels) {
    // Points are brought into [lo, hi] before the integer conversions. Clamped or filled taps
    // are all alike beyond 4 pixels out; folded points come already reduced by warp() to less
    // than one period from 0.
    if (border_.fold != WarpFold::kNone) {
      hx_ = static_cast<float>(fold_period(in.width, border_.fold) + 4);
      hy_ = static_cast<float>(fold_period(in.height, border_.fold) + 4);
      lx_ = -hx_;
      ly_ = -hy_;
    } else {
      hx_ = static_cast<float>(in.width + 4);
      hy_ = static_cast<float>(in.height + 4);
    }
  }

  // out: the output row (pixel stride `ops`); sx, sy: the source points.
  void nearest(Out* out, int64_t ops, const float* sx, const float* sy, int64_t n) const {
    for (int64_t x = 0; x < n; ++x, out += ops) {
      int64_t ix = floor_i(tame_x(sx[x])), iy = floor_i(tame_y(sy[x]));
      if (inside(ix, iy)) {
        const In* p = in_.at(iy, ix);
        for (int64_t c = 0; c < c_; ++c) out[c] = convert_sat<Out>(p[c]);
      } else if (border_.fold != WarpFold::kNone) {
        const In* p = in_.at(fold_index(iy, in_.height, border_.fold), fold_index(ix, in_.width, border_.fold));
        for (int64_t c = 0; c < c_; ++c) out[c] = convert_sat<Out>(p[c]);
      } else if (border_.clamp) {
        const In* p = in_.at(clampi(iy, in_.height), clampi(ix, in_.width));
        for (int64_t c = 0; c < c_; ++c) out[c] = convert_sat<Out>(p[c]);
      } else {
        for (int64_t c = 0; c < c_; ++c) out[c] = convert_sat<Out>(fill(c));
      }
    }
  }

  void linear(Out* out, int64_t ops, const float* sx, const float* sy, int64_t n) const {
    switch (c_) {  // the channel loop unrolled for the common counts
      case 1: return linear_c<1>(out, ops, sx, sy, n);
      case 3: return linear_c<3>(out, ops, sx, sy, n);
      case 4: return linear_c<4>(out, ops, sx, sy, n);
      default: return linear_c<0>(out, ops, sx, sy, n);
    }
  }

  void cubic(Out* out, int64_t ops, const float* sx, const float* sy, int64_t n) const {
    const int64_t W = in_.width, H = in_.height;
    for (int64_t x = 0; x < n; ++x, out += ops) {
      float fx = tame_x(sx[x]) - 0.5f, fy = tame_y(sy[x]) - 0.5f;
      int64_t x0 = floor_i(fx) - 1, y0 = floor_i(fy) - 1;
      float wx[4], wy[4];
      cubic_weights(fx - (x0 + 1), wx);
      cubic_weights(fy - (y0 + 1), wy);
      bool in_img = x0 >= 0 && y0 >= 0 && x0 + 3 < W && y0 + 3 < H;
      for (int64_t c = 0; c < c_; ++c) {
        float acc = 0;
        for (int j = 0; j < 4; ++j) {
          float row = 0;
          if (in_img) {
            const In* p = in_.at(y0 + j, x0) + c;
            for (int i = 0; i < 4; ++i) row += wx[i] * static_cast<float>(p[i * in_.pixel_stride]);
          } else {
            for (int i = 0; i < 4; ++i) row += wx[i] * tap(x0 + i, y0 + j, c);
          }
          acc += wy[j] * row;
        }
        out[c] = round_sat<Out>(acc);
      }
    }
  }

 private:
  template <int kC>
  void linear_c(Out* out, int64_t ops, const float* sx, const float* sy, int64_t n) const {
    // Locals, not members: stores through an 8-bit `out` may alias anything, and would make
    // the compiler reload every member after each pixel.
    const int64_t C = kC > 0 ? kC : c_;
    const int64_t W = in_.width, H = in_.height, rs = in_.row_stride, ps = in_.pixel_stride;
    const In* const base = in_.data;
    // Two passes over chunks of the row: first the tap positions and weights (a loop the
    // compiler vectorises), then the fetches.
    constexpr int kChunk = 256;
    int32_t ix[kChunk], iy[kChunk];
    float wx[kChunk], wy[kChunk];
    const float hx = hx_, hy = hy_, lx = lx_, ly = ly_;
    for (int64_t x0c = 0; x0c < n; x0c += kChunk) {
      const int m = static_cast<int>(std::min<int64_t>(kChunk, n - x0c));
      const float* cx = sx + x0c;
      const float* cy = sy + x0c;
      for (int k = 0; k < m; ++k) {
        float fx = cx[k] >= lx ? (cx[k] <= hx ? cx[k] : hx) : lx;  // NaN -> lx
        float fy = cy[k] >= ly ? (cy[k] <= hy ? cy[k] : hy) : ly;
        fx -= 0.5f;
        fy -= 0.5f;
        int32_t i = static_cast<int32_t>(fx), j = static_cast<int32_t>(fy);
        i -= fx < static_cast<float>(i);
        j -= fy < static_cast<float>(j);
        ix[k] = i;
        iy[k] = j;
        wx[k] = fx - static_cast<float>(i);
        wy[k] = fy - static_cast<float>(j);
      }
      for (int k = 0; k < m; ++k, out += ops) {
        const int64_t x0 = ix[k], y0 = iy[k];
        const float qx = wx[k], qy = wy[k], px = 1 - qx, py = 1 - qy;
        if (x0 >= 0 && y0 >= 0 && x0 + 1 < W && y0 + 1 < H) {
          const In* a = base + y0 * rs + x0 * ps;
          const In* b = a + ps;
          const In* cc = a + rs;
          const In* d = cc + ps;
          for (int64_t c = 0; c < C; ++c) {
            float top = static_cast<float>(a[c]) * px + static_cast<float>(b[c]) * qx;
            float bot = static_cast<float>(cc[c]) * px + static_cast<float>(d[c]) * qx;
            out[c] = round_sat<Out>(top * py + bot * qy);
          }
        } else {
          for (int64_t c = 0; c < C; ++c) {
            float top = tap(x0, y0, c) * px + tap(x0 + 1, y0, c) * qx;
            float bot = tap(x0, y0 + 1, c) * px + tap(x0 + 1, y0 + 1, c) * qx;
            out[c] = round_sat<Out>(top * py + bot * qy);
          }
        }
      }
    }
  }

  bool inside(int64_t x, int64_t y) const { return x >= 0 && y >= 0 && x < in_.width && y < in_.height; }
  static int64_t clampi(int64_t v, int64_t n) { return v < 0 ? 0 : v >= n ? n - 1 : v; }
  float tame_x(float v) const { return !(v >= lx_) ? lx_ : v > hx_ ? hx_ : v; }  // NaN -> lo
  float tame_y(float v) const { return !(v >= ly_) ? ly_ : v > hy_ ? hy_ : v; }
  float fill(int64_t c) const { return border_.channel_fill ? border_.channel_fill[c] : border_.fill; }
  float tap(int64_t x, int64_t y, int64_t c) const {
    if (inside(x, y)) return static_cast<float>(in_.at(y, x)[c]);
    if (border_.fold != WarpFold::kNone)
      return static_cast<float>(
          in_.at(fold_index(y, in_.height, border_.fold), fold_index(x, in_.width, border_.fold))[c]);
    if (border_.clamp) return static_cast<float>(in_.at(clampi(y, in_.height), clampi(x, in_.width))[c]);
    return fill(c);
  }

  ImageView<const In> in_;
  WarpBorder border_;
  int64_t c_;
  float lx_ = -4.0f, ly_ = -4.0f, hx_ = 0.0f, hy_ = 0.0f;
};

}  // namespace detail

// Warps `in` into `out` (same number of channels): out(x, y) = in(map(x, y)). An empty input
// (0 rows or columns) fills the output with the fill value (or 0 when clamping).
template <typename Out, typename In>
void warp(const ImageView<Out>& out, const ImageView<const In>& in, const RowMap& map,
          WarpInterp interp, WarpBorder border) {
  if (out.height <= 0 || out.width <= 0 || out.channels <= 0) return;
  if (in.height <= 0 || in.width <= 0) {
    const bool fills = !border.clamp && border.fold == WarpFold::kNone;
    for (int64_t y = 0; y < out.height; ++y)
      for (int64_t x = 0; x < out.width; ++x)
        for (int64_t c = 0; c < out.channels; ++c)
          out.at(y, x)[c] = convert_sat<Out>(
              !fills ? 0.0f : border.channel_fill ? border.channel_fill[c] : border.fill);
    return;
  }
  detail::RowSampler<Out, In> s(in, border);
  std::vector<float> sx(out.width), sy(out.width);
  const float px = static_cast<float>(detail::fold_period(in.width, border.fold));
  const float py = static_cast<float>(detail::fold_period(in.height, border.fold));
  for (int64_t y = 0; y < out.height; ++y) {
    map(y, out.width, sx.data(), sy.data());
    if (border.fold != WarpFold::kNone) {
      // Whole periods off: the taps stay the same, the fraction exact (fmod is exact), and far
      // points stay within reach of the integer conversions.
      for (int64_t x = 0; x < out.width; ++x) {
        sx[x] = std::fmod(sx[x], px);
        sy[x] = std::fmod(sy[x], py);
      }
    }
    Out* row = out.row(y);
    switch (interp) {
      case WarpInterp::kNearest: s.nearest(row, out.pixel_stride, sx.data(), sy.data(), out.width); break;
      case WarpInterp::kLinear: s.linear(row, out.pixel_stride, sx.data(), sy.data(), out.width); break;
      case WarpInterp::kCubic: s.cubic(row, out.pixel_stride, sx.data(), sy.data(), out.width); break;
    }
  }
}

template <typename Out, typename In>
void warp_affine(const ImageView<Out>& out, const ImageView<const In>& in, const AffineMap2D& m,
                 WarpInterp interp, WarpBorder border) {
  warp(out, in, affine_row_map(m), interp, border);
}

// ---------------------------------------------------------------------------------------------
// Volumes (packed DHWC), with the 2-D conventions along a third axis: voxel (i, j, k) covers
// [i, i+1) x [j, j+1) x [k, k+1) in (x, y, z) = (width, height, depth) order, its centre at +0.5;
// nearest takes the voxel containing the point, linear the eight around it, weights from
// (x - 0.5, y - 0.5, z - 0.5), interpolated along x, then y, then z. Points are tamed as in 2-D,
// taps outside read the edge voxel (clamp) or the fill value, and the result is rounded half
// to even and saturated. Only nearest and linear (DALI's 3-D warps have no cubic), no folds.

struct VolumeDims {
  int64_t depth = 0, height = 0, width = 0, channels = 0;
};

// dst(x, y, z) = src(M (x, y, z, 1)) with M the 3x4 matrix m, rows for x, y and z.
struct AffineMap3D {
  double m[12] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0};
};

// The inverse map; false when the matrix is singular (or not finite).
bool invert_affine(const AffineMap3D& a, AffineMap3D* inv);

// DALI's 3-D rotate: the canvas (depth, height, width) that holds the whole volume rotated by
// `angle_deg` about `axis` (x, y, z; any non-zero length), each side's parity matched to the
// input side that contributes most to it.
void rotated_canvas_size_3d(const VolumeDims& in, const double axis[3], double angle_deg,
                            int64_t* out_d, int64_t* out_h, int64_t* out_w);
// The output-to-input map of a rotation by `angle_deg` about `axis` (right-handed in x, y, z)
// that puts the centre of the input at the centre of the output.
AffineMap3D rotation_map_3d(const VolumeDims& in, const VolumeDims& out, const double axis[3],
                            double angle_deg);

template <typename Out, typename In>
void warp_affine_3d(Out* out, const VolumeDims& od, const In* in, const VolumeDims& id,
                    const AffineMap3D& map, WarpInterp interp, const WarpBorder& border) {
  const int64_t C = od.channels;
  if (od.depth <= 0 || od.height <= 0 || od.width <= 0 || C <= 0) return;
  STOKER_ASSERT(interp != WarpInterp::kCubic && border.fold == WarpFold::kNone,
                "warp_affine_3d: nearest or linear, clamp or fill only");
  auto fill = [&](int64_t c) { return border.channel_fill ? border.channel_fill[c] : border.fill; };
  const int64_t D = id.depth, H = id.height, W = id.width;
  if (D <= 0 || H <= 0 || W <= 0) {
    const int64_t n = od.depth * od.height * od.width;
    for (int64_t p = 0; p < n; ++p)
      for (int64_t c = 0; c < C; ++c)
        out[p * C + c] = convert_sat<Out>(border.clamp ? 0.0f : fill(c));
    return;
  }
  const int64_t rs = W * C, ss = H * W * C;  // row and slice strides
  auto clampi = [](int64_t v, int64_t n) { return v < 0 ? 0 : v >= n ? n - 1 : v; };
  // The tap at (x, y, z), channel c, with the border rule.
  auto tap = [&](int64_t x, int64_t y, int64_t z, int64_t c) -> float {
    if (x >= 0 && y >= 0 && z >= 0 && x < W && y < H && z < D)
      return static_cast<float>(in[z * ss + y * rs + x * C + c]);
    if (border.clamp) return static_cast<float>(in[clampi(z, D) * ss + clampi(y, H) * rs + clampi(x, W) * C + c]);
    return fill(c);
  };
  // Points are brought into [-4, n + 4] first: clamped or filled taps are all alike beyond.
  auto tame = [](float v, int64_t n) {
    const float hi = static_cast<float>(n + 4);
    return !(v >= -4.0f) ? -4.0f : v > hi ? hi : v;  // NaN -> low end
  };
  const double* m = map.m;
  std::vector<float> sx(od.width), sy(od.width), sz(od.width);
  for (int64_t z = 0; z < od.depth; ++z) {
    const double zc = z + 0.5;
    for (int64_t y = 0; y < od.height; ++y) {
      const double yc = y + 0.5;
      const double bx = m[1] * yc + m[2] * zc + m[3], by = m[5] * yc + m[6] * zc + m[7],
                   bz = m[9] * yc + m[10] * zc + m[11];
      for (int64_t x = 0; x < od.width; ++x) {
        const double xc = x + 0.5;
        sx[x] = tame(static_cast<float>(m[0] * xc + bx), W);
        sy[x] = tame(static_cast<float>(m[4] * xc + by), H);
        sz[x] = tame(static_cast<float>(m[8] * xc + bz), D);
      }
      Out* o = out + (z * od.height + y) * od.width * C;
      if (interp == WarpInterp::kNearest) {
        for (int64_t x = 0; x < od.width; ++x, o += C) {
          const int64_t ix = detail::floor_i(sx[x]), iy = detail::floor_i(sy[x]), iz = detail::floor_i(sz[x]);
          for (int64_t c = 0; c < C; ++c) o[c] = convert_sat<Out>(tap(ix, iy, iz, c));
        }
        continue;
      }
      for (int64_t x = 0; x < od.width; ++x, o += C) {
        const float fx = sx[x] - 0.5f, fy = sy[x] - 0.5f, fz = sz[x] - 0.5f;
        const int64_t x0 = detail::floor_i(fx), y0 = detail::floor_i(fy), z0 = detail::floor_i(fz);
        const float qx = fx - static_cast<float>(x0), qy = fy - static_cast<float>(y0),
                    qz = fz - static_cast<float>(z0);
        const float px = 1 - qx, py = 1 - qy, pz = 1 - qz;
        const bool inside = x0 >= 0 && y0 >= 0 && z0 >= 0 && x0 + 1 < W && y0 + 1 < H && z0 + 1 < D;
        for (int64_t c = 0; c < C; ++c) {
          float v[8];
          if (inside) {
            const In* a = in + z0 * ss + y0 * rs + x0 * C + c;
            v[0] = static_cast<float>(a[0]);
            v[1] = static_cast<float>(a[C]);
            v[2] = static_cast<float>(a[rs]);
            v[3] = static_cast<float>(a[rs + C]);
            v[4] = static_cast<float>(a[ss]);
            v[5] = static_cast<float>(a[ss + C]);
            v[6] = static_cast<float>(a[ss + rs]);
            v[7] = static_cast<float>(a[ss + rs + C]);
          } else {
            for (int k = 0; k < 8; ++k) v[k] = tap(x0 + (k & 1), y0 + ((k >> 1) & 1), z0 + (k >> 2), c);
          }
          const float r00 = v[0] * px + v[1] * qx, r01 = v[2] * px + v[3] * qx;
          const float r10 = v[4] * px + v[5] * qx, r11 = v[6] * px + v[7] * qx;
          const float s0 = r00 * py + r01 * qy, s1 = r10 * py + r11 * qy;
          o[c] = round_sat<Out>(s0 * pz + s1 * qz);
        }
      }
    }
  }
}

}  // namespace kernels
}  // namespace stoker
