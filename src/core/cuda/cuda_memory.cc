#include "core/cuda/cuda_memory.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <utility>

#include "core/error.h"

namespace stoker {

namespace {

std::string mib(size_t bytes) {
  char buf[32];
  snprintf(buf, sizeof(buf), "%.1f MiB", bytes / 1048576.0);
  return buf;
}

// The free and total memory of a GPU, for error messages; empty when it cannot be asked.
std::string gpu_memory_note(int device) {
  size_t free_b = 0, total_b = 0;
  int prev = -1;
  cudaError_t e = cudaGetDevice(&prev);
  if (e == cudaSuccess && prev != device) e = cudaSetDevice(device);
  if (e == cudaSuccess) e = cudaMemGetInfo(&free_b, &total_b);
  if (prev >= 0 && prev != device) cudaSetDevice(prev);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return "";
  }
  return "; GPU " + std::to_string(device) + " has " + mib(free_b) + " free of " + mib(total_b);
}

// Pinned memory is never given back while stoker runs: cudaFreeHost waits for the whole GPU,
// with the hazard described at DeviceResource. Blocks given back are kept here and handed out
// again for any request they are large enough for; trim() frees them (release_unused()).
class PinnedResource : public MemoryResource {
 public:
  void* allocate(size_t bytes) override {
    bytes = bytes ? bytes : 1;
    {
      std::lock_guard<std::mutex> g(mu_);
      settle_locked();
      auto it = idle_.lower_bound(bytes);
      if (it != idle_.end()) {
        void* p = it->second;
        idle_.erase(it);
        return p;
      }
    }
    void* p = nullptr;
    cudaError_t e = cudaHostAlloc(&p, bytes, cudaHostAllocPortable);
    if (e == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      fail(ErrorKind::kOutOfMemory, "out of pinned host memory allocating " + mib(bytes));
    }
    STOKER_CUDA_CHECK(e);
    std::lock_guard<std::mutex> g(mu_);
    try {
      size_of_.emplace(p, bytes);
    } catch (...) {
      cudaFreeHost(p);
      throw;
    }
    held_ += bytes;
    return p;
  }
  void deallocate(void* p, size_t) noexcept override {
    std::lock_guard<std::mutex> g(mu_);
    deallocate_locked(p);
  }
  void deallocate_locked(void* p) noexcept {
    auto it = size_of_.find(p);
    if (it == size_of_.end()) return;  // cannot happen
    try {
      idle_.emplace(it->second, p);
    } catch (...) {  // no room to keep it: free it after all
      if (cudaFreeHost(p) != cudaSuccess) cudaGetLastError();
      held_ -= it->second;
      size_of_.erase(it);
    }
  }
  // Gives `p` back once the work queued on `stream` so far has finished.
  void deallocate_after(void* p, StreamHandle stream) noexcept {
    cudaEvent_t e = nullptr;
    if (cudaEventCreateWithFlags(&e, cudaEventDisableTiming) != cudaSuccess ||
        cudaEventRecord(e, static_cast<cudaStream_t>(stream)) != cudaSuccess) {
      cudaGetLastError();
      if (e) cudaEventDestroy(e);
      if (cudaStreamSynchronize(static_cast<cudaStream_t>(stream)) != cudaSuccess) cudaGetLastError();
      deallocate(p, 0);
      return;
    }
    std::lock_guard<std::mutex> g(mu_);
    try {
      pending_.emplace_back(p, e);
    } catch (...) {
      cudaEventSynchronize(e);
      cudaEventDestroy(e);
      deallocate_locked(p);
    }
  }
  MemoryKind kind() const override { return MemoryKind::kPinned; }
  size_t held() const {
    std::lock_guard<std::mutex> g(mu_);
    return held_;
  }
  void trim() {
    std::lock_guard<std::mutex> g(mu_);
    settle_locked();
    for (auto& [bytes, p] : idle_) {
      if (cudaFreeHost(p) != cudaSuccess) cudaGetLastError();
      held_ -= bytes;
      size_of_.erase(p);
    }
    idle_.clear();
  }

