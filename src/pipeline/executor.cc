#include "pipeline/executor.h"

#include <cxxabi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "core/log.h"

namespace stoker {

Executor::Executor(ExecutorParams params, std::vector<GraphOp> graph, std::vector<NodeRef> outputs)
    : params_(params), graph_(std::move(graph)), outputs_(std::move(outputs)) {
  if (params_.batch_size < 1)
    fail(ErrorKind::kInvalidArgument,
         "Pipeline: batch_size must be at least 1, got " + std::to_string(params_.batch_size));
  if (params_.prefetch_queue_depth < 1)
    fail(ErrorKind::kInvalidArgument, "Pipeline: prefetch_queue_depth must be at least 1, got " +
                                          std::to_string(params_.prefetch_queue_depth));
  for (size_t k = 0; k < graph_.size(); ++k) {
    for (const NodeRef& r : graph_[k].inputs)
      STOKER_ASSERT(r.op >= 0 && r.op < static_cast<int>(k), "graph is not in topological order");
    for (const NodeRef& r : graph_[k].arg_inputs)
      STOKER_ASSERT(r.op >= 0 && r.op < static_cast<int>(k), "graph is not in topological order");
  }
  host_pool_ = std::make_shared<MemoryPool>(host_resource(), "host");
  host_pool_->set_cap(default_host_memory_cap());
  thread_pool_ = std::make_unique<ThreadPool>(params_.num_threads, params_.cpu_affinity);
  bool has_gpu_stage = false;
  for (const GraphOp& g : graph_) has_gpu_stage |= g.spec.backend != Backend::kCPU;
  if (has_gpu_stage) {
    if (params_.device_id < 0) {
      const GraphOp* first = nullptr;
      for (const GraphOp& g : graph_)
        if (!first && g.spec.backend != Backend::kCPU) first = &g;
      fail(ErrorKind::kInvalidArgument,
           first->spec.display_name() + " runs on '" + backend_name(first->spec.backend) +
               "', but the pipeline has device_id=None (CPU only). Give the pipeline a GPU "
               "(device_id=0) or run the operator with device='cpu'.");
    }
    gpu_ = make_gpu_context(params_.device_id);
  }
  ops_.reserve(graph_.size());
  for (GraphOp& g : graph_) {
    g.spec.batch_size = params_.batch_size;
    ops_.push_back(g.spec.schema->create(g.spec));
  }
  plan_stages();
  if (params_.enable_checkpointing) delivered_states_ = snapshot();
}

void Executor::plan_stages() {
  // The cpu, mixed and gpu stages, those the graph has, in that order. Mixed and gpu are
  // separate stages so that the nvJPEG hardware batch (which holds its thread ~13 ms per 256
  // images) overlaps the GPU operators of the batch before: 14,475 img/s on the H100 where one
  // device stage reached 10-13k (bench/RESULTS.md, the tree on 4a4f039).
  const size_t n = graph_.size();
  bool has[3] = {false, false, false};
  auto index_of = [](Backend b) { return b == Backend::kCPU ? 0 : b == Backend::kMixed ? 1 : 2; };
  for (const GraphOp& g : graph_) has[index_of(g.spec.backend)] = true;
  if (!has[1] && !has[2]) has[0] = true;
  static const char* kNames[3] = {"cpu", "mixed", "gpu"};
  int stage_at[3] = {0, 0, 0};
  for (int b = 0; b < 3; ++b) {
    if (!has[b]) continue;
    stage_at[b] = static_cast<int>(stage_names_.size());
    stage_names_.push_back(kNames[b]);
  }
  num_stages_ = static_cast<int>(stage_names_.size());
  stage_of_.assign(n, 0);
  for (size_t k = 0; k < n; ++k) stage_of_[k] = stage_at[index_of(graph_[k].spec.backend)];
  last_use_.assign(n, 0);
  bool in_order = true;  // every input from the reader's own stage or an earlier one
  bool later_skips = false;
  for (size_t k = 0; k < n; ++k) {
    last_use_[k] = std::max(last_use_[k], stage_of_[k]);
    for (const auto* refs : {&graph_[k].inputs, &graph_[k].arg_inputs})
      for (const NodeRef& r : *refs) {
        in_order &= stage_of_[r.op] <= stage_of_[k];
        last_use_[r.op] = std::max(last_use_[r.op], stage_of_[k]);
      }
    later_skips |= stage_of_[k] > 0 && ops_[k]->on_error() == OnError::kSkip;
  }
  for (const NodeRef& r : outputs_) last_use_[r.op] = num_stages_;  // kept until delivered
  // A CPU operator given a GPU operator's output fails in its own setup, with its own message;
  // such a graph runs unstaged so that it gets there.
  pipelined_ = params_.exec_async && params_.exec_pipelined && num_stages_ > 1 && in_order &&
               !later_skips;
  if (!pipelined_) {
    stage_of_.assign(n, 0);
    last_use_.assign(n, 0);
    num_stages_ = 1;
    std::string all;
    for (const std::string& name : stage_names_) all += (all.empty() ? "" : "+") + name;
    stage_names_.assign(1, all);
  }
  // Operators that prepare early (Operator::prepares_early) do so in the last stage that makes
  // one of their inputs, when that is an earlier stage than their own.
  prepare_stage_.assign(n, -1);
  for (size_t k = 0; pipelined_ && k < n; ++k) {
    if (ops_[k]->sample_wise() || !ops_[k]->prepares_early()) continue;
    int p = 0;
    for (const auto* refs : {&graph_[k].inputs, &graph_[k].arg_inputs})
      for (const NodeRef& r : *refs) p = std::max(p, stage_of_[r.op]);
    if (p < stage_of_[k]) prepare_stage_[k] = p;
  }
  handoff_.resize(num_stages_);
  op_times_ = std::make_unique<OpTimes[]>(n);
  stage_times_ = std::make_unique<StageTimes[]>(num_stages_);
}

Executor::~Executor() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (std::thread& t : threads_)
    if (t.joinable()) t.join();
  handoff_.clear();
  queue_.clear();
  ops_.clear();
  gpu_.reset();
  host_pool_->close();  // batches the consumer still holds keep only their own memory
}

