// Pinned and device memory: the raw resources, and a pool over each that reuses memory in
// stream order. No CUDA header here (STYLE.md 5); streams are StreamHandle (a cudaStream_t).
//
// Why a second pool next to core/memory.h's MemoryPool: GPU work is asynchronous, so "the last
// owner let go" does not mean "the memory is no longer in use". A device buffer released while
// a kernel queued on stream A still writes it must not be handed to stream B (whose work may
// run first), and a pinned buffer must not be handed to a CPU thread while an async copy still
// reads it. StreamOrderedPool keeps MemoryPool's statistics and cap, and every live block
// remembers the streams it is used on: the stream it was allocated for, plus any added with
// record_stream(). Then, by kind:
//
// Device memory: the CUDA memory pool under device_resource() is the only cache.
//   * allocate(bytes, S) is cudaMallocFromPoolAsync on S; the release is cudaFreeAsync on the
//     block's one stream, or, for a block used on several, on the resource's own stream made to
//     wait (by events) for each of them. So S reuses its own blocks at once, in stream order,
//     and another stream only once the free has completed (the pool's cross-stream reuse
//     through inserted waits is off: the JPEG engines ignore such waits).
//   * Two caches on top of each other fragmented: with a stoker cache of size classes over the
//     CUDA pool, the memory the CUDA pool held grew 64 -> 128 MiB over 20 epochs of a
//     random-crop soak on the H100 (peak live 57 MiB), and to 224 MiB in 38,000 iterations.
//   * `reserved` is what the pool's live blocks take; `resource_held`, what the CUDA pool holds
//     for every stoker pool of that GPU (live and cached).
//
// Pinned memory: a cache of stoker's own, since the CPU may touch a block as soon as it is
// handed out.
//   * On release, the pool records one event (timing off, from a small cache) on each of the
//     block's streams and files the block as "pending" behind those events; allocate() hands a
//     cached block out only when all of them have completed (cudaEventQuery).
//   * A request takes the smallest reusable cached block of its size class up to twice its
//     size (sizes vary from batch to batch: random crops, whole images decoded into scratch).
//   * Otherwise it takes new memory from the resource. When that would pass the cap, or memory
//     runs out, it first gives back cached blocks that are idle, then waits for the pending ones
//     (cudaEventSynchronize, outside the pool's lock) and gives those back too, and only then
//     fails, saying what the pool holds and what cap applies.
//   * The cache is trimmed as MemoryPool's is (core/memory.h): before taking new memory, and
//     when a window of RecentPeak::kWindow allocations closes, idle blocks unused the longest
//     go back until `reserved` is within MemoryPool::kCacheSlack of the recent peak of live
//     bytes; pending blocks are never waited for.
//
// Giving back never waits for the GPU: the resources keep what they are given until
// release_unused() (README.md: a cudaFree while the JPEG engines worked hung the H100). No
// allocation waits on the GPU unless memory ran out, and no stream of the pipeline or the
// framework is made to wait on another (which could serialise a decode stream behind a training
// stream).
//
// Rules for callers:
//   * Use a block only on the streams it is known to: the allocation stream, or ones added by
//     record_stream() before the use is queued. A framework's stream that reads a buffer handed
//     out through DLPack is recorded at export.
//   * A stream must outlive the release of every buffer used on it and be retired with
//     forget_stream() before it is destroyed: that waits for its work and drops it from every
//     block, live or cached (a stream created later may get the same handle, and must not be
//     taken for the old one).
#pragma once
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/cuda/cuda_util.h"
#include "core/memory.h"