 private:
  mutable std::mutex mu_;
  std::multimap<size_t, void*> idle_;         // size -> block given back
  std::unordered_map<void*, size_t> size_of_;  // every block this resource made
  size_t held_ = 0;                            // bytes of those blocks
  std::vector<std::pair<void*, cudaEvent_t>> pending_;  // given back behind GPU work

  void settle_locked() noexcept {
    for (size_t i = 0; i < pending_.size();) {
      cudaError_t q = cudaEventQuery(pending_[i].second);
      if (q == cudaErrorNotReady) {
        ++i;
        continue;
      }
      if (q != cudaSuccess) cudaGetLastError();
      cudaEventDestroy(pending_[i].second);
      deallocate_locked(pending_[i].first);
      pending_[i] = pending_.back();
      pending_.pop_back();
    }
  }
};

}  // namespace

// Device memory comes from a CUDA memory pool of stoker's own per GPU (cudaMallocFromPoolAsync /
// cudaFreeAsync), never from cudaMalloc/cudaFree. cudaFree waits for the whole GPU, and on the
// H100 a cudaFree made while the JPEG engines had work queued never returned: the driver's lock
// it held kept the engines' completion from being signalled (scripts/debug/hang_hunt.sh caught
// the stacks: a pool trim in cuMemFree, the main thread in cuEventDestroy waiting for that lock).
// cudaFreeAsync waits for nothing. The pool keeps what it got (release threshold: all), so a
// block given back is there for the next allocation of any size; release_unused() trims it.
class DeviceResource : public MemoryResource {
 public:
  explicit DeviceResource(int device) : device_(device) {
    DeviceGuard g(device_);
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.handleTypes = cudaMemHandleTypeNone;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device_;
    STOKER_CUDA_CHECK(cudaMemPoolCreate(&pool_, &props));
    uint64_t keep = UINT64_MAX;
    STOKER_CUDA_CHECK(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &keep));
    // Memory freed on one stream goes to another only once the free has completed, never by
    // making the second stream wait for the first: the JPEG engines write without waiting for
    // what their stream waits for (codecs/nvjpeg/README.md). Same-stream reuse stays immediate.
    int no = 0;
    if (cudaMemPoolSetAttribute(pool_, cudaMemPoolReuseAllowInternalDependencies, &no) != cudaSuccess)
      cudaGetLastError();  // older drivers: the pool still works, with that reuse allowed
    cudaStream_t s = nullptr;
    STOKER_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    stream_ = s;
    cudaEvent_t e = nullptr;
    STOKER_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    event_ = e;
  }
  // Not destroyed: the resource lives as long as the process, and at exit the runtime may
  // already be gone.
  ~DeviceResource() override = default;

  // Memory that work queued on `stream` may use from now on.
  void* allocate_on(size_t bytes, StreamHandle stream) {
    DeviceGuard g(device_);
    void* p = nullptr;
    cudaError_t e = cudaMallocFromPoolAsync(&p, bytes ? bytes : 1, pool_,
                                            static_cast<cudaStream_t>(stream));
    if (e == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      fail(ErrorKind::kOutOfMemory,
           "out of memory on GPU " + std::to_string(device_) + " allocating " + mib(bytes) +
               gpu_memory_note(device_));
    }
    STOKER_CUDA_CHECK(e);
    return p;
  }
  // Memory any stream and the host may use as soon as this returns (the resource's own stream,
  // which has nothing but allocations on it, is waited for).
  void* allocate(size_t bytes) override {
    void* p = allocate_on(bytes, stream_);
    STOKER_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(stream_)));
    return p;
  }
  // `p` must be idle: no queued work may use it. Errors are ignored: at exit the runtime may be
  // unloading.
  void deallocate(void* p, size_t) noexcept override {
    if (cudaFreeAsync(p, static_cast<cudaStream_t>(stream_)) != cudaSuccess) cudaGetLastError();
  }
  // Frees `p` once the work queued so far on each of `streams` has finished, waiting for
  // nothing: on the one stream itself, or on the resource's own stream, made to wait for them.
  void free_after(void* p, const std::vector<StreamHandle>& streams) noexcept {
    auto on = [&](StreamHandle s) {
      return cudaFreeAsync(p, static_cast<cudaStream_t>(s)) == cudaSuccess;
    };
    bool ok = false;
    if (streams.size() == 1) {
      ok = on(streams[0]);
    } else {
      std::lock_guard<std::mutex> g(mu_);  // event_ is recorded and waited for in turn
      ok = true;
      for (StreamHandle s : streams)
        ok = ok && cudaEventRecord(static_cast<cudaEvent_t>(event_), static_cast<cudaStream_t>(s)) == cudaSuccess &&
             cudaStreamWaitEvent(static_cast<cudaStream_t>(stream_), static_cast<cudaEvent_t>(event_), 0) ==
                 cudaSuccess;
      ok = ok && on(stream_);
    }
    if (ok) return;
    // No ordering could be set up (at exit, every call fails harmlessly): wait, then free.
    cudaGetLastError();
    for (StreamHandle s : streams)
      if (cudaStreamSynchronize(static_cast<cudaStream_t>(s)) != cudaSuccess) cudaGetLastError();
    deallocate(p, 0);
  }
  // Lets the frees queued on the resource's own stream complete, so that every stream may
  // reuse that memory.
  void settle() noexcept {
    if (cudaStreamSynchronize(static_cast<cudaStream_t>(stream_)) != cudaSuccess) cudaGetLastError();
  }
  MemoryKind kind() const override { return MemoryKind::kDevice; }
  int device() const { return device_; }
  // What the CUDA pool holds on this GPU, for every stoker pool there.
  size_t held() const {
    uint64_t v = 0;
    if (cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrReservedMemCurrent, &v) != cudaSuccess) {
      cudaGetLastError();
      return 0;
    }
    return static_cast<size_t>(v);
  }
  // Gives the memory no block uses back to the GPU.
  void trim() {
    if (cudaStreamSynchronize(static_cast<cudaStream_t>(stream_)) != cudaSuccess ||
        cudaMemPoolTrimTo(pool_, 0) != cudaSuccess)
      cudaGetLastError();
  }

 private:
  int device_;
  cudaMemPool_t pool_ = nullptr;
  StreamHandle stream_ = nullptr;
  EventHandle event_ = nullptr;
  std::mutex mu_;
};

