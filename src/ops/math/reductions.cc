// reductions.min, max, sum, mean, mean_square, rms, std_dev, variance: each sample reduced over
// `axes` / `axis_names` (all axes by default). The arithmetic is kernels/cpu/math/reduce.
#include <algorithm>
#include <cmath>

#include "core/convert.h"
#include "kernels/cpu/geometry/normalize.h"
#include "kernels/cpu/math/reduce.h"
#include "kernels/cuda/reduce_gpu.h"
#include "ops/generic/gpu_twin.h"
#include "pipeline/gpu_batch.h"
#include "pipeline/operator.h"

namespace stoker {
namespace {

enum class Red { kMin, kMax, kSum, kMean, kMeanSquare, kRms, kStdDev, kVariance };

bool has_mean_input(Red r) { return r == Red::kStdDev || r == Red::kVariance; }

DType wide_int(DType t) { return is_signed(t) ? DType::kInt64 : DType::kUInt64; }

// DALI's output type when dtype is not given. Types DALI refuses (float16, float64, bool) are
// taken as NumPy would: float64 stays float64, float16 sums to float32, bool sums as uint8.
DType default_dtype(Red r, DType in) {
  if (r == Red::kMin || r == Red::kMax) return in;
  if (r == Red::kSum) {
    if (in == DType::kFloat16) return DType::kFloat32;
    if (is_float(in)) return in;
    return wide_int(in);
  }
  return in == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
}

// The types `dtype` may name (DALI's sets, plus float64 for float64 input).
std::vector<DType> allowed_dtypes(Red r, DType in) {
  std::vector<DType> a{default_dtype(r, in)};
  auto add = [&](DType t) {
    if (std::find(a.begin(), a.end(), t) == a.end()) a.push_back(t);
  };
  bool integer = is_integer(in);
  if (r == Red::kSum || r == Red::kMean || r == Red::kRms) {
    if (integer) add(in);
  }
  if (r == Red::kSum && integer) add(wide_int(in));
  if (r == Red::kMeanSquare && integer) add(wide_int(in));
  add(DType::kFloat32);
  if (in == DType::kFloat64) add(DType::kFloat64);
  return a;
}

class Reduction : public Operator {
 public:
  Reduction(const OpSpec& spec, Red red) : Operator(spec), red_(red) {
    keep_dims_ = spec.get<bool>("keep_dims");
    if (spec.has("axes") && spec.has("axis_names"))
      spec.arg_error("axes", "and 'axis_names' are mutually exclusive; give one of them.");
    if (has_mean_input(red)) {
      ddof_ = spec.get<int64_t>("ddof");
      if (ddof_ < 0) spec.arg_error("ddof", "must be >= 0, got " + std::to_string(ddof_) + ".");
    }
  }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int ndim = in.ndim();
    for (size_t i = 0; i < in.size(); ++i)
      if (static_cast<int>(in.shape(i).size()) != ndim)
        fail(ErrorKind::kInvalidArgument,
             spec_.display_name() + ": all samples must have the same number of dimensions; sample 0 "
             "has shape " + to_string(in.shape(0)) + " and sample " + std::to_string(i) + " has " +
             to_string(in.shape(i)) + ".");
    reduced_ = reduced_axes(in, ndim);

    in_dtype_ = in.dtype();
    out_dtype_ = default_dtype(red_, in_dtype_);
    if (spec_.has("dtype")) {
      DType want = static_cast<DType>(spec_.get<int64_t>("dtype"));
      std::vector<DType> ok = allowed_dtypes(red_, in_dtype_);
      if (std::find(ok.begin(), ok.end(), want) == ok.end()) {
        std::string names;
        for (DType t : ok) names += std::string(names.empty() ? "" : ", ") + dtype_name(t);
        spec_.arg_error("dtype", std::string("cannot be ") + dtype_name(want) + " for " +
                                     dtype_name(in_dtype_) + " input; use one of: " + names + ".");
      }
      out_dtype_ = want;
    }

