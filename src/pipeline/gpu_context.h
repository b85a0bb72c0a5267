// What a pipeline's GPU stages share: the device, the stream they queue work on, and the
// stream-ordered pinned and device memory pools. No CUDA headers: the implementation is in
// gpu_context_cuda.cc, or gpu_context_none.cc in builds without CUDA.
#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <utility>

#include "core/memory.h"

namespace stoker {

class GpuContext {
 public:
  virtual ~GpuContext() = default;
  virtual int device() const = 0;
  virtual void* stream() const = 0;  // a cudaStream_t
  // Memory whose reuse waits for the work queued on stream() (and on streams recorded with
  // record_stream) to finish.
  virtual std::shared_ptr<void> allocate_device(size_t bytes) = 0;
  virtual std::shared_ptr<void> allocate_pinned(size_t bytes) = 0;
  // A function to call when a consumer's stream starts using a device buffer (the start of an
  // allocate_device block): its reuse then also waits for that stream. It stays valid after
  // the context is gone.
  virtual std::function<void(const void* ptr, void* stream)> stream_recorder() = 0;
  // Queues copies on stream().
  virtual void copy_async(void* dst, const void* src, size_t bytes) = 0;
  // An event recorded now on stream() (after everything queued so far), and its owner.
  virtual std::pair<std::shared_ptr<void>, void*> record_event() = 0;
  virtual MemoryStats device_stats() const = 0;
  virtual MemoryStats pinned_stats() const = 0;
  virtual size_t release_unused() = 0;
};

// Throws Error(kUnsupported) where stoker was built without CUDA or `device` does not exist.
std::unique_ptr<GpuContext> make_gpu_context(int device);

}  // namespace stoker
