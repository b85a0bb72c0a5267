// Memory resources and caching pools with statistics.
//
// A buffer is a shared_ptr to memory that goes back to its pool when the last owner lets go,
// so a batch handed to a framework through DLPack stays valid for as long as the framework
// holds it, and the pool outlives the pipeline if it must.
#pragma once
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
};

// Page-aligned host memory from the C library.
std::shared_ptr<MemoryResource> host_resource();

struct MemoryStats {
  size_t allocated = 0;       // bytes in buffers that someone holds
  size_t reserved = 0;        // allocated + cached for reuse
  size_t peak_allocated = 0;
  size_t peak_reserved = 0;
  uint64_t num_allocations = 0;           // buffers handed out
  uint64_t num_upstream_allocations = 0;  // times the pool asked its resource for more
  size_t cap = 0;                         // 0: no cap
};


// A thread-safe caching pool over a resource. Sizes are rounded up to size classes (1/8 steps
// between powers of two, at least 256 bytes); freed blocks are kept for reuse until
// release_unused() or the pool's end. With a cap, an allocation that would take `reserved`
// past it first releases cached blocks, then fails with a message saying what is held.
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
  MemoryKind kind() const { return upstream_->kind(); }
  const std::string& name() const { return name_; }

  static size_t size_class(size_t bytes);

 private:
  void release(void* p, size_t cls) noexcept;
  size_t release_unused_locked();

  std::shared_ptr<MemoryResource> upstream_;
  std::string name_;
  mutable std::mutex mu_;
  std::multimap<size_t, void*> free_;  // size class -> block
  MemoryStats stats_;
};

}  // namespace stoker