    OutputDesc d;
    d.dtype = out_dtype_;
    for (size_t i = 0; i < in.size(); ++i) d.shapes.push_back(out_shape(in.shape(i)));
    const std::string& layout = in.layout();
    if (keep_dims_) {
      d.layout = layout;
    } else if (static_cast<int>(layout.size()) == ndim) {
      for (int k = 0; k < ndim; ++k)
        if (!reduced_[k]) d.layout += layout[k];
    }

    if (has_mean_input(red_)) {
      const Batch& mean = ws.input(1);
      if (mean.size() != in.size())
        fail(ErrorKind::kInvalidArgument,
             spec_.display_name() + ": the mean has " + std::to_string(mean.size()) +
                 " samples but the data has " + std::to_string(in.size()) + ".");
      for (size_t i = 0; i < in.size(); ++i) {
        const Shape& ms = mean.shape(i);
        Shape kept = kernels::reduced_shape(in.shape(i), reduced_);
        // One value, or one per output element in either form (the reduced axes kept or not:
        // reductions.mean gives the one its keep_dims says).
        if (volume(ms) != 1 && ms != kept && ms != out_shape_nokeep(in.shape(i)))
          fail(ErrorKind::kInvalidArgument,
               spec_.display_name() + ": the mean of sample " + std::to_string(i) + " has shape " +
                   to_string(ms) + "; it must be one value or have the reduced shape " +
                   to_string(out_shape_nokeep(in.shape(i))) + " (or " + to_string(kept) +
                   " with the reduced axes kept), as fn.reductions.mean with the same axes gives.");
      }
    }
    return {d};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const Batch& in = ws.input(0);
    Batch& out = ws.output(0);
    const Shape& shape = in.shape(i);
    const int64_t m = volume(out.shape(i));
    // bool is reduced as its bytes (0 / 1), which is what NumPy's sums and means of bool give.
    DType as = in_dtype_ == DType::kBool && red_ != Red::kMin && red_ != Red::kMax ? DType::kUInt8 : in_dtype_;
    visit_dtype(as, [&](auto tin) {
      using In = decltype(tin);
      const In* src = static_cast<const In*>(in[i].data);
      if (red_ == Red::kMin || red_ == Red::kMax) {
        In* dst = out.data<In>(i);
        if (red_ == Red::kMin) kernels::reduce_min(dst, src, shape, reduced_);
        else kernels::reduce_max(dst, src, shape, reduced_);
      } else if constexpr (std::is_same_v<In, bool>) {
        return;  // never: bool is reduced as uint8 here
      } else if (red_ == Red::kSum) {
        using Acc = std::conditional_t<!std::is_integral_v<In>, double,
                                       std::conditional_t<std::is_signed_v<In>, int64_t, uint64_t>>;
        std::vector<Acc> acc(m);
        kernels::reduce_sum(acc.data(), src, shape, reduced_);
        store(out, i, acc);
      } else {
        store(out, i, moment(ws, i, src, shape, m));
      }
    });
  }

  // The GPU twin: the same setup, every output element of the batch in one or two launches.
  void run_gpu(Workspace& ws, const std::vector<OutputDesc>& descs) {
    namespace kc = kernels::cuda;
    require_device_input(ws);
    if (has_mean_input(red_)) require_device_input(ws, 1);
    const Batch& in = ws.input(0);
    const OutputDesc& d = descs[0];
    ws.outputs.assign(1, allocate_device_batch(ws, d.dtype, d.shapes, d.layout));
    std::vector<kc::ReduceJob> jobs(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      if (!kc::make_reduce_job(&jobs[i], in[i].data, ws.outputs[0][i].data, in.shape(i), reduced_))
        fail(ErrorKind::kUnsupported,
             spec_.display_name() + ": the GPU backend reduces samples whose kept and reduced axes "
             "each merge into up to " + std::to_string(kc::kMaxReduceDims) + " dimensions; sample " +
             std::to_string(i) + " (shape " + to_string(in.shape(i)) + ") needs more. Reshape it first.");
      if (has_mean_input(red_)) {
        jobs[i].mean = ws.input(1)[i].data;
        jobs[i].mean_n = volume(ws.input(1).shape(i));
      }
    }
    const kc::ReduceKind kinds[] = {kc::ReduceKind::kMin, kc::ReduceKind::kMax, kc::ReduceKind::kSum,
                                    kc::ReduceKind::kMean, kc::ReduceKind::kMeanSquare,
                                    kc::ReduceKind::kMeanSquare, kc::ReduceKind::kVariance,
                                    kc::ReduceKind::kVariance};
    const DType mean_type = has_mean_input(red_) ? ws.input(1).dtype() : DType::kFloat32;
    kc::reduce_gpu(ws, kinds[static_cast<int>(red_)], in_dtype_, out_dtype_, mean_type, ddof_,
                   red_ == Red::kRms || red_ == Red::kStdDev, jobs);
  }

