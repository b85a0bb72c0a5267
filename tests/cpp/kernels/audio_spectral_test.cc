// The spectral kernels against brute-force references written from the definitions: a direct
// DFT in double, direct DCT sums, the mel triangles computed bin by bin, a windowed mean square.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/cpu/audio/spectral.h"

using namespace stoker;
using namespace stoker::kernels::audio;

namespace {

std::vector<float> random_signal(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.f, 1.f);
  std::vector<float> x(n);
  for (auto& v : x) v = d(rng);
  return x;
}

// |DFT|^power of the first nfft / 2 + 1 bins of frame (zero-padded to nfft), in double.
std::vector<double> dft_bins(const std::vector<double>& frame, int nfft, int power) {
  std::vector<double> out(nfft / 2 + 1);
  for (int k = 0; k <= nfft / 2; ++k) {
    double re = 0, im = 0;
    for (size_t t = 0; t < frame.size(); ++t) {
      const double ph = -2 * M_PI * static_cast<double>(k) * t / nfft;
      re += frame[t] * std::cos(ph);
      im += frame[t] * std::sin(ph);
    }
    const double p = re * re + im * im;
    out[k] = power == 2 ? p : std::sqrt(p);
  }
  return out;
}

double max_abs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::abs(x));
  return m;
}

}  // namespace

TEST(AudioSpectralPreemphasis, BordersAndTypes) {
  const std::vector<float> x = {1, 4, 9, 16};
  std::vector<float> y(4);
  preemphasis(y.data(), DType::kFloat32, x.data(), DType::kFloat32, 4, 0.5f, PreemphasisBorder::kZero);
  EXPECT_EQ(y, (std::vector<float>{1, 3.5f, 7, 11.5f}));
  preemphasis(y.data(), DType::kFloat32, x.data(), DType::kFloat32, 4, 0.5f, PreemphasisBorder::kClamp);
  EXPECT_EQ(y[0], 0.5f);
  preemphasis(y.data(), DType::kFloat32, x.data(), DType::kFloat32, 4, 0.5f, PreemphasisBorder::kReflect);
  EXPECT_EQ(y[0], -1.f);
  // One sample: reflect has no x[1] and uses 0.
  preemphasis(y.data(), DType::kFloat32, x.data(), DType::kFloat32, 1, 0.5f, PreemphasisBorder::kReflect);
  EXPECT_EQ(y[0], 1.f);
  // Integer output: half away from zero, saturated.
  const std::vector<float> h = {0.4f, 1.5f, 2.5f, -0.5f, -2.5f, 40000.f, -40000.f};
  std::vector<int16_t> o(h.size());
  preemphasis(o.data(), DType::kInt16, h.data(), DType::kFloat32, h.size(), 0.f, PreemphasisBorder::kZero);
  EXPECT_EQ(o, (std::vector<int16_t>{0, 2, 3, -1, -3, 32767, -32768}));
  const std::vector<int16_t> xi = {100, -200, 300};
  std::vector<float> yf(3);
  preemphasis(yf.data(), DType::kFloat32, xi.data(), DType::kInt16, 3, 0.97f, PreemphasisBorder::kClamp);
  EXPECT_FLOAT_EQ(yf[0], 3.f);
  EXPECT_FLOAT_EQ(yf[1], -297.f);
  EXPECT_FLOAT_EQ(yf[2], 494.f);
}

TEST(AudioSpectralSpectrogram, FrameCounts) {
  SpectrogramParams p;
  p.window_length = 320;
  p.window_step = 160;
  p.nfft = 512;
  EXPECT_EQ(spectrogram_frames(16000, p), 101);
  EXPECT_EQ(spectrogram_frames(1, p), 1);
  p.center = false;
  EXPECT_EQ(spectrogram_frames(16000, p), 99);
  EXPECT_EQ(spectrogram_frames(319, p), 0);
  EXPECT_EQ(spectrogram_frames(320, p), 1);
}

