// The spectral operators of DALI's audio pipelines: spectrogram, power_spectrum,
// mel_filter_bank, mfcc and to_decibels, float32 in and out, with DALI's arguments, defaults,
// shapes and layouts. The arithmetic is in kernels/cpu/audio/spectral (pocketfft for the FFTs).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/repr.h"
#include "kernels/cpu/audio/spectral.h"
#include "kernels/cuda/audio_gpu.h"
#include "ops/generic/gpu_twin.h"
#include "pipeline/operator.h"

namespace stoker {
namespace {

namespace ka = kernels::audio;

// FFT sizes and windows past this many samples (6 minutes at 44.1 kHz) are refused before their
// plans and buffers are allocated.
constexpr int64_t kMaxFft = int64_t{1} << 24;

// An integer argument that must lie in [lo, hi] (read as 64 bits: no silent truncation).
int64_t int_in(const OpSpec& spec, const std::string& arg, int64_t v, int64_t lo, int64_t hi,
               const std::string& what) {
  if (v < lo || v > hi)
    spec.arg_error(arg, "must be " + what + ", got " + std::to_string(v) + ".");
  return v;
}

std::string sample_name(int64_t i, const Shape& s) {
  return "sample " + std::to_string(i) + " (shape " + to_string(s) + ")";
}

void require_float(const OpSpec& spec, const Batch& in, const std::string& what) {
  if (in.size() > 0 && in.dtype() != DType::kFloat32)
    fail(ErrorKind::kTypeMismatch,
         spec.display_name() + ": the input must be float32 " + what + ", got " +
             dtype_name(in.dtype()) + "; convert it with fn.cast(x, dtype=types.FLOAT).");
}

// A negative axis counts from the back; out of range is an error naming the sample.
int resolve_axis(const OpSpec& spec, const std::string& arg, int64_t axis, int ndim, int64_t i,
                 const Shape& s) {
  const int64_t a = axis < 0 ? axis + ndim : axis;
  if (a < 0 || a >= ndim)
    spec.arg_error(arg, "is " + std::to_string(axis) + ", out of range for " + sample_name(i, s) +
                            " of " + std::to_string(ndim) + " dimensions; give an axis in [" +
                            std::to_string(-ndim) + ", " + std::to_string(ndim - 1) + "].");
  return static_cast<int>(a);
}

// [outer, axis extent, inner] of shape s around axis a.
void split_at(const Shape& s, int a, int64_t* outer, int64_t* len, int64_t* inner) {
  *outer = 1;
  *inner = 1;
  for (int d = 0; d < a; ++d) *outer *= s[d];
  for (size_t d = a + 1; d < s.size(); ++d) *inner *= s[d];
  *len = s[a];
}

// ------------------------------------------------------------------------------ spectrogram

class Spectrogram : public Operator {
 public:
  explicit Spectrogram(const OpSpec& spec) : Operator(spec) {
    p_.center = spec.get<bool>("center_windows");
    p_.reflect = spec.get<bool>("reflect_padding");
    const std::string layout = spec.get<std::string>("layout");
    if (layout != "ft" && layout != "tf")
      spec.arg_error("layout", "must be \"ft\" (frequency-major) or \"tf\" (time-major), got \"" +
                                   layout + "\".");
    p_.time_major = layout == "tf";
    p_.window_length = static_cast<int>(
        int_in(spec, "window_length", spec.get<int64_t>("window_length"), 1, kMaxFft,
               "at least 1 and at most 2^24 (samples in a window)"));
    p_.window_step = static_cast<int>(
        int_in(spec, "window_step", spec.get<int64_t>("window_step"), 1, INT32_MAX,
               "at least 1 (samples between windows) and below 2^31"));
    const int64_t nfft = spec.get_optional<int64_t>("nfft").value_or(p_.window_length);
    if (nfft < p_.window_length)
      spec.arg_error("nfft", "is " + std::to_string(nfft) + ", smaller than window_length (" +
                                 std::to_string(p_.window_length) + "); the FFT must hold a whole "
                                 "window: give nfft >= window_length.");
    p_.nfft = static_cast<int>(int_in(spec, "nfft", nfft, 1, kMaxFft, "at most 2^24"));
    p_.power = static_cast<int>(int_in(spec, "power", spec.get<int64_t>("power"), 1, 2,
                                       "1 (magnitude) or 2 (power)"));
    if (spec.has("window_fn")) {
      window_ = spec.get<std::vector<float>>("window_fn");
      if (static_cast<int64_t>(window_.size()) != p_.window_length)
        spec.arg_error("window_fn", "has " + std::to_string(window_.size()) + " values, but "
                                    "window_length is " + std::to_string(p_.window_length) +
                                    "; give one value per sample of the window.");
    } else {
      window_ = ka::hann_window(p_.window_length);
    }
  }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    require_float(spec_, in, "audio");
    OutputDesc out{DType::kFloat32, p_.time_major ? "tf" : "ft", {}};
    lengths_.assign(in.size(), 0);
    const int64_t nb = p_.nfft / 2 + 1;
    for (size_t i = 0; i < in.size(); ++i) {
      const Shape& s = in.shape(i);
      int64_t n = 1, big = 0;
      for (int64_t e : s) {
        n *= e;
        if (e != 1) ++big;
      }
      if (s.empty() || big > 1)
        fail(ErrorKind::kInvalidArgument,
             spec_.display_name() + ": " + sample_name(i, s) + " is not one channel of audio; "
             "give a 1-D signal (or one whose other extents are 1: (n, 1), (1, n)), e.g. mix "
             "channels down with decoders.audio(downmix=True).");
      if (n == 0)
        fail(ErrorKind::kInvalidArgument,
             spec_.display_name() + ": " + sample_name(i, s) + " is empty; a spectrogram needs "
             "at least one sample of audio.");
      const int64_t frames = ka::spectrogram_frames(n, p_);
      if (frames == 0)
        fail(ErrorKind::kInvalidArgument,
             spec_.display_name() + ": " + sample_name(i, s) + " is shorter than one window (" +
                 std::to_string(p_.window_length) + " samples) and center_windows is False, so "
                 "no window fits; pad the signal or set center_windows=True.");
      lengths_[i] = n;
      out.shapes.push_back(p_.time_major ? Shape{frames, nb} : Shape{nb, frames});
    }
    return {out};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    thread_local ka::SpectralScratch scratch;
    ka::spectrogram(ws.output(0).data<float>(i), ws.input(0).data<float>(i), lengths_[i],
                    window_.data(), p_, scratch);
  }