bool Executor::stop(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lk(mu_);
  stop_ = true;
  cv_.notify_all();
  return cv_.wait_for(lk, timeout, [&] { return running_ == 0; });
}

namespace {

std::string sample_source(const Workspace& ws, int64_t sample) {
  if (!ws.inputs.empty() && sample < static_cast<int64_t>(ws.inputs[0]->size()))
    return (*ws.inputs[0])[sample].source;
  return "";
}

// A sample's position in the iteration's whole batch (in a branch of an `if`, the operator
// sees part of it).
int64_t whole_batch_index(const Workspace& ws, int64_t sample) {
  return ws.origins ? (*ws.origins)[sample] : sample;
}

std::string sample_context(const OpSpec& spec, const Workspace& ws, int64_t sample) {
  std::string c = spec.display_name() + ", sample " + std::to_string(whole_batch_index(ws, sample));
  if (!ws.inputs.empty() && sample < static_cast<int64_t>(ws.inputs[0]->size())) {
    const std::string& src = (*ws.inputs[0])[sample].source;
    if (!src.empty()) c += " ('" + src + "')";
  }
  return c;
}

// Rethrows the current exception with `context` (which starts with the operator's name) in
// front; a message that already names the operator gets only the rest of the context.
[[noreturn]] void rethrow_with(const std::string& context, const std::string& op_name) {
  try {
    throw;
  } catch (const Error& e) {
    std::string msg = e.what();
    if (msg.rfind(op_name, 0) == 0) {
      std::string rest = context.substr(std::min(context.size(), op_name.size()));
      if (rest.rfind(", ", 0) == 0) rest = rest.substr(2);
      if (rest.empty()) throw;
      throw Error(e.kind(), op_name + " [" + rest + "]" + msg.substr(op_name.size()));
    }
    throw e.with_context(context);
  } catch (const std::bad_alloc&) {
    throw Error(ErrorKind::kOutOfMemory, context + ": out of memory");
  } catch (const std::exception& e) {
    throw Error(ErrorKind::kInternal, context + ": " + e.what());
  }
}

}  // namespace