TEST(AudioSpectralSpectrogram, MatchesDirectDft) {
  SpectralScratch scratch;
  struct Case { int64_t n; int nfft, wl, step; bool center, reflect, tf; int power; };
  const Case cases[] = {{1000, 64, 64, 32, true, true, false, 2},  {1000, 100, 77, 13, true, false, true, 1},
                        {999, 60, 41, 20, false, true, false, 2},  {10, 32, 31, 3, true, true, true, 2},
                        {1, 16, 16, 4, true, true, false, 2},      {37, 45, 45, 5, true, true, false, 1}};
  for (const Case& c : cases) {
    SpectrogramParams p;
    p.nfft = c.nfft; p.window_length = c.wl; p.window_step = c.step; p.center = c.center;
    p.reflect = c.reflect; p.time_major = c.tf; p.power = c.power;
    const std::vector<float> x = random_signal(c.n, 7);
    const std::vector<float> w = hann_window(c.wl);
    const int64_t frames = spectrogram_frames(c.n, p);
    const int nb = c.nfft / 2 + 1;
    std::vector<float> out(frames * nb, -1.f);
    spectrogram(out.data(), x.data(), c.n, w.data(), p, scratch);
    for (int64_t i = 0; i < frames; ++i) {
      std::vector<double> frame(c.wl);
      const int64_t start = i * c.step - (c.center ? c.wl / 2 : 0);
      for (int t = 0; t < c.wl; ++t) {
        int64_t j = start + t;
        double v = 0;
        if (j >= 0 && j < c.n) {
          v = x[j];
        } else if (c.center && c.reflect) {
          while (j < 0 || j >= c.n) {  // mirror without repeating the edge, as often as needed
            if (c.n == 1) { j = 0; break; }
            if (j < 0) j = -j;
            if (j >= c.n) j = 2 * (c.n - 1) - j;
          }
          v = x[j];
        }
        frame[t] = v * (0.5 * (1 - std::cos(2 * M_PI * (t + 0.5) / c.wl)));
      }
      const std::vector<double> ref = dft_bins(frame, c.nfft, c.power);
      const double scale = std::max(1e-3, max_abs(ref));
      for (int k = 0; k < nb; ++k) {
        const float got = c.tf ? out[i * nb + k] : out[k * frames + i];
        ASSERT_NEAR(got, ref[k], 2e-5 * scale) << "n " << c.n << " frame " << i << " bin " << k;
      }
    }
  }
}

TEST(AudioSpectralPowerSpectrum, AnyAxisCutAndPadded) {
  SpectralScratch scratch;
  const int64_t outer = 3, len = 20, inner = 5;
  const std::vector<float> x = random_signal(outer * len * inner, 3);
  for (int nfft : {20, 8, 33, 1}) {
    for (int power : {1, 2}) {
      const int nb = nfft / 2 + 1;
      std::vector<float> out(outer * nb * inner);
      power_spectrum(out.data(), x.data(), outer, len, inner, nfft, power, scratch);
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          std::vector<double> sig;
          for (int64_t t = 0; t < std::min<int64_t>(len, nfft); ++t)
            sig.push_back(x[(o * len + t) * inner + i]);
          const std::vector<double> ref = dft_bins(sig, nfft, power);
          for (int k = 0; k < nb; ++k)
            ASSERT_NEAR(out[(o * nb + k) * inner + i], ref[k], 2e-5 * max_abs(ref));
        }
    }
  }
}

