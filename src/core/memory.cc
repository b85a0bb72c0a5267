#include "core/memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
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

std::string format_bytes(double bytes) {
  static const char* kUnits[] = {"MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = bytes / 1048576.0;
  int u = 0;
  while (v >= 1024.0 && u < 4) {
    v /= 1024.0;
    ++u;
  }
  char buf[48];
  snprintf(buf, sizeof(buf), "%.1f %s", v, kUnits[u]);
  return buf;
}

namespace {

std::string mib(size_t bytes) { return format_bytes(static_cast<double>(bytes)); }

// The first number in a cgroup limit file; 0 where there is none ("max", no file).
size_t cgroup_limit(const char* path) {
  FILE* f = std::fopen(path, "r");
  if (!f) return 0;
  unsigned long long v = 0;
  const bool ok = std::fscanf(f, "%llu", &v) == 1;
  std::fclose(f);
  return ok ? static_cast<size_t>(v) : 0;
}

// Blocks of kMapBytes and more are mapped straight from the kernel and unmapped when given
// back, so that what the pool gives back leaves the process at once. Through malloc it would
// not: glibc raises its mmap threshold to the size of each large block freed (up to 32 MiB),
// after which such blocks come from arena heaps that return memory only from their top; the
// soak test saw the arenas' free space double over 20 epochs from blocks the pool had trimmed.
constexpr size_t kMapBytes = size_t{64} << 10;

class HostResource : public MemoryResource {
 public:
  void* allocate(size_t bytes) override {
    void* p = nullptr;
    if (bytes >= kMapBytes) {
      p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED)
        fail(ErrorKind::kOutOfMemory, "out of host memory allocating " + mib(bytes));
      return p;
    }
    if (posix_memalign(&p, 4096, bytes ? bytes : 1) != 0 || !p)
      fail(ErrorKind::kOutOfMemory, "out of host memory allocating " + mib(bytes));
    return p;
  }
  void deallocate(void* p, size_t bytes) noexcept override {
    if (bytes >= kMapBytes) munmap(p, bytes);
    else free(p);
  }
  MemoryKind kind() const override { return MemoryKind::kHost; }
  bool commits_on_touch(size_t bytes) const override { return bytes >= kMapBytes; }
};

}  // namespace

std::shared_ptr<MemoryResource> host_resource() {
  static auto r = std::make_shared<HostResource>();
  return r;
}

size_t usable_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  size_t ram = pages > 0 && page > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(page) : 0;
  // cgroup v2, then v1 (which reports "no limit" as a huge number, above the RAM).
  for (const char* path : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    const size_t limit = cgroup_limit(path);
    if (limit && (!ram || limit < ram)) ram = limit;
  }
  return ram;
}

size_t default_host_memory_cap() {
  if (const char* env = std::getenv("STOKER_HOST_MEMORY_CAP")) {
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(env, &end, 10);
    if (!*env || *end || errno || env[0] == '-')
      fail(ErrorKind::kInvalidArgument,
           std::string("STOKER_HOST_MEMORY_CAP must be a number of bytes (0: no cap), got '") +
               env + "'; unset it for the default cap of " +
               std::to_string(static_cast<int>(kDefaultHostCapShare * 100)) + "% of RAM");
    return static_cast<size_t>(v);
  }
  return static_cast<size_t>(static_cast<double>(usable_memory_bytes()) * kDefaultHostCapShare);
}

MemoryPool::MemoryPool(std::shared_ptr<MemoryResource> upstream, std::string name)
    : upstream_(std::move(upstream)), name_(std::move(name)) {}

MemoryPool::~MemoryPool() {
  std::lock_guard<std::mutex> g(mu_);
  release_unused_locked();
}

size_t MemoryPool::size_class(size_t bytes) {
  // Beyond the limit the loop below would double p past 2^63 to 0 and spin forever.
  if (bytes > kMaxBytes)
    fail(ErrorKind::kOutOfMemory, "cannot allocate " + std::to_string(bytes) + " bytes (" +
                                      format_bytes(static_cast<double>(bytes)) +
                                      "): more than any machine can address");
  if (bytes <= 256) return 256;
  // Round up to 1/8 steps between powers of two: at most 12.5% slack.
  size_t p = 1;
  while (p * 2 <= bytes) p *= 2;  // p = largest power of two <= bytes
  size_t step = p / 8;
  return (bytes + step - 1) / step * step;
}