namespace {

size_t held_by(MemoryResource& r) {
  if (auto* d = dynamic_cast<DeviceResource*>(&r)) return d->held();
  if (auto* p = dynamic_cast<PinnedResource*>(&r)) return p->held();
  return 0;
}

void trim_resource(MemoryResource& r) {
  if (auto* d = dynamic_cast<DeviceResource*>(&r)) d->trim();
  if (auto* p = dynamic_cast<PinnedResource*>(&r)) p->trim();
}

int stream_device(StreamHandle s) {
  int d = 0;
  STOKER_CUDA_CHECK(cudaStreamGetDevice(static_cast<cudaStream_t>(s), &d));
  return d;
}

}  // namespace

std::shared_ptr<MemoryResource> pinned_resource() {
  static auto r = std::make_shared<PinnedResource>();
  return r;
}

std::shared_ptr<MemoryResource> device_resource(int device) {
  check_device(device);
  static std::mutex mu;
  static std::vector<std::shared_ptr<MemoryResource>> resources;
  std::lock_guard<std::mutex> g(mu);
  if (resources.size() <= static_cast<size_t>(device)) resources.resize(device + 1);
  if (!resources[device]) resources[device] = std::make_shared<DeviceResource>(device);
  return resources[device];
}

int resource_device(const MemoryResource& r) {
  auto* d = dynamic_cast<const DeviceResource*>(&r);
  return d ? d->device() : -1;
}

