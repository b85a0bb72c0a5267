#include "capi/fed_input.h"

#include <map>

#include "core/error.h"
#include "pipeline/operator.h"

namespace stoker::capi {

void FedQueue::push(Batch b) {
  std::lock_guard<std::mutex> g(mu_);
  queue_.push_back(std::move(b));
  ++fed_;
  cv_.notify_all();
}

Batch FedQueue::pop(const std::string& who) {
  std::unique_lock<std::mutex> lk(mu_);
  cv_.wait(lk, [&] { return cancelled_ || !queue_.empty() || (repeat_last_ && last_); });
  if (cancelled_)
    throw Error(ErrorKind::kInvalidArgument, who + ": the pipeline was destroyed while waiting for data");
  if (!queue_.empty()) {
    last_ = std::move(queue_.front());
    queue_.pop_front();
  }
  return *last_;
}

void FedQueue::cancel() {
  std::lock_guard<std::mutex> g(mu_);
  cancelled_ = true;
  cv_.notify_all();
}

int64_t FedQueue::fed() const {
  std::lock_guard<std::mutex> g(mu_);
  return fed_;
}

namespace {

// Queues by id: an OpSpec holds only constants. The C API keeps each queue alive as long as its
// pipeline; the operator holds it too.
class Registry {
 public:
  static Registry& get() {
    static Registry* r = new Registry;  // never destroyed: operators may outlive static teardown
    return *r;
  }
  std::shared_ptr<FedQueue> make(bool repeat_last) {
    auto q = std::make_shared<FedQueue>(repeat_last);
    std::lock_guard<std::mutex> g(mu_);
    for (auto it = queues_.begin(); it != queues_.end();)
      it = it->second.expired() ? queues_.erase(it) : std::next(it);
    q->id = next_;
    queues_[next_++] = q;
    return q;
  }
  std::shared_ptr<FedQueue> find(int64_t id) {
    std::lock_guard<std::mutex> g(mu_);
    auto it = queues_.find(id);
    return it == queues_.end() ? nullptr : it->second.lock();
  }

 private:
  std::mutex mu_;
  std::map<int64_t, std::weak_ptr<FedQueue>> queues_;
  int64_t next_ = 1;
};

class FedInput : public Operator {
 public:
  explicit FedInput(const OpSpec& spec) : Operator(spec) {
    queue_ = Registry::get().find(spec.get<int64_t>("_feed_id"));
    if (!queue_)
      throw Error(ErrorKind::kInternal, spec.display_name() + ": no fed queue with this id");
    layout_ = spec.get<std::string>("layout");
  }
  bool sample_wise() const override { return false; }

  void run_batch(Workspace& ws) override {
    // An iteration re-run after on_error='skip' replaced samples gets the same data again.
    if (ws.iteration != cached_iteration_) {
      cached_ = queue_->pop(spec_.display_name());
      cached_iteration_ = ws.iteration;
    }
    ws.outputs.assign(1, cached_);
  }

 private:
  std::shared_ptr<FedQueue> queue_;
  std::string layout_;
  int64_t cached_iteration_ = -1;
  Batch cached_;
};

}  // namespace

std::shared_ptr<FedQueue> make_fed_queue(bool repeat_last) { return Registry::get().make(repeat_last); }

}  // namespace stoker::capi

STOKER_REGISTER_OP_NAMED(capi_fed_input, stoker::capi::kFedInputOp) {
  using namespace stoker;
  schema.doc("(internal) A serialized pipeline's fn.external_source, fed through the C API "
             "(stoker_pipeline_feed).")
      .inputs(0, 0).outputs(1)
      .arg({.name = "layout", .type = ArgType::kString, .default_value = std::string(),
            .doc = "The layout of the fed samples."})
      .arg({.name = "_feed_id", .type = ArgType::kInt, .doc = "The queue the caller feeds."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<capi::FedInput>(s); });
}
