// Separable convolution of dense arrays with up to 3 spatial axes and interleaved channels
// (HW, HWC, DHWC, ...), one 1-D window per axis; the border mirrors without repeating the edge
// (reflect-101: ...c b | a b c ... ). Gaussian windows follow DALI's sizing rules.
//
// The innermost axis goes first (as DALI does) from the input into a float buffer, then each
// outer axis through float, and the last pass rounds (half to even) and saturates into the
// output type: no intermediate rounding for 8-bit data.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/convert.h"
#include "kernels/cpu/warp/round_sat.h"

namespace stoker {
namespace kernels {

// 2 * ceil(3 sigma) + 1
int gaussian_window_size(double sigma);
// OpenCV's rule: radius = (size - 1) / 2, sigma = (radius - 1) * 0.3 + 0.8
double gaussian_sigma_for_window(int size);
// exp(-x^2 / (2 sigma^2)) for x in [-r, r], normalised to sum 1. `size` must be odd.
std::vector<float> gaussian_window(int size, double sigma);

// Index i mirrored into [0, n) without repeating the edge, for any i (any number of bounces).
inline int64_t reflect101(int64_t i, int64_t n) {
  if (n <= 1) return 0;
  int64_t p = 2 * (n - 1);
  i %= p;
  if (i < 0) i += p;
  return i < n ? i : p - i;
}

namespace detail {

template <typename Dst>
inline void store_row(Dst* dst, const float* src, int64_t n) {
  for (int64_t k = 0; k < n; ++k) dst[k] = round_sat<Dst>(src[k]);
}

// Along the innermost spatial axis: `lines` lines of n pixels of c channels each.
template <typename Dst, typename Src>
void convolve_inner(Dst* dst, const Src* src, int64_t lines, int64_t n, int64_t c,
                    const std::vector<float>& w, std::vector<float>& pad, std::vector<float>& acc) {
  const int64_t r = static_cast<int64_t>(w.size() / 2), len = n * c;
  pad.resize((n + 2 * r) * c);
  acc.resize(len);
  for (int64_t l = 0; l < lines; ++l) {
    const Src* s = src + l * len;
    for (int64_t k = 0; k < n + 2 * r; ++k) {
      const Src* p = s + reflect101(k - r, n) * c;
      for (int64_t ch = 0; ch < c; ++ch) pad[k * c + ch] = static_cast<float>(p[ch]);
    }
    // out[x c + ch] = sum_j w[j] pad[(x + j) c + ch]: one contiguous multiply-add per tap.
    std::fill(acc.begin(), acc.end(), 0.0f);
    for (size_t j = 0; j < w.size(); ++j) {
      const float wj = w[j];
      const float* __restrict p = pad.data() + j * c;
      float* __restrict a = acc.data();
      for (int64_t k = 0; k < len; ++k) a[k] += wj * p[k];
    }
    store_row(dst + l * len, acc.data(), len);
  }
}

// Along an outer axis: `outer` blocks of n slices, each slice `slice` contiguous elements.
template <typename Dst, typename Src>
void convolve_outer(Dst* dst, const Src* src, int64_t outer, int64_t n, int64_t slice,
                    const std::vector<float>& w, std::vector<float>& acc) {
  const int64_t r = static_cast<int64_t>(w.size() / 2);
  acc.resize(slice);
  for (int64_t o = 0; o < outer; ++o) {
    const Src* s = src + o * n * slice;
    Dst* d = dst + o * n * slice;
    for (int64_t y = 0; y < n; ++y) {
      std::fill(acc.begin(), acc.end(), 0.0f);
      for (size_t j = 0; j < w.size(); ++j) {
        const float wj = w[j];
        const Src* __restrict p = s + reflect101(y + static_cast<int64_t>(j) - r, n) * slice;
        float* __restrict a = acc.data();
        for (int64_t k = 0; k < slice; ++k) a[k] += wj * static_cast<float>(p[k]);
      }
      store_row(d + y * slice, acc.data(), slice);
    }
  }
}

}  // namespace detail

// out and in: dense arrays of shape spatial + (channels); windows[a] for spatial axis a
// (outermost first), each of odd length. `scratch` is reused between calls.
template <typename Out, typename In>
void separable_convolution(Out* out, const In* in, const std::vector<int64_t>& spatial,
                           int64_t channels, const std::vector<std::vector<float>>& windows,
                           std::vector<float>* scratch) {
  const int nd = static_cast<int>(spatial.size());
  int64_t vol = channels;
  for (int64_t s : spatial) vol *= s;
  if (vol <= 0 || nd == 0) return;
  std::vector<float> pad, acc;
  const int64_t n_in = spatial[nd - 1];
  const int64_t lines = vol / (n_in * channels);
  if (nd == 1) {
    detail::convolve_inner(out, in, lines, n_in, channels, windows[0], pad, acc);
    return;
  }
  scratch->resize(nd > 2 ? 2 * vol : vol);
  float* buf[2] = {scratch->data(), nd > 2 ? scratch->data() + vol : nullptr};
  detail::convolve_inner(buf[0], in, lines, n_in, channels, windows[nd - 1], pad, acc);
  int cur = 0;
  int64_t slice = n_in * channels;
  for (int a = nd - 2; a >= 0; --a) {
    const int64_t n = spatial[a];
    const int64_t outer = vol / (n * slice);
    if (a == 0) {
      detail::convolve_outer(out, buf[cur], outer, n, slice, windows[a], acc);
    } else {
      detail::convolve_outer(buf[1 - cur], buf[cur], outer, n, slice, windows[a], acc);
      cur = 1 - cur;
    }
    slice *= n;
  }
}

}  // namespace kernels
}  // namespace stoker