void* device_allocate_on(int device, size_t bytes, StreamHandle stream) {
  auto r = device_resource(device);
  auto& d = static_cast<DeviceResource&>(*r);
  return stream ? d.allocate_on(bytes, stream) : d.allocate(bytes);
}

void device_free_on(void* p, StreamHandle stream) noexcept {
  if (cudaFreeAsync(p, static_cast<cudaStream_t>(stream)) != cudaSuccess) cudaGetLastError();
}

void* pinned_allocate(size_t bytes) { return pinned_resource()->allocate(bytes); }

void pinned_free_after(void* p, StreamHandle stream) noexcept {
  static_cast<PinnedResource&>(*pinned_resource()).deallocate_after(p, stream);
}

// ---- StreamOrderedPool

StreamOrderedPool::StreamOrderedPool(std::shared_ptr<MemoryResource> upstream, std::string name)
    : upstream_(std::move(upstream)),
      name_(std::move(name)),
      device_(resource_device(*upstream_)),
      device_upstream_(dynamic_cast<DeviceResource*>(upstream_.get())) {}

StreamOrderedPool::~StreamOrderedPool() {
  std::unique_lock<std::mutex> lock(mu_);
  drain_locked(lock);
  for (auto& per_device : event_cache_)
    for (EventHandle e : per_device)
      if (cudaEventDestroy(static_cast<cudaEvent_t>(e)) != cudaSuccess) cudaGetLastError();
}

EventHandle StreamOrderedPool::get_event(int device) {
  if (device < 0) device = 0;
  if (event_cache_.size() <= static_cast<size_t>(device)) event_cache_.resize(device + 1);
  auto& cache = event_cache_[device];
  if (!cache.empty()) {
    EventHandle e = cache.back();
    cache.pop_back();
    return e;
  }
  DeviceGuard g(device);
  cudaEvent_t e = nullptr;
  STOKER_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  return e;
}

void StreamOrderedPool::put_event(EventHandle e, int device) noexcept {
  if (device < 0) device = 0;
  try {
    if (event_cache_.size() <= static_cast<size_t>(device)) event_cache_.resize(device + 1);
    event_cache_[device].push_back(e);
  } catch (...) {
    cudaEventDestroy(static_cast<cudaEvent_t>(e));
  }
}

bool StreamOrderedPool::settle_locked(FreeBlock& b) {
  auto& pend = b.pending;
  for (size_t i = 0; i < pend.size();) {
    cudaError_t q = cudaEventQuery(static_cast<cudaEvent_t>(pend[i].event));
    if (q == cudaErrorNotReady) {
      ++i;
      continue;
    }
    STOKER_CUDA_CHECK(q);
    put_event(pend[i].event, pend[i].device);
    pend[i] = pend.back();
    pend.pop_back();
  }
  return pend.empty();
}

bool StreamOrderedPool::try_make_reusable_locked(FreeBlock& b, StreamHandle stream) {
  bool ok = true;
  auto& pend = b.pending;
  for (size_t i = 0; i < pend.size();) {
    cudaError_t q = cudaEventQuery(static_cast<cudaEvent_t>(pend[i].event));
    if (q == cudaErrorNotReady) {
      ok = false;
      ++i;
      continue;
    }
    STOKER_CUDA_CHECK(q);
    put_event(pend[i].event, pend[i].device);
    pend[i] = pend.back();
    pend.pop_back();
  }
  if (!ok) return false;
  for (const Pending& u : pend) put_event(u.event, u.device);
  pend.clear();
  return true;
}

void StreamOrderedPool::erase_free_locked(std::map<uint64_t, FreeBlock>::iterator it) {
  auto [b, e] = by_size_.equal_range(it->second.cls);
  while (b != e && b->second != it->first) ++b;
  if (b != e) by_size_.erase(b);
  free_.erase(it);
}