std::shared_ptr<void> MemoryPool::allocate(size_t bytes) {
  size_t cls = size_class(bytes), base = cls;
  void* p = nullptr;
  {
    std::lock_guard<std::mutex> g(mu_);
    // Best fit among cached blocks up to twice the size: with sizes that vary from batch to
    // batch (decoded images), exact-class reuse alone lets the cache grow to many times what is
    // in use.
    // (A block with headroom counts by the size it was made for.)
    auto it = by_size_.lower_bound(cls);
    while (it != by_size_.end() && it->first <= 3 * cls && cached_.at(it->second).base > 2 * cls) ++it;
    if (it != by_size_.end() && it->first <= 3 * cls) {
      auto c = cached_.find(it->second);
      cls = c->second.cls;
      base = c->second.base;
      p = c->second.p;
      cached_.erase(c);
      by_size_.erase(it);
    } else {
      // Headroom where it costs only address space (see memory.h), unless it breaks the cap.
      base = cls;
      if (cls >= kHeadroomFrom && upstream_->commits_on_touch(cls)) {
        const size_t roomy = size_class(cls + cls / 4);
        if (!stats_.cap || stats_.allocated + roomy <= stats_.cap) cls = roomy;
      }
      // Make room within what recent use needs (this block included) before growing.
      const size_t need = std::max(recent_.get(), stats_.allocated + cls);
      trim_locked(static_cast<size_t>(static_cast<double>(need) * kCacheSlack), cls);
      if (stats_.cap && stats_.reserved + cls > stats_.cap) release_unused_locked();
      if (stats_.cap && stats_.reserved + cls > stats_.cap)
        fail(ErrorKind::kOutOfMemory,
             "the " + name_ + " memory pool would exceed its cap of " + mib(stats_.cap) +
             ": it " + describe_locked() + ", and needs " + mib(cls) +
             " more. Lower batch_size or prefetch_queue_depth, release batches you hold, or " +
             (kind() == MemoryKind::kHost
                  ? "raise the cap with Pipeline.set_host_memory_cap() (the default is " +
                        std::to_string(static_cast<int>(kDefaultHostCapShare * 100)) +
                        "% of RAM; STOKER_HOST_MEMORY_CAP=<bytes> sets it)"
                  : std::string("raise the cap")));
      p = allocate_upstream_locked(cls, base);
      stats_.reserved += cls;
      stats_.num_upstream_allocations++;
      if (stats_.reserved > stats_.peak_reserved) stats_.peak_reserved = stats_.reserved;
    }
    stats_.allocated += cls;
    stats_.num_allocations++;
    if (stats_.allocated > stats_.peak_allocated) stats_.peak_allocated = stats_.allocated;
    // When a window closes, the cache shrinks to what the last two windows needed.
    if (recent_.update(stats_.allocated))
      trim_locked(static_cast<size_t>(static_cast<double>(recent_.get()) * kCacheSlack), 0);
  }
  std::shared_ptr<MemoryPool> self = shared_from_this();
  return std::shared_ptr<void>(p, [self, cls, base](void* q) { self->release(q, cls, base); });
}

void MemoryPool::release(void* p, size_t cls, size_t base) noexcept {
  std::lock_guard<std::mutex> g(mu_);
  stats_.allocated -= cls;
  if (closed_) {
    upstream_->deallocate(p, cls);
    stats_.reserved -= cls;
    return;
  }
  const uint64_t s = stamp_++;
  try {
    auto c = cached_.emplace(s, Cached{p, cls, base}).first;
    try {
      by_size_.emplace(cls, s);
    } catch (...) {
      cached_.erase(c);
      throw;
    }
  } catch (...) {  // no memory for the cache's own bookkeeping: give the block back instead
    upstream_->deallocate(p, cls);
    stats_.reserved -= cls;
  }
}

void MemoryPool::trim_locked(size_t target, size_t incoming) {
  while (!cached_.empty() && stats_.reserved + incoming > target) {
    auto oldest = cached_.begin();
    const auto [p, cls, base] = oldest->second;
    auto [b, e] = by_size_.equal_range(cls);
    while (b != e && b->second != oldest->first) ++b;
    if (b != e) by_size_.erase(b);
    cached_.erase(oldest);
    upstream_->deallocate(p, cls);
    stats_.reserved -= cls;
  }
}

std::string MemoryPool::describe_locked() const {
  return "holds " + mib(stats_.allocated) + " in live buffers and " +
         mib(stats_.reserved - stats_.allocated) + " cached";
}

void* MemoryPool::allocate_upstream_locked(size_t& bytes, size_t base) {
  // Tries with the headroom, without it, then again once the cache is given back (what it
  // holds may be what the system lacks).
  for (;;) {
    try {
      return upstream_->allocate(bytes);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::kOutOfMemory) throw;
      if (bytes != base) {
        bytes = base;
        continue;
      }
      if (release_unused_locked() > 0) continue;
      fail(ErrorKind::kOutOfMemory,
           std::string(e.what()) + " (the " + name_ + " memory pool " + describe_locked() +
               (stats_.cap ? ", under a cap of " + mib(stats_.cap) : ", with no cap") + ")");
    }
  }
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

void MemoryPool::close() {
  std::lock_guard<std::mutex> g(mu_);
  closed_ = true;
  release_unused_locked();
}

size_t MemoryPool::release_unused_locked() {
  size_t freed = 0;
  for (auto& [stamp, c] : cached_) {
    upstream_->deallocate(c.p, c.cls);
    freed += c.cls;
  }
  cached_.clear();
  by_size_.clear();
  stats_.reserved -= freed;
  return freed;
}

}  // namespace stoker