namespace {

// STOKER_TRACE_STAGES=1: each stage's iterations and operators, as they start, logged at debug
// level (core/log.h).
bool trace_stages() {
  static const bool on = std::getenv("STOKER_TRACE_STAGES") != nullptr;
  return on;
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch()).count();
}

// True for an operator whose inputs are all empty batches: in a branch of an `if` that no
// sample takes (an operator without inputs makes a whole batch, outside any branch).
bool branch_not_taken(const Workspace& w) {
  if (w.inputs.empty() && w.arg_inputs.empty()) return false;
  for (const auto* in : {&w.inputs, &w.arg_inputs})
    for (const Batch* b : *in)
      if (!b->empty()) return false;
  return true;
}

// Thrown inside an attempt when samples were skipped: the readers pick replacements and the
// iteration runs again.
struct RestartIteration {};

}  // namespace

void Executor::run_stages(Iteration& it, int first, int last) {
  Result& result = it.result;
  if (result.error) return;  // an earlier stage failed: the iteration passes through
  try {
    if (first == 0)
      for (size_t k = 0; k < ops_.size(); ++k)
        if (stage_of_[k] <= last) ops_[k]->begin_iteration(params_.batch_size);
    // Each attempt that meets bad samples (with on_error='skip') makes the readers replace them,
    // and never deliver them again, so a bad file costs one re-run of one batch per run.
    const int kMaxAttempts = 64;
    for (int attempt = 0;; ++attempt) {
      IterationErrors errors;
      bool restart = false;
      try {
        run_attempt(it, first, last, errors);
      } catch (const RestartIteration&) {
        restart = true;
      }
      std::vector<IterationErrors::Entry> bad = errors.take();
      // In sample order, not the order the worker threads failed in: which good sample takes
      // which bad one's place (and what the log says first) must not depend on the threads.
      std::stable_sort(bad.begin(), bad.end(),
                       [](const auto& a, const auto& b) { return a.sample < b.sample; });
      // The log line and the messages below name the operator already.
      for (auto& e : bad)
        if (e.reason.rfind(e.op + ": ", 0) == 0) e.reason.erase(0, e.op.size() + 2);
      record_errors(bad);
      if (!restart) break;
      // Only the first stage has readers; later stages never skip when pipelined.
      STOKER_ASSERT(first == 0, "a sample was skipped after the readers' stage");
      std::vector<int64_t> positions;
      for (const auto& e : bad)
        if (!e.replaced && (positions.empty() || positions.back() != e.sample))
          positions.push_back(e.sample);
      bool replaced = false;
      for (auto& op : ops_) replaced |= op->replace_samples(positions);
      if (!replaced)
        fail(ErrorKind::kInvalidArgument,
             "on_error='skip': sample(s) could not be replaced because no reader in this "
             "pipeline can deliver other samples (first: " + bad.front().op + ", '" +
             bad.front().source + "': " + bad.front().reason + ")");
      if (attempt + 1 >= kMaxAttempts)
        fail(ErrorKind::kDecode, "on_error='skip': gave up after " + std::to_string(kMaxAttempts) +
                                     " batches in a row had bad samples; the last: " +
                                     bad.front().op + ", '" + bad.front().source + "': " +
                                     bad.front().reason);
    }
  } catch (abi::__forced_unwind&) {
    throw;  // the thread is being cancelled (Python exiting under a callback): let it end
  } catch (...) {
    result.outputs.clear();
    result.error = std::current_exception();
  }
  // A failed iteration moved the readers on too: the next one starts from here either way.
  if (first == 0 && params_.enable_checkpointing) {
    try {
      result.states = snapshot();
    } catch (...) {
      if (!result.error) result.error = std::current_exception();
      result.outputs.clear();
    }
  }
}

std::shared_ptr<const Executor::States> Executor::snapshot() const {
  auto states = std::make_shared<States>();
  states->reserve(ops_.size());
  for (const auto& op : ops_) states->push_back(op->save_state());
  return states;
}

