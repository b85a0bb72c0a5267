// The executor: runs the operator graph one iteration (batch) at a time, ahead of the consumer.
//
// Within an iteration, operators run in graph order. Consecutive sample-wise operators are
// chained: their setups run first (shapes only), their outputs are allocated, and then each
// worker thread takes one sample at a time through the whole chain. A chain is cut where an
// operator needs its inputs' data at setup (decoders read headers), takes a per-sample argument
// from an operator in the chain, or works on whole batches (readers).
//
// Iterations run on a producer thread up to `prefetch_queue_depth` batches ahead of run().
// The cpu stage is what exists today; mixed and gpu stages will hand batches on with CUDA events.
//
// Checkpoints (enable_checkpointing): when an iteration ends, the producer takes a snapshot of
// the stateful operators (readers) -- the state the next iteration starts from -- and queues it
// with the iteration's result. next() hands the result out and makes its snapshot the one
// checkpoint() reports, so a checkpoint describes what follows the last batch the consumer got,
// never what the producer has already made ahead. Random operators keep no state: their draws
// are keyed by (seed, operator, iteration), so the iteration number restores them.
#pragma once
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "pipeline/gpu_context.h"
#include "pipeline/operator.h"

namespace stoker {

struct NodeRef {
  int op = -1;      // index of the producing operator in the graph
  int output = 0;   // which of its outputs
};

struct GraphOp {
  OpSpec spec;
  std::vector<NodeRef> inputs;
  std::vector<NodeRef> arg_inputs;  // in the order of spec.tensor_args' indices
};

struct ExecutorParams {
  int batch_size = 1;
  int num_threads = 1;
  int device_id = -1;  // -1: CPU only
  uint64_t seed = 0;
  int prefetch_queue_depth = 2;
  bool exec_async = true;
  bool exec_pipelined = true;
  bool enable_checkpointing = false;
};

// The pipeline between two iterations: restoring it into an executor with the same graph and
// arguments produces, from `iteration` on, the batches the saved one would have produced.
struct Checkpoint {
  struct Op {           // a reader or a random operator
    int64_t instance = 0;                // position in the graph
    std::string schema;                  // "readers.file"
    std::string name;                    // the user's name=, may be empty
    uint64_t seed = 0;
    std::optional<std::string> state;    // readers: position, shuffle buffer, skipped samples
  };
  int batch_size = 0;
  uint64_t seed = 0;       // the pipeline's
  int64_t iteration = 0;   // the next iteration to run
  std::vector<Op> ops;     // in graph order
};

class Executor {
 public:
  Executor(ExecutorParams params, std::vector<GraphOp> graph, std::vector<NodeRef> outputs);
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // The next iteration's outputs. Throws the error of that iteration, if it failed; the
  // pipeline goes on with the next iteration at the next call.
  std::vector<Batch> next();
  // Like next(), but gives up after `timeout` (so that callers can check for interrupts).
  std::optional<std::vector<Batch>> try_next(std::chrono::milliseconds timeout);

  std::optional<ReaderMeta> reader_meta(const std::string& name) const;
  std::vector<std::string> reader_names() const;
  // Samples skipped or replaced under on_error, per operator.
  struct ErrorStats {
    int64_t skipped = 0, replaced = 0;
    std::vector<std::string> sources;  // each bad file once (up to 10000)
    std::set<std::string> logged;
  };
  std::map<std::string, ErrorStats> error_stats() const;

  MemoryStats host_memory_stats() const { return host_pool_->stats(); }
  MemoryPool& host_pool() { return *host_pool_; }
  GpuContext* gpu() { return gpu_.get(); }
  const ExecutorParams& params() const { return params_; }
  int64_t iterations_produced() const;
  // True on the executor's own producer thread (which the destructor cannot join).
  bool on_producer_thread() const { return std::this_thread::get_id() == producer_.get_id(); }

  // The state after the last iteration next() returned (or the initial one). Needs
  // enable_checkpointing.
  Checkpoint checkpoint() const;
  // Before the first iteration: continue from `c`. Raises kInvalidArgument when `c` comes from
  // another pipeline (batch size, operators, seeds, reader arguments), naming what differs.
  void restore(const Checkpoint& c);

 private:
  using States = std::vector<std::optional<std::string>>;  // per operator, after an iteration
  struct Result {
    std::vector<Batch> outputs;
    std::exception_ptr error;
    int64_t iteration = 0;
    std::shared_ptr<const States> states;  // with enable_checkpointing
  };
  Result run_iteration(int64_t iteration);
  std::vector<Batch> run_attempt(int64_t iteration, IterationErrors& errors);
  void record_errors(const std::vector<IterationErrors::Entry>& entries);
  void producer_main();
  void start_locked();
  std::shared_ptr<const States> snapshot() const;
  void deliver_locked(const Result& r);

  ExecutorParams params_;
  std::vector<GraphOp> graph_;
  std::vector<NodeRef> outputs_;
  std::vector<std::unique_ptr<Operator>> ops_;
  std::shared_ptr<MemoryPool> host_pool_;
  std::unique_ptr<ThreadPool> thread_pool_;
  std::unique_ptr<GpuContext> gpu_;  // only for pipelines with mixed or gpu operators

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Result> queue_;
  bool started_ = false;
  bool stop_ = false;
  int64_t next_iteration_ = 0;
  std::thread producer_;
  // What checkpoint() reports: the snapshot queued with the last result next() returned.
  int64_t delivered_iteration_ = 0;  // the next iteration the consumer will get
  std::shared_ptr<const States> delivered_states_;

  mutable std::mutex stats_mu_;
  std::map<std::string, ErrorStats> error_stats_;
};

}  // namespace stoker
