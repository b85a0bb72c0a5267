// random.uniform, random.coin_flip, random.normal: per-sample random values drawn from the
// counter-based stream of (seed, operator instance, iteration, sample).
#include "core/convert.h"
#include "ops/generic/gpu_twin.h"
#include "ops/random/random_common.h"
#include "pipeline/operator.h"

namespace stoker {
namespace {

enum class Dist { kUniform, kCoin, kNormal };

class RandomOp : public Operator {
 public:
  RandomOp(const OpSpec& spec, Dist dist, DType default_dtype) : Operator(spec), dist_(dist) {
    dtype_ = spec.has("dtype") ? static_cast<DType>(spec.get<int64_t>("dtype")) : default_dtype;
    if (spec.has("shape")) {
      Shape shape = spec.get<std::vector<int64_t>>("shape");
      for (int64_t d : shape)
        if (d < 0) spec.arg_error("shape", "must not have negative extents, got " + to_string(shape) + ".");
    }
    if (dist_ == Dist::kUniform && spec.has("values") &&
        spec.get<std::vector<double>>("values").empty())
      spec.arg_error("values", "must not be empty.");
  }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    return {random_output_desc(ws, spec_, dtype_)};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    Batch& out = ws.output(0);
    int64_t n = volume(out.shape(i));
    Philox rng = ws.rng(i);
    visit_dtype(dtype_, [&](auto t) {
      using T = decltype(t);
      T* dst = out.data<T>(i);
      switch (dist_) {
        case Dist::kUniform: {
          if (ws.has_arg("values")) {
            std::vector<double> values = ws.list_arg("values", i);
            if (values.empty())
              spec_.arg_error("values", "must not be empty, got no values for sample " +
                                            std::to_string(i) + ".");
            for (int64_t k = 0; k < n; ++k)
              dst[k] = convert_sat<T>(values[rng.below(static_cast<uint32_t>(values.size()))]);
            break;
          }
          std::vector<double> range = ws.list_arg("range", i, {-1.0, 1.0});
          if (range.size() != 2 || !(range[0] <= range[1]))
            spec_.arg_error("range", "must be two numbers [lo, hi] with lo <= hi, got " +
                                         std::to_string(range.size()) + " values for sample " +
                                         std::to_string(i) + ".");
          for (int64_t k = 0; k < n; ++k)
            dst[k] = convert_sat<T>(range[0] + (range[1] - range[0]) * rng.uniform_double());
          break;
        }
        case Dist::kCoin: {
          double p = ws.scalar_arg("probability", i, 0.5);
          if (!(p >= 0.0 && p <= 1.0))
            spec_.arg_error("probability", "must be in [0, 1], got " + std::to_string(p) +
                                               " for sample " + std::to_string(i) + ".");
          for (int64_t k = 0; k < n; ++k) dst[k] = convert_sat<T>(rng.bernoulli(p) ? 1 : 0);
          break;
        }
        case Dist::kNormal: {
          double mean = ws.scalar_arg("mean", i, 0.0);
          double stddev = ws.scalar_arg("stddev", i, 1.0);
          if (!(stddev >= 0.0))
            spec_.arg_error("stddev", "must be >= 0, got " + std::to_string(stddev) + ".");
          for (int64_t k = 0; k < n; ++k) dst[k] = convert_sat<T>(mean + stddev * rng.normal());
          break;
        }
      }
    });
  }

 private:
  Dist dist_;
  DType dtype_;
};

void common_random_args(OpSchema& s) {
  s.inputs(0, 1, {"shape_like"}).outputs(1).random();
  random_common_args(s);
}

}  // namespace

STOKER_REGISTER_OP_NAMED(random_uniform, "random.uniform") {
  common_random_args(schema);
  schema.doc("Uniformly distributed random numbers in [range[0], range[1]), or picks from `values`.")
      .arg({.name = "range", .type = ArgType::kFloatList, .default_value = std::vector<double>{-1.0, 1.0},
            .doc = "The interval [lo, hi) the numbers are drawn from.", .tensor = true,
            .list_min = 2, .list_max = 2})
      .arg({.name = "values", .type = ArgType::kFloatList, .optional = true,
            .doc = "A discrete set of values to pick from with equal probability (instead of range).",
            .tensor = true})
      .backend(Backend::kCPU, [](const OpSpec& s) {
        return std::make_unique<RandomOp>(s, Dist::kUniform, DType::kFloat32);
      })
      STOKER_GPU_HOST_TWIN_WITH(RandomOp, Dist::kUniform, DType::kFloat32);
}

STOKER_REGISTER_OP_NAMED(random_coin_flip, "random.coin_flip") {
  common_random_args(schema);
  schema.doc("Random 0/1 values: 1 with the given probability (Bernoulli).")
      .arg({.name = "probability", .type = ArgType::kFloat, .default_value = 0.5,
            .doc = "Probability of 1.", .tensor = true, .min = 0.0, .max = 1.0})
      .backend(Backend::kCPU, [](const OpSpec& s) {
        return std::make_unique<RandomOp>(s, Dist::kCoin, DType::kInt32);
      })
      STOKER_GPU_HOST_TWIN_WITH(RandomOp, Dist::kCoin, DType::kInt32);
}

STOKER_REGISTER_OP_NAMED(random_normal, "random.normal") {
  common_random_args(schema);
  schema.doc("Normally distributed random numbers.")
      .arg({.name = "mean", .type = ArgType::kFloat, .default_value = 0.0, .doc = "Mean.", .tensor = true})
      .arg({.name = "stddev", .type = ArgType::kFloat, .default_value = 1.0,
            .doc = "Standard deviation.", .tensor = true, .min = 0.0})
      .backend(Backend::kCPU, [](const OpSpec& s) {
        return std::make_unique<RandomOp>(s, Dist::kNormal, DType::kFloat32);
      })
      STOKER_GPU_HOST_TWIN_WITH(RandomOp, Dist::kNormal, DType::kFloat32);
}

}  // namespace stoker
