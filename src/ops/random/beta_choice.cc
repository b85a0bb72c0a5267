// random.beta and random.choice, drawn from the counter-based stream of (seed, operator
// instance, iteration, sample), so the draws do not depend on the number of threads.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "core/convert.h"
#include "ops/random/random_common.h"
#include "pipeline/operator.h"

namespace stoker {
namespace {

// Gamma(a, 1) by Marsaglia and Tsang (2000); a < 1 through Gamma(a + 1) * U^(1/a).
double gamma_draw(Philox& rng, double a) {
  if (a < 1.0) {
    double u = 1.0 - rng.uniform_double();  // (0, 1]
    return gamma_draw(rng, a + 1.0) * std::pow(u, 1.0 / a);
  }
  const double d = a - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
  for (;;) {
    double x, v;
    do {
      x = rng.normal();
      v = 1.0 + c * x;
    } while (v <= 0.0);
    v = v * v * v;
    double u = 1.0 - rng.uniform_double();
    if (u < 1.0 - 0.0331 * x * x * x * x) return d * v;
    if (std::log(u) < 0.5 * x * x + d * (1.0 - v + std::log(v))) return d * v;
  }
}

// Beta(a, b). With both parameters <= 1, Johnk's method in log space (X / (X + Y) of two
// gammas underflows to 0 / 0 there); else the ratio of two gamma draws.
double beta_draw(Philox& rng, double a, double b) {
  if (a <= 1.0 && b <= 1.0) {
    for (;;) {
      double lx = std::log(1.0 - rng.uniform_double()) / a;
      double ly = std::log(1.0 - rng.uniform_double()) / b;
      double hi = std::max(lx, ly), lsum = hi + std::log1p(std::exp(std::min(lx, ly) - hi));
      if (lsum <= 0.0) return std::exp(lx - lsum);
    }
  }
  double x = gamma_draw(rng, a), y = gamma_draw(rng, b);
  return x / (x + y);
}

class Beta : public Operator {
 public:
  explicit Beta(const OpSpec& spec) : Operator(spec) {
    dtype_ = spec.has("dtype") ? static_cast<DType>(spec.get<int64_t>("dtype")) : DType::kFloat32;
    if (dtype_ != DType::kFloat32 && dtype_ != DType::kFloat64)
      spec.arg_error("dtype", std::string("must be float32 or float64 (draws lie in [0, 1]), got ") +
                                  dtype_name(dtype_) + ".");
  }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    return {random_output_desc(ws, spec_, dtype_)};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    double a = param(ws, "alpha", i), b = param(ws, "beta", i);
    Batch& out = ws.output(0);
    int64_t n = volume(out.shape(i));
    Philox rng = ws.rng(i);
    if (dtype_ == DType::kFloat64) {
      double* dst = out.data<double>(i);
      for (int64_t k = 0; k < n; ++k) dst[k] = beta_draw(rng, a, b);
    } else {
      float* dst = out.data<float>(i);
      for (int64_t k = 0; k < n; ++k) dst[k] = static_cast<float>(beta_draw(rng, a, b));
    }
  }

