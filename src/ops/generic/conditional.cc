// The operators behind `if`, `and`, `or` and `not` on DataNodes in a pipeline defined with
// @pipeline_def(enable_conditionals=True) (python/stoker/_conditionals.py rewrites the function
// and inserts them; users never call them):
//   _conditional.split: the batch -> the samples whose predicate is true, and the others, in order;
//                       the branches of the `if` then run on those parts only;
//   _conditional.merge: the two parts -> one batch in the original order (after the `if`);
//   _conditional.not_, _conditional.validate_logical: `not x`, and the checks `and`/`or` make
//                       on their operands.
// Split shares the input's samples (no copy); merge copies into one contiguous batch, so that
// what follows an `if` (and the pipeline's outputs) can go on through DLPack without a copy.
// Workspace::output_origins records where each part's samples sit in the whole batch, so that
// random operators inside a branch draw per original sample (Workspace::rng).
#include <cstring>

#include "kernels/cuda/copy_gpu.h"
#include "ops/generic/gpu_twin.h"
#include "pipeline/gpu_batch.h"
#include "pipeline/operator.h"

namespace stoker {
namespace {

using Origins = std::shared_ptr<const std::vector<int64_t>>;

const char* const kScalarAdvice =
    " Conditions and logical operands are scalars so that `if`, `and`, `or` and `not` have one "
    "meaning per sample (as in DALI). Compare (`x > 3` gives a boolean scalar), give dtype="
    "types.BOOL where an operator has it, or reduce the data to one value; for element-wise "
    "logic on larger tensors use `&`, `|` and `== 0` instead (those evaluate both sides).";

bool truth(const Batch& b, int64_t i) {
  return visit_dtype(b.dtype(), [&](auto t) -> bool {
    using T = decltype(t);
    return static_cast<double>(static_cast<const T*>(b[i].data)[0]) != 0.0;
  });
}

// The batch a predicate argument (or logical operand) came in, checked to be one scalar per sample.
void check_scalars(const OpSpec& spec, const Batch& b, const std::string& what) {
  if (b.memory() == MemoryKind::kDevice)
    fail(ErrorKind::kInvalidArgument,
         spec.display_name() + ": " + what + " is on the GPU; it must be a scalar per sample on "
         "the CPU." + kScalarAdvice);
  for (size_t i = 0; i < b.size(); ++i)
    if (!b.shape(i).empty())
      fail(ErrorKind::kInvalidArgument,
           spec.display_name() + ": " + what + " must be a scalar (0-d) per sample, but sample " +
               std::to_string(i) + " has shape " + to_string(b.shape(i)) + " (" +
               std::to_string(b.shape(i).size()) + "-d)." + kScalarAdvice);
}

int64_t origin(const Origins& o, int64_t i) { return o ? (*o)[i] : i; }

class Split : public Operator {
 public:
  explicit Split(const OpSpec& spec) : Operator(spec) {}
  bool sample_wise() const override { return false; }

  void run_batch(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const Batch& pred = *ws.arg_inputs.at(spec_.tensor_args.at("predicate"));
    check_scalars(spec_, pred, "the condition of this `if`");
    STOKER_ASSERT(pred.size() == in.size(), "split: the predicate and the input differ in size");
    Batch parts[2] = {Batch(in.dtype(), in.layout(), in.memory(), in.device()),
                      Batch(in.dtype(), in.layout(), in.memory(), in.device())};
    auto maps = std::make_shared<std::vector<int64_t>[]>(2);
    for (size_t i = 0; i < in.size(); ++i) {
      const int side = truth(pred, static_cast<int64_t>(i)) ? 0 : 1;
      parts[side].push_back(in[i]);  // shares the sample's memory
      maps[side].push_back(origin(ws.origins, static_cast<int64_t>(i)));
    }
    ws.outputs = {std::move(parts[0]), std::move(parts[1])};
    ws.output_origins = {Origins(maps, &maps[0]), Origins(maps, &maps[1])};
  }
};

class Merge : public Operator {
 public:
  explicit Merge(const OpSpec& spec, MemoryKind memory = MemoryKind::kHost) : Operator(spec), memory_(memory) {
    if (spec.has("_name")) what_ = spec.get<std::string>("_name");
  }
  bool sample_wise() const override { return false; }