void Executor::record_errors(const std::vector<IterationErrors::Entry>& entries) {
  if (entries.empty()) return;
  std::vector<const IterationErrors::Entry*> first_time;
  {
    std::lock_guard<std::mutex> g(stats_mu_);
    for (const auto& e : entries) {
      ErrorStats& st = error_stats_[e.op];
      (e.replaced ? st.replaced : st.skipped)++;
      if (st.logged.insert(e.source).second) {
        if (st.sources.size() < 10000) st.sources.push_back(e.source);
        first_time.push_back(&e);
      }
    }
  }
  // Logged outside the lock: the sink may wait for the GIL, whose holder may be reading
  // error_stats().
  for (const auto* e : first_time)
    log_message(LogLevel::kWarning, "stoker: %s '%s' in %s: %s", e->replaced ? "replaced" : "skipped",
                e->source.c_str(), e->op.c_str(), e->reason.c_str());
}

std::map<std::string, Executor::ErrorStats> Executor::error_stats() const {
  std::lock_guard<std::mutex> g(stats_mu_);
  return error_stats_;
}

// Below this (the samples of a chain of sample-wise operators together, as measured), the chain
// runs on the stage's thread rather than the workers: about what a hand-off to them costs.
constexpr int64_t kInlineNs = 20000;