  // The GPU twin: the batch's windows in one launch, one batched cuFFT transform (cuFFT is
  // loaded at run time), |X|^power in one launch (kernels/cuda/audio_gpu.h).
  void run_gpu(Workspace& ws, const std::vector<OutputDesc>& descs) {
    require_device_input(ws);
    const Batch& in = ws.input(0);
    ws.outputs.assign(1, allocate_device_batch(ws, descs[0].dtype, descs[0].shapes, descs[0].layout));
    Batch& out = ws.outputs[0];
    std::vector<kernels::cuda::SpectrogramJob> jobs(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      const Shape& o = out.shape(i);
      jobs[i] = {static_cast<const float*>(in[i].data), static_cast<float*>(out[i].data),
                 lengths_[i], p_.time_major ? o[0] : o[1]};
    }
    kernels::cuda::spectrogram_gpu(ws, fft_plans_, spec_.display_name(), p_, window_, jobs);
  }

 private:
  ka::SpectrogramParams p_;
  std::vector<float> window_;
  std::vector<int64_t> lengths_;
  std::shared_ptr<void> fft_plans_;  // the GPU twin's cuFFT plans
};

// ------------------------------------------------------------------------------ power_spectrum

class PowerSpectrum : public Operator {
 public:
  explicit PowerSpectrum(const OpSpec& spec)
      : Operator(spec), axis_(spec.get<int64_t>("axis")) {
    power_ = static_cast<int>(int_in(spec, "power", spec.get<int64_t>("power"), 1, 2,
                                     "1 (magnitude) or 2 (power)"));
    if (spec.has("nfft")) {
      nfft_ = spec.get<int64_t>("nfft");
      if (nfft_ < 1)
        spec.arg_error("nfft", "must be at least 1, got " + std::to_string(nfft_) +
                                   "; leave it out to transform the whole axis.");
      int_in(spec, "nfft", nfft_, 1, kMaxFft, "at most 2^24");
    }
  }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    require_float(spec_, in, "signal");
    OutputDesc out{DType::kFloat32, in.layout(), {}};
    jobs_.assign(in.size(), Job{});
    for (size_t i = 0; i < in.size(); ++i) {
      const Shape& s = in.shape(i);
      const int ndim = static_cast<int>(s.size());
      if (ndim == 0)
        fail(ErrorKind::kInvalidArgument,
             spec_.display_name() + ": " + sample_name(i, s) + " is a scalar; give a signal of "
             "at least one dimension.");
      const int a = resolve_axis(spec_, "axis", axis_, ndim, i, s);
      Job& j = jobs_[i];
      split_at(s, a, &j.outer, &j.len, &j.inner);
      if (j.len == 0)
        fail(ErrorKind::kInvalidArgument,
             spec_.display_name() + ": " + sample_name(i, s) + " is empty along axis " +
                 std::to_string(a) + "; the transform needs at least one value.");
      j.nfft = nfft_ > 0 ? nfft_ : j.len;
      if (j.nfft > kMaxFft)
        spec_.arg_error("nfft", "would be " + std::to_string(j.nfft) + " for " +
                                    sample_name(i, s) + " (its length along axis " +
                                    std::to_string(a) + "), more than 2^24; give a smaller nfft.");
      Shape o = s;
      o[a] = j.nfft / 2 + 1;
      out.shapes.push_back(o);
    }
    return {out};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    thread_local ka::SpectralScratch scratch;
    const Job& j = jobs_[i];
    ka::power_spectrum(ws.output(0).data<float>(i), ws.input(0).data<float>(i), j.outer, j.len,
                       j.inner, static_cast<int>(j.nfft), power_, scratch);
  }

