// preemphasis_filter and nonsilent_region: the time-domain steps of DALI's speech pipelines,
// before the spectrogram and to trim leading and trailing silence.
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

bool signal_type(DType t) { return t != DType::kBool && t != DType::kFloat16 && t != DType::kNone; }

class PreemphasisFilter : public Operator {
 public:
  explicit PreemphasisFilter(const OpSpec& spec)
      : Operator(spec), dtype_(static_cast<DType>(spec.get<int64_t>("dtype"))) {
    const std::string b = spec.get<std::string>("border");
    border_ = b == "zero" ? ka::PreemphasisBorder::kZero
              : b == "reflect" ? ka::PreemphasisBorder::kReflect : ka::PreemphasisBorder::kClamp;
    if (!signal_type(dtype_))
      spec.arg_error("dtype", std::string("must be a numeric type other than float16 and bool "
                              "(FLOAT by default), got ") + dtype_name(dtype_) + ".");
  }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    if (in.size() > 0 && !signal_type(in.dtype()))
      fail(ErrorKind::kTypeMismatch,
           spec_.display_name() + ": the input must be a numeric signal other than float16 and "
           "bool, got " + dtype_name(in.dtype()) + "; convert it with fn.cast(x, "
           "dtype=types.FLOAT).");
    // Every sample's coefficient checked here, for the CPU and the GPU alike (setup keeps no
    // state: the runs read them again).
    for (size_t i = 0; i < in.size(); ++i) {
      const double c = ws.scalar_arg("preemph_coeff", static_cast<int64_t>(i), 0.97);
      if (!std::isfinite(c))
        spec_.arg_error("preemph_coeff", "must be a finite number, got " + num(c) +
                                             " for sample " + std::to_string(i) + ".");
    }
    return {OutputDesc{dtype_, in.layout(), in.shapes()}};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const Batch& in = ws.input(0);
    const double c = ws.scalar_arg("preemph_coeff", i, 0.97);
    // The whole sample is one signal, whatever its shape (as DALI reads it).
    ka::preemphasis(ws.output(0)[i].data, dtype_, in[i].data, in.dtype(), volume(in.shape(i)),
                    static_cast<float>(c), border_);
  }

  // The GPU twin: every sample's coefficient read on the host (setup checked them), one launch.
  void run_gpu(Workspace& ws, const std::vector<OutputDesc>& descs) {
    require_device_input(ws);
    const Batch& in = ws.input(0);
    ws.outputs.assign(1, allocate_device_batch(ws, descs[0].dtype, descs[0].shapes, descs[0].layout));
    Batch& out = ws.outputs[0];
    std::vector<kernels::cuda::PreemphasisJob> jobs(in.size());
    for (size_t i = 0; i < in.size(); ++i)
      jobs[i] = {in[i].data, out[i].data, volume(in.shape(i)),
                 static_cast<float>(ws.scalar_arg("preemph_coeff", static_cast<int64_t>(i), 0.97))};
    if (!in.size()) return;
    kernels::cuda::preemphasis_gpu(ws, dtype_, in.dtype(), border_, jobs);
  }

 private:
  DType dtype_;
  ka::PreemphasisBorder border_ = ka::PreemphasisBorder::kClamp;
};