void Executor::run_attempt(Iteration& it, int first, int last, IterationErrors& errors) {
  const size_t n_ops = graph_.size();
  const int64_t iteration = it.result.iteration;
  std::vector<Workspace>& ws = it.ws;
  ws.resize(n_ops);
  std::vector<bool> pending_flag(n_ops, false);
  std::vector<size_t> pending;
  using Clock = std::chrono::steady_clock;
  auto ns_since = [](Clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t).count();
  };

  // Whether the operators' samples took under `limit_ns` together in their earlier iterations
  // (each measured at least once).
  auto measured_under = [&](const std::vector<size_t>& ops, int64_t limit_ns) {
    int64_t ns = 0;
    for (size_t k : ops) {
      const int64_t earlier = op_times_[k].iterations.load() - 1;  // this one is counted already
      if (earlier < 1) return false;
      ns += op_times_[k].sample.load() / earlier;
      if (ns >= limit_ns) return false;
    }
    return true;
  };

  auto flush = [&]() {
    if (pending.empty()) return;
    // Operators in a branch of an `if` (conditionals) work on part of the batch, chained with
    // others that work on all of it: each runs its own samples.
    int64_t n = 0;
    std::vector<int64_t> count;
    for (size_t k : pending) {
      count.push_back(ws[k].outputs.empty() ? 0 : static_cast<int64_t>(ws[k].outputs[0].size()));
      n = std::max(n, count.back());
    }
    auto run = [&](int64_t i, int thread) {
      for (size_t p = 0; p < pending.size(); ++p) {
        const size_t k = pending[p];
        if (i >= count[p]) continue;
        try {
          Clock::time_point t = Clock::now();
          ops_[k]->run_sample(ws[k], i, thread);
          op_times_[k].sample += ns_since(t);
        } catch (const Error& e) {
          // A bad sample under on_error='skip' drops out of the rest of the chain.
          if (e.kind() != ErrorKind::kInternal && ws[k].on_error == OnError::kSkip &&
              ws[k].report_bad_sample(i, sample_source(ws[k], i), e.what()))
            return;
          rethrow_with(sample_context(graph_[k].spec, ws[k], i), graph_[k].spec.display_name());
        } catch (...) {
          rethrow_with(sample_context(graph_[k].spec, ws[k], i), graph_[k].spec.display_name());
        }
      }
    };
    // A chain whose samples all took a few microseconds together (the scalars of an automatic
    // augmentation's branches: random draws, comparisons, transform matrices) runs here, on the
    // stage's thread: waking the workers and handing each of them samples costs more than the
    // work. Such operators keep no per-thread state; they run as thread 0.
    if (measured_under(pending, kInlineNs)) {
      for (int64_t i = 0; i < n; ++i) run(i, 0);
    } else {
      thread_pool_->parallel_for(n, run);
    }
    for (size_t k : pending) pending_flag[k] = false;
    pending.clear();
    if (errors.has_skipped()) throw RestartIteration{};
  };

  auto wire = [&](size_t k, Workspace& w) {  // a fresh workspace for operator k
    const GraphOp& g = graph_[k];
    w = Workspace();
    w.iteration = iteration;
    w.thread_pool = thread_pool_.get();
    w.host_pool = host_pool_.get();
    w.spec = &ops_[k]->spec();
    w.errors = &errors;
    w.on_error = ops_[k]->on_error();
    w.gpu = gpu_.get();
    for (const NodeRef& r : g.inputs) w.inputs.push_back(&ws[r.op].outputs[r.output]);
    for (const NodeRef& r : g.arg_inputs) w.arg_inputs.push_back(&ws[r.op].outputs[r.output]);
    // An operator with inputs works on as many samples as they have: in a branch of an `if`,
    // part of the batch (and its samples' positions in the whole batch come along).
    auto origins_of = [&](const NodeRef& r) {
      const Workspace& src = ws[r.op];
      return src.output_origins.empty() ? src.origins : src.output_origins[r.output];
    };
    for (const NodeRef& r : g.inputs) w.input_origins.push_back(origins_of(r));
    for (const NodeRef& r : g.arg_inputs) w.arg_origins.push_back(origins_of(r));
    w.batch_size = params_.batch_size;
    if (!w.inputs.empty()) {
      w.batch_size = static_cast<int>(w.inputs[0]->size());
      w.origins = w.input_origins[0];
    } else if (!w.arg_inputs.empty()) {
      w.batch_size = static_cast<int>(w.arg_inputs[0]->size());
      w.origins = w.arg_origins[0];
    }
  };
  it.prepared.resize(n_ops);

  for (size_t k = 0; k < n_ops; ++k) {
    if (stage_of_[k] < first || stage_of_[k] > last) continue;
    const GraphOp& g = graph_[k];
    Operator& op = *ops_[k];
    Workspace& w = ws[k];
    wire(k, w);
    w.prepared = std::move(it.prepared[k]);
    if (branch_not_taken(w)) {
      // A branch of an `if` that no sample of this iteration takes: nothing to compute, and
      // no operator has to cope with empty batches. The outputs are empty and of no type;
      // _conditional.merge takes the type from the other branch.
      w.outputs.assign(g.spec.num_outputs, Batch());
      continue;
    }
    bool needs_flush = !op.sample_wise();
    for (const NodeRef& r : g.inputs)
      if (pending_flag[r.op] && op.setup_reads_input_data()) needs_flush = true;
    for (const NodeRef& r : g.arg_inputs)
      if (pending_flag[r.op]) needs_flush = true;
    if (needs_flush) flush();

    op_times_[k].iterations++;
    if (trace_stages())
      log_message(LogLevel::kDebug, "stoker: iteration %lld: %s", (long long)iteration,
                  op.spec().display_name().c_str());
    Clock::time_point t = Clock::now();
    if (!op.sample_wise()) {
      try {
        op.run_batch(w);
      } catch (...) {
        rethrow_with(op.spec().display_name(), op.spec().display_name());
      }
      op_times_[k].batch += ns_since(t);
      if (errors.has_skipped()) throw RestartIteration{};
      continue;
    }
    std::vector<OutputDesc> descs;
    try {
      descs = op.setup(w);
    } catch (...) {
      rethrow_with(op.spec().display_name(), op.spec().display_name());
    }
    op_times_[k].batch += ns_since(t);
    if (errors.has_skipped()) throw RestartIteration{};
    STOKER_ASSERT(static_cast<int>(descs.size()) == g.spec.num_outputs,
                  g.spec.display_name() + " declared the wrong number of outputs");
    w.outputs.resize(descs.size());
    for (size_t j = 0; j < descs.size(); ++j) {
      Batch& out = w.outputs[j];
      try {
        try {
          out.allocate(*host_pool_, descs[j].dtype, descs[j].shapes, descs[j].layout);
        } catch (const Error& e) {
          // Only an argument makes an output too big for any machine: name it.
          if (e.kind() != ErrorKind::kInvalidArgument || descs[j].size_arg.empty()) throw;
          throw Error(e.kind(), std::string(e.what()) + "; check the argument '" +
                                    descs[j].size_arg + "'");
        }
      } catch (...) {
        rethrow_with(op.spec().display_name(), op.spec().display_name());
      }
      if (!w.inputs.empty())
        for (size_t i = 0; i < out.size() && i < w.inputs[0]->size(); ++i)
          out[i].source = (*w.inputs[0])[i].source;
    }
    pending.push_back(k);
    pending_flag[k] = true;
  }
  flush();
  // Operators of later stages whose inputs are now complete may prepare here, so that their
  // stage finds that part done (Operator::prepares_early).
  for (size_t k = 0; k < n_ops; ++k) {
    if (prepare_stage_[k] < first || prepare_stage_[k] > last) continue;
    Workspace w;
    wire(k, w);
    Clock::time_point t = Clock::now();
    try {
      it.prepared[k] = ops_[k]->prepare(w);
    } catch (...) {
      rethrow_with(ops_[k]->spec().display_name(), ops_[k]->spec().display_name());
    }
    op_times_[k].prepare += ns_since(t);
  }
  if (last < num_stages_ - 1) return;
  std::vector<Batch> outputs;
  for (const NodeRef& r : outputs_) outputs.push_back(ws[r.op].outputs[r.output]);
  if (gpu_) {
    // Device outputs are ready after everything queued on the stream in this iteration;
    // consumers wait on this event with their own stream (no host synchronisation).
    auto [owner, event] = gpu_->record_event();
    for (Batch& b : outputs)
      if (b.memory() == MemoryKind::kDevice) b.set_ready_event(owner, event);
  }
  it.result.outputs = std::move(outputs);
}

