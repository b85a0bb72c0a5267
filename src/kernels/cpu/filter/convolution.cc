#include "kernels/cpu/filter/convolution.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "core/cast_value.h"
#include "core/convert.h"
#include "core/float16.h"
#include "kernels/cpu/warp/round_sat.h"

namespace stoker {
namespace kernels {

int64_t filter_border_index(int64_t i, int64_t n, FilterBorder border) {
  if (i >= 0 && i < n) return i;
  switch (border) {
    case FilterBorder::kConstant:
      return -1;
    case FilterBorder::kClamp:
      return i < 0 ? 0 : n - 1;
    case FilterBorder::kWrap: {
      int64_t r = i % n;
      return r < 0 ? r + n : r;
    }
    case FilterBorder::kReflect1001: {
      int64_t p = 2 * n;  // period: abc cba abc ...
      int64_t r = i % p;
      if (r < 0) r += p;
      return r < n ? r : p - 1 - r;
    }
    case FilterBorder::kReflect101:
    default: {
      if (n == 1) return 0;
      int64_t p = 2 * (n - 1);  // period: abc b abc ...
      int64_t r = i % p;
      if (r < 0) r += p;
      return r < n ? r : p - r;
    }
  }
}

std::vector<int64_t> correlate_output_extents(const std::vector<int64_t>& spatial,
                                              const CorrelateArgs& args) {
  std::vector<int64_t> r = spatial;
  if (args.valid)
    for (size_t a = 0; a < r.size(); ++a) r[a] = spatial[a] - args.kernel_shape[a] + 1;
  return r;
}

namespace {

// Half to even, saturated (OpenCV's saturate_cast).
template <typename Out>
inline Out store_even(float v) {
  if constexpr (std::is_same_v<Out, float>) return v;
  else return round_sat<Out>(v);
}

// Half away from zero, saturated (DALI's ConvertSat); NaN gives 0.
template <typename Out>
inline Out store_away(float v) {
  return cast_value<Out>(v);
}

inline void axpy(float* __restrict acc, const float* __restrict x, float w, int64_t n) {
  for (int64_t k = 0; k < n; ++k) acc[k] += w * x[k];
}

// acc += sum over the taps kx of w[kx] * line[kx * C + k]: four taps per sweep over acc, so the
// accumulator is loaded and stored a quarter as often as with one sweep per tap.
inline void accumulate_taps(float* __restrict acc, const float* line, const float* w,
                            const std::vector<int64_t>& taps, int64_t C, int64_t n) {
  size_t t = 0;
  for (; t + 4 <= taps.size(); t += 4) {
    const float w0 = w[taps[t]], w1 = w[taps[t + 1]], w2 = w[taps[t + 2]], w3 = w[taps[t + 3]];
    const float* __restrict x0 = line + taps[t] * C;
    const float* __restrict x1 = line + taps[t + 1] * C;
    const float* __restrict x2 = line + taps[t + 2] * C;
    const float* __restrict x3 = line + taps[t + 3] * C;
    for (int64_t k = 0; k < n; ++k) acc[k] += (w0 * x0[k] + w1 * x1[k]) + (w2 * x2[k] + w3 * x3[k]);
  }
  for (; t < taps.size(); ++t) axpy(acc, line + taps[t] * C, w[taps[t]], n);
}

}  // namespace

template <typename Out, typename In>
void correlate(Out* out, const In* in, const std::vector<int64_t>& spatial, int64_t channels,
               const float* kernel, const CorrelateArgs& args, std::vector<float>* scratch) {
  const int nd = static_cast<int>(spatial.size());
  const int64_t C = channels;
  // Everything as 3-D: missing outer axes have extent 1 and a kernel of extent 1.
  int64_t n[3] = {1, 1, 1}, K[3] = {1, 1, 1}, s[3] = {0, 0, 0}, m[3];
  for (int i = 0; i < nd; ++i) {
    n[3 - nd + i] = spatial[i];
    K[3 - nd + i] = args.kernel_shape[i];
    s[3 - nd + i] = args.valid ? 0 : -args.anchor[i];
  }
  for (int a = 0; a < 3; ++a) {
    m[a] = args.valid ? n[a] - K[a] + 1 : n[a];
    if (m[a] <= 0 || n[a] <= 0) return;
  }
  if (C <= 0) return;
  // Input index (or -1: the fill value) of each position the kernel reaches, per axis.
  std::vector<int64_t> map[3];
  for (int a = 0; a < 3; ++a) {
    map[a].resize(m[a] + K[a] - 1);
    for (int64_t p = 0; p < static_cast<int64_t>(map[a].size()); ++p)
      map[a][p] = filter_border_index(p + s[a], n[a], args.border);
  }
  const int64_t LW = (m[2] + K[2] - 1) * C;  // a widened line
  const int64_t OW = m[2] * C;               // an output line
  const int64_t rows = n[0] * n[1];
  // Widen every input line once when that costs little memory; else widen on demand.
  const bool all_lines = rows * LW <= std::max<int64_t>(4 * n[0] * n[1] * n[2] * C, int64_t{1} << 20);
  const int64_t line_floats = all_lines ? rows * LW : LW;
  scratch->resize(line_floats + LW + OW);
  float* lines = scratch->data();
  float* fill_line = lines + line_floats;
  float* acc = fill_line + LW;
  std::fill(fill_line, fill_line + LW, args.fill);
  const std::vector<int64_t>& xmap = map[2];
  auto widen = [&](float* dst, int64_t z, int64_t y) {
    const In* row = in + (z * n[1] + y) * n[2] * C;
    for (int64_t p = 0; p < m[2] + K[2] - 1; ++p) {
      const int64_t xi = xmap[p];
      float* d = dst + p * C;
      if (xi < 0) {
        for (int64_t c = 0; c < C; ++c) d[c] = args.fill;
      } else {
        const In* q = row + xi * C;
        for (int64_t c = 0; c < C; ++c) d[c] = static_cast<float>(q[c]);
      }
    }
  };
  std::vector<int64_t> taps;
  taps.reserve(K[2]);
  if (all_lines)
    for (int64_t z = 0; z < n[0]; ++z)
      for (int64_t y = 0; y < n[1]; ++y) widen(lines + (z * n[1] + y) * LW, z, y);

  for (int64_t oz = 0; oz < m[0]; ++oz) {
    for (int64_t oy = 0; oy < m[1]; ++oy) {
      std::fill(acc, acc + OW, 0.0f);
      for (int64_t kz = 0; kz < K[0]; ++kz) {
        const int64_t iz = map[0][oz + kz];
        for (int64_t ky = 0; ky < K[1]; ++ky) {
          const int64_t iy = map[1][oy + ky];
          const float* kr = kernel + (kz * K[1] + ky) * K[2];
          bool any = false;
          for (int64_t kx = 0; kx < K[2] && !any; ++kx) any = kr[kx] != 0;
          if (!any) continue;
          const float* line;
          if (iz < 0 || iy < 0) {
            line = fill_line;
          } else if (all_lines) {
            line = lines + (iz * n[1] + iy) * LW;
          } else {
            widen(lines, iz, iy);
            line = lines;
          }
          taps.clear();
          for (int64_t kx = 0; kx < K[2]; ++kx)
            if (kr[kx] != 0) taps.push_back(kx);
          accumulate_taps(acc, line, kr, taps, C, OW);
        }
      }
      Out* o = out + (oz * m[1] + oy) * OW;
      for (int64_t k = 0; k < OW; ++k) o[k] = store_even<Out>(acc[k]);
    }
  }
}

namespace {

// dst (+)= f * (src correlated with w along axis a), reflect-101; src and dst dense, `vol`
// elements, extents `spatial` + (C).
void separable_pass(float* dst, const float* src, const std::vector<int64_t>& spatial, int64_t C,
                    int a, const std::vector<float>& w, float f, bool accumulate,
                    std::vector<float>& pad) {
  const int nd = static_cast<int>(spatial.size());
  int64_t inner = C;
  for (int k = a + 1; k < nd; ++k) inner *= spatial[k];
  const int64_t n = spatial[a];
  int64_t outer = 1;
  for (int k = 0; k < a; ++k) outer *= spatial[k];
  const int64_t r = static_cast<int64_t>(w.size() / 2);
  const int64_t taps = static_cast<int64_t>(w.size());
  if (a == nd - 1) {
    // Lines of n pixels of C channels: widen each with its border, then one multiply-add per tap.
    const int64_t len = n * C;
    pad.resize((n + 2 * r) * C);
    for (int64_t l = 0; l < outer; ++l) {
      const float* sl = src + l * len;
      for (int64_t p = 0; p < n + 2 * r; ++p) {
        const float* q = sl + filter_border_index(p - r, n, FilterBorder::kReflect101) * C;
        for (int64_t c = 0; c < C; ++c) pad[p * C + c] = q[c];
      }
      float* dl = dst + l * len;
      if (!accumulate) std::fill(dl, dl + len, 0.0f);
      for (int64_t j = 0; j < taps; ++j) axpy(dl, pad.data() + j * C, f * w[j], len);
    }
  } else {
    for (int64_t o = 0; o < outer; ++o) {
      const float* sb = src + o * n * inner;
      for (int64_t y = 0; y < n; ++y) {
        float* dl = dst + (o * n + y) * inner;
        if (!accumulate) std::fill(dl, dl + inner, 0.0f);
        for (int64_t j = 0; j < taps; ++j)
          axpy(dl, sb + filter_border_index(y + j - r, n, FilterBorder::kReflect101) * inner, f * w[j],
               inner);
      }
    }
  }
}

}  // namespace

template <typename Out, typename In>
void separable_sum(Out* out, const In* in, const std::vector<int64_t>& spatial, int64_t channels,
                   const std::vector<SeparableTerm>& terms, std::vector<float>* scratch) {
  const int nd = static_cast<int>(spatial.size());
  int64_t vol = channels;
  for (int64_t e : spatial) vol *= e;
  if (vol <= 0) return;
  constexpr bool float_in = std::is_same_v<In, float>;
  scratch->resize((float_in ? 3 : 4) * vol);
  float* acc = scratch->data();
  float* tmp[2] = {acc + vol, acc + 2 * vol};
  const float* src;
  if constexpr (float_in) {
    src = in;
  } else {
    float* s = acc + 3 * vol;
    for (int64_t k = 0; k < vol; ++k) s[k] = static_cast<float>(in[k]);
    src = s;
  }
  std::fill(acc, acc + vol, 0.0f);
  std::vector<float> pad;
  for (const SeparableTerm& t : terms) {
    float f = t.scale;
    std::vector<int> axes;  // the axes with a window wider than 1, innermost first
    for (int a = nd - 1; a >= 0; --a) {
      if (t.windows[a].size() == 1) f *= t.windows[a][0];
      else axes.push_back(a);
    }
    if (axes.empty()) {
      axpy(acc, src, f, vol);
      continue;
    }
    const float* cur = src;
    for (size_t i = 0; i < axes.size(); ++i) {
      const bool last = i + 1 == axes.size();
      float* dst = last ? acc : tmp[i % 2];
      separable_pass(dst, cur, spatial, channels, axes[i], t.windows[axes[i]], last ? f : 1.0f, last,
                     pad);
      cur = dst;
    }
  }
  for (int64_t k = 0; k < vol; ++k) out[k] = store_away<Out>(acc[k]);
}

std::vector<float> binomial_window(int size) {
  std::vector<double> w(1, 1.0);
  for (int k = 1; k < size; ++k) {
    std::vector<double> next(k + 1, 0.0);
    for (int j = 0; j <= k; ++j) next[j] = (j < k ? w[j] : 0.0) + (j > 0 ? w[j - 1] : 0.0);
    w.swap(next);
  }
  return std::vector<float>(w.begin(), w.end());
}

std::vector<float> second_derivative_window(int size) {
  std::vector<float> b = binomial_window(size - 2);
  std::vector<double> d(size, 0.0);
  const double second[3] = {1, -2, 1};
  for (size_t i = 0; i < b.size(); ++i)
    for (int j = 0; j < 3; ++j) d[i + j] += b[i] * second[j];
  return std::vector<float>(d.begin(), d.end());
}

#define STOKER_CORRELATE(In)                                                                        \
  template void correlate<In, In>(In*, const In*, const std::vector<int64_t>&, int64_t, const float*, \
                                  const CorrelateArgs&, std::vector<float>*);
#define STOKER_CORRELATE_F(In)                                                                         \
  template void correlate<float, In>(float*, const In*, const std::vector<int64_t>&, int64_t,          \
                                     const float*, const CorrelateArgs&, std::vector<float>*);
#define STOKER_SEPARABLE(In)                                                                         \
  template void separable_sum<In, In>(In*, const In*, const std::vector<int64_t>&, int64_t,          \
                                      const std::vector<SeparableTerm>&, std::vector<float>*);
#define STOKER_SEPARABLE_F(In)                                                                       \
  template void separable_sum<float, In>(float*, const In*, const std::vector<int64_t>&, int64_t,    \
                                         const std::vector<SeparableTerm>&, std::vector<float>*);

STOKER_CORRELATE(uint8_t)
STOKER_CORRELATE(int8_t)
STOKER_CORRELATE(uint16_t)
STOKER_CORRELATE(int16_t)
STOKER_CORRELATE(float16)
STOKER_CORRELATE(float)
STOKER_CORRELATE_F(uint8_t)
STOKER_CORRELATE_F(int8_t)
STOKER_CORRELATE_F(uint16_t)
STOKER_CORRELATE_F(int16_t)
STOKER_CORRELATE_F(float16)

STOKER_SEPARABLE(uint8_t)
STOKER_SEPARABLE(int8_t)
STOKER_SEPARABLE(uint16_t)
STOKER_SEPARABLE(int16_t)
STOKER_SEPARABLE(uint32_t)
STOKER_SEPARABLE(int32_t)
STOKER_SEPARABLE(int64_t)
STOKER_SEPARABLE(float16)
STOKER_SEPARABLE(float)
STOKER_SEPARABLE_F(uint8_t)
STOKER_SEPARABLE_F(int8_t)
STOKER_SEPARABLE_F(uint16_t)
STOKER_SEPARABLE_F(int16_t)
STOKER_SEPARABLE_F(uint32_t)
STOKER_SEPARABLE_F(int32_t)
STOKER_SEPARABLE_F(int64_t)
STOKER_SEPARABLE_F(float16)

#undef STOKER_CORRELATE
#undef STOKER_CORRELATE_F
#undef STOKER_SEPARABLE
#undef STOKER_SEPARABLE_F

}  // namespace kernels
}  // namespace stoker