TEST(AudioSpectralMel, TrianglesFromTheDefinition) {
  for (bool htk : {false, true}) {
    for (bool norm : {false, true}) {
      MelParams p;
      p.nfilter = 40; p.sample_rate = 16000; p.freq_low = 100; p.freq_high = 7000;
      p.htk = htk; p.normalize = norm;
      const int64_t nbins = 257;
      MelFilterBank bank(nbins, p);
      const std::vector<double> m = bank.matrix();
      const double lo = hz_to_mel(100, htk), hi = hz_to_mel(7000, htk);
      for (int f = 0; f < 40; ++f) {
        const double a = mel_to_hz(lo + (hi - lo) * f / 41, htk);
        const double b = mel_to_hz(lo + (hi - lo) * (f + 1) / 41, htk);
        const double c = mel_to_hz(lo + (hi - lo) * (f + 2) / 41, htk);
        for (int64_t k = 0; k < nbins; ++k) {
          const double hz = k * 16000.0 / 512;
          double w = std::max(0.0, std::min((hz - a) / (b - a), (c - hz) / (c - b)));
          if (norm) w *= 2 / (c - a);
          ASSERT_NEAR(m[f * nbins + k], w, 1e-6 * (norm ? 2 / (c - a) : 1)) << f << " " << k;
        }
      }
    }
  }
  // Slaney's scale: linear to 1 kHz (15 mels), logarithmic above; HTK's: 1127 ln(1 + f / 700)
  // (2595 log10(1 + f / 700) up to the constant, which cancels out of the filters).
  EXPECT_NEAR(hz_to_mel(1000, false), 15.0, 1e-12);
  EXPECT_NEAR(hz_to_mel(6400, false), 42.0, 1e-9);
  EXPECT_NEAR(hz_to_mel(1000, true), 1127 * std::log(1 + 1000.0 / 700), 1e-9);
  EXPECT_NEAR(mel_to_hz(hz_to_mel(3000, true), true), 3000, 1e-9);
  EXPECT_NEAR(mel_to_hz(hz_to_mel(5000, false), false), 5000, 1e-9);
}

TEST(AudioSpectralMel, ApplyAlongEitherAxis) {
  MelParams p;
  p.nfilter = 10; p.sample_rate = 8000; p.freq_high = 4000;
  const int64_t nbins = 65, frames = 7;
  MelFilterBank bank(nbins, p);
  const std::vector<double> m = bank.matrix();
  const std::vector<float> ft = random_signal(nbins * frames, 5);
  std::vector<float> out_ft(10 * frames), out_tf(frames * 10), tf(frames * nbins);
  for (int64_t k = 0; k < nbins; ++k)
    for (int64_t t = 0; t < frames; ++t) tf[t * nbins + k] = ft[k * frames + t];
  bank.apply(out_ft.data(), ft.data(), 1, frames);
  bank.apply(out_tf.data(), tf.data(), frames, 1);
  for (int f = 0; f < 10; ++f)
    for (int64_t t = 0; t < frames; ++t) {
      double ref = 0;
      for (int64_t k = 0; k < nbins; ++k) ref += m[f * nbins + k] * ft[k * frames + t];
      EXPECT_NEAR(out_ft[f * frames + t], ref, 1e-5);
      EXPECT_NEAR(out_tf[t * 10 + f], ref, 1e-5);
    }
}

TEST(AudioSpectralDct, FourTypesFromTheirSums) {
  const int64_t n = 12, ndct = 7;
  const std::vector<float> x = random_signal(n, 11);
  for (int type = 1; type <= 4; ++type) {
    for (bool norm : {false, true}) {
      if (type == 1 && norm) continue;
      for (float lifter : {0.f, 22.f}) {
        const std::vector<float> table = dct_table(n, ndct, type, norm, lifter);
        std::vector<float> y(ndct);
        apply_table(y.data(), x.data(), table.data(), 1, n, ndct, 1);
        for (int64_t k = 0; k < ndct; ++k) {
          double s = 0;
          for (int64_t j = 0; j < n; ++j) {
            double c;
            if (type == 1) c = std::cos(M_PI * k * j / (n - 1)) * ((j == 0 || j == n - 1) ? 0.5 : 1);
            else if (type == 2) c = std::cos(M_PI * k * (2 * j + 1) / (2.0 * n));
            else if (type == 3) c = j == 0 ? 0.5 : std::cos(M_PI * j * (2 * k + 1) / (2.0 * n));
            else c = std::cos(M_PI * (2 * j + 1) * (2 * k + 1) / (4.0 * n));
            if (norm) {
              if (type == 2) c *= k == 0 ? std::sqrt(1.0 / n) : std::sqrt(2.0 / n);
              if (type == 3) c = j == 0 ? std::sqrt(1.0 / n) : c * std::sqrt(2.0 / n);
              if (type == 4) c *= std::sqrt(2.0 / n);
            }
            s += c * x[j];
          }
          if (lifter != 0) s *= 1 + lifter / 2 * std::sin(M_PI * (k + 1) / lifter);
          EXPECT_NEAR(y[k], s, 1e-4 * (1 + std::abs(s))) << type << " " << norm << " " << k;
        }
      }
    }
  }
}

