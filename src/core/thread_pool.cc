#include "core/thread_pool.h"

#include "core/error.h"

namespace stoker {

ThreadPool::ThreadPool(int num_threads) {
  if (num_threads < 1)
    fail(ErrorKind::kInvalidArgument,
         "num_threads must be at least 1, got " + std::to_string(num_threads));
  workers_.reserve(num_threads);
  for (int i = 0; i < num_threads; ++i) workers_.emplace_back([this, i] { worker_main(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> g(mu_);
    stop_ = true;
  }
  work_cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t, int)>& f) {
  if (n <= 0) return;
  std::lock_guard<std::mutex> submit(submit_mu_);
  std::unique_lock<std::mutex> lk(mu_);
  job_.fn = &f;
  job_.n = n;
  job_.next = 0;
  job_.done = 0;
  job_.failed_index = -1;
  job_.error = nullptr;
  job_.generation++;
  work_cv_.notify_all();
  done_cv_.wait(lk, [this] { return job_.done == job_.n; });
  job_.fn = nullptr;
  if (job_.error) {
    std::exception_ptr e = job_.error;
    job_.error = nullptr;
    std::rethrow_exception(e);
  }
}

void ThreadPool::worker_main(int id) {
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    work_cv_.wait(lk, [this] { return stop_ || (job_.fn && job_.next < job_.n); });
    if (stop_) return;
    int64_t i = job_.next++;
    const auto* fn = job_.fn;
    bool skip = job_.error != nullptr;
    lk.unlock();
    std::exception_ptr err;
    if (!skip) {
      try {
        (*fn)(i, id);
      } catch (...) {
        err = std::current_exception();
      }
    }
    lk.lock();
    if (err && (job_.failed_index < 0 || i < job_.failed_index)) {
      job_.failed_index = i;
      job_.error = err;
    }
    if (++job_.done == job_.n) done_cv_.notify_all();
  }
}

}  // namespace stoker