size_t StreamOrderedPool::release_idle_locked() {
  size_t freed = 0;
  for (auto it = free_.begin(); it != free_.end();) {
    auto next = std::next(it);
    if (settle_locked(it->second)) {
      upstream_->deallocate(it->second.p, it->second.cls);
      freed += it->second.cls;
      erase_free_locked(it);
    }
    it = next;
  }
  stats_.reserved -= freed;
  return freed;
}

void StreamOrderedPool::trim_locked(size_t target, size_t incoming) {
  for (auto it = free_.begin(); it != free_.end() && stats_.reserved + incoming > target;) {
    auto next = std::next(it);
    if (settle_locked(it->second)) {
      upstream_->deallocate(it->second.p, it->second.cls);
      stats_.reserved -= it->second.cls;
      erase_free_locked(it);
    }
    it = next;
  }
}

size_t StreamOrderedPool::drain_locked(std::unique_lock<std::mutex>& lock) {
  if (free_.empty()) return 0;
  std::map<uint64_t, FreeBlock> blocks;
  blocks.swap(free_);
  by_size_.clear();
  // Waiting happens without the lock: a host callback queued on one of these streams might
  // release a buffer into this pool, and must not wait for us while we wait for it.
  lock.unlock();
  for (auto& [stamp, b] : blocks)
    for (const Pending& u : b.pending)
      if (cudaEventSynchronize(static_cast<cudaEvent_t>(u.event)) != cudaSuccess)
        cudaGetLastError();
  lock.lock();
  size_t freed = 0;
  for (auto& [stamp, b] : blocks) {
    for (const Pending& u : b.pending) put_event(u.event, u.device);
    upstream_->deallocate(b.p, b.cls);
    freed += b.cls;
  }
  stats_.reserved -= freed;
  return freed;
}

std::string StreamOrderedPool::describe_locked() const {
  size_t cached = stats_.reserved - stats_.allocated;
  std::string s = "it holds " + mib(stats_.allocated) + " in live buffers and " + mib(cached) +
                  " cached";
  s += stats_.cap ? ", under a cap of " + mib(stats_.cap) : ", with no cap";
  if (device_ >= 0) s += gpu_memory_note(device_);
  return s;
}

void StreamOrderedPool::fail_over_cap_locked(size_t need) const {
  fail(ErrorKind::kOutOfMemory,
       "the " + name_ + " memory pool would exceed its cap of " + mib(stats_.cap) + ": " +
           describe_locked() + ", and needs " + mib(need) +
           " more. Raise the cap, lower batch_size or prefetch_queue_depth, or release batches "
           "you hold");
}

void* StreamOrderedPool::take_upstream_locked(size_t cls, std::unique_lock<std::mutex>& lock) {
  auto take = [&] { return upstream_->allocate(cls); };
  auto over_cap = [&] { return stats_.cap && stats_.reserved + cls > stats_.cap; };
  if (over_cap()) release_idle_locked();
  if (over_cap()) drain_locked(lock);
  if (over_cap()) fail_over_cap_locked(cls);
  try {
    return take();
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kOutOfMemory) throw;
  }
  // Out of memory: give back everything cached, waiting for its GPU work, and try once more.
  release_idle_locked();
  drain_locked(lock);
  try {
    return take();
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kOutOfMemory) throw;
    fail(ErrorKind::kOutOfMemory,
         "the " + name_ + " memory pool could not get " + mib(cls) + " more (" + e.what() +
             ") after giving back all its cached blocks: " + describe_locked() +
             ". Lower batch_size or prefetch_queue_depth, release batches you hold, or free "
             "memory held by other users of this GPU");
  }
}

