#include "kernels/cpu/filter/morphology.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/cpu/warp/warp.h"  // detail::fold_index: the same folds as the warps' borders

namespace stoker {
namespace kernels {
namespace {

// The source index of index `i` along an axis of `n` pixels; -1 where a constant border reads
// no pixel.
int64_t border_index(int64_t i, int64_t n, FilterBorder b) {
  if (i >= 0 && i < n) return i;
  switch (b) {
    case FilterBorder::kReplicate: return i < 0 ? 0 : n - 1;
    case FilterBorder::kReflect: return detail::fold_index(i, n, WarpFold::kReflect);
    case FilterBorder::kReflect101: return detail::fold_index(i, n, WarpFold::kReflect101);
    case FilterBorder::kWrap: return detail::fold_index(i, n, WarpFold::kWrap);
    case FilterBorder::kConstant: break;
  }
  return -1;
}

// `in` with margins of `top`, `bottom`, `left` and `right` pixels read through the border (or
// set to `fill` with a constant border), into `p` (dense, same channels).
template <typename T>
void pad(std::vector<T>* p, const ImageView<const T>& in, int64_t top, int64_t bottom, int64_t left,
         int64_t right, FilterBorder b, T fill) {
  const int64_t C = in.channels, W = in.width, H = in.height;
  const int64_t pw = W + left + right, ph = H + top + bottom;
  p->resize(static_cast<size_t>(ph * pw * C));
  std::vector<int64_t> xs(static_cast<size_t>(left + right));
  for (int64_t k = 0; k < left; ++k) xs[k] = border_index(k - left, W, b);
  for (int64_t k = 0; k < right; ++k) xs[left + k] = border_index(W + k, W, b);
  for (int64_t py = 0; py < ph; ++py) {
    T* dst = p->data() + py * pw * C;
    const int64_t sy = border_index(py - top, H, b);
    if (sy < 0) {
      std::fill(dst, dst + pw * C, fill);
      continue;
    }
    auto margin = [&](T* d, int64_t sx) {
      if (sx < 0) std::fill(d, d + C, fill);
      else std::memcpy(d, in.at(sy, sx), static_cast<size_t>(C) * sizeof(T));
    };
    for (int64_t k = 0; k < left; ++k) margin(dst + k * C, xs[k]);
    std::memcpy(dst + left * C, in.at(sy, 0), static_cast<size_t>(W * C) * sizeof(T));
    for (int64_t k = 0; k < right; ++k) margin(dst + (left + W + k) * C, xs[left + k]);
  }
}

template <bool kMax, typename T>
inline T pick(T a, T b) {
  if constexpr (kMax) return a < b ? b : a;
  else return b < a ? b : a;
}

// Up to this window length the sliding extreme is a direct loop (k passes the compiler
// vectorises); longer windows take van Herk / Gil-Werman's three comparisons per element.
constexpr int64_t kDirectWindow = 8;

// dst[p * stride + e] = extreme over j < k of src[(p + j) * stride + e], for p < n, e < stride.
template <bool kMax, typename T>
void sliding_extreme(T* dst, const T* src, int64_t n, int64_t stride, int64_t k, std::vector<T>* g,
                     std::vector<T>* h) {
  const int64_t len = n * stride;
  if (k == 1) {
    std::memcpy(dst, src, static_cast<size_t>(len) * sizeof(T));
    return;
  }
  if (k <= kDirectWindow) {
    const T* s1 = src + stride;
    for (int64_t i = 0; i < len; ++i) dst[i] = pick<kMax>(src[i], s1[i]);
    for (int64_t j = 2; j < k; ++j) {
      const T* sj = src + j * stride;
      for (int64_t i = 0; i < len; ++i) dst[i] = pick<kMax>(dst[i], sj[i]);
    }
    return;
  }
  if (stride < 64) {
    // Along a row (a few interleaved channels): extremes of 2, 4, 8 ... positions, each pass a
    // loop the compiler vectorises; the window is two overlapping power-of-two runs.
    int64_t avail = (n + k - 1) * stride;
    g->resize(static_cast<size_t>(avail));
    h->resize(static_cast<size_t>(avail));
    const T* cur = src;
    T* nxt = g->data();
    int64_t w = 1;
    for (; 2 * w <= k; w *= 2) {
      avail -= w * stride;
      const T* __restrict a = cur;
      const T* __restrict b = cur + w * stride;
      T* __restrict d = nxt;
      for (int64_t i = 0; i < avail; ++i) d[i] = pick<kMax>(a[i], b[i]);
      cur = nxt;
      nxt = nxt == g->data() ? h->data() : g->data();
    }
    const T* __restrict a = cur;
    const T* __restrict b = cur + (k - w) * stride;
    T* __restrict d = dst;
    for (int64_t i = 0; i < len; ++i) d[i] = pick<kMax>(a[i], b[i]);
    return;
  }
  // Blocks of k positions: g holds the extreme from the block's start, h to the block's end; a
  // window starting at p covers the end of p's block and the start of the next one.
  const int64_t m = n + k - 1;
  g->resize(static_cast<size_t>(m * stride));
  h->resize(static_cast<size_t>(m * stride));
  T* G = g->data();
  T* Hh = h->data();
  for (int64_t b0 = 0; b0 < m; b0 += k) {
    const int64_t b1 = std::min(b0 + k, m);
    std::memcpy(G + b0 * stride, src + b0 * stride, static_cast<size_t>(stride) * sizeof(T));
    for (int64_t p = b0 + 1; p < b1; ++p) {
      T* gp = G + p * stride;
      const T* gq = gp - stride;
      const T* s = src + p * stride;
      for (int64_t e = 0; e < stride; ++e) gp[e] = pick<kMax>(gq[e], s[e]);
    }
    std::memcpy(Hh + (b1 - 1) * stride, src + (b1 - 1) * stride, static_cast<size_t>(stride) * sizeof(T));
    for (int64_t p = b1 - 2; p >= b0; --p) {
      T* hp = Hh + p * stride;
      const T* hq = hp + stride;
      const T* s = src + p * stride;
      for (int64_t e = 0; e < stride; ++e) hp[e] = pick<kMax>(hq[e], s[e]);
    }
  }
  for (int64_t p = 0; p < n; ++p) {
    T* d = dst + p * stride;
    const T* a = Hh + p * stride;
    const T* b = G + (p + k - 1) * stride;
    for (int64_t e = 0; e < stride; ++e) d[e] = pick<kMax>(a[e], b[e]);
  }
}

// The value outside the image that a constant border gives: one that never wins.
template <typename T>
T neutral(MorphOp op) {
  if constexpr (std::is_floating_point_v<T>)
    return op == MorphOp::kErode ? std::numeric_limits<T>::infinity() : -std::numeric_limits<T>::infinity();
  else
    return op == MorphOp::kErode ? std::numeric_limits<T>::max() : std::numeric_limits<T>::lowest();
}

template <bool kMax, typename T>
void morphology_impl(const ImageView<T>& out, const ImageView<const T>& in, const FilterWindow& w,
                     int64_t iterations, FilterBorder border, T fill) {
  const int64_t H = in.height, W = in.width, C = in.channels;
  const int64_t top = w.anchor_y, left = w.anchor_x;
  const int64_t pw = W + w.width - 1, ph = H + w.height - 1;
  thread_local std::vector<T> padded, rows, g, h;
  ImageView<const T> cur = in;
  for (int64_t it = 0; it < iterations; ++it) {
    pad(&padded, cur, top, w.height - 1 - top, left, w.width - 1 - left, border, fill);
    rows.resize(static_cast<size_t>(ph * W * C));
    for (int64_t r = 0; r < ph; ++r)
      sliding_extreme<kMax>(rows.data() + r * W * C, padded.data() + r * pw * C, W, C, w.width, &g, &h);
    sliding_extreme<kMax>(out.data, rows.data(), H, W * C, w.height, &g, &h);
    if (it + 1 < iterations) {
      // The same filter of an image it leaves unchanged changes nothing more: stop there.
      bool same = true;
      for (int64_t y = 0; y < H && same; ++y)
        same = std::memcmp(out.row(y), padded.data() + ((y + top) * pw + left) * C,
                           static_cast<size_t>(W * C) * sizeof(T)) == 0;
      if (same) break;
    }
    cur = ImageView<const T>(out.data, H, W, C);
  }
}

template <typename T>
inline T med3(T a, T b, T c) {
  return std::max(std::min(a, b), std::min(std::max(a, b), c));
}

template <typename T>
void sort_columns(T* __restrict lo, T* __restrict mid, T* __restrict hi, const T* __restrict a,
                  const T* __restrict b, const T* __restrict c, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    T l1 = std::min(a[i], b[i]), h1 = std::max(a[i], b[i]);
    T t = std::max(l1, c[i]);
    lo[i] = std::min(l1, c[i]);
    mid[i] = std::min(h1, t);
    hi[i] = std::max(h1, t);
  }
}

template <typename T>
void median_of_sorted_columns(T* __restrict o, const T* __restrict L, const T* __restrict M,
                              const T* __restrict U, int64_t C, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    T mx = std::max(L[i], std::max(L[i + C], L[i + 2 * C]));
    T mn = std::min(U[i], std::min(U[i + C], U[i + 2 * C]));
    T md = med3(M[i], M[i + C], M[i + 2 * C]);
    o[i] = med3(mx, md, mn);
  }
}

// 3x3: each column of three sorted once (lo <= mid <= hi), then the median of a window is
// med3(max of its columns' lo, med3 of their mid, min of their hi).
template <typename T>
void median3x3(const ImageView<T>& out, const T* P, int64_t pw) {
  const int64_t W = out.width, C = out.channels, rowlen = pw * C, n = W * C;
  thread_local std::vector<T> lo, mid, hi;
  lo.resize(static_cast<size_t>(rowlen));
  mid.resize(static_cast<size_t>(rowlen));
  hi.resize(static_cast<size_t>(rowlen));
  T* L = lo.data();
  T* M = mid.data();
  T* U = hi.data();
  for (int64_t y = 0; y < out.height; ++y) {
    const T* a = P + y * rowlen;
    const T* b = a + rowlen;
    const T* c = b + rowlen;
    sort_columns(L, M, U, a, b, c, rowlen);
    median_of_sorted_columns(out.row(y), L, M, U, C, n);
  }
}

// The comparators (a, b), a < b, min to a, of Batcher's odd-even merge sort of n wires, pruned to
// those that the middle wire depends on.
const std::vector<std::pair<int, int>>& median_network(int n) {
  thread_local std::vector<std::vector<std::pair<int, int>>> cache;
  if (static_cast<int>(cache.size()) <= n) cache.resize(n + 1);
  std::vector<std::pair<int, int>>& net = cache[n];
  if (!net.empty() || n < 2) return net;
  std::vector<std::pair<int, int>> all;
  for (int p = 1; p < n; p *= 2)
    for (int k = p; k >= 1; k /= 2)
      for (int j = k % p; j <= n - 1 - k; j += 2 * k)
        for (int i = 0; i <= std::min(k - 1, n - j - k - 1); ++i)
          if ((i + j) / (p * 2) == (i + j + k) / (p * 2)) all.emplace_back(i + j, i + j + k);
  std::vector<char> need(static_cast<size_t>(n), 0);
  need[n / 2] = 1;
  for (auto it = all.rbegin(); it != all.rend(); ++it)
    if (need[it->first] || need[it->second]) {
      need[it->first] = need[it->second] = 1;
      net.push_back(*it);
    }
  std::reverse(net.begin(), net.end());
  return net;
}

// One comparator over a stretch (the whole stretch, whatever part of it holds data), written
// with vector types: a plain loop of min and max compiles to a branch per element here.
template <typename T, int64_t kLen>
void compare_exchange(T* a, T* b) {
  typedef T V __attribute__((vector_size(16)));
  constexpr int64_t kLanes = 16 / sizeof(T);
  static_assert(kLen % kLanes == 0, "whole vectors");
  for (int64_t i = 0; i < kLen; i += kLanes) {
    V x, z;
    std::memcpy(&x, a + i, sizeof(V));
    std::memcpy(&z, b + i, sizeof(V));
    const auto lt = x < z;
    const V lo = lt ? x : z, hi = lt ? z : x;
    std::memcpy(a + i, &lo, sizeof(V));
    std::memcpy(b + i, &hi, sizeof(V));
  }
}

// Small windows: the sorting network on whole stretches of a row at once (one array per window
// position, each comparator a vectorised min and max over the stretch).
template <typename T>
void median_network_rows(const ImageView<T>& out, const T* P, int64_t pw, int64_t kw, int64_t kh) {
  const int n = static_cast<int>(kw * kh);
  const auto& net = median_network(n);
  const int64_t C = out.channels, rowlen = pw * C, len = out.width * C;
  constexpr int64_t kChunk = 256;
  thread_local std::vector<T> wires;
  wires.assign(static_cast<size_t>(n * kChunk), T{});
  T* Wr = wires.data();
  for (int64_t y = 0; y < out.height; ++y)
    for (int64_t i0 = 0; i0 < len; i0 += kChunk) {
      const int64_t m = std::min(kChunk, len - i0);
      for (int64_t r = 0; r < kh; ++r)
        for (int64_t j = 0; j < kw; ++j)
          std::memcpy(Wr + (r * kw + j) * kChunk, P + (y + r) * rowlen + j * C + i0, static_cast<size_t>(m) * sizeof(T));
      for (const auto& [a, b] : net) compare_exchange<T, kChunk>(Wr + a * kChunk, Wr + b * kChunk);
      std::memcpy(out.row(y) + i0, Wr + (n / 2) * kChunk, static_cast<size_t>(m) * sizeof(T));
    }
}

// uint8 windows larger than 5x5: one histogram per channel slides along the row (Huang), and the
// median moves from its last position by the counts below it.
void median_histogram(const ImageView<uint8_t>& out, const uint8_t* P, int64_t pw, int64_t kw, int64_t kh) {
  const int64_t W = out.width, C = out.channels, rowlen = pw * C;
  const int64_t rank = kw * kh / 2;
  std::vector<int32_t> hist(static_cast<size_t>(C * 256));
  std::vector<int32_t> med(static_cast<size_t>(C)), below(static_cast<size_t>(C));
  for (int64_t y = 0; y < out.height; ++y) {
    std::fill(hist.begin(), hist.end(), 0);
    for (int64_t r = 0; r < kh; ++r) {
      const uint8_t* row = P + (y + r) * rowlen;
      for (int64_t x = 0; x < kw; ++x)
        for (int64_t c = 0; c < C; ++c) ++hist[c * 256 + row[x * C + c]];
    }
    uint8_t* o = out.row(y);
    for (int64_t c = 0; c < C; ++c) {
      const int32_t* hh = hist.data() + c * 256;
      int32_t m = 0, l = 0;
      while (l + hh[m] <= rank) l += hh[m++];
      med[c] = m;
      below[c] = l;
      o[c] = static_cast<uint8_t>(m);
    }
    for (int64_t x = 1; x < W; ++x) {
      for (int64_t r = 0; r < kh; ++r) {
        const uint8_t* gone = P + (y + r) * rowlen + (x - 1) * C;
        const uint8_t* come = gone + kw * C;
        for (int64_t c = 0; c < C; ++c) {
          --hist[c * 256 + gone[c]];
          below[c] -= gone[c] < med[c];
          ++hist[c * 256 + come[c]];
          below[c] += come[c] < med[c];
        }
      }
      for (int64_t c = 0; c < C; ++c) {
        const int32_t* hh = hist.data() + c * 256;
        int32_t m = med[c], l = below[c];
        while (l > rank) l -= hh[--m];
        while (l + hh[m] <= rank) l += hh[m++];
        med[c] = m;
        below[c] = l;
        o[x * C + c] = static_cast<uint8_t>(m);
      }
    }
  }
}

// NaN sorts last, so that the selection has a strict weak order to work with.
template <typename T>
inline bool less_total(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) return a < b || (b != b && a == a);
  else return a < b;
}

