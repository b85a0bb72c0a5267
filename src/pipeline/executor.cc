#include "pipeline/executor.h"

#include <algorithm>

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
  thread_pool_ = std::make_unique<ThreadPool>(params_.num_threads);
  ops_.reserve(graph_.size());
  for (GraphOp& g : graph_) {
    g.spec.batch_size = params_.batch_size;
    ops_.push_back(g.spec.schema->create(g.spec));
  }
}

Executor::~Executor() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (producer_.joinable()) producer_.join();
  queue_.clear();
  ops_.clear();
}

namespace {

std::string sample_context(const OpSpec& spec, const Workspace& ws, int64_t sample) {
  std::string c = spec.display_name() + ", sample " + std::to_string(sample);
  if (!ws.inputs.empty() && sample < static_cast<int64_t>(ws.inputs[0]->size())) {
    const std::string& src = (*ws.inputs[0])[sample].source;
    if (!src.empty()) c += " ('" + src + "')";
  }
  return c;
}

[[noreturn]] void rethrow_with(const std::string& context) {
  try {
    throw;
  } catch (const Error& e) {
    throw e.with_context(context);
  } catch (const std::bad_alloc&) {
    throw Error(ErrorKind::kOutOfMemory, context + ": out of memory");
  } catch (const std::exception& e) {
    throw Error(ErrorKind::kInternal, context + ": " + e.what());
  }
}

}  // namespace

Executor::Result Executor::run_iteration(int64_t iteration) {
  Result result;
  const size_t n_ops = graph_.size();
  std::vector<Workspace> ws(n_ops);
  std::vector<bool> pending_flag(n_ops, false);
  std::vector<size_t> pending;

  auto flush = [&]() {
    if (pending.empty()) return;
    int64_t n = ws[pending.front()].outputs.empty() ? 0 : ws[pending.front()].outputs[0].size();
    for (size_t k : pending) n = std::max<int64_t>(n, ws[k].outputs.empty() ? 0 : ws[k].outputs[0].size());
    thread_pool_->parallel_for(n, [&](int64_t i, int thread) {
      for (size_t k : pending) {
        try {
          ops_[k]->run_sample(ws[k], i, thread);
        } catch (...) {
          rethrow_with(sample_context(graph_[k].spec, ws[k], i));
        }
      }
    });
    for (size_t k : pending) pending_flag[k] = false;
    pending.clear();
  };

  try {
    for (size_t k = 0; k < n_ops; ++k) {
      const GraphOp& g = graph_[k];
      Operator& op = *ops_[k];
      Workspace& w = ws[k];
      w.iteration = iteration;
      w.batch_size = params_.batch_size;
      w.thread_pool = thread_pool_.get();
      w.host_pool = host_pool_.get();
      w.spec = &op.spec();
      bool needs_flush = !op.sample_wise();
      for (const NodeRef& r : g.inputs) {
        w.inputs.push_back(&ws[r.op].outputs[r.output]);
        if (pending_flag[r.op] && op.setup_reads_input_data()) needs_flush = true;
      }
      for (const NodeRef& r : g.arg_inputs) {
        w.arg_inputs.push_back(&ws[r.op].outputs[r.output]);
        if (pending_flag[r.op]) needs_flush = true;
      }
      if (needs_flush) flush();

      if (!op.sample_wise()) {
        try {
          op.run_batch(w);
        } catch (...) {
          rethrow_with(op.spec().display_name());
        }
        continue;
      }
      std::vector<OutputDesc> descs;
      try {
        descs = op.setup(w);
      } catch (...) {
        rethrow_with(op.spec().display_name());
      }
      STOKER_ASSERT(static_cast<int>(descs.size()) == g.spec.num_outputs,
                    g.spec.display_name() + " declared the wrong number of outputs");
      w.outputs.resize(descs.size());
      for (size_t j = 0; j < descs.size(); ++j) {
        Batch& out = w.outputs[j];
        out.allocate(*host_pool_, descs[j].dtype, descs[j].shapes, descs[j].layout);
        if (!w.inputs.empty())
          for (size_t i = 0; i < out.size() && i < w.inputs[0]->size(); ++i)
            out[i].source = (*w.inputs[0])[i].source;
      }
      pending.push_back(k);
      pending_flag[k] = true;
    }
    flush();
    for (const NodeRef& r : outputs_) result.outputs.push_back(ws[r.op].outputs[r.output]);
  } catch (...) {
    result.error = std::current_exception();
  }
  return result;
}

void Executor::start_locked() {
  if (started_) return;
  started_ = true;
  if (params_.exec_async) producer_ = std::thread([this] { producer_main(); });
}

void Executor::producer_main() {
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    cv_.wait(lk, [this] {
      return stop_ || static_cast<int>(queue_.size()) < params_.prefetch_queue_depth;
    });
    if (stop_) return;
    int64_t it = next_iteration_++;
    lk.unlock();
    Result r = run_iteration(it);
    lk.lock();
    queue_.push_back(std::move(r));
    cv_.notify_all();
  }
}

std::optional<std::vector<Batch>> Executor::try_next(std::chrono::milliseconds timeout) {
  Result r;
  {
    std::unique_lock<std::mutex> lk(mu_);
    start_locked();
    if (!params_.exec_async) {
      int64_t it = next_iteration_++;
      lk.unlock();
      r = run_iteration(it);
    } else {
      if (!cv_.wait_for(lk, timeout, [this] { return !queue_.empty(); })) return std::nullopt;
      r = std::move(queue_.front());
      queue_.pop_front();
      cv_.notify_all();
    }
  }
  if (r.error) std::rethrow_exception(r.error);
  return std::move(r.outputs);
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

}  // namespace stoker