 private:
  // The reduced axes of this batch from axes / axis_names (all axes without either).
  std::vector<bool> reduced_axes(const Batch& in, int ndim) const {
    std::vector<bool> r(ndim, !spec_.has("axes") && !spec_.has("axis_names"));
    if (spec_.has("axes")) {
      for (int64_t a : spec_.get<std::vector<int64_t>>("axes")) {
        if (a < -ndim || a >= ndim)
          spec_.arg_error("axes", "has " + std::to_string(a) + ", out of range for " +
                                      std::to_string(ndim) + "-D input; axes must be in [" +
                                      std::to_string(-ndim) + ", " + std::to_string(ndim - 1) + "].");
        int k = static_cast<int>(a < 0 ? a + ndim : a);
        if (r[k])
          spec_.arg_error("axes", "names axis " + std::to_string(k) + " twice.");
        r[k] = true;
      }
    } else if (spec_.has("axis_names")) {
      const std::string names = spec_.get<std::string>("axis_names");
      for (char c : names) {
        size_t k = in.layout().find(c);
        if (k == std::string::npos)
          spec_.arg_error("axis_names", std::string("has '") + c + "', which is not in the input's layout '" +
                                            in.layout() + "'; use axes to give axes by number.");
        r[k] = true;
      }
    }
    return r;
  }

  Shape out_shape_nokeep(const Shape& s) const {
    Shape o;
    for (size_t k = 0; k < s.size(); ++k)
      if (!reduced_[k]) o.push_back(s[k]);
    return o;
  }
  Shape out_shape(const Shape& s) const {
    return keep_dims_ ? kernels::reduced_shape(s, reduced_) : out_shape_nokeep(s);
  }

  template <typename In>
  std::vector<double> moment(Workspace& ws, int64_t i, const In* src, const Shape& shape, int64_t m) {
    std::vector<double> r(m);
    if (red_ == Red::kMean) {
      kernels::reduce_moment(r.data(), src, shape, reduced_, kernels::Moment::kMean);
    } else if (red_ == Red::kMeanSquare || red_ == Red::kRms) {
      kernels::reduce_moment(r.data(), src, shape, reduced_, kernels::Moment::kMeanSquare);
    } else {
      const Batch& mb = ws.input(1);
      std::vector<double> mean(m);
      int64_t mn = volume(mb.shape(i));
      visit_dtype(mb.dtype(), [&](auto tm) {
        using M = decltype(tm);
        const M* p = mb.data<M>(i);
        for (int64_t o = 0; o < m; ++o) mean[o] = static_cast<double>(p[mn == 1 ? 0 : o]);
      });
      kernels::reduce_moment(r.data(), src, shape, reduced_, kernels::Moment::kVariance, mean.data(), ddof_);
    }
    if (red_ == Red::kRms || red_ == Red::kStdDev)
      for (double& v : r) v = std::sqrt(v);
    return r;
  }

