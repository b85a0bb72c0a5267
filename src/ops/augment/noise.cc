// noise.gaussian, noise.salt_and_pepper, noise.shot: random noise added to the input, drawn from
// the counter-based stream of (seed, operator instance, iteration, sample), so a seed gives the
// same noise whatever num_threads is. Output: the input's shape, type and layout. Each has a GPU
// twin that draws the same numbers (kernels/cuda/augment_gpu.h).
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "kernels/cpu/augment/augment.h"
#include "kernels/cuda/augment_gpu.h"
#include "ops/generic/gpu_twin.h"
#include "pipeline/operator.h"

namespace stoker {
namespace {

enum class Noise { kGaussian, kSaltAndPepper, kShot };

// DALI's types for these operators, and double.
bool noise_dtype(DType t) {
  switch (t) {
    case DType::kUInt8: case DType::kInt8: case DType::kUInt16: case DType::kInt16:
    case DType::kUInt32: case DType::kInt32: case DType::kUInt64: case DType::kInt64:
    case DType::kFloat32: case DType::kFloat64:
      return true;
    default:
      return false;
  }
}

template <typename F>
void visit_noise_dtype(DType t, F&& f) {
  switch (t) {
    case DType::kUInt8: return f(uint8_t{});
    case DType::kInt8: return f(int8_t{});
    case DType::kUInt16: return f(uint16_t{});
    case DType::kInt16: return f(int16_t{});
    case DType::kUInt32: return f(uint32_t{});
    case DType::kInt32: return f(int32_t{});
    case DType::kUInt64: return f(uint64_t{});
    case DType::kInt64: return f(int64_t{});
    case DType::kFloat32: return f(float{});
    case DType::kFloat64: return f(double{});
    default: fail(ErrorKind::kInternal, "noise: unexpected element type");
  }
}

std::string num(double v) {
  char b[32];
  snprintf(b, sizeof(b), "%g", v);
  return b;
}

class NoiseOp : public Operator {
 public:
  NoiseOp(const OpSpec& spec, Noise kind) : Operator(spec), kind_(kind) {
    if (kind_ == Noise::kSaltAndPepper) per_channel_ = spec.get<bool>("per_channel");
  }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    if (!noise_dtype(in.dtype()))
      fail(ErrorKind::kTypeMismatch,
           spec_.display_name() + ": input 0 has type " + dtype_name(in.dtype()) +
               ", which noise cannot be added to. Supported types: uint8, int8, uint16, int16, "
               "uint32, int32, uint64, int64, float32, float64; cast the input first "
               "(fn.cast).");
    channels_.assign(in.size(), 1);
    channel_first_ = false;
    if (kind_ == Noise::kSaltAndPepper && !per_channel_) {
      // One draw per pixel, shared by its channels: where is C? An empty layout means channels
      // last, as in DALI; a layout without C has no channels to share a draw.
      const std::string& layout = in.layout();
      int c_axis = -1;
      if (layout.empty()) {
        c_axis = in.ndim() >= 2 ? in.ndim() - 1 : -1;
      } else {
        auto p = layout.find('C');
        if (p != std::string::npos) c_axis = static_cast<int>(p);
      }
      if (c_axis >= 0 && c_axis != 0 && c_axis != in.ndim() - 1)
        fail(ErrorKind::kInvalidArgument,
             spec_.display_name() + ": per_channel=False needs the channels first or last in "
                                    "the layout, got layout '" + layout + "'. Transpose the "
                                    "input (fn.transpose) or pass per_channel=True.");
      if (c_axis >= 0) {
        channel_first_ = c_axis == 0 && in.ndim() > 1;
        for (size_t i = 0; i < in.size(); ++i) channels_[i] = in.shape(i)[c_axis];
      }
    }
    return {OutputDesc{in.dtype(), in.layout(), in.shapes()}};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const Batch& in = ws.input(0);
    Batch& out = ws.output(0);
    const int64_t n = volume(in.shape(i));
    Philox rng = ws.rng(i);
    switch (kind_) {
      case Noise::kGaussian: {
        const auto [mean, stddev] = gaussian_params(ws, i);
        visit_noise_dtype(in.dtype(), [&](auto t) {
          using T = decltype(t);
          kernels::gaussian_noise(out.data<T>(i), in.data<T>(i), n, mean, stddev, rng);
        });
        break;
      }
      case Noise::kSaltAndPepper: {
        const kernels::SaltAndPepper p = salt_pepper_params(ws, i, in.dtype());
        visit_noise_dtype(in.dtype(), [&](auto t) {
          using T = decltype(t);
          kernels::salt_and_pepper(out.data<T>(i), in.data<T>(i), n, channels_[i], channel_first_, p, rng);
        });
        break;
      }
      case Noise::kShot: {
        const double factor = shot_factor(ws, i);
        visit_noise_dtype(in.dtype(), [&](auto t) {
          using T = decltype(t);
          kernels::shot_noise(out.data<T>(i), in.data<T>(i), n, factor,
                              rng_key(ws.spec->seed, static_cast<uint64_t>(ws.spec->instance)),
                              static_cast<uint64_t>(ws.iteration),
                              static_cast<uint32_t>(ws.origins ? (*ws.origins)[i] : i));
        });
        break;
      }
    }
  }

