// The C API's external sources: batches the caller fed (stoker_pipeline_feed), taken one per
// iteration by the operator that stands for each fn.external_source of a serialized pipeline.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "core/batch.h"

namespace stoker::capi {

// The queue between the caller's feeds and the operator on the executor's producer thread.
class FedQueue {
 public:
  explicit FedQueue(bool repeat_last) : repeat_last_(repeat_last) {}

  void push(Batch b);
  // The batch of the next iteration: waits for a feed (or, with repeat_last, takes the last one
  // again when none is waiting). Throws once cancel() was called.
  Batch pop(const std::string& who);
  // Makes a waiting pop() give up: the pipeline is being destroyed.
  void cancel();
  // Feeds so far, and whether an iteration that run() asks for now will find data.
  int64_t fed() const;
  bool repeat_last() const { return repeat_last_; }

  int64_t id = 0;  // the operator's _feed_id

 private:
  const bool repeat_last_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Batch> queue_;
  std::optional<Batch> last_;
  int64_t fed_ = 0;
  bool cancelled_ = false;
};

// A new queue, found by the operator through its id.
std::shared_ptr<FedQueue> make_fed_queue(bool repeat_last);

// The internal operator's schema name: the C API builds it where the serialized pipeline has an
// external_source (arguments: layout, _feed_id).
inline constexpr const char* kFedInputOp = "_fed_input";

}  // namespace stoker::capi