class NonsilentRegionOp : public Operator {
 public:
  explicit NonsilentRegionOp(const OpSpec& spec) : Operator(spec) {
    p_.cutoff_db = spec.get<float>("cutoff_db");
    p_.reference_power = spec.get<double>("reference_power");
    const int64_t wl = spec.get<int64_t>("window_length");
    if (wl < 1 || wl > INT32_MAX)
      spec.arg_error("window_length", "must be at least 1 (samples over which the short-term "
                                      "power is averaged) and below 2^31, got " +
                                          std::to_string(wl) + ".");
    const int64_t ri = spec.get<int64_t>("reset_interval");
    if (ri == 0 || ri < -1 || ri > INT32_MAX)
      spec.arg_error("reset_interval", "must be a positive number of samples, or -1 for never, "
                                       "got " + std::to_string(ri) + ".");
    p_.window_length = static_cast<int>(wl);
    p_.reset_interval = static_cast<int>(ri);
    if (!(p_.reference_power >= 0) || !std::isfinite(p_.reference_power))
      spec.arg_error("reference_power", "must be a positive power (or 0 for the largest "
                                        "short-term power of each sample), got " +
                                            num(p_.reference_power) + ".");
    if (!std::isfinite(p_.cutoff_db))
      spec.arg_error("cutoff_db", "must be a finite number of dB, got " + num(p_.cutoff_db) + ".");
  }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    if (in.size() > 0 && !signal_type(in.dtype()))
      fail(ErrorKind::kTypeMismatch,
           spec_.display_name() + ": the input must be a numeric signal other than float16 and "
           "bool, got " + dtype_name(in.dtype()) + "; convert it with fn.cast(x, "
           "dtype=types.FLOAT).");
    for (size_t i = 0; i < in.size(); ++i) {
      const Shape& s = in.shape(i);
      if (s.size() != 1)
        fail(ErrorKind::kInvalidArgument,
             spec_.display_name() + ": sample " + std::to_string(i) + " has shape " +
                 to_string(s) + "; give a 1-D signal (mix channels down first, e.g. "
                 "decoders.audio(downmix=True)).");
    }
    std::vector<Shape> scalars(in.size(), Shape{});
    return {OutputDesc{DType::kInt32, "", scalars}, OutputDesc{DType::kInt32, "", scalars}};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    thread_local ka::SpectralScratch scratch;
    const Batch& in = ws.input(0);
    // An empty signal has no non-silent region: (0, 0).
    const ka::NonsilentRegion r =
        ka::nonsilent_region(in[i].data, in.dtype(), in.shape(i)[0], p_, scratch);
    if (r.begin > INT32_MAX || r.length > INT32_MAX)
      fail(ErrorKind::kInvalidArgument,
           spec_.display_name() + ": the region of sample " + std::to_string(i) + " (begin " +
               std::to_string(r.begin) + ", length " + std::to_string(r.length) +
               ") does not fit the int32 outputs.");
    *ws.output(0).data<int32_t>(i) = static_cast<int32_t>(r.begin);
    *ws.output(1).data<int32_t>(i) = static_cast<int32_t>(r.length);
  }

  // The GPU twin: the windowed power, its per-sample maximum and the first and last crossing of
  // the threshold in batched launches; begin and length stay on the GPU.
  void run_gpu(Workspace& ws, const std::vector<OutputDesc>& descs) {
    require_device_input(ws);
    const Batch& in = ws.input(0);
    ws.outputs.clear();
    for (const OutputDesc& d : descs)
      ws.outputs.push_back(allocate_device_batch(ws, d.dtype, d.shapes, d.layout));
    std::vector<kernels::cuda::NonsilentJob> jobs(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      const int64_t n = in.shape(i)[0];
      if (n >= INT32_MAX)
        fail(ErrorKind::kInvalidArgument,
             spec_.display_name() + ": sample " + std::to_string(i) + " has " +
                 std::to_string(n) + " values; its region could not fit the int32 outputs (at "
                 "most 2^31 - 2 values on the GPU). Split the signal.");
      jobs[i] = {in[i].data, n, static_cast<int32_t*>(ws.outputs[0][i].data),
                 static_cast<int32_t*>(ws.outputs[1][i].data)};
    }
    if (!in.size()) return;
    kernels::cuda::nonsilent_region_gpu(ws, in.dtype(), p_, jobs);
  }

 private:
  ka::NonsilentParams p_;
};

}  // namespace

STOKER_REGISTER_OP_NAMED(preemphasis_filter, "preemphasis_filter") {
  schema.doc("Preemphasis filter: y[t] = x[t] - preemph_coeff * x[t - 1], with x[-1] = 0 "
             "(border \"zero\"), x[0] (\"clamp\") or x[1] (\"reflect\"). A sample of any shape is "
             "filtered as one flat signal.")
      .inputs(1, 1, {"input"})
      .outputs(1)
      .arg({.name = "preemph_coeff", .type = ArgType::kFloat, .default_value = 0.97,
            .doc = "The preemphasis coefficient.", .tensor = true})
      .arg({.name = "border", .type = ArgType::kString, .default_value = std::string("clamp"),
            .doc = "What stands for x[-1]: \"zero\", \"clamp\" (x[0]) or \"reflect\" (x[1]).",
            .choices = {"zero", "clamp", "reflect"}})
      .arg({.name = "dtype", .type = ArgType::kDType, .default_value = int64_t(DType::kFloat32),
            .doc = "Output type (FLOAT by default); integers are rounded half away from zero and "
                   "saturated."})
      .backend(Backend::kCPU,
               [](const OpSpec& s) { return std::make_unique<PreemphasisFilter>(s); })
      STOKER_GPU_TWIN(PreemphasisFilter);
}

STOKER_REGISTER_OP_NAMED(nonsilent_region, "nonsilent_region") {
  schema.doc("Leading and trailing silence of a 1-D signal: the short-term power (mean square "
             "over window_length samples) is compared with reference_power * 10^(cutoff_db / "
             "10). Outputs the first sample of the non-silent region and its length (int32 "
             "scalars); both 0 when all of it is silent.")
      .inputs(1, 1, {"input"})
      .outputs(2, {"begin", "length"})
      .arg({.name = "cutoff_db", .type = ArgType::kFloat, .default_value = -60.0,
            .doc = "The threshold, in dB relative to reference_power, below which the signal is "
                   "silent."})
      .arg({.name = "window_length", .type = ArgType::kInt, .default_value = int64_t{2048},
            .doc = "Size of the sliding window of the short-term power."})
      .arg({.name = "reference_power", .type = ArgType::kFloat, .default_value = 0.0,
            .doc = "The reference power of the dB scale; 0: the largest short-term power of the "
                   "signal."})
      .arg({.name = "reset_interval", .type = ArgType::kInt, .default_value = int64_t{8192},
            .doc = "Float signals: the moving sum of squares is recomputed every this many "
                   "samples to avoid loss of precision (-1: never)."})
      .backend(Backend::kCPU,
               [](const OpSpec& s) { return std::make_unique<NonsilentRegionOp>(s); })
      STOKER_GPU_TWIN(NonsilentRegionOp);
}

}  // namespace stoker
