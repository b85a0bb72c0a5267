// MemoryPool's cache policy: trimmed to recent use, headroom for large blocks where it is free,
// and host blocks that really leave the process when given back.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <vector>

#include "core/error.h"
#include "core/memory.h"

using namespace stoker;

namespace {

// Hands out fake addresses and keeps what is outstanding, so that tests can use sizes of
// hundreds of MiB without touching memory.
class CountingResource : public MemoryResource {
 public:
  explicit CountingResource(bool lazy) : lazy_(lazy) {}
  void* allocate(size_t bytes) override {
    void* p = reinterpret_cast<void*>(next_);
    next_ += (bytes + 4095) / 4096 * 4096 + 4096;
    live_[p] = bytes;
    outstanding += bytes;
    ++allocations;
    return p;
  }
  void deallocate(void* p, size_t bytes) noexcept override {
    auto it = live_.find(p);
    if (it == live_.end() || it->second != bytes) bad_frees++;
    else live_.erase(it);
    outstanding -= bytes;
  }
  MemoryKind kind() const override { return MemoryKind::kHost; }
  bool commits_on_touch(size_t) const override { return lazy_; }

  size_t outstanding = 0;
  int allocations = 0;
  int bad_frees = 0;

 private:
  bool lazy_;
  uintptr_t next_ = uintptr_t{1} << 40;
  std::map<void*, size_t> live_;
};

constexpr size_t MiB = size_t{1} << 20;

size_t rss_bytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  long pages = 0, resident = 0;
  if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
  std::fclose(f);
  return static_cast<size_t>(resident) * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace

// What the soak test met: one decoded batch live at a time, its size drawn anew each iteration
// (24..30 MiB), next to a few small buffers. The old cache kept a block per size step it had
// seen; now `reserved` stays within the slack of the peak, and levels off early.
TEST(MemoryPoolTrim, VaryingBatchSizesDoNotGrowTheCache) {
  for (bool lazy : {false, true}) {
    auto res = std::make_shared<CountingResource>(lazy);
    auto pool = std::make_shared<MemoryPool>(res, "host");
    std::mt19937 rng(3);
    std::uniform_int_distribution<size_t> batch(15 * MiB, 30 * MiB), small(60 << 10, 600 << 10);
    std::vector<size_t> reserved_after;
    for (int it = 0; it < 600; ++it) {
      std::vector<std::shared_ptr<void>> smalls;
      for (int k = 0; k < 8; ++k) smalls.push_back(pool->allocate(small(rng)));
      auto decoded = pool->allocate(batch(rng));
      auto resized = pool->allocate(1204224);
      smalls.clear();
      decoded.reset();
      reserved_after.push_back(pool->stats().reserved);
    }
    const MemoryStats s = pool->stats();
    EXPECT_LE(s.reserved, static_cast<size_t>(MemoryPool::kCacheSlack * s.peak_allocated) + 1)
        << "lazy=" << lazy;
    EXPECT_EQ(res->outstanding, s.reserved);
    // Levelled off: from iteration 100 on, within 10% of the final figure.
    for (size_t i = 100; i < reserved_after.size(); ++i)
      EXPECT_LE(reserved_after[i], reserved_after.back() * 11 / 10) << "iteration " << i;
    // Mostly served from the cache.
    EXPECT_LT(s.num_upstream_allocations, s.num_allocations / 4) << "lazy=" << lazy;
    pool->release_unused();
    EXPECT_EQ(res->outstanding, 0u);
    EXPECT_EQ(res->bad_frees, 0);
  }
}

TEST(MemoryPoolTrim, GivesTheLeastRecentlyUsedBlocksBackFirst) {
  auto res = std::make_shared<CountingResource>(false);
  auto pool = std::make_shared<MemoryPool>(res, "host");
  {
    auto a = pool->allocate(4 * MiB);
    auto b = pool->allocate(8 * MiB);
    auto c = pool->allocate(16 * MiB);
    a.reset();  // released first: the oldest in the cache
    b.reset();
  }  // c released last
  EXPECT_EQ(pool->stats().reserved, 28 * MiB);
  // 64 MiB, with nothing live: room for 64 * 1.25 = 80 MiB in all; 28 + 64 = 92 is too much:
  // the 4 MiB block goes (the oldest), then the 8 MiB one; 16 + 64 fits.
  auto d = pool->allocate(64 * MiB);
  EXPECT_EQ(pool->stats().reserved, 80 * MiB);
  EXPECT_EQ(pool->stats().allocated, 64 * MiB);
  EXPECT_EQ(res->outstanding, 80 * MiB);
  d.reset();
  auto e = pool->allocate(16 * MiB);  // the 16 MiB block was kept: no new block
  EXPECT_EQ(res->allocations, 4);
}

TEST(MemoryPoolTrim, TheCacheShrinksAfterABurstOnceItsWindowsHavePassed) {
  auto res = std::make_shared<CountingResource>(false);
  auto pool = std::make_shared<MemoryPool>(res, "host");
  {
    std::vector<std::shared_ptr<void>> burst;
    for (int i = 0; i < 50; ++i) burst.push_back(pool->allocate(2 * MiB));
  }
  EXPECT_EQ(pool->stats().reserved, 100 * MiB);
  // Then only 2 MiB at a time, for two whole windows: the burst is forgotten.
  for (uint64_t i = 0; i < 2 * MemoryPool::kWindow + 1; ++i) pool->allocate(2 * MiB).reset();
  EXPECT_LE(pool->stats().reserved, 4 * MiB);
  EXPECT_EQ(res->outstanding, pool->stats().reserved);
}

TEST(MemoryPoolHeadroom, LargeBlocksGetAQuarterMoreWhereItIsFree) {
  for (bool lazy : {false, true}) {
    auto res = std::make_shared<CountingResource>(lazy);
    auto pool = std::make_shared<MemoryPool>(res, "host");
    auto a = pool->allocate(24 * MiB);
    EXPECT_EQ(pool->stats().reserved, lazy ? 30 * MiB : 24 * MiB);
    a.reset();
    auto b = pool->allocate(29 * MiB);  // grew a little: the same block where it has room
    EXPECT_EQ(res->allocations, lazy ? 1 : 2) << "lazy=" << lazy;
    auto c = pool->allocate(512 << 10);  // small blocks: none
    EXPECT_EQ(pool->stats().allocated, 30 * MiB + (512 << 10));
  }
}

TEST(MemoryPoolHeadroom, NeverBreaksTheCap) {
  auto res = std::make_shared<CountingResource>(true);
  auto pool = std::make_shared<MemoryPool>(res, "host");
  pool->set_cap(25 * MiB);
  auto a = pool->allocate(24 * MiB);  // 30 MiB with headroom would pass the cap: exact size
  EXPECT_EQ(pool->stats().reserved, 24 * MiB);
  try {
    pool->allocate(2 * MiB);
    FAIL() << "the cap was not enforced";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kOutOfMemory);
    EXPECT_NE(std::string(e.what()).find("cap of 25.0 MiB"), std::string::npos) << e.what();
  }
}

// The host resource maps large blocks itself, so memory the pool gives back leaves the process.
TEST(HostResource, LargeBlocksLeaveTheProcessWhenGivenBack) {
  auto pool = std::make_shared<MemoryPool>(host_resource(), "host");
  const size_t before = rss_bytes();
  if (before == 0) GTEST_SKIP() << "no /proc/self/statm";
  {
    std::vector<std::shared_ptr<void>> blocks;
    for (size_t kb : {80, 200, 700, 3000, 20000}) {
      blocks.push_back(pool->allocate(kb << 10));
      std::memset(blocks.back().get(), 1, kb << 10);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(blocks.back().get()) % 4096, 0u);
    }
    EXPECT_GE(rss_bytes(), before + (20 << 20));
  }
  EXPECT_GT(pool->release_unused(), size_t{24} << 20);
  EXPECT_LT(rss_bytes(), before + (2 << 20));
}