void Executor::release_consumed(Iteration& it, int stage) {
  // What no later stage reads goes back to its pool now, not when the iteration is delivered.
  for (size_t k = 0; k < it.ws.size(); ++k)
    if (last_use_[k] <= stage && stage_of_[k] <= stage) it.ws[k].outputs.clear();
}

void Executor::start_locked() {
  if (started_) return;
  started_ = true;
  first_run_ns_ = now_ns();
  if (!params_.exec_async) return;
  for (int s = 0; s < num_stages_; ++s) {
    ++running_;
    threads_.emplace_back([this, s] {
      // Counted down however the thread ends, a forced unwind (Python exiting under a
      // callback) included.
      struct Done {
        Executor* e;
        ~Done() {
          std::lock_guard<std::mutex> g(e->mu_);
          --e->running_;
          e->cv_.notify_all();
        }
      } done{this};
      pin_this_thread(params_.cpu_affinity);
      stage_main(s);
    });
  }
}

bool Executor::on_producer_thread() const {
  for (const std::thread& t : threads_)
    if (std::this_thread::get_id() == t.get_id()) return true;
  return false;
}

void Executor::stage_main(int stage) {
  const int limit = params_.prefetch_queue_depth + num_stages_ - 1;
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    std::unique_ptr<Iteration> it;
    if (stage == 0) {
      cv_.wait(lk, [&] { return stop_ || outstanding_ < limit; });
      if (stop_) return;
      it = std::make_unique<Iteration>();
      it->result.iteration = next_iteration_++;
      ++outstanding_;
    } else {
      cv_.wait(lk, [&] { return stop_ || !handoff_[stage].empty(); });
      if (stop_) return;
      it = std::move(handoff_[stage].front());
      handoff_[stage].pop_front();
    }
    lk.unlock();
    auto t = std::chrono::steady_clock::now();
    const bool trace = trace_stages();
    if (trace) log_message(LogLevel::kDebug, "stoker stage %d: iteration %lld starts", stage, (long long)it->result.iteration);
    run_stages(*it, stage, stage);
    release_consumed(*it, stage);
    if (trace) log_message(LogLevel::kDebug, "stoker stage %d: iteration %lld ends", stage, (long long)it->result.iteration);
    stage_times_[stage].busy += std::chrono::duration_cast<std::chrono::nanoseconds>(
                                    std::chrono::steady_clock::now() - t).count();
    stage_times_[stage].iterations++;
    lk.lock();
    if (stage == num_stages_ - 1)
      queue_.push_back(std::move(it->result));
    else
      handoff_[stage + 1].push_back(std::move(it));
    cv_.notify_all();
  }
}

