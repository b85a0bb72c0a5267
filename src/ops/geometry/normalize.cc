// normalize: out = scale * (in - mean) / stddev + shift, with mean and stddev given (scalars or
// per-sample tensors) or computed over the reduced axes, per sample or over the whole batch.
#include <cmath>

#include "kernels/cpu/geometry/normalize.h"
#include "kernels/cuda/normalize_gpu.h"
#include "ops/generic/gpu_twin.h"
#include "ops/geometry/geometry_common.h"
#include "pipeline/gpu_batch.h"

namespace stoker {
namespace {

class Normalize : public Operator {
 public:
  explicit Normalize(const OpSpec& spec) : Operator(spec), axes_(spec_, /*exclusive=*/true) {
    batch_ = spec.get<bool>("batch");
    ddof_ = spec.get<int64_t>("ddof");
    epsilon_ = spec.get<double>("epsilon");
    scale_ = spec.get<double>("scale");
    shift_ = spec.get<double>("shift");
    dtype_ = static_cast<DType>(spec.get<int64_t>("dtype"));
    if (dtype_ == DType::kBool) spec.arg_error("dtype", "must be a numeric type, got bool.");
    has_mean_ = spec.has("mean") || spec.is_tensor_arg("mean");
    has_std_ = spec.has("stddev") || spec.is_tensor_arg("stddev");
  }

  bool setup_reads_input_data() const override { return batch_ && !(has_mean_ && has_std_); }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    if (in.dtype() == DType::kBool) fail(ErrorKind::kTypeMismatch, "expects numeric input, got bool.");
    const int64_t n = static_cast<int64_t>(in.size());
    reduce_ = reduce_mask(ws, in);
    stats_.assign(n, {});
    ready_.assign(n, false);
    for (int64_t i = 0; i < n; ++i) {
      Stats& s = stats_[i];
      s.shape = kernels::reduced_shape(in.shape(i), reduce_);
      if (has_mean_) s.mean = given(ws, "mean", i, s.shape);
      if (has_std_) s.stddev = given(ws, "stddev", i, s.shape);
    }
    if (has_mean_ && has_std_) {
      for (int64_t i = 0; i < n; ++i) {
        finish(stats_[i], {});
        ready_[i] = true;
      }
    } else if (batch_ && n > 0) {
      check_batch_shapes();
      // The GPU twin computes the statistics of device data on the device.
      if (in.memory() != MemoryKind::kDevice) batch_stats(in);
    }
    return {OutputDesc{dtype_, in.layout(), in.shapes()}};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const Batch& in = ws.input(0);
    Batch& out = ws.output(0);
    Stats& s = stats_[i];
    const Shape& shape = in.shape(i);
    if (!ready_[i]) sample_stats(in, i);
    visit_dtype(in.dtype(), [&](auto ti) {
      using In = decltype(ti);
      visit_dtype(dtype_, [&](auto to) {
        using Out = decltype(to);
        if constexpr (!std::is_same_v<In, bool> && !std::is_same_v<Out, bool>)
          kernels::normalize_apply<Out, In>(out.data<Out>(i), in.data<In>(i), shape, reduce_,
                                            s.mean_f.data(), s.factor.data(), static_cast<float>(shift_));
      });
    });
  }

  // GPU twin: the same statistics (given ones finished by setup(), computed ones on the device)
  // and the same arithmetic, the whole batch at once.
  void run_gpu(Workspace& ws, const std::vector<OutputDesc>& descs) {
    namespace kc = kernels::cuda;
    require_device_input(ws);
    const Batch& in = ws.input(0);
    const OutputDesc& d = descs[0];
    const int64_t n = static_cast<int64_t>(in.size());
    for (int64_t i = 0; i < n; ++i)
      if (!kc::normalize_gpu_supports(dtype_, in.dtype(), in.shape(i), reduce_))
        fail(ErrorKind::kUnsupported,
             spec_.display_name() + ": the GPU backend normalises up to " +
                 std::to_string(kc::kMaxNormalizeDims) + " alternating reduced and kept axes; sample " +
                 std::to_string(i) + " has shape " + to_string(in.shape(i)) + ". Run it with device='cpu'.");
    kc::NormalizeArgs a;
    a.reduce = reduce_;
    a.batch = batch_;
    a.ddof = ddof_;
    a.epsilon = epsilon_;
    a.scale = scale_;
    a.shift = static_cast<float>(shift_);
    if (has_mean_ && has_std_) {
      for (const Stats& s : stats_) {
        a.mean_f.push_back(s.mean_f);
        a.factor.push_back(s.factor);
      }
    } else {
      if (has_mean_)
        for (const Stats& s : stats_) a.mean.push_back(s.mean);
      if (has_std_)
        for (const Stats& s : stats_) a.stddev.push_back(s.stddev);
      if (!has_std_) {  // the divisors of the variances, as divide_var checks them
        if (batch_) {
          int64_t count = 0;
          for (int64_t i = 0; i < n; ++i) count += reduced_count(in.shape(i));
          if (n > 0) check_ddof(count);
        } else {
          for (int64_t i = 0; i < n; ++i) check_ddof(reduced_count(in.shape(i)), i);
        }
      }
    }
    ws.outputs.assign(1, allocate_device_batch(ws, d.dtype, d.shapes, d.layout));
    Batch& out = ws.outputs[0];
    std::vector<kc::NormalizeSample> samples(n);
    for (int64_t i = 0; i < n; ++i) samples[i] = {in[i].data, out[i].data, in.shape(i)};
    kc::normalize_gpu(ws, dtype_, in.dtype(), samples, a);
  }