 private:
  struct Job {
    int64_t outer = 0, len = 0, inner = 0, nfft = 0;
  };
  int64_t axis_;
  int power_;
  int64_t nfft_ = 0;
  std::vector<Job> jobs_;
};

// ------------------------------------------------------------------------------ mel_filter_bank

class MelFilterBankOp : public Operator {
 public:
  explicit MelFilterBankOp(const OpSpec& spec) : Operator(spec) {
    p_.sample_rate = spec.get<double>("sample_rate");
    p_.nfilter = static_cast<int>(
        int_in(spec, "nfilter", spec.get<int64_t>("nfilter"), 1, 65536,
               "at least 1 and at most 65536 (the number of mel bands)"));
    p_.freq_low = spec.get<double>("freq_low");
    p_.freq_high = spec.get<double>("freq_high");
    p_.htk = spec.get<std::string>("mel_formula") == "htk";
    p_.normalize = spec.get<bool>("normalize");
    if (!(p_.sample_rate > 0) || !std::isfinite(p_.sample_rate))
      spec.arg_error("sample_rate", "must be a positive number of samples per second, got " +
                                        num(p_.sample_rate) + ".");
    const double nyquist = p_.sample_rate / 2;
    if (!(p_.freq_low >= 0))
      spec.arg_error("freq_low", "must be >= 0 Hz, got " + num(p_.freq_low) + ".");
    if (p_.freq_high < 0)
      spec.arg_error("freq_high", "must be >= 0 Hz (0: sample_rate / 2), got " +
                                      num(p_.freq_high) + ".");
    if (p_.freq_high == 0) p_.freq_high = nyquist;
    if (!(p_.freq_high <= nyquist))
      spec.arg_error("freq_high", "is " + num(p_.freq_high) + " Hz, above the Nyquist frequency (" +
                                      num(nyquist) + " Hz for sample_rate " +
                                      num(p_.sample_rate) + "); give at most sample_rate / 2.");
    if (!(p_.freq_low < p_.freq_high))
      spec.arg_error("freq_low", "is " + num(p_.freq_low) + " Hz, not below freq_high (" +
                                     num(p_.freq_high) + " Hz); the bands need freq_low < "
                                     "freq_high.");
  }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    require_float(spec_, in, "spectrogram");
    const std::string& layout = in.layout();
    OutputDesc out{DType::kFloat32, layout, {}};
    jobs_.assign(in.size(), Job{});
    for (size_t i = 0; i < in.size(); ++i) {
      const Shape& s = in.shape(i);
      const int ndim = static_cast<int>(s.size());
      int a;
      if (!layout.empty()) {
        const size_t f = layout.find('f');
        if (f == std::string::npos)
          fail(ErrorKind::kInvalidArgument,
               spec_.display_name() + ": the input layout \"" + layout + "\" has no frequency "
               "axis 'f'; give a spectrogram laid out \"ft\" or \"tf\" (fn.spectrogram's "
               "layout), or no layout for (..., frequency, time).");
        a = static_cast<int>(f);
      } else {
        if (ndim == 0)
          fail(ErrorKind::kInvalidArgument,
               spec_.display_name() + ": " + sample_name(i, s) + " is a scalar; give a "
               "spectrogram (frequency, time).");
        a = ndim == 1 ? 0 : ndim - 2;
      }
      Job& j = jobs_[i];
      split_at(s, a, &j.outer, &j.nbins, &j.inner);
      if (j.nbins < 2)
        fail(ErrorKind::kInvalidArgument,
             spec_.display_name() + ": " + sample_name(i, s) + " has " +
                 std::to_string(j.nbins) + " frequency bin" + (j.nbins == 1 ? "" : "s") +
                 " (axis " + std::to_string(a) + "); the filters need a spectrum of at least "
                 "2 bins (nfft >= 2).");
      Shape o = s;
      o[a] = p_.nfilter;
      out.shapes.push_back(o);
    }
    // One bank per spectrum size (nfft), built before the samples run and kept for the next
    // iterations (a few sizes at most).
    if (banks_.size() > 8) banks_.clear();
    for (const Job& j : jobs_) {
      bool found = false;
      for (const auto& b : banks_) found = found || b->nbins() == j.nbins;
      if (!found) banks_.push_back(std::make_unique<ka::MelFilterBank>(j.nbins, p_));
    }
    return {out};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const Job& j = jobs_[i];
    for (const auto& b : banks_) {
      if (b->nbins() == j.nbins) {
        b->apply(ws.output(0).data<float>(i), ws.input(0).data<float>(i), j.outer, j.inner);
        return;
      }
    }
  }

  // The GPU twin: each filter as its band of bins and weights (the CPU bank's), one launch for
  // the batch; the sums run over the bins in the CPU's order.
  void run_gpu(Workspace& ws, const std::vector<OutputDesc>& descs) {
    require_device_input(ws);
    const Batch& in = ws.input(0);
    ws.outputs.assign(1, allocate_device_batch(ws, descs[0].dtype, descs[0].shapes, descs[0].layout));
    Batch& out = ws.outputs[0];
    if (gpu_banks_.size() > 8) gpu_banks_.clear();
    auto find = [&](int64_t nbins) -> const kernels::cuda::BandMatrix* {
      for (const kernels::cuda::BandMatrix& g : gpu_banks_)
        if (g.n == nbins) return &g;
      return nullptr;
    };
    for (const auto& b : banks_)  // built once per spectrum size, kept with the CPU banks
      if (!find(b->nbins())) gpu_banks_.push_back(bands_of(*b));
    std::vector<const kernels::cuda::BandMatrix*> mats;
    std::vector<kernels::cuda::MatrixJob> jobs(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      const Job& j = jobs_[i];
      const kernels::cuda::BandMatrix* m = find(j.nbins);
      int index = static_cast<int>(std::find(mats.begin(), mats.end(), m) - mats.begin());
      if (index == static_cast<int>(mats.size())) mats.push_back(m);
      jobs[i] = {static_cast<const float*>(in[i].data), static_cast<float*>(out[i].data), j.outer,
                 j.inner, index};
    }
    kernels::cuda::band_matrix_gpu(ws, mats, jobs);
  }

 private:
  struct Job {
    int64_t outer = 0, nbins = 0, inner = 0;
  };
  // A bank's filters as bands: the bins from the first to the last nonzero weight of each row.
  static kernels::cuda::BandMatrix bands_of(const ka::MelFilterBank& bank) {
    const std::vector<double> m = bank.matrix();
    const int64_t nb = bank.nbins();
    kernels::cuda::BandMatrix r;
    r.n = nb;
    for (int f = 0; f < bank.nfilter(); ++f) {
      const double* row = m.data() + static_cast<size_t>(f) * nb;
      int64_t lo = 0, hi = nb - 1;
      while (lo < nb && row[lo] == 0) ++lo;
      while (hi >= lo && row[hi] == 0) --hi;
      r.first.push_back(lo < nb ? lo : 0);
      r.count.push_back(lo < nb ? hi - lo + 1 : 0);
      r.offset.push_back(static_cast<int64_t>(r.weights.size()));
      for (int64_t b = lo; b <= hi; ++b) r.weights.push_back(static_cast<float>(row[b]));
    }
    return r;
  }
  ka::MelParams p_;
  std::vector<Job> jobs_;
  std::vector<std::unique_ptr<ka::MelFilterBank>> banks_;
  std::vector<kernels::cuda::BandMatrix> gpu_banks_;  // the GPU twin's, per spectrum size
};

