#include <mutex>

#include "core/cuda/cuda_memory.h"
#include "core/cuda/cuda_util.h"
#include "core/error.h"
#include "pipeline/gpu_context.h"

namespace stoker {
namespace {

class CudaContext : public GpuContext {
 public:
  explicit CudaContext(int device)
      : device_(device), stream_(device),
        device_pool_(std::make_shared<StreamOrderedPool>(device_resource(device),
                                                         "device " + std::to_string(device))),
        pinned_pool_(std::make_shared<StreamOrderedPool>(pinned_resource(), "pinned")) {}

  ~CudaContext() override {
    // Queued work must finish before the stream and the pools go.
    try {
      stream_.synchronize();
      device_pool_->forget_stream(stream_.get());
      pinned_pool_->forget_stream(stream_.get());
      // Batches the consumer still holds keep the pools alive: with them closed, those keep
      // only their own memory (as the host pool does).
      device_pool_->close();
      pinned_pool_->close();
    } catch (...) {
    }
  }

  int device() const override { return device_; }
  void* stream() const override { return stream_.get(); }
  std::shared_ptr<void> allocate_device(size_t bytes) override {
    DeviceGuard g(device_);
    return device_pool_->allocate(bytes, stream_.get());
  }
  std::shared_ptr<void> allocate_pinned(size_t bytes) override {
    return pinned_pool_->allocate(bytes, stream_.get());
  }
  std::function<void(const void*, void*)> stream_recorder() override {
    std::shared_ptr<StreamOrderedPool> pool = device_pool_;
    return [pool](const void* ptr, void* stream) { pool->record_stream(ptr, stream); };
  }
  void copy_async(void* dst, const void* src, size_t bytes) override {
    DeviceGuard g(device_);
    cuda_memcpy_async(dst, src, bytes, stream_.get());
  }
  std::pair<std::shared_ptr<void>, void*> record_event() override {
    DeviceGuard g(device_);
    auto ev = std::make_shared<CudaEvent>(device_);
    ev->record(stream_.get());
    void* handle = ev->get();
    return {std::shared_ptr<void>(ev, ev.get()), handle};
  }
  MemoryStats device_stats() const override { return device_pool_->stats(); }
  MemoryStats pinned_stats() const override { return pinned_pool_->stats(); }
  size_t release_unused() override {
    return device_pool_->release_unused() + pinned_pool_->release_unused();
  }

 private:
  int device_;
  CudaStream stream_;
  std::shared_ptr<StreamOrderedPool> device_pool_, pinned_pool_;
};

}  // namespace

std::unique_ptr<GpuContext> make_gpu_context(int device) {
  std::string why;
  if (!cuda_available(&why))
    fail(ErrorKind::kUnsupported, "this pipeline has GPU stages (device='mixed' or 'gpu', or "
                                  ".gpu()) but no GPU can be used: " + why);
  check_device(device);
  return std::make_unique<CudaContext>(device);
}

}  // namespace stoker
