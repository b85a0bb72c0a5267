#include "kernels/cpu/audio/spectral.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

// No worker threads of pocketfft's own: operators spread samples over the pipeline's threads.
#define POCKETFFT_NO_MULTITHREADING
#include "pocketfft_hdronly.h"

namespace stoker {
namespace kernels {
namespace audio {
namespace {

namespace pfd = pocketfft::detail;

// Frames go through the FFT several at a time, one per SIMD lane (as pocketfft's own
// multi-dimensional transforms do): the butterflies then cost what one frame's would.
#ifdef POCKETFFT_NO_VECTORS
using Lane = float;
constexpr int kLanes = 1;
inline float& lane(Lane& v, int) { return v; }
inline float lane(const Lane& v, int) { return v; }
#else
using Lane = pfd::vtype_t<float>;
constexpr int kLanes = static_cast<int>(pfd::VLEN<float>::val);
inline float lane(const Lane& v, int l) { return v[l]; }
#endif

inline void set_lane(Lane& v, int l, float x) {
#ifdef POCKETFFT_NO_VECTORS
  (void)l;
  v = x;
#else
  v[l] = x;
#endif
}

using Plan = pfd::pocketfft_r<float>;

}  // namespace

struct SpectralScratch::Impl {
  struct CachedPlan {
    size_t n;
    std::unique_ptr<Plan> plan;
  };
  std::vector<CachedPlan> plans;  // a few lengths, the most recently used first
  std::vector<Lane> lanes;
  std::vector<float> floats;