TEST(AudioSpectralDecibels, ReferenceAndCutoff) {
  const std::vector<float> x = {4.f, 1.f, 0.f, -1.f, std::nanf("")};
  std::vector<float> y(x.size());
  to_decibels(y.data(), x.data(), x.size(), 10.f, 0.0, 1e-8f);  // reference: max = 4
  EXPECT_NEAR(y[0], 0.f, 1e-6);
  EXPECT_NEAR(y[1], 10 * std::log10(0.25), 1e-5);
  EXPECT_NEAR(y[2], -80.f, 1e-4);
  EXPECT_NEAR(y[3], -80.f, 1e-4);
  EXPECT_NEAR(y[4], -80.f, 1e-4);  // NaN saturates, as DALI's max(min_ratio, NaN)
  to_decibels(y.data(), x.data(), 2, 20.f, 2.0, 1e-4f);
  EXPECT_NEAR(y[0], 20 * std::log10(2.0), 1e-5);
  EXPECT_NEAR(y[1], 20 * std::log10(0.5), 1e-5);
  const std::vector<float> z(3, 0.f);
  to_decibels(y.data(), z.data(), 3, 10.f, 0.0, 1e-20f);
  EXPECT_NEAR(y[0], -200.f, 1e-3);
}

TEST(AudioSpectralNonsilence, RegionsFromWindowedPower) {
  SpectralScratch scratch;
  NonsilentParams p;
  std::vector<float> x(100, 0.f);
  x[40] = 1;
  x[60] = 0.5f;
  p.window_length = 4;
  NonsilentRegion r = nonsilent_region(x.data(), DType::kFloat32, 100, p, scratch);
  EXPECT_EQ(r.begin, 37);
  EXPECT_EQ(r.length, 27);
  p.reference_power = 10;
  p.cutoff_db = -20;  // 0.25 passes 0.1, 0.0625 does not
  r = nonsilent_region(x.data(), DType::kFloat32, 100, p, scratch);
  EXPECT_EQ(r.begin, 37);
  EXPECT_EQ(r.length, 7);
  p.cutoff_db = -15;
  r = nonsilent_region(x.data(), DType::kFloat32, 100, p, scratch);
  EXPECT_EQ(r.length, 0);
  // Shorter than a window; the windows before the signal count its zeros.
  const std::vector<int16_t> s = {0, 0, 0, 1000, 0};
  p = NonsilentParams{};
  p.window_length = 8;
  r = nonsilent_region(s.data(), DType::kInt16, 5, p, scratch);
  EXPECT_EQ(r.begin, 0);
  EXPECT_EQ(r.length, 5);
  // All zeros: the reference is 0 and so is the threshold: all of it counts.
  const std::vector<float> zeros(50, 0.f);
  r = nonsilent_region(zeros.data(), DType::kFloat32, 50, p, scratch);
  EXPECT_EQ(r.begin, 0);
  EXPECT_EQ(r.length, 50);
  // Brute force on noise with silent ends, with and without the running-sum resets.
  std::vector<float> sig(5000, 0.f);
  const std::vector<float> noise = random_signal(3000, 9);
  for (int i = 0; i < 3000; ++i) sig[1000 + i] = noise[i] * 0.1f;
  sig[1200] = 0;
  for (int reset : {-1, 64, 1000}) {
    NonsilentParams q;
    q.window_length = 64;
    q.reset_interval = reset;
    q.cutoff_db = -30;
    r = nonsilent_region(sig.data(), DType::kFloat32, 5000, q, scratch);
    std::vector<double> mms(5000);
    double mx = 0;
    for (int i = 0; i < 5000; ++i) {
      double sum = 0;
      for (int j = std::max(0, i - 63); j <= i; ++j) sum += double(sig[j]) * sig[j];
      mms[i] = sum / 64;
      mx = std::max(mx, mms[i]);
    }
    const double thr = mx * std::pow(10.0, -3.0);
    int first = 0, last = 4999;
    while (mms[first] < thr) ++first;
    while (mms[last] < thr) --last;
    EXPECT_EQ(r.begin, std::max(0, first - 63)) << reset;
    EXPECT_EQ(r.length, last + 1 - std::max(0, first - 63)) << reset;
  }
}