std::optional<std::vector<Batch>> Executor::try_next(std::chrono::milliseconds timeout) {
  Result r;
  auto t = std::chrono::steady_clock::now();
  {
    std::unique_lock<std::mutex> lk(mu_);
    start_locked();
    if (!params_.exec_async) {
      Iteration it;
      it.result.iteration = next_iteration_++;
      lk.unlock();
      run_stages(it, 0, num_stages_ - 1);
      r = std::move(it.result);
      lk.lock();
    } else {
      bool ready = cv_.wait_for(lk, timeout, [this] { return !queue_.empty(); });
      wait_ns_ += std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now() - t).count();
      if (!ready) return std::nullopt;
      r = std::move(queue_.front());
      queue_.pop_front();
      --outstanding_;
      cv_.notify_all();
    }
    deliver_locked(r);
  }
  delivered_++;
  if (r.error) std::rethrow_exception(r.error);
  return std::move(r.outputs);
}

void Executor::deliver_locked(const Result& r) {
  delivered_iteration_ = r.iteration + 1;
  if (r.states) delivered_states_ = r.states;
}

std::vector<Batch> Executor::next() {
  for (;;) {
    auto r = try_next(std::chrono::milliseconds(1000));
    if (r) return std::move(*r);
  }
}

std::optional<ReaderMeta> Executor::reader_meta(const std::string& name) const {
  for (const auto& op : ops_)
    if (op->spec().name == name) return op->reader_meta();
  return std::nullopt;
}

std::vector<std::pair<std::string, ReaderMeta>> Executor::readers() const {
  std::vector<std::pair<std::string, ReaderMeta>> r;
  for (const auto& op : ops_)
    if (auto m = op->reader_meta()) r.emplace_back(op->spec().display_name(), *m);
  return r;
}

std::vector<std::string> Executor::reader_names() const {
  std::vector<std::string> r;
  for (const auto& op : ops_)
    if (op->reader_meta() && !op->spec().name.empty()) r.push_back(op->spec().name);
  return r;
}

int64_t Executor::iterations_produced() const {
  std::lock_guard<std::mutex> g(mu_);
  return next_iteration_;
}

Profile Executor::profile() const {
  auto ms = [](int64_t ns) { return static_cast<double>(ns) / 1e6; };
  Profile p;
  p.pipelined = pipelined_;
  for (size_t k = 0; k < ops_.size(); ++k) {
    const OpSpec& spec = ops_[k]->spec();
    if (spec.schema->name().rfind("_", 0) == 0) continue;  // internal (.gpu())
    Profile::Op o;
    o.name = spec.display_name();
    o.backend = backend_name(spec.backend);
    o.stage = stage_of_[k];
    o.iterations = op_times_[k].iterations;
    o.batch_ms = ms(op_times_[k].batch);
    o.sample_ms = ms(op_times_[k].sample);
    o.prepare_ms = ms(op_times_[k].prepare);
    o.prepare_stage = prepare_stage_[k];
    o.counters = ops_[k]->counters();
    p.ops.push_back(std::move(o));
  }
  for (int s = 0; s < num_stages_; ++s) {
    Profile::Stage st;
    st.name = stage_names_[s];
    st.iterations = stage_times_[s].iterations;
    st.busy_ms = ms(stage_times_[s].busy);
    p.stages.push_back(std::move(st));
  }
  p.delivered = delivered_;
  p.wait_ms = ms(wait_ns_);
  if (int64_t t0 = first_run_ns_) p.elapsed_ms = ms(now_ns() - t0);
  return p;
}

// ---- checkpoints

