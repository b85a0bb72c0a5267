// permute_batch and batch_permutation: operators that look across the samples of a batch.
#include <numeric>

#include "ops/generic/gpu_twin.h"
#include "ops/generic/shared_view.h"
#include "pipeline/operator.h"

namespace stoker {
namespace {

class PermuteBatch : public Operator {
 public:
  explicit PermuteBatch(const OpSpec& spec) : Operator(spec) {}
  bool sample_wise() const override { return false; }

  void run_batch(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int64_t n = static_cast<int64_t>(in.size());
    std::vector<int64_t> idx;
    if (spec_.is_tensor_arg("indices")) {
      const Batch& t = *ws.arg_inputs[spec_.tensor_args.at("indices")];
      if (!is_integer(t.dtype()))
        spec_.arg_error("indices", std::string("must hold integers, got a tensor of ") + dtype_name(t.dtype()) + ".");
      if (static_cast<int64_t>(t.size()) != n)
        spec_.arg_error("indices", "has " + std::to_string(t.size()) + " samples for a batch of " +
                                       std::to_string(n) + "; give one index per sample.");
      for (int64_t i = 0; i < n; ++i) idx.push_back(static_cast<int64_t>(ws.scalar_arg("indices", i, 0)));
    } else {
      idx = spec_.get<std::vector<int64_t>>("indices");
      if (static_cast<int64_t>(idx.size()) != n)
        spec_.arg_error("indices", "has " + std::to_string(idx.size()) + " indices for a batch of " +
                                       std::to_string(n) + " samples; give one index per sample.");
    }
    Batch out = view_of(in, in.dtype(), in.layout());
    for (int64_t i = 0; i < n; ++i) {
      if (idx[i] < 0 || idx[i] >= n)
        spec_.arg_error("indices", "[" + std::to_string(i) + "] = " + std::to_string(idx[i]) +
                                       " is not a sample of the batch of " + std::to_string(n) +
                                       ": give indices in [0, " + std::to_string(n - 1) + "].");
      // The output sample is the input sample itself (its memory is shared, not copied).
      out[i] = in[idx[i]];
    }
    ws.outputs.assign(1, std::move(out));
  }
};

class BatchPermutation : public Operator {
 public:
  explicit BatchPermutation(const OpSpec& spec)
      : Operator(spec), repetitions_(spec.get<bool>("allow_repetitions")),
        no_fixed_points_(spec.get<bool>("no_fixed_points")) {}
  bool sample_wise() const override { return false; }

  void run_batch(Workspace& ws) override {
    // In a branch of an `if`, the permutation is of the samples that took the branch: the
    // conditionals pass the branch's part of the predicate as _batch_like.
    const int64_t n = spec_.is_tensor_arg("_batch_like")
                          ? static_cast<int64_t>(ws.arg_inputs[spec_.tensor_args.at("_batch_like")]->size())
                          : ws.batch_size;
    // One stream for the whole batch: the permutation does not depend on how many threads run.
    Philox rng = ws.rng(0);
    const uint32_t un = static_cast<uint32_t>(n);
    std::vector<int32_t> p(n);
    const bool derange = no_fixed_points_ && n > 1;
    if (repetitions_) {
      for (int64_t i = 0; i < n; ++i) {
        // Without fixed points: one of the n - 1 other samples, uniformly.
        if (derange) {
          uint32_t r = rng.below(un - 1);
          p[i] = static_cast<int32_t>(r >= static_cast<uint32_t>(i) ? r + 1 : r);
        } else {
          p[i] = static_cast<int32_t>(rng.below(un));
        }
      }
    } else {
      // Fisher-Yates; for a derangement, draw again until there is no fixed point (about e
      // tries on average).
      for (;;) {
        std::iota(p.begin(), p.end(), 0);
        for (int64_t i = n - 1; i > 0; --i) std::swap(p[i], p[rng.below(static_cast<uint32_t>(i + 1))]);
        bool fixed = false;
        for (int64_t i = 0; derange && i < n; ++i) fixed |= p[i] == i;
        if (!fixed) break;
      }
    }
    Batch out;
    out.allocate(*ws.host_pool, DType::kInt32, std::vector<Shape>(n, Shape{}), "");
    for (int64_t i = 0; i < n; ++i) *out.data<int32_t>(i) = p[i];
    ws.outputs.assign(1, std::move(out));
  }

 private:
  bool repetitions_, no_fixed_points_;
};

}  // namespace

STOKER_REGISTER_OP_NAMED(permute_batch, "permute_batch") {
  schema.doc("A batch made of the input's samples in another order: out[i] = in[indices[i]]. "
             "Samples may be repeated or left out. The samples are shared, not copied.")
      .inputs(1, 1, {"input"}).outputs(1)
      .arg({.name = "indices", .type = ArgType::kIntList,
            .doc = "One index per sample of the batch, in [0, batch size): a list, or a per-sample "
                   "integer scalar (the output of fn.batch_permutation).",
            .tensor = true})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<PermuteBatch>(s); })
      STOKER_GPU_VIEW(PermuteBatch);
}

STOKER_REGISTER_OP_NAMED(batch_permutation, "batch_permutation") {
  schema.doc("A random permutation of the sample indices of a batch, one int32 scalar per sample "
             "(for fn.permute_batch).")
      .inputs(0, 0).outputs(1).random()
      .arg({.name = "allow_repetitions", .type = ArgType::kBool, .default_value = false,
            .doc = "Draw each index independently, so that indices may repeat or be left out."})
      .arg({.name = "no_fixed_points", .type = ArgType::kBool, .default_value = false,
            .doc = "No sample keeps its place (out[i] != i); ignored for a batch of 1."})
      .arg({.name = "_batch_like", .type = ArgType::kInt, .optional = true,
            .doc = "Internal (conditionals): a batch whose size the permutation takes.",
            .tensor = true})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<BatchPermutation>(s); });
}

}  // namespace stoker
