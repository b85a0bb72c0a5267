// Memory resources and caching pools with statistics.
//
// A buffer is a shared_ptr to memory that goes back to its pool when the last owner lets go,
// so a batch handed to a framework through DLPack stays valid for as long as the framework
// holds it, and the pool outlives the pipeline if it must.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace stoker {

enum class MemoryKind { kHost, kPinned, kDevice };
const char* memory_kind_name(MemoryKind k);

// Where raw memory comes from (malloc, cudaMallocHost, cudaMallocAsync...).
class MemoryResource {
 public:
  virtual ~MemoryResource() = default;
  virtual void* allocate(size_t bytes) = 0;  // throws Error(kOutOfMemory) on failure
  virtual void deallocate(void* p, size_t bytes) noexcept = 0;
  virtual MemoryKind kind() const = 0;
  // True where a block's pages take physical memory only once touched (the host's mapped
  // blocks): the pool may then give a large block headroom for free.
  virtual bool commits_on_touch(size_t /*bytes*/) const { return false; }
};

// "960.0 GiB": sizes in messages, in the largest binary unit that keeps the figure >= 1
// (MiB at least, as the pools' messages have always given them).
std::string format_bytes(double bytes);

// Page-aligned host memory: blocks of 64 KiB and more mapped straight from the kernel (and
// unmapped when given back), smaller ones from the C library.
std::shared_ptr<MemoryResource> host_resource();

// The cap a pipeline's host pool starts with: kDefaultHostCapShare of the memory this process
// may use (the machine's RAM, or the container's limit where cgroups set a lower one), so that
// a batch far larger than the machine (batch_size=10,000,000) fails with a message instead of
// swapping or being killed. STOKER_HOST_MEMORY_CAP=<bytes> sets another (0: no cap); a bad
// value throws Error(kInvalidArgument).
constexpr double kDefaultHostCapShare = 0.8;
size_t default_host_memory_cap();
// The RAM this process may use: physical memory, or the cgroup's limit where lower; 0 where
// neither can be read.
size_t usable_memory_bytes();

struct MemoryStats {
  size_t allocated = 0;       // bytes in buffers that someone holds
  size_t reserved = 0;        // allocated + cached for reuse
  size_t peak_allocated = 0;
  size_t peak_reserved = 0;
  uint64_t num_allocations = 0;           // buffers handed out
  uint64_t num_upstream_allocations = 0;  // times the pool asked its resource for more
  size_t cap = 0;                         // 0: no cap
  // Pinned and device pools: what their resource holds for every pool of its kind (the GPU's
  // memory pool; the pinned blocks made so far), blocks trimmed from the caches but kept for
  // reuse included. 0 for host pools.
  size_t resource_held = 0;
};


// The peak of live bytes over the last one or two windows of kWindow allocations: what a
// pool's cache must be able to serve again. A window is several iterations of a pipeline, whose
// peak (all its batches in flight) recurs; when one closes, the peak of the one before is
// forgotten, so the cache can shrink after a burst or a batch size that went down.
class RecentPeak {
 public:
  static constexpr uint64_t kWindow = 1024;
  // Call after each allocation with the bytes now live; true when a window just closed.
  bool update(size_t allocated) {
    window_peak_ = std::max(window_peak_, allocated);
    if (++allocs_ < kWindow) return false;
    prev_peak_ = window_peak_;
    window_peak_ = allocated;
    allocs_ = 0;
    return true;
  }
  size_t get() const { return std::max(window_peak_, prev_peak_); }

 private:
  uint64_t allocs_ = 0;
  size_t window_peak_ = 0, prev_peak_ = 0;
};

// A thread-safe caching pool over a resource. Sizes are rounded up to size classes (1/8 steps
// between powers of two, at least 256 bytes); a request takes the smallest cached block of its
// class up to twice its size. With a cap, an allocation that would take `reserved` past it
// first releases cached blocks, then fails with a message saying what is held.
//
// Memory stays flat when the sizes asked for vary (decoded batches of random images), by two
// rules; without them the cache gained a block at each new size step (+60 MiB over 4 epochs of
// a pipeline using 30 MiB) and never shrank:
// - The cache is trimmed to what recent use needs: `reserved` may exceed the peak of live
//   bytes over the last one or two windows of kWindow allocations by kCacheSlack at most. When
//   a new block would take it past that, and when a window closes, the blocks unused the
//   longest go back to the resource first.
// - A new block of kHeadroomFrom bytes or more, on a resource whose pages cost memory only once
//   touched, gets a quarter more address space than asked for: a need that grows by small
//   steps then takes a few blocks, not one per step, and the untouched headroom costs no RSS.
//   (`reserved` counts the headroom.)
class MemoryPool : public std::enable_shared_from_this<MemoryPool> {
 public:
  MemoryPool(std::shared_ptr<MemoryResource> upstream, std::string name);
  ~MemoryPool();
  MemoryPool(const MemoryPool&) = delete;
  MemoryPool& operator=(const MemoryPool&) = delete;

  // Bytes may be 0 (gives a valid, unique, empty buffer).
  std::shared_ptr<void> allocate(size_t bytes);
  MemoryStats stats() const;
  void set_cap(size_t bytes);
  size_t release_unused();  // returns the number of bytes given back
  // Its owner (the pipeline) is gone, but buffers it handed out may live on (a batch the user
  // kept), and each holds the pool: the cache goes back now, and every buffer released from
  // now on goes straight back to the resource, so a kept batch holds only its own memory.
  void close();
  MemoryKind kind() const { return upstream_->kind(); }
  const std::string& name() const { return name_; }

  // Throws Error(kOutOfMemory) for more than kMaxBytes.
  static size_t size_class(size_t bytes);
  // No machine addresses more (x86-64 and AArch64 map 2^57 bytes at most); the limit keeps
  // the size-class arithmetic, headroom included, far from overflowing 64 bits.
  static constexpr size_t kMaxBytes = size_t{1} << 62;

  static constexpr uint64_t kWindow = RecentPeak::kWindow;
  // `reserved` may reach the recent peak of live bytes times this.
  static constexpr double kCacheSlack = 1.25;
  static constexpr size_t kHeadroomFrom = size_t{1} << 20;

 private:
  void release(void* p, size_t cls, size_t base) noexcept;
  // What the pool holds, for messages: "holds 1.0 MiB in live buffers and 0.5 MiB cached".
  std::string describe_locked() const;
  // `bytes` (a size class, with headroom) from the upstream resource; where the system
  // refuses, `bytes` becomes `base` (no headroom) and the cache goes back first, then the error
  // says what the pool holds and its cap.
  void* allocate_upstream_locked(size_t& bytes, size_t base);
  size_t release_unused_locked();
  // Gives cached blocks back, the least recently released first, until reserved + incoming is
  // at most `target` or the cache is empty.
  void trim_locked(size_t target, size_t incoming);

  struct Cached {
    void* p;
    size_t cls;   // its size
    size_t base;  // the size class it was made for (cls less its headroom)
  };
  std::shared_ptr<MemoryResource> upstream_;
  std::string name_;
  mutable std::mutex mu_;
  std::map<uint64_t, Cached> cached_;           // release stamp -> block: oldest first
  std::multimap<size_t, uint64_t> by_size_;     // size class -> release stamp
  uint64_t stamp_ = 0;                          // releases so far
  RecentPeak recent_;                           // of `allocated`
  MemoryStats stats_;
  bool closed_ = false;                         // close(): nothing is cached any more
};

}  // namespace stoker