  void run_batch(Workspace& ws) override {
    const Batch* like = nullptr;
    std::vector<const Sample*> order = gather(ws, &like);
    std::vector<Shape> shapes;
    for (const Sample* s : order) shapes.push_back(s->shape);
    Batch out;
    out.allocate(*ws.host_pool, like->dtype(), shapes, like->layout());
    const size_t esize = dtype_size(like->dtype());
    ws.thread_pool->parallel_for(static_cast<int64_t>(order.size()), [&](int64_t i, int) {
      std::memcpy(out[i].data, order[i]->data, static_cast<size_t>(volume(order[i]->shape)) * esize);
      out[i].source = order[i]->source;
    });
    ws.outputs = {std::move(out)};
  }

 protected:
  // The samples of both parts in the whole batch's order (and sets the outputs' origins);
  // `like`: the part whose type and layout the output takes.
  std::vector<const Sample*> gather(Workspace& ws, const Batch** like) {
    const Batch& t = ws.input(0);
    const Batch& f = ws.input(1);
    const int pred_index = spec_.tensor_args.at("predicate");
    const Batch& pred = *ws.arg_inputs.at(pred_index);
    check(t, f);
    // An empty part may not know its type (a branch no sample took); the other part decides.
    *like = t.dtype() != DType::kNone ? &t : &f;
    std::vector<const Sample*> order(pred.size());
    size_t nt = 0, nf = 0;
    for (size_t i = 0; i < pred.size(); ++i) {
      const bool side_true = truth(pred, static_cast<int64_t>(i));
      const Batch& part = side_true ? t : f;
      size_t& k = side_true ? nt : nf;
      STOKER_ASSERT(k < part.size(), "merge: a branch has fewer samples than its predicate says");
      order[i] = &part[k++];
    }
    STOKER_ASSERT(nt == t.size() && nf == f.size(), "merge: a branch has more samples than its predicate says");
    ws.output_origins = {ws.arg_origins.at(pred_index)};
    return order;
  }

 private:
  void check(const Batch& t, const Batch& f) const {
    std::string what;
    // A part no sample took may have no memory kind of its own yet.
    auto wrong_memory = [&](const Batch& b) { return b.dtype() != DType::kNone && b.memory() != memory_; };
    if (wrong_memory(t) || wrong_memory(f))
      what = memory_ == MemoryKind::kHost ? "one is on the GPU; the CPU backend merges CPU data"
                                          : "one is on the CPU; the GPU backend merges GPU data";
    else if (t.dtype() != DType::kNone && f.dtype() != DType::kNone && t.dtype() != f.dtype())
      what = std::string("its type is ") + dtype_name(t.dtype()) + " in the `if` branch and " +
             dtype_name(f.dtype()) + " in the `else` branch";
    else if (!t.empty() && !f.empty() && t.ndim() != f.ndim())
      what = "it has " + std::to_string(t.ndim()) + " dimensions in the `if` branch and " +
             std::to_string(f.ndim()) + " in the `else` branch";
    else if (t.dtype() != DType::kNone && f.dtype() != DType::kNone && t.layout() != f.layout())
      what = "its layout is '" + t.layout() + "' in the `if` branch and '" + f.layout() +
             "' in the `else` branch";
    if (what.empty()) return;
    fail(ErrorKind::kTypeMismatch,
         spec_.display_name() + ": " + what_ + " differs between the branches of this `if`: " +
             what + ". After the `if` the values of both branches are merged into one batch, "
             "which must have one type, number of dimensions and layout; make both branches give "
             "the same (with fn.cast, fn.reshape, ...).");
  }