namespace stoker {

class DeviceResource;  // what device_resource() returns

// Page-locked host memory, portable to every device (cudaHostAlloc with cudaHostAllocPortable).
std::shared_ptr<MemoryResource> pinned_resource();

// Memory of one GPU (cudaMalloc/cudaFree with that device current). One resource per device,
// shared. Throws like check_device() when `device` is not a usable GPU.
std::shared_ptr<MemoryResource> device_resource(int device);

// The GPU a resource from device_resource() allocates on; -1 for any other resource.
int resource_device(const MemoryResource& r);

// Memory for libraries that take allocator callbacks (nvJPEG), from the resources the pools
// use, so that giving it back never waits for the whole GPU (cuda_memory.cc, DeviceResource).
// device_allocate_on: usable by work queued on `stream` (by anything, with stream null).
// device_free_on: freed once the work queued on `stream` so far has finished; with the legacy
// stream (null), only memory no queued work uses. pinned_free_after: handed out again once the
// work queued on `stream` so far has finished.
void* device_allocate_on(int device, size_t bytes, StreamHandle stream);
void device_free_on(void* p, StreamHandle stream) noexcept;
void* pinned_allocate(size_t bytes);
void pinned_free_after(void* p, StreamHandle stream) noexcept;

class StreamOrderedPool : public std::enable_shared_from_this<StreamOrderedPool> {
 public:
  // `upstream` is pinned_resource() or device_resource(d); the name appears in statistics and
  // error messages ("device:0", "pinned").
  StreamOrderedPool(std::shared_ptr<MemoryResource> upstream, std::string name);
  // Waits for the GPU work of every cached block, then gives all of them back.
  ~StreamOrderedPool();
  StreamOrderedPool(const StreamOrderedPool&) = delete;
  StreamOrderedPool& operator=(const StreamOrderedPool&) = delete;

  // A buffer of at least `bytes` (0 gives a valid, unique, empty buffer) that work queued on
  // `stream` may use from now on (pinned: that the CPU may use now). Released to the pool when
  // the last shared_ptr copy goes. Throws Error(kOutOfMemory) as described above.
  std::shared_ptr<void> allocate(size_t bytes, StreamHandle stream);

  // Declares that work on `stream` uses the buffer starting at `p` (a pointer allocate()
  // returned, still alive). Call it before that work is queued, or at least before the release.
  void record_stream(const void* p, StreamHandle stream);

  // Waits for the work queued on `stream` so far and drops it from every block, live or
  // cached; call it before destroying a stream whose buffers may outlive it.
  void forget_stream(StreamHandle stream);

  MemoryStats stats() const;
  size_t pending_bytes();       // cached bytes still waiting for GPU work to finish
  void set_cap(size_t bytes);    // 0: no cap
  // Gives back the cached blocks whose GPU work has finished; pending ones stay cached.
  // Returns the number of bytes given back.
  size_t release_unused();
  // The pipeline that owned the pool is gone: every cached block goes back (after its GPU
  // work), and blocks released later go straight back too, so that a batch kept after its
  // pipeline holds only its own memory. Allocation still works (uncached).
  void close();
  MemoryKind kind() const { return upstream_->kind(); }
  const std::string& name() const { return name_; }

 private:
  struct Pending {
    StreamHandle stream;
    EventHandle event;
    int device;
  };
  struct FreeBlock {
    void* p;
    size_t cls;
    std::vector<Pending> pending;  // empty: idle
  };
  struct LiveBlock {
    size_t cls;
    std::vector<StreamHandle> streams;
  };

  std::shared_ptr<void> allocate_device(size_t bytes, StreamHandle stream);
  void release(void* p) noexcept;
  bool try_make_reusable_locked(FreeBlock& b, StreamHandle stream);
  bool settle_locked(FreeBlock& b);  // drops completed events; true when none is left
  size_t release_idle_locked();
  // Gives idle blocks back, the least recently released first, until reserved + incoming is at
  // most `target` or no idle block is left.
  void trim_locked(size_t target, size_t incoming);
  void erase_free_locked(std::map<uint64_t, FreeBlock>::iterator it);
  size_t drain_locked(std::unique_lock<std::mutex>& lock);  // waits outside the lock
  void* take_upstream_locked(size_t cls, std::unique_lock<std::mutex>& lock);
  [[noreturn]] void fail_over_cap_locked(size_t need) const;
  std::string describe_locked() const;
  EventHandle get_event(int device);  // pool's lock held
  void put_event(EventHandle e, int device) noexcept;  // pool's lock held

  std::shared_ptr<MemoryResource> upstream_;
  std::string name_;
  int device_;          // the GPU of a device pool; -1 for pinned
  DeviceResource* device_upstream_;  // upstream_ when it is device_resource(): no cache of our own
  mutable std::mutex mu_;
  std::map<uint64_t, FreeBlock> free_;        // release stamp -> cached block: oldest first
  std::multimap<size_t, uint64_t> by_size_;   // size class -> release stamp
  uint64_t stamp_ = 0;                        // releases so far
  RecentPeak recent_;                         // of stats_.allocated
  std::unordered_map<void*, LiveBlock> live_;
  std::vector<std::vector<EventHandle>> event_cache_;  // per device
  MemoryStats stats_;
  bool closed_ = false;
};

}  // namespace stoker