// ------------------------------------------------------------------------------ mfcc

class Mfcc : public Operator {
 public:
  explicit Mfcc(const OpSpec& spec)
      : Operator(spec),
        axis_(spec.get<int64_t>("axis")),
        dct_type_(static_cast<int>(std::clamp<int64_t>(spec.get<int64_t>("dct_type"), -1, 5))),
        n_mfcc_(spec.get<int64_t>("n_mfcc")),
        normalize_(spec.get<bool>("normalize")),
        lifter_(spec.get<float>("lifter")) {
    if (dct_type_ < 1 || dct_type_ > 4)
      spec.arg_error("dct_type", "must be 1, 2, 3 or 4, got " +
                                     std::to_string(spec.get<int64_t>("dct_type")) + ".");
    if (normalize_ && dct_type_ == 1)
      spec.arg_error("normalize", "is True, but DCT type I has no orthonormal form; use "
                                  "dct_type 2, 3 or 4, or normalize=False.");
    if (n_mfcc_ < 1)
      spec.arg_error("n_mfcc", "must be at least 1 (coefficients kept), got " +
                                   std::to_string(n_mfcc_) + ".");
  }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    require_float(spec_, in, "mel spectrogram");
    OutputDesc out{DType::kFloat32, in.layout(), {}};
    jobs_.assign(in.size(), Job{});
    for (size_t i = 0; i < in.size(); ++i) {
      const Shape& s = in.shape(i);
      const int ndim = static_cast<int>(s.size());
      if (ndim == 0)
        fail(ErrorKind::kInvalidArgument,
             spec_.display_name() + ": " + sample_name(i, s) + " is a scalar; give a mel "
             "spectrogram (mel bands, time).");
      const int a = resolve_axis(spec_, "axis", axis_, ndim, i, s);
      Job& j = jobs_[i];
      split_at(s, a, &j.outer, &j.n, &j.inner);
      if (dct_type_ == 1 && j.n < 2)
        fail(ErrorKind::kInvalidArgument,
             spec_.display_name() + ": " + sample_name(i, s) + " has " + std::to_string(j.n) +
                 " value" + (j.n == 1 ? "" : "s") + " along axis " + std::to_string(a) +
                 "; DCT type I needs at least 2.");
      // As DALI: never more coefficients than values.
      j.ndct = std::min(n_mfcc_, j.n);
      if (j.ndct > 0 && j.n > (int64_t{1} << 26) / j.ndct)
        spec_.arg_error("n_mfcc", "is " + std::to_string(n_mfcc_) + ": a table of " +
                                      std::to_string(j.ndct) + " x " + std::to_string(j.n) +
                                      " cosines for " + sample_name(i, s) + ", more than 2^26; "
                                      "give fewer coefficients.");
      Shape o = s;
      o[a] = j.ndct;
      out.shapes.push_back(o);
    }
    if (tables_.size() > 8) tables_.clear();
    for (const Job& j : jobs_) {
      bool found = false;
      for (const Table& t : tables_) found = found || (t.n == j.n && t.ndct == j.ndct);
      if (!found)
        tables_.push_back({j.n, j.ndct, ka::dct_table(j.n, j.ndct, dct_type_, normalize_, lifter_)});
    }
    return {out};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const Job& j = jobs_[i];
    for (const Table& t : tables_) {
      if (t.n == j.n && t.ndct == j.ndct) {
        ka::apply_table(ws.output(0).data<float>(i), ws.input(0).data<float>(i), t.values.data(),
                        j.outer, j.n, j.ndct, j.inner);
        return;
      }
    }
  }

  // The GPU twin: the CPU's cosine tables as full-width matrices, one launch for the batch; the
  // sums run in the CPU's order.
  void run_gpu(Workspace& ws, const std::vector<OutputDesc>& descs) {
    require_device_input(ws);
    const Batch& in = ws.input(0);
    ws.outputs.assign(1, allocate_device_batch(ws, descs[0].dtype, descs[0].shapes, descs[0].layout));
    Batch& out = ws.outputs[0];
    std::vector<kernels::cuda::BandMatrix> mats;
    std::vector<kernels::cuda::MatrixJob> jobs(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      const Job& j = jobs_[i];
      size_t index = 0;
      while (index < mats.size() &&
             !(mats[index].n == j.n && static_cast<int64_t>(mats[index].first.size()) == j.ndct))
        ++index;
      if (index == mats.size()) {
        for (const Table& t : tables_) {
          if (t.n != j.n || t.ndct != j.ndct) continue;
          kernels::cuda::BandMatrix m;
          m.n = t.n;
          m.first.assign(t.ndct, 0);
          m.count.assign(t.ndct, t.n);
          for (int64_t k = 0; k < t.ndct; ++k) m.offset.push_back(k * t.n);
          m.weights = t.values;
          mats.push_back(std::move(m));
          break;
        }
      }
      jobs[i] = {static_cast<const float*>(in[i].data), static_cast<float*>(out[i].data), j.outer,
                 j.inner, static_cast<int>(index)};
    }
    std::vector<const kernels::cuda::BandMatrix*> ptrs;
    for (const kernels::cuda::BandMatrix& m : mats) ptrs.push_back(&m);
    kernels::cuda::band_matrix_gpu(ws, ptrs, jobs);
  }

 private:
  struct Job {
    int64_t outer = 0, n = 0, inner = 0, ndct = 0;
  };
  struct Table {
    int64_t n, ndct;
    std::vector<float> values;
  };
  int64_t axis_;
  int dct_type_;
  int64_t n_mfcc_;
  bool normalize_;
  float lifter_;
  std::vector<Job> jobs_;
  std::vector<Table> tables_;
};