Checkpoint Executor::checkpoint() const {
  if (!params_.enable_checkpointing)
    fail(ErrorKind::kInvalidArgument,
         "Pipeline.checkpoint(): this pipeline keeps no checkpoints; create it with "
         "enable_checkpointing=True");
  std::shared_ptr<const States> states;
  Checkpoint c;
  {
    std::lock_guard<std::mutex> g(mu_);
    states = delivered_states_;
    c.iteration = delivered_iteration_;
  }
  c.batch_size = params_.batch_size;
  c.seed = params_.seed;
  for (size_t k = 0; k < ops_.size(); ++k) {
    const OpSpec& spec = ops_[k]->spec();
    const std::optional<std::string>& state = (*states)[k];
    if (!state && !spec.schema->is_random()) continue;
    c.ops.push_back({static_cast<int64_t>(k), spec.schema->name(), spec.name, spec.seed, state});
  }
  return c;
}

namespace {

std::string describe(const Checkpoint::Op& op) {
  std::string d = op.schema;
  if (!op.name.empty()) d += " '" + op.name + "'";
  return d + " (operator " + std::to_string(op.instance) + ")";
}

[[noreturn]] void mismatch(const std::string& what) {
  fail(ErrorKind::kInvalidArgument,
       "Pipeline(checkpoint=...): the checkpoint does not match this pipeline: " + what +
           ". Restore a checkpoint into the pipeline it was taken from (the same operators, "
           "arguments, data and batch size).");
}

}  // namespace

void Executor::restore(const Checkpoint& c) {
  std::lock_guard<std::mutex> g(mu_);
  STOKER_ASSERT(!started_, "restore() after the first iteration");
  if (c.batch_size != params_.batch_size)
    mismatch("it was taken with batch_size=" + std::to_string(c.batch_size) +
             ", this pipeline has batch_size=" + std::to_string(params_.batch_size));
  if (c.iteration < 0) mismatch("its iteration is negative (" + std::to_string(c.iteration) + ")");
  if (c.seed != params_.seed)
    mismatch("it was taken with seed=" + std::to_string(c.seed) + ", this pipeline has seed=" +
             std::to_string(params_.seed) + " (give the pipeline the checkpoint's seed)");
  // The stateful operators must be the same ones at the same places: random draws are keyed
  // by the operator's position in the graph.
  std::vector<Checkpoint::Op> mine;
  for (size_t k = 0; k < ops_.size(); ++k) {
    const OpSpec& spec = ops_[k]->spec();
    std::optional<std::string> state = ops_[k]->save_state();
    if (state || spec.schema->is_random())
      mine.push_back({static_cast<int64_t>(k), spec.schema->name(), spec.name, spec.seed, state});
  }
  auto list = [](const std::vector<Checkpoint::Op>& ops) {
    std::string r;
    for (const auto& op : ops) r += (r.empty() ? "" : ", ") + describe(op);
    return "[" + r + "]";
  };
  bool same = mine.size() == c.ops.size();
  for (size_t i = 0; same && i < mine.size(); ++i)
    same = mine[i].instance == c.ops[i].instance && mine[i].schema == c.ops[i].schema &&
           mine[i].state.has_value() == c.ops[i].state.has_value();
  if (!same)
    mismatch("its readers and random operators are " + list(c.ops) + ", this pipeline's are " +
             list(mine));
  for (size_t i = 0; i < mine.size(); ++i)
    if (mine[i].seed != c.ops[i].seed)
      mismatch(describe(mine[i]) + " has seed=" + std::to_string(mine[i].seed) +
               ", the checkpoint's has seed=" + std::to_string(c.ops[i].seed));
  for (size_t i = 0; i < mine.size(); ++i) {
    if (!c.ops[i].state) continue;
    try {
      ops_[mine[i].instance]->restore_state(*c.ops[i].state);
    } catch (const Error& e) {
      // "fn.readers.file (train.py:3): reader state is not valid: it comes from a reader with
      // shard_id=0, this one has shard_id=1; ..."
      throw e.with_context("Pipeline(checkpoint=...): the checkpoint does not match this pipeline");
    }
  }
  next_iteration_ = delivered_iteration_ = c.iteration;
  if (params_.enable_checkpointing) delivered_states_ = snapshot();
}

}  // namespace stoker