std::shared_ptr<void> StreamOrderedPool::allocate_device(size_t bytes, StreamHandle stream) {
  std::shared_ptr<StreamOrderedPool> self = shared_from_this();
  const size_t n = (std::max<size_t>(bytes, 1) + 255) & ~size_t{255};
  void* p = nullptr;
  {
    std::lock_guard<std::mutex> g(mu_);
    if (stats_.cap && stats_.allocated + n > stats_.cap) fail_over_cap_locked(n);
  }
  try {
    p = device_upstream_->allocate_on(n, stream);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kOutOfMemory) throw;
    // Memory freed for several streams becomes reusable once those frees complete.
    device_upstream_->settle();
    try {
      p = device_upstream_->allocate_on(n, stream);
    } catch (const Error& e2) {
      if (e2.kind() != ErrorKind::kOutOfMemory) throw;
      std::lock_guard<std::mutex> g(mu_);
      fail(ErrorKind::kOutOfMemory, "the " + name_ + " memory pool could not get " + mib(n) +
                                        " more (" + e2.what() + "): " + describe_locked() +
                                        ". Lower batch_size or prefetch_queue_depth, release "
                                        "batches you hold, or free memory held by other users "
                                        "of this GPU");
    }
  }
  {
    std::lock_guard<std::mutex> g(mu_);
    try {
      live_.emplace(p, LiveBlock{n, {stream}});
    } catch (...) {
      device_upstream_->free_after(p, {stream});
      throw;
    }
    stats_.allocated += n;
    stats_.reserved = stats_.allocated;
    stats_.num_allocations++;
    stats_.num_upstream_allocations++;
    stats_.peak_allocated = std::max(stats_.peak_allocated, stats_.allocated);
    stats_.peak_reserved = stats_.peak_allocated;
  }
  return std::shared_ptr<void>(p, [self](void* q) { self->release(q); });
}

std::shared_ptr<void> StreamOrderedPool::allocate(size_t bytes, StreamHandle stream) {
  if (device_upstream_) return allocate_device(bytes, stream);
  std::shared_ptr<StreamOrderedPool> self = shared_from_this();
  size_t cls = MemoryPool::size_class(bytes);
  void* p = nullptr;
  {
    std::unique_lock<std::mutex> lock(mu_);
    // What recent use needs, this block included, with the slack.
    const size_t need = std::max(recent_.get(), stats_.allocated + cls);
    const size_t target = static_cast<size_t>(static_cast<double>(need) * MemoryPool::kCacheSlack);
    // The smallest reusable block of the class up to twice its size.
    for (auto it = by_size_.lower_bound(cls); it != by_size_.end() && it->first <= 2 * cls; ++it) {
      auto f = free_.find(it->second);
      if (try_make_reusable_locked(f->second, stream)) {
        p = f->second.p;
        cls = f->second.cls;
        erase_free_locked(f);
        break;
      }
    }
    if (!p) {
      trim_locked(target, cls);  // make room before growing
      p = take_upstream_locked(cls, lock);
      stats_.reserved += cls;
      stats_.num_upstream_allocations++;
      stats_.peak_reserved = std::max(stats_.peak_reserved, stats_.reserved);
    }
    try {
      live_.emplace(p, LiveBlock{cls, {stream}});
    } catch (...) {
      upstream_->deallocate(p, cls);
      stats_.reserved -= cls;
      throw;
    }
    stats_.allocated += cls;
    stats_.num_allocations++;
    stats_.peak_allocated = std::max(stats_.peak_allocated, stats_.allocated);
    // When a window closes, the cache shrinks to what the last two windows needed.
    if (recent_.update(stats_.allocated))
      trim_locked(static_cast<size_t>(static_cast<double>(recent_.get()) * MemoryPool::kCacheSlack), 0);
  }
  // If making the control block fails, shared_ptr calls the deleter: the block comes back.
  return std::shared_ptr<void>(p, [self](void* q) { self->release(q); });
}