  // Results to the output type: integer sums wrap (as NumPy's and DALI's do in a narrower type);
  // means and the like truncate toward zero into integers, as DALI's do.
  template <typename Acc>
  void store(Batch& out, int64_t i, const std::vector<Acc>& v) {
    visit_dtype(out_dtype_, [&](auto to) {
      using Out = decltype(to);
      Out* dst = out.data<Out>(i);
      for (size_t k = 0; k < v.size(); ++k) {
        if constexpr (std::is_integral_v<Acc> && std::is_integral_v<Out> && !std::is_same_v<Out, bool>)
          dst[k] = static_cast<Out>(v[k]);
        else if constexpr (!std::is_integral_v<Acc> && std::is_integral_v<Out> && !std::is_same_v<Out, bool>)
          dst[k] = convert_sat<Out>(std::trunc(v[k]));
        else
          dst[k] = convert_sat<Out>(v[k]);
      }
    });
  }

  Red red_;
  bool keep_dims_ = false;
  int64_t ddof_ = 0;
  std::vector<bool> reduced_;
  DType in_dtype_ = DType::kNone, out_dtype_ = DType::kNone;
};

void reduction_schema(OpSchema& s, Red red, const std::string& doc) {
  s.doc(doc).outputs(1);
  if (has_mean_input(red)) s.inputs(2, 2, {"data", "mean"});
  else s.inputs(1, 1, {"data"});
  s.arg({.name = "axes", .type = ArgType::kIntList, .optional = true,
         .doc = "Axes to reduce, in [-ndim, ndim - 1]; all axes when neither axes nor axis_names "
                "is given."})
      .arg({.name = "axis_names", .type = ArgType::kString, .optional = true,
            .doc = "Axes to reduce by their letters in the input layout (excludes axes)."})
      .arg({.name = "keep_dims", .type = ArgType::kBool, .default_value = false,
            .doc = "Keep the reduced axes as axes of extent 1."});
  if (red == Red::kSum || red == Red::kMean || red == Red::kMeanSquare || red == Red::kRms)
    s.arg({.name = "dtype", .type = ArgType::kDType, .optional = true,
           .doc = "Output type. Default: sums of integers are int64 / uint64 and of float32 "
                  "float32; the other reductions float32."});
  if (has_mean_input(red))
    s.arg({.name = "ddof", .type = ArgType::kInt, .default_value = int64_t{0},
           .doc = "Delta degrees of freedom: the divisor is N - ddof."});
  s.backend(Backend::kCPU, [red](const OpSpec& sp) { return std::make_unique<Reduction>(sp, red); })
      STOKER_GPU_TWIN_WITH(Reduction, red);
}

}  // namespace

STOKER_REGISTER_OP_NAMED(reductions_min, "reductions.min") {
  reduction_schema(schema, Red::kMin, "Minimum of the elements along the given axes.");
}
STOKER_REGISTER_OP_NAMED(reductions_max, "reductions.max") {
  reduction_schema(schema, Red::kMax, "Maximum of the elements along the given axes.");
}
STOKER_REGISTER_OP_NAMED(reductions_sum, "reductions.sum") {
  reduction_schema(schema, Red::kSum, "Sum of the elements along the given axes.");
}
STOKER_REGISTER_OP_NAMED(reductions_mean, "reductions.mean") {
  reduction_schema(schema, Red::kMean, "Mean of the elements along the given axes.");
}
STOKER_REGISTER_OP_NAMED(reductions_mean_square, "reductions.mean_square") {
  reduction_schema(schema, Red::kMeanSquare, "Mean of the squares of the elements along the given axes.");
}
STOKER_REGISTER_OP_NAMED(reductions_rms, "reductions.rms") {
  reduction_schema(schema, Red::kRms, "Root mean square of the elements along the given axes.");
}
STOKER_REGISTER_OP_NAMED(reductions_std_dev, "reductions.std_dev") {
  reduction_schema(schema, Red::kStdDev,
                   "Standard deviation of the elements along the given axes, around the given mean "
                   "(one value, or one per output element as reductions.mean gives).");
}
STOKER_REGISTER_OP_NAMED(reductions_variance, "reductions.variance") {
  reduction_schema(schema, Red::kVariance,
                   "Variance of the elements along the given axes, around the given mean (one "
                   "value, or one per output element as reductions.mean gives).");
}

}  // namespace stoker