// ------------------------------------------------------------------------------ to_decibels

class ToDecibels : public Operator {
 public:
  explicit ToDecibels(const OpSpec& spec)
      : Operator(spec),
        multiplier_(spec.get<double>("multiplier")),
        reference_(spec.get<double>("reference")),
        cutoff_db_(spec.get<double>("cutoff_db")) {
    if (multiplier_ == 0 || !std::isfinite(multiplier_))
      spec.arg_error("multiplier", "must be a nonzero number (10 for power, 20 for amplitude), "
                                   "got " + num(multiplier_) + ".");
    if (!(reference_ >= 0) || !std::isfinite(reference_))
      spec.arg_error("reference", "must be a positive magnitude (or 0 for the largest value of "
                                  "each sample), got " + num(reference_) + ".");
    min_ratio_ = static_cast<float>(std::pow(10.0, cutoff_db_ / multiplier_));
    if (!(min_ratio_ > 0) || !std::isfinite(min_ratio_))
      spec.arg_error("cutoff_db", "is " + num(cutoff_db_) + " dB, which with multiplier " +
                                      num(multiplier_) + " is a ratio of 10^(" +
                                      num(cutoff_db_ / multiplier_) + "), outside float32; give "
                                      "a cutoff within +-" + num(37 * std::abs(multiplier_)) +
                                      " dB.");
  }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    require_float(spec_, in, "magnitudes");
    return {OutputDesc{DType::kFloat32, in.layout(), in.shapes()}};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const Batch& in = ws.input(0);
    ka::to_decibels(ws.output(0).data<float>(i), in.data<float>(i), volume(in.shape(i)),
                    static_cast<float>(multiplier_), reference_, min_ratio_);
  }

  // The GPU twin: the per-sample maxima (where no reference is given) in one launch, the
  // logarithms in another.
  void run_gpu(Workspace& ws, const std::vector<OutputDesc>& descs) {
    require_device_input(ws);
    const Batch& in = ws.input(0);
    ws.outputs.assign(1, allocate_device_batch(ws, descs[0].dtype, descs[0].shapes, descs[0].layout));
    Batch& out = ws.outputs[0];
    std::vector<kernels::cuda::DecibelsJob> jobs(in.size());
    for (size_t i = 0; i < in.size(); ++i)
      jobs[i] = {static_cast<const float*>(in[i].data), static_cast<float*>(out[i].data),
                 volume(in.shape(i))};
    kernels::cuda::to_decibels_gpu(ws, static_cast<float>(multiplier_), reference_, min_ratio_, jobs);
  }

 private:
  double multiplier_, reference_, cutoff_db_;
  float min_ratio_ = 0;
};

}  // namespace

