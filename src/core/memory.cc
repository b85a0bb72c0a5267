#include "core/memory.h"

#include <cstdlib>
#include <new>

#include "core/error.h"

namespace stoker {

const char* memory_kind_name(MemoryKind k) {
  switch (k) {
    case MemoryKind::kHost: return "host";
    case MemoryKind::kPinned: return "pinned";
    case MemoryKind::kDevice: return "device";
  }
  return "?";
}

namespace {

std::string mib(size_t bytes) {
  char buf[32];
  snprintf(buf, sizeof(buf), "%.1f MiB", bytes / 1048576.0);
  return buf;
}

class HostResource : public MemoryResource {
 public:
  void* allocate(size_t bytes) override {
    void* p = nullptr;
    if (posix_memalign(&p, 4096, bytes ? bytes : 1) != 0 || !p)
      fail(ErrorKind::kOutOfMemory, "out of host memory allocating " + mib(bytes));
    return p;
  }
  void deallocate(void* p, size_t) noexcept override { free(p); }
  MemoryKind kind() const override { return MemoryKind::kHost; }
};

}  // namespace

std::shared_ptr<MemoryResource> host_resource() {
  static auto r = std::make_shared<HostResource>();
  return r;
}

MemoryPool::MemoryPool(std::shared_ptr<MemoryResource> upstream, std::string name)
    : upstream_(std::move(upstream)), name_(std::move(name)) {}

MemoryPool::~MemoryPool() {
  std::lock_guard<std::mutex> g(mu_);
  release_unused_locked();
}

size_t MemoryPool::size_class(size_t bytes) {
  if (bytes <= 256) return 256;
  // Round up to 1/8 steps between powers of two: at most 12.5% slack.
  size_t p = 1;
  while (p * 2 <= bytes) p *= 2;  // p = largest power of two <= bytes
  size_t step = p / 8;
  return (bytes + step - 1) / step * step;
}

std::shared_ptr<void> MemoryPool::allocate(size_t bytes) {
  size_t cls = size_class(bytes);
  void* p = nullptr;
  {
    std::lock_guard<std::mutex> g(mu_);
    // Best fit among cached blocks up to twice the size: with sizes that vary from batch to
    // batch (decoded images), exact-class reuse alone lets the cache grow to many times what is
    // in use.
    auto it = free_.lower_bound(cls);
    if (it != free_.end() && it->first <= 2 * cls) {
      cls = it->first;
      p = it->second;
      free_.erase(it);
    } else {
      if (stats_.cap && stats_.reserved + cls > stats_.cap) release_unused_locked();
      if (stats_.cap && stats_.reserved + cls > stats_.cap)
        fail(ErrorKind::kOutOfMemory,
             "the " + name_ + " memory pool would exceed its cap of " + mib(stats_.cap) +
             ": it holds " + mib(stats_.allocated) + " in live buffers and " +
             mib(stats_.reserved - stats_.allocated) + " cached, and needs " + mib(cls) +
             " more. Raise the cap, lower batch_size or prefetch_queue_depth, or release "
             "batches you hold");
      p = upstream_->allocate(cls);
      stats_.reserved += cls;
      stats_.num_upstream_allocations++;
      if (stats_.reserved > stats_.peak_reserved) stats_.peak_reserved = stats_.reserved;
    }
    stats_.allocated += cls;
    stats_.num_allocations++;
    if (stats_.allocated > stats_.peak_allocated) stats_.peak_allocated = stats_.allocated;
  }
  std::shared_ptr<MemoryPool> self = shared_from_this();
  return std::shared_ptr<void>(p, [self, cls](void* q) { self->release(q, cls); });
}

void MemoryPool::release(void* p, size_t cls) noexcept {
  std::lock_guard<std::mutex> g(mu_);
  stats_.allocated -= cls;
  free_.emplace(cls, p);
}

MemoryStats MemoryPool::stats() const {
  std::lock_guard<std::mutex> g(mu_);
  return stats_;
}

void MemoryPool::set_cap(size_t bytes) {
  std::lock_guard<std::mutex> g(mu_);
  stats_.cap = bytes;
}

size_t MemoryPool::release_unused() {
  std::lock_guard<std::mutex> g(mu_);
  return release_unused_locked();
}

size_t MemoryPool::release_unused_locked() {
  size_t freed = 0;
  for (auto& [cls, p] : free_) {
    upstream_->deallocate(p, cls);
    freed += cls;
  }
  free_.clear();
  stats_.reserved -= freed;
  return freed;
}

}  // namespace stoker