void StreamOrderedPool::release(void* p) noexcept {
  std::lock_guard<std::mutex> g(mu_);
  auto it = live_.find(p);
  if (it == live_.end()) return;  // cannot happen: every block handed out is in live_
  size_t cls = it->second.cls;
  std::vector<StreamHandle> streams = std::move(it->second.streams);
  live_.erase(it);
  stats_.allocated -= cls;
  if (device_upstream_) {  // the CUDA pool is the cache
    stats_.reserved = stats_.allocated;
    device_upstream_->free_after(p, streams);
    if (closed_) device_upstream_->trim();
    return;
  }
  if (closed_) {  // nothing is cached any more: back as soon as its streams are done
    for (StreamHandle s : streams)
      if (cudaStreamSynchronize(static_cast<cudaStream_t>(s)) != cudaSuccess) cudaGetLastError();
    upstream_->deallocate(p, cls);
    stats_.reserved -= cls;
    return;
  }
  FreeBlock b{p, cls, {}};
  for (StreamHandle s : streams) {
    EventHandle e = nullptr;
    int dev = -1;
    try {
      dev = stream_device(s);
      e = get_event(dev);
      STOKER_CUDA_CHECK(cudaEventRecord(static_cast<cudaEvent_t>(e), static_cast<cudaStream_t>(s)));
      b.pending.push_back({s, e, dev});
    } catch (...) {
      // No event, no proof of completion: wait for the stream instead. This is also the path
      // at process exit, where every call fails harmlessly and nothing will be reused.
      if (e) put_event(e, dev);
      if (cudaStreamSynchronize(static_cast<cudaStream_t>(s)) != cudaSuccess) cudaGetLastError();
    }
  }
  try {
    const uint64_t s = stamp_++;
    auto f = free_.emplace(s, std::move(b)).first;
    try {
      by_size_.emplace(cls, s);
    } catch (...) {
      b = std::move(f->second);
      free_.erase(f);
      throw;
    }
  } catch (...) {  // out of host memory for the map nodes: give the block back instead
    for (const Pending& u : b.pending) {
      cudaEventSynchronize(static_cast<cudaEvent_t>(u.event));
      put_event(u.event, u.device);
    }
    upstream_->deallocate(p, cls);
    stats_.reserved -= cls;
  }
}

void StreamOrderedPool::record_stream(const void* p, StreamHandle stream) {
  std::lock_guard<std::mutex> g(mu_);
  auto it = live_.find(const_cast<void*>(p));
  STOKER_ASSERT(it != live_.end(),
                "record_stream() on a pointer that is not a live buffer of the " + name_ + " pool");
  auto& streams = it->second.streams;
  if (std::find(streams.begin(), streams.end(), stream) == streams.end()) streams.push_back(stream);
}

void StreamOrderedPool::forget_stream(StreamHandle stream) {
  STOKER_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
  std::lock_guard<std::mutex> g(mu_);
  for (auto& [p, b] : live_) std::erase(b.streams, stream);
  for (auto& [stamp, b] : free_) {
    std::erase_if(b.pending, [&](const Pending& u) {
      if (u.stream != stream) return false;
      put_event(u.event, u.device);
      return true;
    });
  }
}

MemoryStats StreamOrderedPool::stats() const {
  std::lock_guard<std::mutex> g(mu_);
  MemoryStats s = stats_;
  s.resource_held = held_by(*upstream_);
  return s;
}

size_t StreamOrderedPool::pending_bytes() {
  std::lock_guard<std::mutex> g(mu_);
  size_t n = 0;
  for (auto& [stamp, b] : free_)
    if (!settle_locked(b)) n += b.cls;
  return n;
}

void StreamOrderedPool::set_cap(size_t bytes) {
  std::lock_guard<std::mutex> g(mu_);
  stats_.cap = bytes;
}

void StreamOrderedPool::close() {
  std::unique_lock<std::mutex> lock(mu_);
  closed_ = true;
  drain_locked(lock);
  trim_resource(*upstream_);
}

size_t StreamOrderedPool::release_unused() {
  std::lock_guard<std::mutex> g(mu_);
  size_t n = release_idle_locked();
  trim_resource(*upstream_);
  return n;
}

}  // namespace stoker