template <typename T>
void median_select(const ImageView<T>& out, const T* P, int64_t pw, int64_t kw, int64_t kh) {
  const int64_t W = out.width, C = out.channels, rowlen = pw * C;
  const int64_t area = kw * kh, rank = area / 2;
  std::vector<T> buf(static_cast<size_t>(area));
  for (int64_t y = 0; y < out.height; ++y) {
    T* o = out.row(y);
    for (int64_t x = 0; x < W; ++x)
      for (int64_t c = 0; c < C; ++c) {
        T* b = buf.data();
        for (int64_t r = 0; r < kh; ++r) {
          const T* p = P + (y + r) * rowlen + x * C + c;
          for (int64_t j = 0; j < kw; ++j) *b++ = p[j * C];
        }
        std::nth_element(buf.begin(), buf.begin() + rank, buf.end(), less_total<T>);
        o[x * C + c] = buf[static_cast<size_t>(rank)];
      }
  }
}

}  // namespace

template <typename T>
void morphology(const ImageView<T>& out, const ImageView<const T>& in, MorphOp op,
                const FilterWindow& window, int64_t iterations, FilterBorder border) {
  if (in.height <= 0 || in.width <= 0 || in.channels <= 0 || iterations <= 0) return;
  if (op == MorphOp::kErode)
    morphology_impl<false>(out, in, window, iterations, border, neutral<T>(op));
  else
    morphology_impl<true>(out, in, window, iterations, border, neutral<T>(op));
}