 private:
  struct Stats {
    Shape shape;                       // of mean and stddev: 1 on reduced axes
    std::vector<double> mean, stddev;  // given ones; computed ones fill mean (stddev via var)
    std::vector<float> mean_f, factor;
  };

  std::vector<bool> reduce_mask(const Workspace& ws, const Batch& in) const {
    const int nd = in.ndim();
    const std::string& layout = in.layout();
    std::vector<bool> r(nd, false);
    if (axes_.given()) {
      for (int d : axes_.resolve(layout, nd)) r[d] = true;
      return r;
    }
    // DALI: without axes, a tensor mean or stddev tells the reduced axes by its 1s; otherwise
    // everything is reduced.
    for (const char* name : {"mean", "stddev"}) {
      auto it = spec_.tensor_args.find(name);
      if (it == spec_.tensor_args.end() || in.size() == 0) continue;
      const Shape& ts = ws.arg_inputs[it->second]->shape(0);
      if (static_cast<int>(ts.size()) == nd && volume(ts) != 1) {
        for (int d = 0; d < nd; ++d) r[d] = ts[d] == 1;
        return r;
      }
    }
    r.assign(nd, true);
    return r;
  }

  // A given mean or stddev for one sample, broadcast to the statistics' shape.
  std::vector<double> given(const Workspace& ws, const char* name, int64_t i, const Shape& shape) const {
    const int64_t vol = volume(shape);
    auto it = spec_.tensor_args.find(name);
    if (it == spec_.tensor_args.end()) return std::vector<double>(vol, spec_.get<double>(name));
    const Batch& b = *ws.arg_inputs[it->second];
    const Shape& ts = b.shape(i);
    std::vector<double> v = geometry::sample_values(b, i);
    if (volume(ts) == 1) return std::vector<double>(vol, v[0]);
    if (ts != shape)
      spec_.arg_error(name, "for sample " + std::to_string(i) + " has shape " + to_string(ts) +
                                "; expected " + to_string(shape) +
                                " (1 on the reduced axes, the input's extent elsewhere) or a scalar.");
    return v;
  }

  int64_t reduced_count(const Shape& in_shape) const {
    int64_t c = 1;
    for (size_t d = 0; d < in_shape.size(); ++d)
      if (reduce_[d]) c *= in_shape[d];
    return c;
  }

  void sample_stats(const Batch& in, int64_t i) {
    Stats& s = stats_[i];
    const Shape& shape = in.shape(i);
    const int64_t vol = volume(s.shape), count = reduced_count(shape);
    std::vector<double> var;
    visit_dtype(in.dtype(), [&](auto t) {
      using T = decltype(t);
      if constexpr (!std::is_same_v<T, bool>) {
        if (!has_mean_) {
          s.mean.assign(vol, 0.0);
          kernels::add_sums(s.mean.data(), in.data<T>(i), shape, reduce_);
          for (double& m : s.mean) m = count > 0 ? m / count : 0.0;
        }
        if (!has_std_) {
          var.assign(vol, 0.0);
          kernels::add_squared_deviations(var.data(), in.data<T>(i), shape, reduce_, s.mean.data());
        }
      }
    });
    if (!has_std_) divide_var(var, count);
    finish(s, var);
    ready_[i] = true;
  }

  void check_batch_shapes() const {
    const Shape& first = stats_[0].shape;
    for (size_t i = 1; i < stats_.size(); ++i)
      if (stats_[i].shape != first)
        fail(ErrorKind::kInvalidArgument,
             "batch=True needs all samples to have the same extents in the axes that are not reduced; "
             "sample 0 has statistics of shape " + to_string(first) + ", sample " + std::to_string(i) +
                 " of shape " + to_string(stats_[i].shape) + ".");
  }