  // The GPU twin: the same per-sample parameters and random streams, one launch for the batch
  // (kernels/cuda/augment_gpu.h).
  void run_gpu(Workspace& ws, const std::vector<OutputDesc>& descs) {
    require_device_input(ws);
    const Batch& in = ws.input(0);
    ws.outputs.assign(1, allocate_device_batch(ws, descs[0].dtype, descs[0].shapes, descs[0].layout));
    Batch& out = ws.outputs[0];
    std::vector<kernels::cuda::NoiseJob> jobs(in.size());
    for (size_t k = 0; k < in.size(); ++k) {
      const int64_t i = static_cast<int64_t>(k);
      kernels::cuda::NoiseJob& j = jobs[k];
      j.in = in[k].data;
      j.out = out[k].data;
      j.n = volume(in.shape(k));
      // Workspace::rng()'s stream.
      j.key = rng_key(ws.spec->seed, static_cast<uint64_t>(ws.spec->instance));
      j.iteration = static_cast<uint64_t>(ws.iteration);
      j.sample = static_cast<uint32_t>(ws.origins ? (*ws.origins)[k] : i);
      if (kind_ == Noise::kGaussian) {
        std::tie(j.mean, j.stddev) = gaussian_params(ws, i);
      } else if (kind_ == Noise::kShot) {
        j.factor = shot_factor(ws, i);
      } else {
        j.sp = salt_pepper_params(ws, i, in.dtype());
        j.channels = channels_[k];
        j.channel_first = channel_first_;
      }
    }
    if (kind_ == Noise::kGaussian) kernels::cuda::gaussian_noise_gpu(ws, in.dtype(), jobs);
    else if (kind_ == Noise::kShot) kernels::cuda::shot_noise_gpu(ws, in.dtype(), jobs);
    else kernels::cuda::salt_and_pepper_gpu(ws, in.dtype(), jobs);
  }

 private:
  double shot_factor(const Workspace& ws, int64_t i) const {
    const double factor = ws.scalar_arg("factor", i, 20.0);
    if (!(factor >= 0.0) || !std::isfinite(factor))
      spec_.arg_error("factor", "must be a finite number >= 0 (0 leaves the input as it is), "
                                "got " + num(factor) + " for sample " + std::to_string(i) + ".");
    return factor;
  }

  // (mean, stddev) of sample i, checked.
  std::pair<double, double> gaussian_params(const Workspace& ws, int64_t i) const {
    double mean = ws.scalar_arg("mean", i, 0.0);
    double stddev = ws.scalar_arg("stddev", i, 1.0);
    if (!std::isfinite(mean))
      spec_.arg_error("mean", "must be a finite number, got " + num(mean) + " for sample " +
                                  std::to_string(i) + ".");
    if (!(stddev >= 0.0) || !std::isfinite(stddev))
      spec_.arg_error("stddev", "must be a finite number >= 0, got " + num(stddev) +
                                    " for sample " + std::to_string(i) + ".");
    return {mean, stddev};
  }

  // Sample i's probabilities and values (converted to the element type), checked.
  kernels::SaltAndPepper salt_pepper_params(const Workspace& ws, int64_t i, DType type) const {
    kernels::SaltAndPepper p;
    double prob = ws.scalar_arg("prob", i, 0.05);
    double svp = ws.scalar_arg("salt_vs_pepper", i, 0.5);
    if (!(prob >= 0.0 && prob <= 1.0))
      spec_.arg_error("prob", "must be a probability in [0, 1], got " + num(prob) +
                                  " for sample " + std::to_string(i) + ".");
    if (!(svp >= 0.0 && svp <= 1.0))
      spec_.arg_error("salt_vs_pepper", "must be a probability in [0, 1], got " + num(svp) +
                                            " for sample " + std::to_string(i) + ".");
    p.prob = static_cast<float>(prob);
    p.salt_vs_pepper = static_cast<float>(svp);
    visit_noise_dtype(type, [&](auto t) {
      using T = decltype(t);
      // Defaults: the type's range for integers, [-1, 1] for floats, as in DALI.
      constexpr bool fp = std::is_floating_point_v<T>;
      double salt_default = fp ? 1.0 : static_cast<double>(std::numeric_limits<T>::max());
      double pepper_default = fp ? -1.0 : static_cast<double>(std::numeric_limits<T>::lowest());
      double salt = ws.has_arg("salt_val") ? ws.scalar_arg("salt_val", i, 0) : salt_default;
      double pepper = ws.has_arg("pepper_val") ? ws.scalar_arg("pepper_val", i, 0) : pepper_default;
      if (std::isnan(salt))
        spec_.arg_error("salt_val", "must be a number, got nan for sample " + std::to_string(i) + ".");
      if (std::isnan(pepper))
        spec_.arg_error("pepper_val", "must be a number, got nan for sample " + std::to_string(i) + ".");
      p.salt = kernels::salt_pepper_value<T>(salt);
      p.pepper = kernels::salt_pepper_value<T>(pepper);
    });
    return p;
  }