STOKER_REGISTER_OP_NAMED(spectrogram, "spectrogram") {
  schema.doc("Short-time Fourier transform of one channel of float32 audio ((n,), (n, 1) or "
             "(1, n)): windows of window_length samples every window_step samples, multiplied "
             "by window_fn (Hann by default), zero-padded to nfft, |FFT|^power of the nfft // 2 "
             "+ 1 bins. With center_windows the signal is padded by window_length // 2 (mirrored "
             "or zeros) and there are n // window_step + 1 windows; without it only the windows "
             "inside the signal, (n - window_length) // window_step + 1. Output \"ft\" (bins, "
             "windows) or \"tf\".")
      .inputs(1, 1, {"input"})
      .outputs(1)
      .arg({.name = "nfft", .type = ArgType::kInt, .optional = true,
            .doc = "Size of the FFT, at least window_length (default: window_length); the output "
                   "has nfft // 2 + 1 bins."})
      .arg({.name = "window_length", .type = ArgType::kInt, .default_value = int64_t{512},
            .doc = "Window size in samples."})
      .arg({.name = "window_step", .type = ArgType::kInt, .default_value = int64_t{256},
            .doc = "Step between the windows in samples."})
      .arg({.name = "window_fn", .type = ArgType::kFloatList, .optional = true,
            .doc = "The window's window_length samples (default: a Hann window, 0.5 * (1 - "
                   "cos(2 pi (t + 0.5) / window_length)))."})
      .arg({.name = "power", .type = ArgType::kInt, .default_value = int64_t{2},
            .doc = "Exponent of the magnitude: 1 (amplitude) or 2 (power)."})
      .arg({.name = "center_windows", .type = ArgType::kBool, .default_value = true,
            .doc = "Pad the signal so that windows are centred at multiples of window_step."})
      .arg({.name = "reflect_padding", .type = ArgType::kBool, .default_value = true,
            .doc = "With center_windows: mirror the signal at its ends (else pad with zeros)."})
      .arg({.name = "layout", .type = ArgType::kString, .default_value = std::string("ft"),
            .doc = "Output layout: \"ft\" (frequency-major) or \"tf\" (time-major)."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<Spectrogram>(s); })
      STOKER_GPU_TWIN(Spectrogram);
}