template <typename T>
void median_blur(const ImageView<T>& out, const ImageView<const T>& in, int64_t width, int64_t height) {
  if (in.height <= 0 || in.width <= 0 || in.channels <= 0) return;
  const int64_t rx = width / 2, ry = height / 2;
  thread_local std::vector<T> padded;
  pad(&padded, in, ry, ry, rx, rx, FilterBorder::kReplicate, T{});
  const int64_t pw = in.width + 2 * rx;
  if (width == 1 && height == 1) {
    for (int64_t y = 0; y < in.height; ++y)
      std::memcpy(out.row(y), in.row(y), static_cast<size_t>(in.width * in.channels) * sizeof(T));
  } else if (width == 3 && height == 3) {
    median3x3(out, padded.data(), pw);
  } else if (width * height <= (std::is_same_v<T, uint8_t> ? 25 : 49)) {
    median_network_rows(out, padded.data(), pw, width, height);
  } else if constexpr (std::is_same_v<T, uint8_t>) {
    median_histogram(out, padded.data(), pw, width, height);
  } else {
    median_select(out, padded.data(), pw, width, height);
  }
}

#define STOKER_MORPHOLOGY_TYPES(T)                                                              \
  template void morphology<T>(const ImageView<T>&, const ImageView<const T>&, MorphOp,          \
                              const FilterWindow&, int64_t, FilterBorder);                      \
  template void median_blur<T>(const ImageView<T>&, const ImageView<const T>&, int64_t, int64_t);
STOKER_MORPHOLOGY_TYPES(uint8_t)
STOKER_MORPHOLOGY_TYPES(int16_t)
STOKER_MORPHOLOGY_TYPES(uint16_t)
STOKER_MORPHOLOGY_TYPES(float)
#undef STOKER_MORPHOLOGY_TYPES

}  // namespace kernels
}  // namespace stoker
