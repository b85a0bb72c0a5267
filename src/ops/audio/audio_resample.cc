// audio_resample: audio of shape (frames,) or (frames, channels) to another rate, through the
// same resampler as decoders.audio (libsoxr; see codecs/audio/resample.cc for how that differs
// from DALI's windowed sinc). The rate change comes from in_rate and out_rate, scale, or
// out_length, as in DALI; the output has DALI's length: ceil(frames * out_rate / in_rate),
// ceil(frames * scale), or out_length.
//
// Integer inputs are read as -1..1 (pcm.h: DALI's normalisation) and the result converted to
// `dtype` (default: the input's type) the same way.
//
// The GPU twin resamples with a Kaiser-windowed sinc designed to libsoxr's passband, stopband
// and rejection for the same quality (kernels/cuda/audio_gpu.cu): its values are the CPU's within
// about 1e-4 of full scale, not bit for bit.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "codecs/audio/audio_decoder.h"
#include "codecs/audio/pcm.h"
#include "kernels/cuda/audio_gpu.h"
#include "ops/audio/audio_args.h"
#include "ops/generic/gpu_twin.h"
#include "pipeline/operator.h"

namespace stoker {
namespace {

bool resamplable(DType t) {
  switch (t) {
    case DType::kInt8: case DType::kUInt8: case DType::kInt16: case DType::kUInt16:
    case DType::kInt32: case DType::kUInt32: case DType::kFloat32: return true;
    default: return false;
  }
}

std::string num(double v) {
  std::string s = std::to_string(v);
  while (s.size() > 1 && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

class AudioResample : public Operator {
 public:
  explicit AudioResample(const OpSpec& spec) : Operator(spec) {
    auto given = [&](const char* a) { return spec.has(a) || spec.is_tensor_arg(a); };
    const bool rates = given("in_rate") || given("out_rate");
    const int modes = int(rates) + int(given("scale")) + int(given("out_length"));
    if (modes != 1)
      fail(ErrorKind::kInvalidArgument,
           spec.display_name() + ": give exactly one of in_rate and out_rate (together), scale, "
           "or out_length, to say how much to resample; " +
           (modes == 0 ? std::string("none was given") : std::string("more than one was given")) + ".");
    if (rates && !(given("in_rate") && given("out_rate")))
      spec.arg_error(given("in_rate") ? "out_rate" : "in_rate",
                     std::string("is missing: in_rate and out_rate are given together (") +
                         (given("in_rate") ? "in_rate" : "out_rate") + " was given alone).");
    mode_ = rates ? Mode::kRates : given("scale") ? Mode::kScale : Mode::kLength;
    quality_ = spec.get<double>("quality");
    if (spec.has("dtype")) {
      dtype_ = static_cast<DType>(spec.get<int64_t>("dtype"));
      if (!resamplable(dtype_))
        spec.arg_error("dtype", "must be INT8, UINT8, INT16, UINT16, INT32, UINT32 or FLOAT (as "
                                "DALI), got " + audio_args::dali_type_name(dtype_) + ".");
    }
  }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    if (!resamplable(in.dtype()))
      spec_.arg_error("input", "must be audio of int8, uint8, int16, uint16, int32, uint32 or "
                               "float32 (as DALI), got " + std::string(dtype_name(in.dtype())) +
                               "; cast it first (fn.cast).");
    const DType out_type = dtype_ == DType::kNone ? in.dtype() : dtype_;
    const size_t n = in.size();
    rates_.assign(n, {1.0, 1.0});
    OutputDesc d{out_type, in.layout(), {}};
    for (size_t i = 0; i < n; ++i) {
      const Shape& s = in.shape(i);
      if (s.size() != 1 && s.size() != 2)
        spec_.arg_error("input", "must be audio of shape (frames,) or (frames, channels), but "
                                 "sample " + std::to_string(i) + " has shape " + to_string(s) + ".");
      const int64_t frames = s[0];
      const auto k = static_cast<int64_t>(i);
      int64_t out_frames = 0;
      if (mode_ == Mode::kRates) {
        const double a = ws.scalar_arg("in_rate", k, 0), b = ws.scalar_arg("out_rate", k, 0);
        for (auto [name, v] : {std::pair{"in_rate", a}, std::pair{"out_rate", b}})
          if (!(v > 0) || !std::isfinite(v))
            spec_.arg_error(name, "must be positive, got " + num(v) + " for sample " +
                                      std::to_string(i) + ".");
        rates_[i] = {a, b};
        out_frames = codecs::audio::resampled_length(frames, a, b);
      } else if (mode_ == Mode::kScale) {
        const double sc = ws.scalar_arg("scale", k, 1);
        if (!(sc >= 0) || !std::isfinite(sc))
          spec_.arg_error("scale", "must be 0 or more, got " + num(sc) + " for sample " +
                                       std::to_string(i) + ".");
        rates_[i] = {1.0, sc};
        out_frames = sc == 0 ? 0 : codecs::audio::resampled_length(frames, 1.0, sc);
      } else {
        const double len = ws.scalar_arg("out_length", k, 0);
        if (!(len >= 0) || len != std::floor(len))
          spec_.arg_error("out_length", "must be a whole number of frames, 0 or more, got " +
                                            num(len) + " for sample " + std::to_string(i) + ".");
        out_frames = static_cast<int64_t>(len);
        rates_[i] = {static_cast<double>(std::max<int64_t>(frames, 1)),
                     static_cast<double>(std::max<int64_t>(out_frames, 1))};
      }
      Shape o = s;
      o[0] = out_frames;
      d.shapes.push_back(o);
    }
    return {d};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const Batch& in = ws.input(0);
    Batch& out = ws.output(0);
    const Shape& s = in.shape(i);
    const Shape& os = out.shape(i);
    const int channels = s.size() == 2 ? static_cast<int>(s[1]) : 1;
    const int64_t frames = s[0], out_frames = os[0];
    const size_t n_in = static_cast<size_t>(volume(s)), n_out = static_cast<size_t>(volume(os));
    if (n_out == 0) return;
    thread_local std::vector<float> src, dst;
    src.resize(n_in);
    visit_dtype(in.dtype(), [&](auto t) {
      using T = decltype(t);
      if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
        const T* x = in.data<T>(i);
        for (size_t k = 0; k < n_in; ++k) src[k] = codecs::audio::pcm_to_float(x[k]);
      }
    });
    dst.resize(n_out);
    if (channels == 0) return;
    codecs::audio::resample(dst.data(), out_frames, src.data(), frames, channels, rates_[i].first,
                            rates_[i].second, quality_);
    visit_dtype(out.dtype(), [&](auto t) {
      using T = decltype(t);
      if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
        T* y = out.data<T>(i);
        for (size_t k = 0; k < n_out; ++k) y[k] = codecs::audio::pcm_from_float<T>(dst[k]);
      }
    });
  }