 private:
  double param(const Workspace& ws, const char* name, int64_t i) const {
    double v = ws.scalar_arg(name, i, 1.0);
    if (!(v > 0.0) || !std::isfinite(v))
      spec_.arg_error(name, "must be a positive finite number, got " + std::to_string(v) +
                                " for sample " + std::to_string(i) + ".");
    return v;
  }
  DType dtype_;
};

class Choice : public Operator {
 public:
  explicit Choice(const OpSpec& spec) : Operator(spec) {}

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& a = ws.input(0);
    OutputDesc d;
    d.dtype = a.dtype();
    d.layout = "";
    if (ws.inputs.size() < 2 && ws.has_arg("shape")) d.size_arg = "shape";
    for (size_t i = 0; i < a.size(); ++i) {
      const Shape& as = a.shape(i);
      if (as.empty() && !is_integer(a.dtype()))
        fail(ErrorKind::kTypeMismatch,
             spec_.display_name() + ": a scalar input is the number of values to choose from and "
             "must be an integer, got " + dtype_name(a.dtype()) + "; give a list of values to "
             "choose among them instead.");
      Shape s = random_sample_shape(ws, spec_, i, 1);
      s.insert(s.end(), as.begin() + std::min<size_t>(1, as.size()), as.end());
      d.shapes.push_back(s);
    }
    return {d};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const Batch& a = ws.input(0);
    Batch& out = ws.output(0);
    const Shape& as = a.shape(i);
    const bool scalar = as.empty();
    int64_t count;
    if (scalar) {
      count = visit_dtype(a.dtype(), [&](auto t) -> int64_t {
        using T = decltype(t);
        T v = a.data<T>(i)[0];
        if constexpr (std::is_unsigned_v<T>)
          return v > static_cast<T>(std::numeric_limits<int64_t>::max()) ? std::numeric_limits<int64_t>::max()
                                                                         : static_cast<int64_t>(v);
        else
          return static_cast<int64_t>(v);
      });
    } else {
      count = as[0];
    }
    if (count <= 0)
      fail(ErrorKind::kInvalidArgument,
           spec_.display_name() + ": sample " + std::to_string(i) + " has " +
               (scalar ? "the number " + std::to_string(count) : std::to_string(count) + " values") +
               " to choose from; there must be at least one.");
    std::vector<double> cum;
    if (ws.has_arg("p")) {
      std::vector<double> p = ws.list_arg("p", i);
      if (static_cast<int64_t>(p.size()) != count)
        spec_.arg_error("p", "has " + std::to_string(p.size()) + " probabilities for sample " +
                                 std::to_string(i) + ", which has " + std::to_string(count) +
                                 " values to choose from; give one per value.");
      double sum = 0;
      for (size_t k = 0; k < p.size(); ++k) {
        if (!(p[k] >= 0.0 && p[k] <= 1.0))
          spec_.arg_error("p", "must be probabilities in [0, 1], got " + std::to_string(p[k]) +
                                   " at index " + std::to_string(k) + " for sample " +
                                   std::to_string(i) + ".");
        sum += p[k];
        cum.push_back(sum);
      }
      if (std::fabs(sum - 1.0) >= 1e-4)
        spec_.arg_error("p", "must sum to 1, got a sum of " + std::to_string(sum) + " for sample " +
                                 std::to_string(i) + ".");
    }
    Philox rng = ws.rng(i);
    auto draw = [&]() -> int64_t {
      if (!cum.empty()) {
        double u = rng.uniform_double() * cum.back();
        int64_t k = std::upper_bound(cum.begin(), cum.end(), u) - cum.begin();
        return std::min<int64_t>(k, count - 1);
      }
      if (count <= static_cast<int64_t>(std::numeric_limits<uint32_t>::max()))
        return rng.below(static_cast<uint32_t>(count));
      return std::min<int64_t>(static_cast<int64_t>(rng.uniform_double() * static_cast<double>(count)), count - 1);
    };
    const int64_t n = volume(random_sample_shape(ws, spec_, i, 1));
    if (scalar) {
      visit_dtype(a.dtype(), [&](auto t) {
        using T = decltype(t);
        T* dst = out.data<T>(i);
        for (int64_t k = 0; k < n; ++k) dst[k] = static_cast<T>(draw());
      });
      return;
    }
    // Each choice copies one element (or one slice along the first axis) of the input.
    const size_t esize = static_cast<size_t>(volume(Shape(as.begin() + 1, as.end()))) * dtype_size(a.dtype());
    const char* src = static_cast<const char*>(a[i].data);
    char* dst = static_cast<char*>(out[i].data);
    for (int64_t k = 0; k < n; ++k) std::memcpy(dst + k * esize, src + draw() * esize, esize);
  }
};

}  // namespace

STOKER_REGISTER_OP_NAMED(random_beta, "random.beta") {
  schema.doc("Random numbers in [0, 1] from the beta distribution with parameters alpha and beta.")
      .inputs(0, 1, {"shape_like"}).outputs(1).random();
  random_common_args(schema);
  schema.arg({.name = "alpha", .type = ArgType::kFloat, .default_value = 1.0,
              .doc = "The alpha parameter, a positive number.", .tensor = true})
      .arg({.name = "beta", .type = ArgType::kFloat, .default_value = 1.0,
            .doc = "The beta parameter, a positive number.", .tensor = true})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<Beta>(s); });
}

STOKER_REGISTER_OP_NAMED(random_choice, "random.choice") {
  schema.doc("Random picks from the input: from [0, 1, ..., a - 1] for a scalar integer a, else "
             "among the elements (the slices along the first axis) of a, with probabilities p "
             "(uniform without). The output has the input's type.")
      .inputs(1, 2, {"a", "shape_like"}).outputs(1).random();
  random_common_args(schema, /*with_dtype=*/false);
  schema.arg({.name = "p", .type = ArgType::kFloatList, .optional = true,
              .doc = "The probability of each value (they must sum to 1); uniform when not given.",
              .tensor = true})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<Choice>(s); });
}

}  // namespace stoker