STOKER_REGISTER_OP_NAMED(power_spectrum, "power_spectrum") {
  schema.doc("Power spectrum of a float32 signal along one axis: |FFT|^power of the nfft // 2 + 1 "
             "non-negative frequencies, the signal cut or zero-padded to nfft samples.")
      .inputs(1, 1, {"input"})
      .outputs(1)
      .arg({.name = "nfft", .type = ArgType::kInt, .optional = true,
            .doc = "Size of the FFT (default: the length of the transformed axis)."})
      .arg({.name = "axis", .type = ArgType::kInt, .default_value = int64_t{-1},
            .doc = "The axis transformed (negative: from the back); the last one by default."})
      .arg({.name = "power", .type = ArgType::kInt, .default_value = int64_t{2},
            .doc = "2: re^2 + im^2; 1: the magnitude sqrt(re^2 + im^2)."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<PowerSpectrum>(s); });
}

STOKER_REGISTER_OP_NAMED(mel_filter_bank, "mel_filter_bank") {
  schema.doc("Mel spectrogram from a float32 spectrogram: nfilter triangular filters, linear in "
             "Hz between points evenly spaced on the mel scale from freq_low to freq_high (as "
             "librosa.filters.mel). The frequency axis is the layout's 'f' (no layout: \"f\", "
             "\"ft\" or \"...ft\"); its nbins bins are taken for nfft = 2 (nbins - 1).")
      .inputs(1, 1, {"input"})
      .outputs(1)
      .arg({.name = "sample_rate", .type = ArgType::kFloat, .default_value = 44100.0,
            .doc = "Sampling rate of the audio signal, in Hz."})
      .arg({.name = "nfilter", .type = ArgType::kInt, .default_value = int64_t{128},
            .doc = "Number of mel filters."})
      .arg({.name = "freq_low", .type = ArgType::kFloat, .default_value = 0.0,
            .doc = "The lowest frequency, in Hz."})
      .arg({.name = "freq_high", .type = ArgType::kFloat, .default_value = 0.0,
            .doc = "The highest frequency, in Hz, at most sample_rate / 2 (0: sample_rate / 2)."})
      .arg({.name = "mel_formula", .type = ArgType::kString, .default_value = std::string("slaney"),
            .doc = "\"slaney\" (linear below 1 kHz, logarithmic above; librosa's default) or "
                   "\"htk\" (2595 log10(1 + f / 700)).",
            .choices = {"slaney", "htk"}})
      .arg({.name = "normalize", .type = ArgType::kBool, .default_value = true,
            .doc = "Divide each triangle by half its width in Hz (area 1); False: peaks of 1."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<MelFilterBankOp>(s); })
      STOKER_GPU_TWIN(MelFilterBankOp);
}