  // The GPU twin: one launch for the batch (setup checked the rates and sized the outputs).
  void run_gpu(Workspace& ws, const std::vector<OutputDesc>& descs) {
    require_device_input(ws);
    const Batch& in = ws.input(0);
    ws.outputs.assign(1, allocate_device_batch(ws, descs[0].dtype, descs[0].shapes, descs[0].layout));
    Batch& out = ws.outputs[0];
    std::vector<kernels::cuda::ResampleJob> jobs(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      const Shape& s = in.shape(i);
      jobs[i] = {in[i].data, out[i].data, s[0], out.shape(i)[0],
                 s.size() == 2 ? static_cast<int>(s[1]) : 1, rates_[i].first, rates_[i].second};
    }
    if (!in.size()) return;
    kernels::cuda::resample_gpu(ws, out.dtype(), in.dtype(), quality_, jobs);
  }

 private:
  enum class Mode { kRates, kScale, kLength };
  Mode mode_ = Mode::kScale;
  double quality_ = 50;
  DType dtype_ = DType::kNone;
  std::vector<std::pair<double, double>> rates_;  // (in, out) per sample
};

}  // namespace

STOKER_REGISTER_OP_NAMED(audio_resample, "audio_resample") {
  schema.doc("Resamples audio of shape (frames,) or (frames, channels) (libsoxr on the CPU; on the "
             "GPU a windowed sinc with libsoxr's filter specification). Say how much "
             "with in_rate and out_rate, scale, or out_length; the output has ceil(frames * "
             "out_rate / in_rate), ceil(frames * scale) or out_length frames, as in DALI.")
      .inputs(1, 1, {"input"}).outputs(1)
      .arg({.name = "in_rate", .type = ArgType::kFloat, .optional = true,
            .doc = "The input's sampling rate (any unit; only out_rate / in_rate matters). Given "
                   "with out_rate.", .tensor = true})
      .arg({.name = "out_rate", .type = ArgType::kFloat, .optional = true,
            .doc = "The output's sampling rate, in the unit of in_rate.", .tensor = true})
      .arg({.name = "scale", .type = ArgType::kFloat, .optional = true,
            .doc = "Output rate / input rate: scale=2 gives twice as many frames.", .tensor = true})
      .arg({.name = "out_length", .type = ArgType::kInt, .optional = true,
            .doc = "The number of output frames; the rate changes by out_length / frames.",
            .tensor = true})
      .arg({.name = "quality", .type = ArgType::kFloat, .default_value = 50.0,
            .doc = audio_args::quality_doc(), .min = 0.0, .max = 100.0})
      .arg({.name = "dtype", .type = ArgType::kDType, .optional = true,
            .doc = "Output type (default: the input's): INT8, UINT8, INT16, UINT16, INT32, UINT32 "
                   "or FLOAT. Integers stand for -1..1 (signed: v / max; unsigned: 0 is -1, max "
                   "is 1), as in DALI."})
      .backend(Backend::kCPU, [](const OpSpec& s) {
        audio_args::require_soxr(s);
        return std::make_unique<AudioResample>(s);
      }) STOKER_GPU_TWIN(AudioResample);
}

}  // namespace stoker