  MemoryKind memory_;
  std::string what_ = "a variable";
};

#ifdef STOKER_WITH_CUDA
// The GPU backend of merge: the same order, the samples copied on the pipeline's stream.
class MergeGpu final : public Merge {
 public:
  explicit MergeGpu(const OpSpec& spec) : Merge(spec, MemoryKind::kDevice) {}
  void run_batch(Workspace& ws) override {
    const Batch* like = nullptr;
    std::vector<const Sample*> order = gather(ws, &like);
    std::vector<Shape> shapes;
    for (const Sample* s : order) shapes.push_back(s->shape);
    Batch out = allocate_device_batch(ws, like->dtype(), shapes, like->layout());
    std::vector<kernels::cuda::CopyJob> jobs;
    for (size_t i = 0; i < order.size(); ++i) {
      out[i].source = order[i]->source;
      jobs.push_back(kernels::cuda::dense_copy_job(order[i]->data, out[i].data, volume(order[i]->shape)));
    }
    kernels::cuda::strided_copy_gpu(ws, dtype_size(like->dtype()), jobs);
    ws.outputs = {std::move(out)};
  }
};
#endif

// `not x` and the operands of `and` / `or`: one scalar per sample on the CPU; `and`/`or` also
// need booleans (as in DALI), `not` takes any type and gives a boolean.
class Logical : public Operator {
 public:
  Logical(const OpSpec& spec, bool is_not) : Operator(spec), not_(is_not) {
    if (!not_)
      what_ = "the " + spec.get<std::string>("expression_side") + " operand of `" +
              spec.get<std::string>("expression_name") + "`";
    else
      what_ = "the operand of `not`";
  }
  bool sample_wise() const override { return false; }

  void run_batch(Workspace& ws) override {
    const Batch& in = ws.input(0);
    check_scalars(spec_, in, what_);
    if (!not_) {
      if (in.dtype() != DType::kBool && !in.empty())
        fail(ErrorKind::kTypeMismatch,
             spec_.display_name() + ": " + what_ + " must be a boolean scalar per sample, got " +
                 dtype_name(in.dtype()) + "." + kScalarAdvice);
      ws.outputs = {in};
      return;
    }
    Batch out;
    out.allocate(*ws.host_pool, DType::kBool, std::vector<Shape>(in.size(), Shape{}), "");
    for (size_t i = 0; i < in.size(); ++i)
      *static_cast<bool*>(out[i].data) = !truth(in, static_cast<int64_t>(i));
    ws.outputs = {std::move(out)};
  }

 private:
  bool not_;
  std::string what_;
};

}  // namespace

STOKER_REGISTER_OP_NAMED(conditional_split, "_conditional.split") {
  schema.doc("Internal (`if` on DataNodes): the samples whose predicate is true, and the others, "
             "each part in the original order.")
      .inputs(1, 1, {"input"}).outputs(2, {"true", "false"})
      .arg({.name = "predicate", .type = ArgType::kBool,
            .doc = "The condition: a scalar per sample.", .tensor = true})
      .arg({.name = "_if_stmt", .type = ArgType::kBool, .default_value = true,
            .doc = "Accepted for DALI's sake."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<Split>(s); })
      STOKER_GPU_VIEW(Split);
}

STOKER_REGISTER_OP_NAMED(conditional_merge, "_conditional.merge") {
  schema.doc("Internal (after an `if` on DataNodes): the parts of the two branches, back in the "
             "original order.")
      .inputs(2, 2, {"true_input", "false_input"}).outputs(1)
      .arg({.name = "predicate", .type = ArgType::kBool,
            .doc = "The condition the parts were split by.", .tensor = true})
      .arg({.name = "_name", .type = ArgType::kString, .optional = true,
            .doc = "The variable merged, for messages."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<Merge>(s); })
#ifdef STOKER_WITH_CUDA
      .backend(Backend::kGPU, [](const OpSpec& s) { return std::make_unique<MergeGpu>(s); })
#endif
      ;
}

STOKER_REGISTER_OP_NAMED(conditional_not, "_conditional.not_") {
  schema.doc("Internal: `not x` on a DataNode (a boolean scalar per sample).")
      .inputs(1, 1, {"input"}).outputs(1)
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<Logical>(s, true); });
}

STOKER_REGISTER_OP_NAMED(conditional_validate_logical, "_conditional.validate_logical") {
  schema.doc("Internal: checks an operand of `and` / `or` on DataNodes (a boolean scalar per "
             "sample) and passes it on.")
      .inputs(1, 1, {"input"}).outputs(1)
      .arg({.name = "expression_name", .type = ArgType::kString, .doc = "'and' or 'or'."})
      .arg({.name = "expression_side", .type = ArgType::kString, .doc = "'left' or 'right'."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<Logical>(s, false); });
}

}  // namespace stoker