  void batch_stats(const Batch& in) {
    const int64_t n = static_cast<int64_t>(in.size());
    const int64_t vol = volume(stats_[0].shape);
    int64_t count = 0;
    for (int64_t i = 0; i < n; ++i) count += reduced_count(in.shape(i));
    std::vector<double> mean(vol, 0.0), var(vol, 0.0);
    visit_dtype(in.dtype(), [&](auto t) {
      using T = decltype(t);
      if constexpr (!std::is_same_v<T, bool>) {
        if (!has_mean_) {
          for (int64_t i = 0; i < n; ++i) kernels::add_sums(mean.data(), in.data<T>(i), in.shape(i), reduce_);
          for (double& m : mean) m = count > 0 ? m / count : 0.0;
          for (int64_t i = 0; i < n; ++i) stats_[i].mean = mean;
        }
        if (!has_std_)
          for (int64_t i = 0; i < n; ++i)
            kernels::add_squared_deviations(var.data(), in.data<T>(i), in.shape(i), reduce_,
                                            stats_[i].mean.data());
      }
    });
    if (!has_std_) divide_var(var, count);
    for (int64_t i = 0; i < n; ++i) {
      finish(stats_[i], var);
      ready_[i] = true;
    }
  }

  void check_ddof(int64_t count, int64_t sample = -1) const {
    if (count - ddof_ <= 0)
      spec_.arg_error("ddof", "must be less than the number of elements each statistic is taken over (" +
                                  std::to_string(count) + "), got " + std::to_string(ddof_) +
                                  (sample >= 0 ? " for sample " + std::to_string(sample) : std::string()) + ".");
  }

  void divide_var(std::vector<double>& var, int64_t count) const {
    check_ddof(count);
    for (double& v : var) v /= static_cast<double>(count - ddof_);
  }

  // factor = scale / sqrt(var + epsilon); a zero denominator gives factor 0 (output = shift)
  // rather than inf * 0 = NaN for a constant input.
  void finish(Stats& s, const std::vector<double>& var) const {
    const size_t vol = s.mean.size();
    s.mean_f.resize(vol);
    s.factor.resize(vol);
    for (size_t k = 0; k < vol; ++k) {
      double v = has_std_ ? s.stddev[k] * s.stddev[k] : var[k];
      v += epsilon_;
      s.mean_f[k] = static_cast<float>(s.mean[k]);
      s.factor[k] = v > 0 ? static_cast<float>(scale_ / std::sqrt(v)) : 0.0f;
    }
  }

  bool batch_ = false, has_mean_ = false, has_std_ = false;
  int64_t ddof_ = 0;
  double epsilon_ = 0, scale_ = 1, shift_ = 0;
  DType dtype_ = DType::kFloat32;
  geometry::AxisArgs axes_;
  std::vector<bool> reduce_;
  std::vector<Stats> stats_;
  std::vector<bool> ready_;
};

}  // namespace

STOKER_REGISTER_OP_NAMED(normalize, "normalize") {
  schema
      .doc("Normalises: out = scale * (in - mean) / stddev + shift. mean and stddev are given "
           "(scalars, or per-sample tensors with extent 1 on the reduced axes) or computed over "
           "the reduced axes (axes / axis_names; default: all), per sample or, with batch=True, "
           "over the whole batch. stddev is sqrt(variance + epsilon) with variance's divisor "
           "N - ddof; a zero stddev gives the output 'shift'.")
      .inputs(1, 1, {"input"})
      .outputs(1)
      .arg({.name = "axes", .type = ArgType::kIntList, .optional = true,
            .doc = "Indices of the reduced axes (negative ones count from the end)."})
      .arg({.name = "axis_names", .type = ArgType::kString, .optional = true,
            .doc = "Layout letters of the reduced axes, e.g. 'HW'."})
      .arg({.name = "batch", .type = ArgType::kBool, .default_value = false,
            .doc = "Compute mean and stddev over the whole batch instead of per sample."})
      .arg({.name = "ddof", .type = ArgType::kInt, .default_value = int64_t{0},
            .doc = "Delta degrees of freedom: the variance divides by N - ddof.", .min = 0})
      .arg({.name = "dtype", .type = ArgType::kDType, .default_value = int64_t{static_cast<int>(DType::kFloat32)},
            .doc = "Output type; integers round half to even and saturate (use scale and shift)."})
      .arg({.name = "epsilon", .type = ArgType::kFloat, .default_value = 0.0,
            .doc = "Added to the variance before the square root.", .min = 0.0})
      .arg({.name = "mean", .type = ArgType::kFloat, .optional = true,
            .doc = "Mean to subtract; computed when not given.", .tensor = true})
      .arg({.name = "stddev", .type = ArgType::kFloat, .optional = true,
            .doc = "Standard deviation to divide by; computed when not given.", .tensor = true, .min = 0.0})
      .arg({.name = "scale", .type = ArgType::kFloat, .default_value = 1.0,
            .doc = "Multiplies the normalised value."})
      .arg({.name = "shift", .type = ArgType::kFloat, .default_value = 0.0,
            .doc = "Added to the scaled value."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<Normalize>(s); })
      STOKER_GPU_TWIN(Normalize);
}

}  // namespace stoker