  Noise kind_;
  bool per_channel_ = false;
  bool channel_first_ = false;
  std::vector<int64_t> channels_;  // values that share one draw, per sample
};

void noise_common(OpSchema& s) {
  s.inputs(1, 1, {"input"}).outputs(1).random();
  s.arg({.name = "seed", .type = ArgType::kInt, .default_value = int64_t{-1},
         .doc = "Random seed; -1 takes it from the pipeline's seed and this operator's place in "
                "the graph."});
}

}  // namespace

STOKER_REGISTER_OP_NAMED(noise_gaussian, "noise.gaussian") {
  noise_common(schema);
  schema.doc("Applies gaussian noise to the input: out = in + N(mean, stddev), rounded (halves "
             "away from zero) and saturated to the input's type. The shape and data type of the "
             "output match the input.")
      .arg({.name = "mean", .type = ArgType::kFloat, .default_value = 0.0,
            .doc = "Mean of the distribution.", .tensor = true})
      .arg({.name = "stddev", .type = ArgType::kFloat, .default_value = 1.0,
            .doc = "Standard deviation of the distribution (>= 0).", .tensor = true, .min = 0.0})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<NoiseOp>(s, Noise::kGaussian); })
      STOKER_GPU_TWIN_WITH(NoiseOp, Noise::kGaussian);
}

STOKER_REGISTER_OP_NAMED(noise_salt_and_pepper, "noise.salt_and_pepper") {
  noise_common(schema);
  schema.doc("Applies salt-and-pepper noise to the input: each value (or pixel) is replaced, with "
             "probability prob, by salt (with probability salt_vs_pepper) or pepper. The shape and "
             "data type of the output match the input.")
      .arg({.name = "prob", .type = ArgType::kFloat, .default_value = 0.05,
            .doc = "Probability of an output value to take a salt or pepper value.", .tensor = true,
            .min = 0.0, .max = 1.0})
      .arg({.name = "salt_vs_pepper", .type = ArgType::kFloat, .default_value = 0.5,
            .doc = "Probability of a corrupted output value to take a salt value.", .tensor = true,
            .min = 0.0, .max = 1.0})
      .arg({.name = "salt_val", .type = ArgType::kFloat, .optional = true,
            .doc = "Value of \"salt\" (default: 1.0 for floating point types, the type's maximum "
                   "otherwise), converted to the input's type (truncated toward zero, saturated).",
            .tensor = true})
      .arg({.name = "pepper_val", .type = ArgType::kFloat, .optional = true,
            .doc = "Value of \"pepper\" (default: -1.0 for floating point types, the type's minimum "
                   "otherwise), converted to the input's type (truncated toward zero, saturated).",
            .tensor = true})
      .arg({.name = "per_channel", .type = ArgType::kBool, .default_value = false,
            .doc = "Draw the noise for each channel independently. If False, one draw per pixel "
                   "applies to all its channels (the layout's C axis must be first or last; an "
                   "empty layout means channels last)."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<NoiseOp>(s, Noise::kSaltAndPepper); })
      STOKER_GPU_TWIN_WITH(NoiseOp, Noise::kSaltAndPepper);
}

STOKER_REGISTER_OP_NAMED(noise_shot, "noise.shot") {
  noise_common(schema);
  schema.doc("Applies shot noise to the input: out = poisson(max(0, in / factor)) * factor, "
             "rounded and saturated to the input's type; factor = 0 leaves the input as it is. "
             "The larger the factor, the more noise. The shape and data type of the output match "
             "the input.")
      .arg({.name = "factor", .type = ArgType::kFloat, .default_value = 20.0,
            .doc = "Factor parameter: the value one event adds (>= 0).", .tensor = true, .min = 0.0})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<NoiseOp>(s, Noise::kShot); })
      STOKER_GPU_TWIN_WITH(NoiseOp, Noise::kShot);
}

}  // namespace stoker