  const Plan& plan(size_t n) {
    for (size_t k = 0; k < plans.size(); ++k) {
      if (plans[k].n == n) {
        if (k) std::rotate(plans.begin(), plans.begin() + k, plans.begin() + k + 1);
        return *plans[0].plan;
      }
    }
    if (plans.size() >= 4) plans.pop_back();
    plans.insert(plans.begin(), CachedPlan{n, std::make_unique<Plan>(n)});
    return *plans[0].plan;
  }
  Lane* lane_buffer(size_t n) {
    if (lanes.size() < n) lanes.resize(n);
    return lanes.data();
  }
};

SpectralScratch::SpectralScratch() : impl_(std::make_unique<Impl>()) {}
SpectralScratch::~SpectralScratch() = default;

namespace {

// Bin k of pocketfft's real transform, kept in FFTPACK's order: r0, r1, i1, r2, i2, ...
// (and r[n/2] last for even n).
template <int Power>
inline Lane bin_value(const Lane* c, int nfft, int k) {
  Lane re, im;
  if (k == 0) {
    re = c[0];
    im = re * 0.f;
  } else if (2 * k == nfft) {
    re = c[nfft - 1];
    im = re * 0.f;
  } else {
    re = c[2 * k - 1];
    im = c[2 * k];
  }
  Lane p = re * re + im * im;
  if constexpr (Power == 1) {
    for (int l = 0; l < kLanes; ++l) set_lane(p, l, std::sqrt(lane(p, l)));
  }
  return p;
}

// Writes the nfft / 2 + 1 bins of `count` lanes: bin k of lane l goes to out[l * lane_stride +
// k * bin_stride].
template <int Power>
void write_bins(float* out, const Lane* c, int nfft, int count, int64_t lane_stride,
                int64_t bin_stride) {
  const int nb = nfft / 2 + 1;
  for (int k = 0; k < nb; ++k) {
    const Lane p = bin_value<Power>(c, nfft, k);
    float* o = out + k * bin_stride;
    for (int l = 0; l < count; ++l) o[l * lane_stride] = lane(p, l);
  }
}

inline int64_t reflect_index(int64_t j, int64_t n) {
  if (n == 1) return 0;
  const int64_t period = 2 * (n - 1);
  j %= period;
  if (j < 0) j += period;
  return j < n ? j : period - j;
}

// Round half away from zero and saturate (DALI's conversion of float results to integers).
template <typename Out, typename F>
inline Out convert_out(F v) {
  if constexpr (std::is_floating_point_v<Out>) {
    return static_cast<Out>(v);
  } else {
    if (v != v) return Out(0);
    const F r = std::round(v);
    if (r <= static_cast<F>(std::numeric_limits<Out>::lowest())) return std::numeric_limits<Out>::lowest();
    if (r >= static_cast<F>(std::numeric_limits<Out>::max())) return std::numeric_limits<Out>::max();
    return static_cast<Out>(r);
  }
}

template <typename T>
constexpr bool kSpectralType = !std::is_same_v<T, bool> && !std::is_same_v<T, float16>;

}  // namespace

// ------------------------------------------------------------------------------ preemphasis

void preemphasis(void* out, DType out_type, const void* in, DType in_type, int64_t n, float coeff,
                 PreemphasisBorder border) {
  if (n <= 0) return;
  visit_dtype(in_type, [&](auto ti) {
    using In = decltype(ti);
    if constexpr (kSpectralType<In>) {
      visit_dtype(out_type, [&](auto to) {
        using Out = decltype(to);
        if constexpr (kSpectralType<Out>) {
          using Acc = std::conditional_t<std::is_same_v<In, double>, double, float>;
          const In* x = static_cast<const In*>(in);
          Out* y = static_cast<Out*>(out);
          const Acc c = coeff;
          Acc prev = 0;
          if (border == PreemphasisBorder::kClamp) prev = static_cast<Acc>(x[0]);
          else if (border == PreemphasisBorder::kReflect && n > 1) prev = static_cast<Acc>(x[1]);
          y[0] = convert_out<Out>(static_cast<Acc>(x[0]) - c * prev);
          for (int64_t t = 1; t < n; ++t)
            y[t] = convert_out<Out>(static_cast<Acc>(x[t]) - c * static_cast<Acc>(x[t - 1]));
        } else {
          throw_bad_dtype(out_type);
        }
      });
    } else {
      throw_bad_dtype(in_type);
    }
  });
}

// ------------------------------------------------------------------------------ spectrogram

int64_t spectrogram_frames(int64_t n, const SpectrogramParams& p) {
  if (p.window_step <= 0) return 0;
  if (p.center) return n / p.window_step + 1;
  return n >= p.window_length ? (n - p.window_length) / p.window_step + 1 : 0;
}

std::vector<float> hann_window(int n) {
  std::vector<float> w(std::max(n, 0));
  for (int t = 0; t < n; ++t)
    w[t] = static_cast<float>(0.5 * (1.0 - std::cos(2.0 * M_PI * (t + 0.5) / n)));
  return w;
}

void spectrogram(float* out, const float* in, int64_t n, const float* window,
                 const SpectrogramParams& p, SpectralScratch& scratch) {
  const int64_t frames = spectrogram_frames(n, p);
  if (frames <= 0) return;
  const int nfft = p.nfft, wl = p.window_length, nb = nfft / 2 + 1;
  const Plan& plan = scratch.impl().plan(nfft);
  Lane* c = scratch.impl().lane_buffer(nfft);
  const int64_t offset = p.center ? wl / 2 : 0;
  const bool reflect = p.center && p.reflect;
  // ft: bin k of frame i at k * frames + i; tf: at i * nb + k.
  const int64_t lane_stride = p.time_major ? nb : 1, bin_stride = p.time_major ? 1 : frames;
  for (int64_t i0 = 0; i0 < frames; i0 += kLanes) {
    const int count = static_cast<int>(std::min<int64_t>(kLanes, frames - i0));
    for (int t = wl; t < nfft; ++t) c[t] = Lane{};  // padding of the window to nfft
    for (int l = 0; l < kLanes; ++l) {
      const int64_t start = (i0 + l) * p.window_step - offset;
      if (l >= count) {
        for (int t = 0; t < wl; ++t) set_lane(c[t], l, 0.f);
      } else if (start >= 0 && start + wl <= n) {
        const float* x = in + start;
        for (int t = 0; t < wl; ++t) set_lane(c[t], l, x[t] * window[t]);
      } else {
        for (int t = 0; t < wl; ++t) {
          int64_t j = start + t;
          float v = 0.f;
          if (j >= 0 && j < n) v = in[j];
          else if (reflect) v = in[reflect_index(j, n)];
          set_lane(c[t], l, v * window[t]);
        }
      }
    }
    plan.exec(c, 1.f, true);
    float* o = out + i0 * lane_stride;
    if (p.power == 1) write_bins<1>(o, c, nfft, count, lane_stride, bin_stride);
    else write_bins<2>(o, c, nfft, count, lane_stride, bin_stride);
  }
}

// ------------------------------------------------------------------------------ power spectrum

void power_spectrum(float* out, const float* in, int64_t outer, int64_t len, int64_t inner,
                    int nfft, int power, SpectralScratch& scratch) {
  const int64_t signals = outer * inner;
  if (signals <= 0 || nfft <= 0) return;
  const int nb = nfft / 2 + 1;
  const Plan& plan = scratch.impl().plan(nfft);
  Lane* c = scratch.impl().lane_buffer(nfft);
  const int64_t used = std::min<int64_t>(len, nfft);
  for (int64_t s0 = 0; s0 < signals; s0 += kLanes) {
    const int count = static_cast<int>(std::min<int64_t>(kLanes, signals - s0));
    for (int t = static_cast<int>(used); t < nfft; ++t) c[t] = Lane{};
    for (int l = 0; l < kLanes; ++l) {
      if (l >= count) {
        for (int64_t t = 0; t < used; ++t) set_lane(c[t], l, 0.f);
        continue;
      }
      const int64_t s = s0 + l, o = s / inner, i = s % inner;
      const float* x = in + o * len * inner + i;
      for (int64_t t = 0; t < used; ++t) set_lane(c[t], l, x[t * inner]);
    }
    plan.exec(c, 1.f, true);
    // Lanes are consecutive signals, which need not be evenly spaced in the output (a new outer
    // index starts a new block): write lane by lane.
    for (int l = 0; l < count; ++l) {
      const int64_t s = s0 + l, o = s / inner, i = s % inner;
      float* y = out + o * nb * inner + i;
      for (int k = 0; k < nb; ++k) {
        const Lane v = power == 1 ? bin_value<1>(c, nfft, k) : bin_value<2>(c, nfft, k);
        y[k * inner] = lane(v, l);
      }
    }
  }
}

// ------------------------------------------------------------------------------ mel filter bank

double hz_to_mel(double hz, bool htk) {
  if (htk) return 1127.0 * std::log(1.0 + hz / 700.0);
  // Slaney: linear below 1 kHz (200/3 Hz per mel), logarithmic above (27 mels per factor 6.4).
  const double f_sp = 200.0 / 3.0, min_log_hz = 1000.0, min_log_mel = min_log_hz / f_sp;
  const double logstep = std::log(6.4) / 27.0;
  return hz >= min_log_hz ? min_log_mel + std::log(hz / min_log_hz) / logstep : hz / f_sp;
}

double mel_to_hz(double mel, bool htk) {
  if (htk) return 700.0 * (std::exp(mel / 1127.0) - 1.0);
  const double f_sp = 200.0 / 3.0, min_log_hz = 1000.0, min_log_mel = min_log_hz / f_sp;
  const double logstep = std::log(6.4) / 27.0;
  return mel >= min_log_mel ? min_log_hz * std::exp(logstep * (mel - min_log_mel)) : mel * f_sp;
}

MelFilterBank::MelFilterBank(int64_t nbins, const MelParams& p)
    : nbins_(nbins), nfilter_(p.nfilter) {
  up_.assign(std::max<int64_t>(nbins, 0), -1);
  w_up_.assign(up_.size(), 0.f);
  w_down_.assign(up_.size(), 0.f);
  if (nbins < 2 || p.nfilter <= 0) return;
  const double nfft = 2.0 * static_cast<double>(nbins - 1);
  const double hz_step = p.sample_rate / nfft;
  const double mel_lo = hz_to_mel(p.freq_low, p.htk), mel_hi = hz_to_mel(p.freq_high, p.htk);
  const double delta = (mel_hi - mel_lo) / (p.nfilter + 1);
  std::vector<double> f(p.nfilter + 2);
  for (int i = 0; i <= p.nfilter + 1; ++i)
    f[i] = mel_to_hz(i == p.nfilter + 1 ? mel_hi : mel_lo + i * delta, p.htk);
  first_ = std::max<int64_t>(0, static_cast<int64_t>(std::ceil(p.freq_low / hz_step)));
  last_ = std::min<int64_t>(nbins - 1, static_cast<int64_t>(std::floor(p.freq_high / hz_step)));
  int j = 0;
  for (int64_t b = first_; b <= last_; ++b) {
    const double fb = static_cast<double>(b) * hz_step;
    while (j <= p.nfilter && fb >= f[j + 1]) ++j;
    if (j > p.nfilter) break;  // at or past freq_high
    const double down = (f[j + 1] - fb) / (f[j + 1] - f[j]);
    double up = 1.0 - down;
    double dn = down;
    if (p.normalize) {
      if (j < p.nfilter) up *= 2.0 / (f[j + 2] - f[j]);
      if (j >= 1) dn *= 2.0 / (f[j + 1] - f[j - 1]);
    }
    up_[b] = j;
    w_up_[b] = static_cast<float>(up);
    w_down_[b] = static_cast<float>(dn);
  }
}

void MelFilterBank::apply(float* out, const float* in, int64_t outer, int64_t inner) const {
  const int64_t nf = nfilter_;
  std::fill(out, out + outer * nf * inner, 0.f);
  for (int64_t o = 0; o < outer; ++o) {
    float* y = out + o * nf * inner;
    const float* x = in + o * nbins_ * inner;
    if (inner == 1) {
      for (int64_t b = first_; b <= last_; ++b) {
        const int j = up_[b];
        if (j < 0) continue;
        const float v = x[b];
        if (j < nf) y[j] += w_up_[b] * v;
        if (j >= 1) y[j - 1] += w_down_[b] * v;
      }
      continue;
    }
    for (int64_t b = first_; b <= last_; ++b) {
      const int j = up_[b];
      if (j < 0) continue;
      const float* row = x + b * inner;
      if (j < nf) {
        float* r = y + j * inner;
        const float w = w_up_[b];
        for (int64_t t = 0; t < inner; ++t) r[t] += w * row[t];
      }
      if (j >= 1) {
        float* r = y + (j - 1) * inner;
        const float w = w_down_[b];
        for (int64_t t = 0; t < inner; ++t) r[t] += w * row[t];
      }
    }
  }
}

std::vector<double> MelFilterBank::matrix() const {
  std::vector<double> m(static_cast<size_t>(nfilter_) * nbins_, 0.0);
  for (int64_t b = first_; b <= last_; ++b) {
    const int j = up_[b];
    if (j < 0) continue;
    if (j < nfilter_) m[j * nbins_ + b] = w_up_[b];
    if (j >= 1) m[(j - 1) * nbins_ + b] = w_down_[b];
  }
  return m;
}

// ------------------------------------------------------------------------------ DCT

std::vector<float> dct_table(int64_t n, int64_t ndct, int dct_type, bool normalize, float lifter) {
  std::vector<float> table(static_cast<size_t>(std::max<int64_t>(n * ndct, 0)));
  for (int64_t k = 0; k < ndct; ++k) {
    double lift = 1.0;
    if (lifter != 0) lift = 1.0 + 0.5 * lifter * std::sin(M_PI * (k + 1) / lifter);
    for (int64_t j = 0; j < n; ++j) {
      double v = 0;
      switch (dct_type) {
        case 1:  // ends halved; no orthonormal form
          v = (j == 0 || j == n - 1) ? 0.5 * std::cos(M_PI * k * j / (n - 1))
                                     : std::cos(M_PI * k * j / (n - 1));
          break;
        case 2:
          v = std::cos(M_PI * k * (j + 0.5) / n);
          if (normalize) v *= k == 0 ? std::sqrt(1.0 / n) : std::sqrt(2.0 / n);
          break;
        case 3:
          v = j == 0 ? 0.5 : std::cos(M_PI * j * (k + 0.5) / n);
          if (normalize) v = j == 0 ? std::sqrt(1.0 / n) : v * std::sqrt(2.0 / n);
          break;
        default:  // 4
          v = std::cos(M_PI * (j + 0.5) * (k + 0.5) / n);
          if (normalize) v *= std::sqrt(2.0 / n);
          break;
      }
      table[k * n + j] = static_cast<float>(v * lift);
    }
  }
  return table;
}

void apply_table(float* out, const float* in, const float* table, int64_t outer, int64_t n,
                 int64_t ndct, int64_t inner) {
  for (int64_t o = 0; o < outer; ++o) {
    const float* x = in + o * n * inner;
    float* y = out + o * ndct * inner;
    if (inner == 1) {
      for (int64_t k = 0; k < ndct; ++k) {
        const float* row = table + k * n;
        float acc = 0.f;
        for (int64_t j = 0; j < n; ++j) acc += row[j] * x[j];
        y[k] = acc;
      }
      continue;
    }
    std::fill(y, y + ndct * inner, 0.f);
    for (int64_t k = 0; k < ndct; ++k) {
      float* r = y + k * inner;
      for (int64_t j = 0; j < n; ++j) {
        const float w = table[k * n + j];
        const float* xr = x + j * inner;
        for (int64_t t = 0; t < inner; ++t) r[t] += w * xr[t];
      }
    }
  }
}

// ------------------------------------------------------------------------------ decibels

void to_decibels(float* out, const float* in, int64_t n, float multiplier, double reference,
                 float min_ratio) {
  double ref = reference;
  if (ref <= 0) {
    float m = 0.f;  // NaNs are passed over; all-negative or all-zero input gives 0
    for (int64_t i = 0; i < n; ++i)
      if (in[i] > m) m = in[i];
    ref = m;
  }
  const float inv_ref = ref == 1.0 ? 1.f : static_cast<float>(1.0 / ref);
  const float mul_log2 = static_cast<float>(multiplier / std::log2(10.0));
  for (int64_t i = 0; i < n; ++i) {
    const float r = in[i] * inv_ref;
    // A NaN ratio (0 * inf, inf * 0) saturates like a tiny one.
    out[i] = mul_log2 * std::log2(min_ratio < r ? r : min_ratio);
  }
}

// ------------------------------------------------------------------------------ silence

NonsilentRegion nonsilent_region(const void* in, DType type, int64_t n, const NonsilentParams& p,
                                 SpectralScratch& scratch) {
  NonsilentRegion region;
  if (n <= 0 || p.window_length <= 0) return region;
  std::vector<float>& mms = scratch.impl().floats;
  mms.resize(n);
  const int64_t w = p.window_length;
  const double inv_w = 1.0 / static_cast<double>(w);
  visit_dtype(type, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (kSpectralType<T>) {
      const T* x = static_cast<const T*>(in);
      auto sq = [&](int64_t i) { const double v = static_cast<double>(x[i]); return v * v; };
      // Integer squares sum exactly (as long as they fit a double's mantissa); a float running
      // sum drifts, so it is recomputed from the window every reset_interval samples.
      const int64_t reset =
          std::is_floating_point_v<T> && p.reset_interval > 0 ? p.reset_interval : n + 1;
      double sum = 0;
      for (int64_t i = 0; i < n; ++i) {
        if (i > 0 && i % reset == 0) {
          sum = 0;
          for (int64_t j = std::max<int64_t>(0, i - w + 1); j <= i; ++j) sum += sq(j);
        } else {
          sum += sq(i);
          if (i >= w) sum -= sq(i - w);
        }
        mms[i] = static_cast<float>(sum * inv_w);
      }
    } else {
      throw_bad_dtype(type);
    }
  });
  float ref = static_cast<float>(p.reference_power);
  if (p.reference_power <= 0) {
    ref = 0.f;
    for (int64_t i = 0; i < n; ++i) ref = std::max(ref, mms[i]);
  }
  const float threshold = static_cast<float>(ref * std::pow(10.0, p.cutoff_db / 10.0));
  int64_t first = 0;
  while (first < n && !(mms[first] >= threshold)) ++first;
  if (first == n) return region;
  int64_t last = n - 1;
  while (!(mms[last] >= threshold)) --last;
  region.begin = std::max<int64_t>(0, first - w + 1);
  region.length = last + 1 - region.begin;
  return region;
}

}  // namespace audio
}  // namespace kernels
}  // namespace stoker