STOKER_REGISTER_OP_NAMED(mfcc, "mfcc") {
  schema.doc("Mel-frequency cepstral coefficients: the DCT of a float32 (log) mel spectrogram "
             "along `axis`, the first n_mfcc coefficients (at most the axis's length), optionally "
             "liftered. DCT types 1-4 as on Wikipedia (half of SciPy's unnormalised ones); with "
             "normalize, SciPy's norm='ortho' (librosa.feature.mfcc's).")
      .inputs(1, 1, {"input"})
      .outputs(1)
      .arg({.name = "axis", .type = ArgType::kInt, .default_value = int64_t{0},
            .doc = "The axis transformed (the mel bands); negative counts from the back."})
      .arg({.name = "dct_type", .type = ArgType::kInt, .default_value = int64_t{2},
            .doc = "Discrete cosine transform type: 1, 2, 3 or 4."})
      .arg({.name = "lifter", .type = ArgType::kFloat, .default_value = 0.0,
            .doc = "Cepstral lifter L: where nonzero, coefficient i is multiplied by 1 + L / 2 * "
                   "sin(pi (i + 1) / L)."})
      .arg({.name = "n_mfcc", .type = ArgType::kInt, .default_value = int64_t{20},
            .doc = "Number of coefficients."})
      .arg({.name = "normalize", .type = ArgType::kBool, .default_value = false,
            .doc = "Orthonormal DCT (not for dct_type 1)."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<Mfcc>(s); })
      STOKER_GPU_TWIN(Mfcc);
}

STOKER_REGISTER_OP_NAMED(to_decibels, "to_decibels") {
  schema.doc("Decibels of float32 magnitudes: multiplier * log10(max(10^(cutoff_db / "
             "multiplier), x / reference)), reference being each sample's largest value unless "
             "given.")
      .inputs(1, 1, {"input"})
      .outputs(1)
      .arg({.name = "multiplier", .type = ArgType::kFloat, .default_value = 10.0,
            .doc = "Factor of the logarithm: 10 for power, 20 for amplitude."})
      .arg({.name = "reference", .type = ArgType::kFloat, .default_value = 0.0,
            .doc = "Reference magnitude; 0: the largest value of each sample."})
      .arg({.name = "cutoff_db", .type = ArgType::kFloat, .default_value = -200.0,
            .doc = "The lowest output, in dB: smaller ratios saturate to it."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<ToDecibels>(s); })
      STOKER_GPU_TWIN(ToDecibels);
}

}  // namespace stoker
