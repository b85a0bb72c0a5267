#include "core/thread_pool.h"

#include <cxxabi.h>
#include <pthread.h>
#include <sched.h>

#include "core/error.h"

namespace stoker {

bool pin_this_thread(const std::vector<int>& cpus) {
  if (cpus.empty()) return true;
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus)
    if (c >= 0 && c < CPU_SETSIZE) CPU_SET(c, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

ThreadPool::ThreadPool(int num_threads, std::vector<int> cpus) : cpus_(std::move(cpus)) {
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
  Job job;
  job.fn = &f;
  job.n = n;
  std::unique_lock<std::mutex> lk(mu_);
  jobs_.push_back(&job);
  // As many workers as there are items to hand out: a batch of a few samples wakes a few.
  if (n >= size()) {
    work_cv_.notify_all();
  } else {
    for (int64_t k = 0; k < n; ++k) work_cv_.notify_one();
  }
  done_cv_.wait(lk, [&job] { return job.done == job.n; });
  if (job.error) std::rethrow_exception(job.error);
}

void ThreadPool::worker_main(int id) {
  pin_this_thread(cpus_);
  std::unique_lock<std::mutex> lk(mu_);
  for (;;) {
    work_cv_.wait(lk, [this] { return stop_ || !jobs_.empty(); });
    if (stop_) return;
    // Round robin over the jobs, so that a stage's short job does not wait behind another
    // stage's long one.
    Job& job = *jobs_.front();
    jobs_.pop_front();
    int64_t i = job.next++;
    if (job.next < job.n) jobs_.push_back(&job);  // else all handed out; the caller waits
    bool skip = job.error != nullptr;
    lk.unlock();
    std::exception_ptr err;
    if (!skip) {
      try {
        (*job.fn)(i, id);
      } catch (abi::__forced_unwind&) {
        throw;  // the thread is being cancelled: it must end, not carry on
      } catch (...) {
        err = std::current_exception();
      }
    }
    lk.lock();
    if (err && (job.failed_index < 0 || i < job.failed_index)) {
      job.failed_index = i;
      job.error = err;
    }
    if (++job.done == job.n) done_cv_.notify_all();
  }
}

}  // namespace stoker
