#include "kernels/cpu/imgproc/resample.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "core/error.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace stoker {
namespace kernels {

ResampleParams ResampleParams::pil(ResampleFilter filter) {
  ResampleParams p;
  p.min_filter = p.mag_filter = filter;
  p.antialias = true;
  p.border = ResampleBorder::kRenormalize;
  p.nearest = NearestMode::kPil;
  p.cubic_a = -0.5;
  p.pil_rounding = true;
  return p;
}

ResampleParams ResampleParams::opencv(ResampleFilter filter) {
  ResampleParams p;
  p.min_filter = p.mag_filter = filter;
  p.antialias = false;
  p.border = ResampleBorder::kClamp;
  p.nearest = NearestMode::kCorner;
  p.cubic_a = -0.75;
  return p;
}

namespace {

constexpr double kPi = 3.14159265358979323846;

// Four floats in one SSE register, through GCC/Clang vector extensions: portable and enough to
// make the horizontal pass, which gathers, run one tap of a whole RGB(A) pixel per operation.
typedef float f4 __attribute__((vector_size(16)));

// The inner loops get an AVX2 build beside the baseline SSE2 one, picked at load time (GCC's
// function multiversioning), so the library still runs on any x86-64. AVX2 without FMA: fused
// multiply-adds would round differently and results would depend on the machine.
#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && !defined(__clang__)
#define STOKER_MULTIVERSION __attribute__((target_clones("avx2", "default")))
#else
#define STOKER_MULTIVERSION
#endif

// ---------------------------------------------------------------------------------------------
// Filters

double filter_radius(ResampleFilter f) {
  switch (f) {
    case ResampleFilter::kNearest: return 0.5;
    case ResampleFilter::kLinear: return 1;
    case ResampleFilter::kCubic: return 2;
    case ResampleFilter::kLanczos3: return 3;
    case ResampleFilter::kGaussian: return 1;
    case ResampleFilter::kTriangular: return 1;
  }
  return 1;
}

double sinc(double x) {
  if (x == 0) return 1;
  x *= kPi;
  return std::sin(x) / x;
}

double filter_value(ResampleFilter f, double x, double cubic_a) {
  x = std::fabs(x);
  switch (f) {
    case ResampleFilter::kLinear:
    case ResampleFilter::kTriangular:
      return x < 1 ? 1 - x : 0;
    case ResampleFilter::kCubic: {
      const double a = cubic_a;
      if (x < 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
      if (x < 2) return (((x - 5) * x + 8) * x - 4) * a;
      return 0;
    }
    case ResampleFilter::kLanczos3:
      return x < 3 ? sinc(x) * sinc(x / 3) : 0;
    case ResampleFilter::kGaussian:
      return x < 1 ? std::exp(-4 * x * x) : 0;
    case ResampleFilter::kNearest:
      return x <= 0.5 ? 1 : 0;  // not used: nearest has its own path
  }
  return 0;
}

// ---------------------------------------------------------------------------------------------
// One axis: which filter, how wide, and a bound on the taps and on the source range it reads.

struct AxisSpec {
  int64_t in = 0, out = 0;
  double r0 = 0, r1 = 0;     // source window; r1 < r0 flips
  ResampleFilter filter = ResampleFilter::kLinear;
  double filter_scale = 1;   // >= 1: how much the filter is widened
  double support = 1;        // radius * filter_scale, in source pixels
  int raw_taps = 1;          // bound on source pixels one output pixel touches
  int64_t lo = 0, hi = 0;    // bound on the source range read: [lo, hi)
};

AxisSpec make_axis(int64_t in, int64_t out, double r0, double r1, const ResampleParams& p) {
  AxisSpec a;
  a.in = in;
  a.out = out;
  a.r0 = r0;
  a.r1 = r1;
  const double extent = std::fabs(r1 - r0);
  const bool shrinks = static_cast<double>(out) < extent;
  a.filter = shrinks ? p.min_filter : p.mag_filter;
  const double scale = extent / static_cast<double>(out);
  bool widen = false;
  switch (a.filter) {
    case ResampleFilter::kNearest: widen = false; break;
    case ResampleFilter::kGaussian:
    case ResampleFilter::kTriangular: widen = true; break;
    default: widen = p.antialias; break;
  }
  a.filter_scale = widen ? std::max(scale, 1.0) : 1.0;
  a.support = filter_radius(a.filter) * a.filter_scale;
  if (a.filter == ResampleFilter::kNearest) {
    a.raw_taps = 1;
  } else {
    // Taps j with |j + 0.5 - c| < support, from floor(c - support - 0.5) to
    // ceil(c + support - 0.5): fewer than 2 * support + 3 of them.
    double t = std::ceil(2 * a.support) + 3;
    a.raw_taps = static_cast<int>(std::min<double>(t, static_cast<double>(in)));
  }
  double lo = std::floor(std::min(r0, r1) - a.support - 2);
  double hi = std::ceil(std::max(r0, r1) + a.support + 2);
  lo = std::min(std::max(lo, 0.0), static_cast<double>(in - 1));
  hi = std::min(std::max(hi, lo + 1), static_cast<double>(in));
  a.lo = static_cast<int64_t>(lo);
  a.hi = static_cast<int64_t>(hi);
  return a;
}

// The weight table of one axis, in scratch memory. Output pixel o reads source pixels
// start[o] .. start[o] + taps - 1 with weights w[o * taps + k]; all starts and windows lie in
// [used_lo, used_hi).
struct AxisTable {
  int32_t* start = nullptr;
  int32_t* count = nullptr;  // only while building
  float* w = nullptr;
  f4* wv = nullptr;  // the weights again, each in all four lanes (horizontal axis only)
  int taps = 0;
  int64_t used_lo = 0, used_hi = 0;
};

constexpr int64_t kRowPad = 4;  // floats after a row buffer that load4 may touch

size_t align_up(size_t n) { return (n + 63) & ~size_t(63); }

size_t table_bytes(const AxisSpec& a, bool broadcast) {
  return align_up(a.out * sizeof(int32_t)) * 2 + align_up(a.out * a.raw_taps * sizeof(float)) +
         align_up(a.raw_taps * sizeof(double)) +
         (broadcast ? align_up(a.out * a.raw_taps * sizeof(f4)) : 0);
}

// Bump allocator over the caller's scratch.
struct Arena {
  char* p;
  char* end;
  template <typename T>
  T* take(size_t n) {
    char* q = reinterpret_cast<char*>(align_up(reinterpret_cast<uintptr_t>(p)));
    size_t bytes = n * sizeof(T);
    STOKER_ASSERT(q + bytes <= end, "resample scratch smaller than resample_scratch_bytes()");
    p = q + bytes;
    return reinterpret_cast<T*>(q);
  }
};

AxisTable build_table(const AxisSpec& a, const ResampleParams& p, bool broadcast, Arena& arena) {
  AxisTable t;
  t.start = arena.take<int32_t>(a.out);
  t.count = arena.take<int32_t>(a.out);
  t.w = arena.take<float>(a.out * a.raw_taps);
  double* tmp = arena.take<double>(a.raw_taps);
  const int64_t in = a.in;
  const int R = a.raw_taps;
  const double scale = (a.r1 - a.r0) / static_cast<double>(a.out);  // signed
  int64_t used_lo = in, used_hi = 0;
  int max_count = 1;

  if (a.filter == ResampleFilter::kNearest) {
    // OpenCV computes the step as 1 / (out / in); keep its exact double so floor() agrees on
    // the samples that land on pixel edges.
    const double corner_step = 1.0 / (static_cast<double>(a.out) / (a.r1 - a.r0));
    double pil_x = a.r0 + scale * 0.5;
    for (int64_t o = 0; o < a.out; o++) {
      double x;
      switch (p.nearest) {
        case NearestMode::kCorner: x = a.r0 + static_cast<double>(o) * corner_step; break;
        case NearestMode::kPil: x = pil_x; pil_x += scale; break;
        default: x = a.r0 + (static_cast<double>(o) + 0.5) * scale; break;
      }
      double f = std::floor(x);
      int64_t j = f < 0 ? 0 : f >= static_cast<double>(in) ? in - 1 : static_cast<int64_t>(f);
      t.start[o] = static_cast<int32_t>(j);
      t.count[o] = 1;
      t.w[o * R] = 1.0f;
      used_lo = std::min(used_lo, j);
      used_hi = std::max(used_hi, j + 1);
    }
  } else {
    const double inv_fs = 1.0 / a.filter_scale;
    for (int64_t o = 0; o < a.out; o++) {
      const double c = a.r0 + (static_cast<double>(o) + 0.5) * scale;
      // Source pixels whose centres lie within the support: j + 0.5 in (c - s, c + s).
      int64_t j0 = static_cast<int64_t>(std::floor(c - a.support - 0.5));
      int64_t j1 = static_cast<int64_t>(std::ceil(c + a.support - 0.5));  // inclusive
      // Clamped indices of the window span at most min(j1 - j0 + 1, in) pixels from base.
      int64_t base = std::min(std::max(j0, int64_t(0)), in - 1);
      int64_t top = std::min(std::max(j1, int64_t(0)), in - 1);
      int n = static_cast<int>(top - base + 1);
      STOKER_ASSERT(n <= R, "resample tap bound too small");
      std::fill(tmp, tmp + n, 0.0);
      double inside = 0, total = 0;
      for (int64_t j = j0; j <= j1; j++) {
        double w = filter_value(a.filter, (static_cast<double>(j) + 0.5 - c) * inv_fs, p.cubic_a);
        total += w;
        if (j >= 0 && j < in) inside += w;
      }
      const bool renorm = p.border == ResampleBorder::kRenormalize && std::fabs(inside) > 1e-9;
      const double norm = renorm ? inside : total;
      if (std::fabs(norm) > 1e-12) {
        for (int64_t j = j0; j <= j1; j++) {
          if (renorm && (j < 0 || j >= in)) continue;
          double w = filter_value(a.filter, (static_cast<double>(j) + 0.5 - c) * inv_fs, p.cubic_a);
          int64_t jc = std::min(std::max(j, int64_t(0)), in - 1);
          tmp[jc - base] += w / norm;
        }
      } else {  // nothing to weigh (cannot happen for these filters): take the nearest pixel
        double f = std::floor(c);
        int64_t jc = f < 0 ? 0 : f >= static_cast<double>(in) ? in - 1 : static_cast<int64_t>(f);
        tmp[jc - base] = 1;
      }
      // Trim exact zeros at both ends: interpolation at a pixel centre becomes one tap.
      int first = 0, last = n - 1;
      while (first < last && tmp[first] == 0) first++;
      while (last > first && tmp[last] == 0) last--;
      int cnt = last - first + 1;
      t.start[o] = static_cast<int32_t>(base + first);
      t.count[o] = cnt;
      float* w = t.w + o * R;
      for (int k = 0; k < cnt; k++) w[k] = static_cast<float>(tmp[first + k]);
      used_lo = std::min(used_lo, base + first);
      used_hi = std::max(used_hi, base + first + cnt);
      max_count = std::max(max_count, cnt);
    }
  }

  // Make every window `taps` long, inside [used_lo, used_hi), packed at stride `taps`.
  const int T = max_count;
  STOKER_ASSERT(used_hi - used_lo >= T, "resample window bookkeeping");
  float local[64];
  std::vector<float> big;
  float* buf = local;
  if (T > 64) {
    big.resize(T);
    buf = big.data();
  }
  for (int64_t o = 0; o < a.out; o++) {
    int cnt = t.count[o];
    int64_t s = std::min<int64_t>(t.start[o], used_hi - T);
    int shift = static_cast<int>(t.start[o] - s);
    std::memcpy(buf, t.w + o * R, cnt * sizeof(float));
    float* dst = t.w + o * T;
    std::fill(dst, dst + T, 0.0f);
    std::memcpy(dst + shift, buf, cnt * sizeof(float));
    t.start[o] = static_cast<int32_t>(s);
  }
  if (broadcast) {
    t.wv = arena.take<f4>(a.out * T);
    for (int64_t i = 0; i < a.out * T; i++) t.wv[i] = f4{t.w[i], t.w[i], t.w[i], t.w[i]};
  }
  t.taps = T;
  t.used_lo = used_lo;
  t.used_hi = used_hi;
  return t;
}

// ---------------------------------------------------------------------------------------------
// Plan: both axes, the pass order and the scratch layout; a function of shapes and params only.

struct Plan {
  AxisSpec y, x;
  int64_t channels = 0;
  bool vertical_first = false;
  size_t row_floats = 0;   // one packed float row of the used columns, padded
  size_t row2_floats = 0;  // one packed float row of the output, padded
  size_t tmp_floats = 0;   // the intermediate image of the horizontal-first order
  size_t bytes = 0;
};

Plan make_plan(int64_t out_h, int64_t out_w, int64_t in_h, int64_t in_w, int64_t channels,
               const ResampleParams& p) {
  Plan plan;
  double y0 = 0, x0 = 0, y1 = static_cast<double>(in_h), x1 = static_cast<double>(in_w);
  if (p.roi) {
    const ResampleRoi& r = *p.roi;
    // Bounded so that positions stay exact enough in double and indices fit in int32.
    auto ok = [](double v) { return std::isfinite(v) && std::fabs(v) < 1e9; };
    if (!ok(r.y0) || !ok(r.x0) || !ok(r.y1) || !ok(r.x1) || r.y0 == r.y1 || r.x0 == r.x1)
      fail(ErrorKind::kInvalidArgument,
           "resample: the source window (y0, x0, y1, x1) = (" + std::to_string(r.y0) + ", " +
               std::to_string(r.x0) + ", " + std::to_string(r.y1) + ", " + std::to_string(r.x1) +
               ") must be finite, within 1e9 pixels and non-empty in both axes");
    y0 = r.y0;
    x0 = r.x0;
    y1 = r.y1;
    x1 = r.x1;
  }
  plan.y = make_axis(in_h, out_h, y0, y1, p);
  plan.x = make_axis(in_w, out_w, x0, x1, p);
  plan.channels = channels;
  // Work estimate: the vertical pass streams whole rows, four values per SSE operation; the
  // horizontal one gathers, one pixel (up to four channels) per operation, and counts double.
  const double C = static_cast<double>(channels);
  const double ty = std::min<double>(2 * plan.y.support + 1, plan.y.raw_taps);
  const double tx = std::min<double>(2 * plan.x.support + 1, plan.x.raw_taps);
  const double rows = static_cast<double>(plan.y.hi - plan.y.lo);
  const double cols = static_cast<double>(plan.x.hi - plan.x.lo);
  const double h_ops = (channels == 1 ? 1.0 : std::ceil(C / 4)) * tx * 2;  // per output pixel
  const double v_ops = C * ty / 4;                                           // per pixel
  const double hv = rows * (cols * C / 4 + out_w * h_ops) + double(out_h) * out_w * v_ops;
  const double vh = double(out_h) * (cols * v_ops + out_w * h_ops);
  plan.vertical_first = !p.pil_rounding && vh < hv;
  plan.row_floats = static_cast<size_t>(cols * C) + kRowPad;
  plan.row2_floats = static_cast<size_t>(out_w * C) + kRowPad;
  plan.tmp_floats = plan.vertical_first ? 0 : static_cast<size_t>(rows * out_w * C) + kRowPad;
  plan.bytes = 64 + table_bytes(plan.y, false) + table_bytes(plan.x, true) +
               align_up(plan.row_floats * sizeof(float)) +
               align_up(plan.row2_floats * sizeof(float)) +
               align_up(plan.tmp_floats * sizeof(float)) + 64;
  return plan;
}

// ---------------------------------------------------------------------------------------------
// Conversions

template <typename T>
inline float load(T v) { return static_cast<float>(v); }

// Float to the output type: integers round half up (PIL's and OpenCV's resize round that way,
// unlike convert_sat's half-to-even) and saturate; NaN becomes the low end, never UB.
template <typename D>
inline D store(float v);
template <>
inline float store<float>(float v) { return v; }
template <>
inline uint8_t store<uint8_t>(float v) {
  v += 0.5f;
  v = v > 0.0f ? v : 0.0f;
  v = v < 255.0f ? v : 255.0f;
  return static_cast<uint8_t>(static_cast<int>(v));
}
template <>
inline uint16_t store<uint16_t>(float v) {
  v += 0.5f;
  v = v > 0.0f ? v : 0.0f;
  v = v < 65535.0f ? v : 65535.0f;
  return static_cast<uint16_t>(static_cast<int>(v));
}
template <>
inline int16_t store<int16_t>(float v) {
  // Shifted to non-negative so that truncation rounds half up, like the unsigned types.
  v += 32768.5f;
  v = v > 0.0f ? v : 0.0f;
  v = v < 65535.0f ? v : 65535.0f;
  return static_cast<int16_t>(static_cast<int>(v) - 32768);
}

// n floats to packed D, rounded and saturated.
template <typename D>
STOKER_MULTIVERSION
void store_packed(D* d, const float* v, int64_t n) {
  int64_t i = 0;
#if defined(__SSE2__)
  if constexpr (std::is_same<D, uint8_t>::value) {
    // Compilers vectorise the scalar loop poorly (SSE2 has no unsigned 32->16 pack); the values
    // are clamped first, so the signed packs cannot saturate wrongly.
    const __m128 half = _mm_set1_ps(0.5f), lo = _mm_setzero_ps(), hi = _mm_set1_ps(255.0f);
    auto cvt = [&](const float* p) {
      __m128 x = _mm_min_ps(_mm_max_ps(_mm_add_ps(_mm_loadu_ps(p), half), lo), hi);
      return _mm_cvttps_epi32(x);
    };
    for (; i + 16 <= n; i += 16) {
      __m128i a = _mm_packs_epi32(cvt(v + i), cvt(v + i + 4));
      __m128i b = _mm_packs_epi32(cvt(v + i + 8), cvt(v + i + 12));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i), _mm_packus_epi16(a, b));
    }
  }
#endif
  for (; i < n; i++) d[i] = store<D>(v[i]);
}

// Writes n interleaved values (pixel-major, `C` per pixel) to dst, whose pixels are `ps` apart.
template <typename D>
void store_span(D* dst, int64_t ps, int64_t C, int64_t first, const float* v, int64_t n) {
  if (ps == C) {
    store_packed(dst + first, v, n);
  } else {
    for (int64_t i = 0; i < n; i++) {
      int64_t e = first + i;
      dst[(e / C) * ps + e % C] = store<D>(v[i]);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Passes

inline f4 load4(const float* p) {
  f4 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store4(float* p, f4 v) { std::memcpy(p, &v, sizeof v); }

// Source pixels [0, npix) of a row, `sps` apart, to packed floats, padded with zeros.
template <typename S>
STOKER_MULTIVERSION
void row_to_float(float* dst, const S* src, int64_t sps, int64_t npix, int64_t C) {
  if (sps == C) {
    const int64_t n = npix * C;
    for (int64_t i = 0; i < n; i++) dst[i] = load(src[i]);
  } else {
    for (int64_t x = 0; x < npix; x++)
      for (int64_t c = 0; c < C; c++) dst[x * C + c] = load(src[x * sps + c]);
  }
  for (int64_t i = 0; i < kRowPad; i++) dst[npix * C + i] = 0;
}

// Horizontal pass over one packed float row (padded by kRowPad) whose first pixel is source
// column `src_first`, into a packed float row (also padded: stores are whole vectors, and the
// lanes past a pixel's channels are overwritten by the next pixel):
// out pixel o = sum_k w[o*T + k] * src[start[o] - src_first + k].
// kC, kT: channels and taps when known at compile time (0: at run time).
template <int kC, int kT>
STOKER_MULTIVERSION
void h_row(float* dst, const float* src, int64_t src_first, const AxisTable& t, int64_t out_w,
           int64_t C_rt) {
  const int64_t C = kC > 0 ? kC : C_rt;
  const int T = kT > 0 ? kT : t.taps;
  int64_t o = 0;
  if constexpr (kC >= 2 && kC <= 4) {
    // Four output pixels at a time: four independent add chains hide the FP add latency.
    for (; o + 4 <= out_w; o += 4) {
      const f4* w = t.wv + o * T;
      const float* s0 = src + (t.start[o] - src_first) * C;
      const float* s1 = src + (t.start[o + 1] - src_first) * C;
      const float* s2 = src + (t.start[o + 2] - src_first) * C;
      const float* s3 = src + (t.start[o + 3] - src_first) * C;
      f4 a0 = {0, 0, 0, 0}, a1 = a0, a2 = a0, a3 = a0;
      for (int k = 0; k < T; k++) {
        a0 += w[k] * load4(s0 + k * C);
        a1 += w[T + k] * load4(s1 + k * C);
        a2 += w[2 * T + k] * load4(s2 + k * C);
        a3 += w[3 * T + k] * load4(s3 + k * C);
      }
      float* d = dst + o * C;
      store4(d, a0);
      store4(d + C, a1);
      store4(d + 2 * C, a2);
      store4(d + 3 * C, a3);
    }
  }
  for (; o < out_w; o++) {
    const float* w = t.w + o * T;
    const f4* wv = t.wv + o * T;
    const float* s = src + (t.start[o] - src_first) * C;
    float* d = dst + o * C;
    if constexpr (kC == 1) {
      float acc = 0;
      for (int k = 0; k < T; k++) acc += w[k] * s[k];
      d[0] = acc;
    } else {
      for (int64_t c0 = 0; c0 < C; c0 += 4) {
        f4 acc = {0, 0, 0, 0};
        for (int k = 0; k < T; k++) acc += wv[k] * load4(s + k * C + c0);
        store4(d + c0, acc);
      }
    }
  }
}

template <int kC>
void h_row_taps(float* dst, const float* src, int64_t src_first, const AxisTable& t,
                int64_t out_w, int64_t C) {
  switch (t.taps) {  // unrolled for the common tap counts (shrinking by up to ~3.5x linearly)
    case 1: return h_row<kC, 1>(dst, src, src_first, t, out_w, C);
    case 2: return h_row<kC, 2>(dst, src, src_first, t, out_w, C);
    case 3: return h_row<kC, 3>(dst, src, src_first, t, out_w, C);
    case 4: return h_row<kC, 4>(dst, src, src_first, t, out_w, C);
    case 5: return h_row<kC, 5>(dst, src, src_first, t, out_w, C);
    case 6: return h_row<kC, 6>(dst, src, src_first, t, out_w, C);
    case 7: return h_row<kC, 7>(dst, src, src_first, t, out_w, C);
    case 8: return h_row<kC, 8>(dst, src, src_first, t, out_w, C);
    default: return h_row<kC, 0>(dst, src, src_first, t, out_w, C);
  }
}

void h_row_any(float* dst, const float* src, int64_t src_first, const AxisTable& t,
               int64_t out_w, int64_t C) {
  switch (C) {
    case 1: return h_row<1, 0>(dst, src, src_first, t, out_w, C);
    case 2: return h_row<2, 0>(dst, src, src_first, t, out_w, C);
    case 3: return h_row_taps<3>(dst, src, src_first, t, out_w, C);
    case 4: return h_row_taps<4>(dst, src, src_first, t, out_w, C);
    default: return h_row<0, 0>(dst, src, src_first, t, out_w, C);
  }
}

bool is_identity(const AxisTable& t, int64_t out) {
  if (t.taps != 1) return false;
  for (int64_t o = 0; o < out; o++)
    if (t.start[o] != o || t.w[o] != 1.0f) return false;
  return true;
}

// Vertical: one output row from T source rows `row_stride` apart, each `npix` pixels of C
// values with pixels `sps` apart. Blocked so the accumulator stays in L1.
template <typename S, typename D>
STOKER_MULTIVERSION
void v_row(D* dst, int64_t dps, const S* src, int64_t row_stride, int64_t sps, const float* w,
           int T, int64_t npix, int64_t C) {
  constexpr int64_t kBlock = 2048;
  alignas(64) float acc[kBlock];
  const int64_t n = npix * C;
  if (sps == C) {
    for (int64_t b = 0; b < n; b += kBlock) {
      const int64_t m = std::min(kBlock, n - b);
      const S* r0 = src + b;
      const float w0 = w[0];
      for (int64_t i = 0; i < m; i++) acc[i] = w0 * load(r0[i]);
      int k = 1;
      for (; k + 1 < T; k += 2) {
        const S* ra = src + k * row_stride + b;
        const S* rb = ra + row_stride;
        const float wa = w[k], wb = w[k + 1];
        for (int64_t i = 0; i < m; i++) acc[i] += wa * load(ra[i]) + wb * load(rb[i]);
      }
      if (k < T) {
        const S* ra = src + k * row_stride + b;
        const float wa = w[k];
        for (int64_t i = 0; i < m; i++) acc[i] += wa * load(ra[i]);
      }
      store_span(dst, dps, C, b, acc, m);
    }
  } else {  // pixels not packed: gather per pixel
    for (int64_t b = 0; b < n; b += kBlock) {
      const int64_t m = std::min(kBlock, n - b);
      for (int64_t i = 0; i < m; i++) acc[i] = 0;
      for (int k = 0; k < T; k++) {
        const S* r = src + k * row_stride;
        const float wk = w[k];
        for (int64_t i = 0; i < m; i++) {
          int64_t e = b + i;
          acc[i] += wk * load(r[(e / C) * sps + e % C]);
        }
      }
      store_span(dst, dps, C, b, acc, m);
    }
  }
}

// Horizontal pass over the used rows into tmp (of type Mid: float, or the output type to round
// in between like PIL), then the vertical pass per output row.
template <typename Mid, typename Out, typename In>
void horizontal_first(const ImageView<Out>& out, const ImageView<const In>& in,
                      const AxisTable& ty, const AxisTable& tx, float* rowbuf, float* rowbuf2,
                      Mid* tmp) {
  const int64_t C = in.channels;
  const int64_t rows = ty.used_hi - ty.used_lo;
  const int64_t cols = tx.used_hi - tx.used_lo;
  const int64_t tw = out.width * C;
  for (int64_t r = 0; r < rows; r++) {
    row_to_float(rowbuf, in.row(ty.used_lo + r) + tx.used_lo * in.pixel_stride, in.pixel_stride,
                 cols, C);
    if constexpr (std::is_same<Mid, float>::value) {
      h_row_any(tmp + r * tw, rowbuf, tx.used_lo, tx, out.width, C);  // tmp has kRowPad after
    } else {
      h_row_any(rowbuf2, rowbuf, tx.used_lo, tx, out.width, C);
      store_span(tmp + r * tw, C, C, 0, rowbuf2, tw);
    }
  }
  for (int64_t y = 0; y < out.height; y++) {
    const Mid* src = tmp + (ty.start[y] - ty.used_lo) * tw;
    v_row<Mid, Out>(out.row(y), out.pixel_stride, src, tw, C, ty.w + y * ty.taps, ty.taps,
                    out.width, C);
  }
}

// Per output row: the vertical pass over the used columns into a packed float row, then the
// horizontal pass into the output. Streams; needs two rows of scratch.
template <typename Out, typename In>
void vertical_first(const ImageView<Out>& out, const ImageView<const In>& in,
                    const AxisTable& ty, const AxisTable& tx, float* rowbuf, float* rowbuf2) {
  const int64_t C = in.channels;
  const int64_t cols = tx.used_hi - tx.used_lo;
  const bool x_identity = is_identity(tx, out.width);
  for (int64_t i = 0; i < kRowPad; i++) rowbuf[cols * C + i] = 0;
  for (int64_t y = 0; y < out.height; y++) {
    const In* src = in.row(ty.start[y]) + tx.used_lo * in.pixel_stride;
    const float* w = ty.w + y * ty.taps;
    if (x_identity) {
      v_row<In, Out>(out.row(y), out.pixel_stride, src, in.row_stride, in.pixel_stride, w,
                     ty.taps, cols, C);
    } else {
      v_row<In, float>(rowbuf, C, src, in.row_stride, in.pixel_stride, w, ty.taps, cols, C);
      h_row_any(rowbuf2, rowbuf, tx.used_lo, tx, out.width, C);
      store_span(out.row(y), out.pixel_stride, C, 0, rowbuf2, out.width * C);
    }
  }
}

std::string shape_str(int64_t h, int64_t w, int64_t c) {
  std::string s = "(";  // appended piecewise: GCC 12 warns falsely (-Wrestrict) on "(" + ...
  s += std::to_string(h);
  s += ", ";
  s += std::to_string(w);
  s += ", ";
  s += std::to_string(c);
  s += ")";
  return s;
}

}  // namespace

size_t resample_scratch_bytes(int64_t out_h, int64_t out_w, int64_t in_h, int64_t in_w,
                              int64_t channels, const ResampleParams& params) {
  if (out_h <= 0 || out_w <= 0 || in_h <= 0 || in_w <= 0 || channels <= 0) return 0;
  return make_plan(out_h, out_w, in_h, in_w, channels, params).bytes;
}

ResampleWeights resample_weights(int64_t out_h, int64_t out_w, int64_t in_h, int64_t in_w,
                                 int64_t channels, const ResampleParams& params) {
  STOKER_ASSERT(out_h > 0 && out_w > 0 && in_h > 0 && in_w > 0 && channels > 0,
                "resample_weights: empty image");
  Plan plan = make_plan(out_h, out_w, in_h, in_w, channels, params);
  thread_local std::vector<char> buffer;
  size_t bytes = 64 + table_bytes(plan.y, false) + table_bytes(plan.x, false) + 64;
  if (buffer.size() < bytes) buffer.resize(bytes);
  Arena arena{buffer.data(), buffer.data() + buffer.size()};
  AxisTable ty = build_table(plan.y, params, false, arena);
  AxisTable tx = build_table(plan.x, params, false, arena);
  ResampleWeights r;
  r.vertical_first = plan.vertical_first;
  auto copy = [](const AxisTable& t, int64_t n, ResampleAxisWeights& a) {
    a.taps = t.taps;
    a.start.assign(t.start, t.start + n);
    a.w.assign(t.w, t.w + n * t.taps);
  };
  copy(ty, out_h, r.y);
  copy(tx, out_w, r.x);
  return r;
}

template <typename Out, typename In>
void resample(const ImageView<Out>& out, const ImageView<const In>& in,
              const ResampleParams& params, void* scratch, size_t scratch_bytes) {
  if (out.channels != in.channels)
    fail(ErrorKind::kInvalidArgument,
         "resample: the output has " + std::to_string(out.channels) + " channels and the input " +
             std::to_string(in.channels) + "; they must be equal");
  if (out.height == 0 || out.width == 0 || out.channels == 0) return;
  if (in.height <= 0 || in.width <= 0)
    fail(ErrorKind::kInvalidArgument,
         "resample: cannot produce a " + shape_str(out.height, out.width, out.channels) +
             " output from an empty input of shape " +
             shape_str(in.height, in.width, in.channels));
  const int64_t C = in.channels;
  Plan plan = make_plan(out.height, out.width, in.height, in.width, C, params);
  STOKER_ASSERT(scratch_bytes >= plan.bytes,
                "resample scratch is " + std::to_string(scratch_bytes) + " bytes, needs " +
                    std::to_string(plan.bytes));
  Arena arena{static_cast<char*>(scratch), static_cast<char*>(scratch) + scratch_bytes};
  AxisTable ty = build_table(plan.y, params, false, arena);
  AxisTable tx = build_table(plan.x, params, true, arena);
  float* rowbuf = arena.take<float>(plan.row_floats);
  float* rowbuf2 = arena.take<float>(plan.row2_floats);
  float* tmp = arena.take<float>(plan.tmp_floats);
  STOKER_ASSERT(static_cast<size_t>((tx.used_hi - tx.used_lo) * C) + kRowPad <= plan.row_floats,
                "resample column bound");
  STOKER_ASSERT(plan.vertical_first || static_cast<size_t>((ty.used_hi - ty.used_lo) *
                                                           out.width * C) <= plan.tmp_floats,
                "resample row bound");
  if (plan.vertical_first) {
    vertical_first(out, in, ty, tx, rowbuf, rowbuf2);
  } else if (params.pil_rounding && !std::is_floating_point<Out>::value) {
    horizontal_first<Out>(out, in, ty, tx, rowbuf, rowbuf2, reinterpret_cast<Out*>(tmp));
  } else {
    horizontal_first<float>(out, in, ty, tx, rowbuf, rowbuf2, tmp);
  }
}

template <typename Out, typename In>
void resample(const ImageView<Out>& out, const ImageView<const In>& in,
              const ResampleParams& params) {
  thread_local std::vector<char> buffer;
  size_t bytes =
      resample_scratch_bytes(out.height, out.width, in.height, in.width, in.channels, params);
  if (buffer.size() < bytes) buffer.resize(bytes);
  resample(out, in, params, buffer.data(), buffer.size());
}

template <typename Out, typename In>
void resample_volume(Out* out, int64_t out_d, int64_t out_h, int64_t out_w, const In* in,
                     int64_t in_d, int64_t in_h, int64_t in_w, int64_t channels,
                     const ResampleParams& params, double z0, double z1) {
  const int64_t C = channels;
  if (out_d <= 0 || out_h <= 0 || out_w <= 0 || C <= 0) return;
  if (in_d <= 0 || in_h <= 0 || in_w <= 0)
    fail(ErrorKind::kInvalidArgument,
         "resample_volume: cannot produce a " + std::to_string(out_d) + " x " +
             shape_str(out_h, out_w, C) + " output from an empty input of shape " +
             std::to_string(in_d) + " x " + shape_str(in_h, in_w, C));
  const VolumePlan plan = plan_volume(out_d, out_h, out_w, in_d, in_h, in_w, C, params, z0, z1);
  const int64_t in_slice = in_h * in_w * C, out_slice = out_h * out_w * C;
  auto out_view = [&](Out* p) { return ImageView<Out>(p, out_h, out_w, C); };
  auto in_view = [&](const In* p) { return ImageView<const In>(p, in_h, in_w, C); };
  if (plan.identity) {  // the slices as they are: 2-D exactly
    for (int64_t z = 0; z < out_d; z++)
      resample(out_view(out + z * out_slice), in_view(in + z * in_slice), params);
    return;
  }
  const int taps = plan.z.taps;
  const int64_t used = plan.used_hi - plan.used_lo;
  thread_local std::vector<float> buffer;
  if (plan.depth_first) {
    // Per output slice: the weighted sum of its source slices (float), then its 2-D resample.
    buffer.resize(static_cast<size_t>(in_slice + kRowPad));
    const ImageView<const float> mid(buffer.data(), in_h, in_w, C);
    for (int64_t z = 0; z < out_d; z++) {
      v_row<In, float>(buffer.data(), C, in + int64_t{plan.z.start[z]} * in_slice, in_slice, C,
                       plan.z.w.data() + z * taps, taps, in_h * in_w, C);
      resample(out_view(out + z * out_slice), mid, params);
    }
  } else {
    // The 2-D resample of each source slice that is read (float), then the depth sums.
    buffer.resize(static_cast<size_t>(used * out_slice + kRowPad));
    for (int64_t k = 0; k < used; k++)
      resample(ImageView<float>(buffer.data() + k * out_slice, out_h, out_w, C),
               in_view(in + (plan.used_lo + k) * in_slice), params);
    for (int64_t z = 0; z < out_d; z++)
      v_row<float, Out>(out + z * out_slice, C,
                        buffer.data() + (plan.z.start[z] - plan.used_lo) * out_slice, out_slice, C,
                        plan.z.w.data() + z * taps, taps, out_h * out_w, C);
  }
}

VolumePlan plan_volume(int64_t out_d, int64_t out_h, int64_t out_w, int64_t in_d, int64_t in_h,
                       int64_t in_w, int64_t channels, const ResampleParams& params, double z0,
                       double z1) {
  auto ok = [](double v) { return std::isfinite(v) && std::fabs(v) < 1e9; };
  if (!ok(z0) || !ok(z1) || z0 == z1)
    fail(ErrorKind::kInvalidArgument,
         "resample_volume: the depth window (z0, z1) = (" + std::to_string(z0) + ", " +
             std::to_string(z1) + ") must be finite, within 1e9 pixels and non-empty");
  const int64_t C = channels;
  const AxisSpec az = make_axis(in_d, out_d, z0, z1, params);
  thread_local std::vector<char> table_buffer;
  const size_t table_size = 64 + table_bytes(az, false) + 64;
  if (table_buffer.size() < table_size) table_buffer.resize(table_size);
  Arena arena{table_buffer.data(), table_buffer.data() + table_buffer.size()};
  const AxisTable tz = build_table(az, params, false, arena);
  VolumePlan plan;
  plan.z.taps = tz.taps;
  plan.z.start.assign(tz.start, tz.start + out_d);
  plan.z.w.assign(tz.w, tz.w + out_d * tz.taps);
  plan.used_lo = tz.used_lo;
  plan.used_hi = tz.used_hi;
  plan.identity = out_d == in_d && is_identity(tz, out_d);
  // Work estimate, as make_plan's: the depth pass streams whole slices (four values per
  // operation); a slice's 2-D resample costs about its input and output pixels.
  const int64_t used = tz.used_hi - tz.used_lo;
  const double T = tz.taps, in_px = double(in_h) * in_w, out_px = double(out_h) * out_w;
  const double plane = (in_px + out_px) * C;
  const double depth_first = double(out_d) * (in_px * C * T / 4 + plane);
  const double depth_last = double(used) * plane + double(out_d) * out_px * C * T / 4;
  plan.depth_first = depth_first <= depth_last;
  return plan;
}

#define STOKER_RESAMPLE_INSTANTIATE(Out, In)                                                   \
  template void resample<Out, In>(const ImageView<Out>&, const ImageView<const In>&,          \
                                  const ResampleParams&, void*, size_t);                      \
  template void resample<Out, In>(const ImageView<Out>&, const ImageView<const In>&,          \
                                  const ResampleParams&);                                     \
  template void resample_volume<Out, In>(Out*, int64_t, int64_t, int64_t, const In*, int64_t, \
                                         int64_t, int64_t, int64_t, const ResampleParams&,    \
                                         double, double);

#define STOKER_RESAMPLE_INSTANTIATE_IN(In)       \
  STOKER_RESAMPLE_INSTANTIATE(uint8_t, In)       \
  STOKER_RESAMPLE_INSTANTIATE(int16_t, In)       \
  STOKER_RESAMPLE_INSTANTIATE(uint16_t, In)      \
  STOKER_RESAMPLE_INSTANTIATE(float, In)

STOKER_RESAMPLE_INSTANTIATE_IN(uint8_t)
STOKER_RESAMPLE_INSTANTIATE_IN(int16_t)
STOKER_RESAMPLE_INSTANTIATE_IN(uint16_t)
STOKER_RESAMPLE_INSTANTIATE_IN(float)

}  // namespace kernels
}  // namespace stoker
