// The executor: runs the operator graph one iteration (batch) at a time, ahead of the consumer.
//
// Within an iteration, operators run in graph order. Consecutive sample-wise operators are
// chained: their setups run first (shapes only), their outputs are allocated, and then each
// worker thread takes one sample at a time through the whole chain. A chain is cut where an
// operator needs its inputs' data at setup (decoders read headers), takes a per-sample argument
// from an operator in the chain, or works on whole batches (readers).
//
// Stages: the operators are grouped by where they run, the cpu stage, then the mixed stage, then
// the gpu stage (an operator's inputs come from its own stage or earlier ones). With
// exec_async and exec_pipelined, each stage runs on a thread of its own, so the readers of
// iteration k+2 run while the decoder works on k+1 and the GPU operators on k; stages hand iterations
// on in order, and GPU work goes on the pipeline's one stream in iteration order. At most
// `prefetch_queue_depth` + (stages - 1) iterations are between the first stage and run().
// A pipeline with one stage, or whose mixed or gpu operators skip bad samples (which needs the
// readers to re-run the same iteration), runs all its stages in turn on one producer thread.
//
// Checkpoints (enable_checkpointing): when an iteration leaves the cpu stage (where the readers
// are), the executor takes a snapshot of the stateful operators (readers) -- the state the next
// iteration starts from -- and queues it with the iteration's result. next() hands the result
// out and makes its snapshot the one checkpoint() reports, so a checkpoint describes what
// follows the last batch the consumer got, never what the stages have already made ahead.
// Random operators keep no state: their draws are keyed by (seed, operator, iteration), so the
// iteration number restores them.
#pragma once
#include <atomic>
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
  // The cores the pipeline's threads (workers and stages) keep to; empty: no pinning
  // (Pipeline(set_affinity=...) chooses them).
  std::vector<int> cpu_affinity;
};

// Where the time goes (Pipeline.profile()): per operator, and per stage.
struct Profile {
  struct Op {
    std::string name;     // display name: "fn.resize (train.py:12)"
    std::string backend;  // "cpu", "mixed", "gpu"
    int stage = 0;
    int64_t iterations = 0;
    double batch_ms = 0;   // on the stage's thread: setup, or run_batch (batch operators)
    double prepare_ms = 0;      // Operator::prepare(), on an earlier stage's thread
    int prepare_stage = -1;     // that stage (-1: prepare runs in run_batch, if at all)
    double sample_ms = 0;  // on the worker threads: run_sample, summed over samples
    std::vector<std::pair<std::string, int64_t>> counters;  // Operator::counters()
  };
  struct Stage {
    std::string name;  // "cpu", "mixed", "gpu"
    int64_t iterations = 0;
    double busy_ms = 0;  // the stage's thread working on iterations (not waiting for them)
  };
  std::vector<Op> ops;
  std::vector<Stage> stages;
  bool pipelined = false;    // stages on threads of their own
  int64_t delivered = 0;     // batches run() returned
  double wait_ms = 0;        // run() waiting for a batch
  double elapsed_ms = 0;     // since the first run()
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
  // Every reader, named or not: its display name ("fn.readers.file (train.py:3)") and metadata.
  std::vector<std::pair<std::string, ReaderMeta>> readers() const;
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
  // True on one of the executor's own stage threads (which the destructor cannot join).
  bool on_producer_thread() const;
  // Stops producing and waits up to `timeout` for the stage threads to end; false when one is
  // still busy then (in a callback into user code that does not return: the destructor would
  // wait for it as long as it takes).
  bool stop(std::chrono::milliseconds timeout);

  // The state after the last iteration next() returned (or the initial one). Needs
  // enable_checkpointing.
  Checkpoint checkpoint() const;
  Profile profile() const;
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
  // An iteration on its way through the stages.
  struct Iteration {
    std::vector<Workspace> ws;  // per operator
    std::vector<std::shared_ptr<void>> prepared;  // per operator: what prepare() made
    Result result;
  };
  struct OpTimes {  // nanoseconds
    std::atomic<int64_t> iterations{0}, batch{0}, sample{0}, prepare{0};
  };
  struct StageTimes {
    std::atomic<int64_t> iterations{0}, busy{0};
  };
  void plan_stages();
  void run_stages(Iteration& it, int first, int last);
  void run_attempt(Iteration& it, int first, int last, IterationErrors& errors);
  void release_consumed(Iteration& it, int stage);
  void record_errors(const std::vector<IterationErrors::Entry>& entries);
  void stage_main(int stage);
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
  std::vector<int> stage_of_;        // per operator: 0 .. num_stages_ - 1
  std::vector<int> last_use_;        // per operator: the last stage that reads its outputs
  std::vector<int> prepare_stage_;   // per operator: the stage that runs its prepare(), or -1
  std::vector<std::string> stage_names_;  // "cpu", "mixed", "gpu" (those there are)
  int num_stages_ = 1;
  bool pipelined_ = false;           // a thread per stage

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Result> queue_;
  bool started_ = false;
  bool stop_ = false;
  int64_t next_iteration_ = 0;
  int64_t outstanding_ = 0;  // iterations started and not yet handed out by next()
  std::vector<std::deque<std::unique_ptr<Iteration>>> handoff_;  // [s]: waiting for stage s
  std::vector<std::thread> threads_;  // one per stage (one in all when not pipelined)
  int running_ = 0;                   // of threads_, those that have not ended
  // What checkpoint() reports: the snapshot queued with the last result next() returned.
  int64_t delivered_iteration_ = 0;  // the next iteration the consumer will get
  std::shared_ptr<const States> delivered_states_;

  mutable std::mutex stats_mu_;
  std::map<std::string, ErrorStats> error_stats_;

  std::unique_ptr<OpTimes[]> op_times_;
  std::unique_ptr<StageTimes[]> stage_times_;
  std::atomic<int64_t> delivered_{0}, wait_ns_{0}, first_run_ns_{0};
};

}  // namespace stoker
