// The spectral kernels of the audio operators, with NVIDIA DALI's definitions: preemphasis,
// short-time Fourier transform (spectrogram), power spectrum along an axis, mel filter bank,
// DCT (mfcc), decibels, and the leading / trailing silence of a signal. FFTs are pocketfft's
// (third_party/pocketfft), run on several frames at once in SIMD lanes; plans and buffers live in
// a SpectralScratch that the caller keeps per thread, so that a frame costs no allocation.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "core/dtype.h"

namespace stoker {
namespace kernels {
namespace audio {

// Plans and working buffers of the FFT kernels, reused from call to call. Not thread-safe:
// one per thread.
class SpectralScratch {
 public:
  SpectralScratch();
  ~SpectralScratch();
  SpectralScratch(const SpectralScratch&) = delete;
  SpectralScratch& operator=(const SpectralScratch&) = delete;
  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  std::unique_ptr<Impl> impl_;
};

// ---- preemphasis: out[t] = in[t] - coeff * in[t - 1], in[-1] from the border policy.
enum class PreemphasisBorder { kZero, kClamp, kReflect };
// Any numeric input and output type but float16 and bool; float arithmetic (double for float64
// input); integer outputs round half away from zero and saturate.
void preemphasis(void* out, DType out_type, const void* in, DType in_type, int64_t n, float coeff,
                 PreemphasisBorder border);

// ---- spectrogram
struct SpectrogramParams {
  int nfft = 512;
  int window_length = 512;
  int window_step = 256;
  bool center = true;    // windows centred at multiples of window_step (the signal padded)
  bool reflect = true;   // padding mirrors the signal (else zeros); only with center
  int power = 2;         // 2: |X|^2, 1: |X|
  bool time_major = false;  // output [frames, bins] ("tf") instead of [bins, frames] ("ft")
};
// The number of windows of a signal of n samples (0 when none fits, without center).
int64_t spectrogram_frames(int64_t n, const SpectrogramParams& p);
// DALI's default window: Hann, w[t] = 0.5 * (1 - cos(2 pi (t + 0.5) / n)).
std::vector<float> hann_window(int n);
// out: nfft / 2 + 1 bins by spectrogram_frames(n) frames (or transposed); window: window_length.
void spectrogram(float* out, const float* in, int64_t n, const float* window,
                 const SpectrogramParams& p, SpectralScratch& scratch);

// ---- power spectrum along one axis of [outer, len, inner]: out is [outer, nfft / 2 + 1, inner].
// The signal is cut to nfft samples or padded with zeros to them.
void power_spectrum(float* out, const float* in, int64_t outer, int64_t len, int64_t inner,
                    int nfft, int power, SpectralScratch& scratch);

// ---- mel filter bank
struct MelParams {
  int nfilter = 128;
  double sample_rate = 44100;
  double freq_low = 0;
  double freq_high = 22050;  // resolved: > freq_low, <= sample_rate / 2
  bool htk = false;          // false: Slaney's scale (librosa's default)
  bool normalize = true;     // each triangle divided by its width in Hz / 2 (area 1)
};
double hz_to_mel(double hz, bool htk);
double mel_to_hz(double mel, bool htk);

// The triangular filters over the nbins = nfft / 2 + 1 bins of a spectrum (nfft = 2 (nbins - 1)),
// linear in Hz between mel-spaced points, as librosa.filters.mel and DALI build them.
class MelFilterBank {
 public:
  MelFilterBank(int64_t nbins, const MelParams& p);
  // in: [outer, nbins, inner], out: [outer, nfilter, inner].
  void apply(float* out, const float* in, int64_t outer, int64_t inner) const;
  // The dense [nfilter, nbins] matrix (tests).
  std::vector<double> matrix() const;
  int64_t nbins() const { return nbins_; }
  int nfilter() const { return nfilter_; }

 private:
  int64_t nbins_;
  int nfilter_;
  int64_t first_ = 0, last_ = -1;  // the bins with weights
  std::vector<int> up_;            // per bin: the filter on its rising edge (the one below falls)
  std::vector<float> w_up_, w_down_;  // normalisation included
};

// ---- DCT along an axis (mfcc)
// The [ndct, n] table of DCT type 1..4 as DALI defines them (half of SciPy's unnormalised
// transforms; SciPy's norm='ortho' with normalize), rows scaled by the lifter
// 1 + lifter / 2 * sin(pi (k + 1) / lifter) where lifter != 0.
std::vector<float> dct_table(int64_t n, int64_t ndct, int dct_type, bool normalize, float lifter);
// in: [outer, n, inner], out: [outer, ndct, inner].
void apply_table(float* out, const float* in, const float* table, int64_t outer, int64_t n,
                 int64_t ndct, int64_t inner);

// ---- decibels: out = multiplier * log10(max(min_ratio, in / reference)).
// reference <= 0: the largest value of `in` (at least 0). min_ratio = 10^(cutoff_db / multiplier).
void to_decibels(float* out, const float* in, int64_t n, float multiplier, double reference,
                 float min_ratio);

// ---- leading and trailing silence
struct NonsilentParams {
  float cutoff_db = -60;
  int window_length = 2048;
  double reference_power = 0;  // <= 0: the largest short-term power of the signal
  int reset_interval = 8192;   // float inputs: the running sum is recomputed this often (-1: never)
};
struct NonsilentRegion {
  int64_t begin = 0, length = 0;
};
// The short-term power of sample i is the mean of the squares of the window_length samples
// ending at i (zeros before the signal); a sample whose power is at least reference * 10^(cutoff_db
// / 10) is not silent. The region runs from the start of the first such window to the last such
// sample; {0, 0} when all is silent. Any numeric input type but float16 and bool.
NonsilentRegion nonsilent_region(const void* in, DType type, int64_t n, const NonsilentParams& p,
                                 SpectralScratch& scratch);

}  // namespace audio
}  // namespace kernels
}  // namespace stoker
