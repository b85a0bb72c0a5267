// A fixed pool of worker threads for spreading a batch's samples over cores.
#pragma once
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace stoker {

// Keeps the calling thread to the given CPU cores (none: leaves it as it is). Returns false
// where the system refuses (a core outside the process's cgroup, say); the thread then runs
// where it did.
bool pin_this_thread(const std::vector<int>& cpus);

class ThreadPool {
 public:
  // `cpus`: the cores the workers keep to (empty: wherever the system runs them).
  explicit ThreadPool(int num_threads, std::vector<int> cpus = {});
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()); }

  // Runs f(index, thread_id) for index in [0, n) on the workers; the caller waits. Indices are
  // handed out one at a time, so uneven samples balance. If any call throws, the remaining
  // indices are skipped and the exception of the lowest failing index is rethrown here.
  //
  // Several threads may call it at once (the pipeline's stages do): their jobs share the
  // workers, index by index in turn. A thread_id runs one index at a time, whatever the job, so state
  // kept per thread_id is safe as long as one caller does not run two jobs over it at once.
  void parallel_for(int64_t n, const std::function<void(int64_t, int)>& f);

 private:
  void worker_main(int id);

  struct Job {
    const std::function<void(int64_t, int)>* fn = nullptr;
    int64_t n = 0;
    int64_t next = 0;      // next index to hand out
    int64_t done = 0;      // indices finished
    int64_t failed_index = -1;
    std::exception_ptr error;
  };

  std::vector<std::thread> workers_;
  std::vector<int> cpus_;
  std::mutex mu_;
  std::condition_variable work_cv_, done_cv_;
  std::deque<Job*> jobs_;  // jobs with indices left to hand out
  bool stop_ = false;
};

}  // namespace stoker
