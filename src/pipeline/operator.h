// What an operator is to the executor: a spec (its checked arguments), a workspace per run,
// and the setup/run contract.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/batch.h"
#include "core/error.h"
#include "core/random.h"
#include "core/thread_pool.h"
#include "pipeline/schema.h"
#include "readers/sample_order.h"

namespace stoker {

class GpuContext;

// An operator instance as the user defined it.
class OpSpec {
 public:
  const OpSchema* schema = nullptr;
  Backend backend = Backend::kCPU;
  std::map<std::string, ArgValue> args;          // constants, checked against the schema
  std::map<std::string, int> tensor_args;        // argument name -> index into arg inputs
  int num_inputs = 0;
  int num_outputs = 1;
  int64_t instance = 0;         // position in the graph: keys the random streams
  std::string name;             // the user's `name=` (readers), may be empty
  std::string location;         // "train.py:12" where the user created it
  int batch_size = 1;
  uint64_t seed = 0;            // this instance's seed (from the pipeline's, or `seed=`)

  // "fn.resize (train.py:12)": how messages name this operator.
  std::string display_name() const;
  bool has(const std::string& arg) const { return args.count(arg) > 0; }
  bool is_tensor_arg(const std::string& arg) const { return tensor_args.count(arg) > 0; }

  template <typename T> T get(const std::string& arg) const;
  template <typename T> std::optional<T> get_optional(const std::string& arg) const {
    if (!has(arg)) return std::nullopt;
    return get<T>(arg);
  }
  // Throws a ValueError-kind error naming this operator and `arg`.
  [[noreturn]] void arg_error(const std::string& arg, const std::string& what) const;
};

using readers::ReaderMeta;

// Shape, type and layout of one output, declared at setup so memory is allocated before work.
struct OutputDesc {
  DType dtype = DType::kNone;
  std::string layout;
  std::vector<Shape> shapes;
  // The argument that sets the shapes, where one does (random.uniform's `shape`): an output
  // too big to allocate names it.
  std::string size_arg;
};

// What a reader or decoder does with a sample it cannot read or decode (the `on_error` argument).
enum class OnError {
  kRaise,    // the iteration fails with the error (the pipeline goes on with the next one)
  kSkip,     // the sample is dropped and the batch is filled with the next samples
  kReplace,  // the sample is replaced by a fallback the operator makes (and counted)
};

// Bad samples met in one iteration, shared by its operators (thread-safe).
class IterationErrors {
 public:
  struct Entry {
    int64_t sample;
    std::string op, source, reason;
    bool replaced;
  };
  void report(Entry e) {
    std::lock_guard<std::mutex> g(mu_);
    entries_.push_back(std::move(e));
  }
  std::vector<Entry> take() {
    std::lock_guard<std::mutex> g(mu_);
    return std::move(entries_);
  }
  bool has_skipped() const {
    std::lock_guard<std::mutex> g(mu_);
    for (const Entry& e : entries_)
      if (!e.replaced) return true;
    return false;
  }

 private:
  mutable std::mutex mu_;
  std::vector<Entry> entries_;
};

// Everything an operator sees in one iteration.
class Workspace {
 public:
  std::vector<const Batch*> inputs;
  std::vector<const Batch*> arg_inputs;  // indexed by OpSpec::tensor_args
  std::vector<Batch> outputs;
  int64_t iteration = 0;
  int batch_size = 0;
  ThreadPool* thread_pool = nullptr;
  MemoryPool* host_pool = nullptr;
  const OpSpec* spec = nullptr;
  IterationErrors* errors = nullptr;
  OnError on_error = OnError::kRaise;
  GpuContext* gpu = nullptr;  // the pipeline's GPU stream and pools (GPU pipelines only)
  std::shared_ptr<void> prepared;  // what Operator::prepare() made for this iteration, if it ran
  // Conditionals (`if` on DataNodes): an operator in a branch runs on part of the batch; these
  // are the positions of its samples in the iteration's whole batch (null: all of it, in order),
  // taken from its first input (or argument input). Random draws are keyed by them, so that a
  // sample draws the same numbers whichever branch takes it.
  std::shared_ptr<const std::vector<int64_t>> origins;
  std::vector<std::shared_ptr<const std::vector<int64_t>>> input_origins, arg_origins;
  // Set by the operators that change them (_conditional.split and merge), one per output; the
  // outputs of all others have their operator's `origins`.
  std::vector<std::shared_ptr<const std::vector<int64_t>>> output_origins;

  // An operator that meets a bad sample calls this: with on_error skip or replace it records the
  // sample and returns true (the operator then makes a placeholder or its fallback); with raise
  // it returns false and the operator throws.
  bool report_bad_sample(int64_t sample, const std::string& source, const std::string& reason) const {
    if (on_error == OnError::kRaise || !errors) return false;
    // The sample's position in the whole batch (in a branch of an `if` the operator sees part).
    const int64_t whole = origins ? (*origins)[sample] : sample;
    errors->report({whole, spec->display_name(), source, reason, on_error == OnError::kReplace});
    return true;
  }

  const Batch& input(int i) const { return *inputs[i]; }
  Batch& output(int i) { return outputs[i]; }
  // The random stream of `sample` in this iteration for this operator instance.
  Philox rng(int64_t sample) const {
    return Philox(rng_key(spec->seed, static_cast<uint64_t>(spec->instance)),
                  static_cast<uint64_t>(iteration),
                  static_cast<uint32_t>(origins ? (*origins)[sample] : sample));
  }
  // A scalar argument for one sample: the per-sample tensor if the user gave one, else the
  // constant (or `fallback` when neither is given).
  double scalar_arg(const std::string& name, int64_t sample, double fallback) const;
  // A list argument for one sample (a per-sample 1-D tensor or the constant list).
  std::vector<double> list_arg(const std::string& name, int64_t sample,
                               std::vector<double> fallback = {}) const;
  bool has_arg(const std::string& name) const {
    return spec->has(name) || spec->is_tensor_arg(name);
  }
};

class Operator {
 public:
  explicit Operator(const OpSpec& spec);
  virtual ~Operator() = default;
  const OpSpec& spec() const { return spec_; }

  // Sample-wise operators declare their outputs in setup() and then work one sample at a time
  // in run_sample(); the executor chains consecutive sample-wise operators per sample, so an
  // image goes through decode, crop, flip and normalise on one core while it is in cache.
  // Batch operators (readers) produce whole batches in run_batch().
  virtual bool sample_wise() const { return true; }
  // True when setup() reads its inputs' data (a decoder reads headers), not only their shapes.
  virtual bool setup_reads_input_data() const { return false; }

  virtual std::vector<OutputDesc> setup(Workspace& ws) { return {}; }
  virtual void run_sample(Workspace& ws, int64_t sample, int thread) {}
  virtual void run_batch(Workspace& ws) {}

  // A batch operator of the mixed or gpu stage may do the part of its work that needs only its
  // inputs' data (the mixed decoders: headers, windows, which decoder takes each image) on the
  // thread of the stage that made those inputs, an iteration ahead: with staging, the executor
  // calls prepare() there and hands what it returns to run_batch() in ws.prepared. Without
  // staging, run_batch() gets ws.prepared empty and must prepare itself.
  virtual bool prepares_early() const { return false; }
  virtual std::shared_ptr<void> prepare(Workspace& ws) { return nullptr; }

  virtual std::optional<ReaderMeta> reader_meta() const { return std::nullopt; }

  // Counts an operator keeps for Pipeline.profile() (the mixed decoders: how many images each
  // decoder took). Called from any thread while the pipeline runs.
  virtual std::vector<std::pair<std::string, int64_t>> counters() const { return {}; }

  // Readers: choose the samples of the next batch (called once per iteration, before run).
  virtual void begin_iteration(int64_t batch_size) {}
  // Readers: the samples at these positions of the current batch were bad; never deliver them
  // again and put the next good samples in their place. False if this operator cannot.
  virtual bool replace_samples(const std::vector<int64_t>& positions) { return false; }

  // Checkpoints: an operator whose output depends on more than (seed, iteration) -- readers:
  // their position, shuffle buffer and skipped samples -- returns that state between two
  // iterations as a self-checking string; restore_state() puts a new operator with the same
  // arguments into it (or raises kInvalidArgument naming what does not match). Random operators
  // need neither: their draws are keyed by the iteration.
  virtual std::optional<std::string> save_state() const { return std::nullopt; }
  virtual void restore_state(const std::string& state) {
    fail(ErrorKind::kInvalidArgument, spec_.display_name() + " keeps no state to restore");
  }

  OnError on_error() const { return on_error_; }

 protected:
  OpSpec spec_;
  OnError on_error_ = OnError::kRaise;
};

// Declares `on_error` ("raise", "skip" and, where the operator can make a fallback, "replace").
void add_on_error_arg(OpSchema& schema, bool can_replace);

// ---- argument access, typed
template <> bool OpSpec::get<bool>(const std::string& arg) const;
template <> int64_t OpSpec::get<int64_t>(const std::string& arg) const;
template <> int OpSpec::get<int>(const std::string& arg) const;
template <> double OpSpec::get<double>(const std::string& arg) const;
template <> float OpSpec::get<float>(const std::string& arg) const;
template <> std::string OpSpec::get<std::string>(const std::string& arg) const;
template <> std::vector<int64_t> OpSpec::get<std::vector<int64_t>>(const std::string& arg) const;
template <> std::vector<double> OpSpec::get<std::vector<double>>(const std::string& arg) const;
template <> std::vector<float> OpSpec::get<std::vector<float>>(const std::string& arg) const;
template <> std::vector<std::string> OpSpec::get<std::vector<std::string>>(const std::string& arg) const;

}  // namespace stoker
