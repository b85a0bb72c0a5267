#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <set>
#include <thread>
#include <chrono>

#include "core/batch.h"
#include "core/convert.h"
#include "core/float16.h"
#include "core/memory.h"
#include "core/random.h"
#include "core/thread_pool.h"

using namespace stoker;

TEST(Float16, RoundTripsEveryHalfValue) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    uint16_t h = static_cast<uint16_t>(b);
    float f = half_bits_to_float(h);
    if (std::isnan(f)) continue;
    EXPECT_EQ(float_to_half_bits(f), h) << "bits " << b;
  }
}

TEST(Float16, RoundsToNearestEven) {
  EXPECT_EQ(float(float16(1.0f)), 1.0f);
  EXPECT_EQ(float(float16(65504.0f)), 65504.0f);
  EXPECT_TRUE(std::isinf(float(float16(65520.0f))));
  EXPECT_EQ(float(float16(65519.0f)), 65504.0f);
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even gives 1.
  EXPECT_EQ(float(float16(1.0f + std::ldexp(1.0f, -11))), 1.0f);
  EXPECT_EQ(float(float16(1.0f + 3 * std::ldexp(1.0f, -11))), 1.0f + 2 * std::ldexp(1.0f, -10));
  EXPECT_EQ(float(float16(std::ldexp(1.0f, -24))), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(float(float16(std::ldexp(1.0f, -25))), 0.0f);                   // tie -> even (0)
  EXPECT_EQ(float(float16(std::ldexp(1.5f, -25))), std::ldexp(1.0f, -24));
}

TEST(Convert, SaturatesAndRoundsHalfToEven) {
  EXPECT_EQ(convert_sat<uint8_t>(300), 255);
  EXPECT_EQ(convert_sat<uint8_t>(-5), 0);
  EXPECT_EQ(convert_sat<uint8_t>(2.5f), 2);
  EXPECT_EQ(convert_sat<uint8_t>(3.5f), 4);
  EXPECT_EQ(convert_sat<int8_t>(-200.0), -128);
  EXPECT_EQ(convert_sat<int32_t>(uint32_t{4000000000u}), 2147483647);
  EXPECT_EQ(convert_sat<uint32_t>(int64_t{-1}), 0u);
  EXPECT_EQ(convert_sat<int16_t>(std::nan("")), 0);
}

TEST(Philox, IsAPureFunctionOfItsCounter) {
  Philox a(rng_key(42, 3), 7, 11), b(rng_key(42, 3), 7, 11);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(a.next_u32(), b.next_u32());
  Philox c(rng_key(42, 3), 7, 12), d(rng_key(42, 4), 7, 11), e(rng_key(43, 3), 7, 11);
  Philox f(rng_key(42, 3), 7, 11);
  uint32_t x = f.next_u32();
  EXPECT_NE(x, c.next_u32());
  EXPECT_NE(x, d.next_u32());
  EXPECT_NE(x, e.next_u32());
}

TEST(Philox, KnownAnswer) {
  // Random123's known-answer test for philox4x32-10 with counter = key = 0.
  Philox p(0, 0, 0);
  EXPECT_EQ(p.next_u32(), 0x6627e8d5u);
  EXPECT_EQ(p.next_u32(), 0xe169c58du);
  EXPECT_EQ(p.next_u32(), 0xbc57ac4cu);
  EXPECT_EQ(p.next_u32(), 0x9b00dbd8u);
}

TEST(Philox, UniformAndNormalMoments) {
  Philox p(rng_key(1, 1), 0, 0);
  double s = 0, s2 = 0, n = 200000;
  for (int i = 0; i < n; ++i) {
    double u = p.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    s += u;
  }
  EXPECT_NEAR(s / n, 0.5, 0.005);
  s = 0;
  for (int i = 0; i < n; ++i) {
    double z = p.normal();
    s += z;
    s2 += z * z;
  }
  EXPECT_NEAR(s / n, 0.0, 0.01);
  EXPECT_NEAR(s2 / n, 1.0, 0.02);
  std::set<uint32_t> seen;
  for (int i = 0; i < 10000; ++i) seen.insert(p.below(7));
  EXPECT_EQ(seen.size(), 7u);
}

TEST(ThreadPool, RunsEveryIndexOnce) {
  ThreadPool pool(4);
  std::vector<std::atomic<int>> hits(1000);
  pool.parallel_for(1000, [&](int64_t i, int t) {
    EXPECT_GE(t, 0);
    EXPECT_LT(t, 4);
    hits[i]++;
  });
  for (auto& h : hits) EXPECT_EQ(h.load(), 1);
}

TEST(ThreadPool, RethrowsTheLowestFailingIndex) {
  ThreadPool pool(3);
  for (int rep = 0; rep < 20; ++rep) {
    try {
      pool.parallel_for(100, [&](int64_t i, int) {
        if (i == 17 || i == 60) throw std::runtime_error("fail " + std::to_string(i));
      });
      FAIL() << "no exception";
    } catch (const std::runtime_error& e) {
      EXPECT_STREQ(e.what(), "fail 17");
    }
  }
  // Still usable afterwards.
  std::atomic<int> n{0};
  pool.parallel_for(10, [&](int64_t, int) { n++; });
  EXPECT_EQ(n.load(), 10);
}

TEST(ThreadPool, JobsFromSeveralThreadsShareTheWorkers) {
  // The pipeline's stages call parallel_for at the same time: every job runs every index once,
  // a short job is not held up until a long one is done, and a thread id never runs two
  // indices at once.
  ThreadPool pool(3);
  std::vector<std::atomic<int>> busy(3);
  std::atomic<bool> overlap{false};
  auto body = [&](std::vector<std::atomic<int>>& hits, int us) {
    return [&, us](int64_t i, int t) {
      if (busy[t]++ != 0) overlap = true;
      std::this_thread::sleep_for(std::chrono::microseconds(us));
      hits[i]++;
      busy[t]--;
    };
  };
  std::vector<std::atomic<int>> long_hits(300), short_hits(6);
  std::atomic<bool> long_done{false}, short_done_first{false};
  std::thread long_job([&] {
    pool.parallel_for(300, body(long_hits, 2000));  // ~200 ms on 3 threads
    long_done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::vector<std::thread> short_jobs;
  for (int j = 0; j < 2; ++j)
    short_jobs.emplace_back([&] {
      pool.parallel_for(6, body(short_hits, 100));
      if (!long_done) short_done_first = true;
    });
  for (auto& t : short_jobs) t.join();
  long_job.join();
  EXPECT_FALSE(overlap.load());
  EXPECT_TRUE(short_done_first.load());
  for (auto& h : long_hits) EXPECT_EQ(h.load(), 1);
  for (auto& h : short_hits) EXPECT_EQ(h.load(), 2);
}

TEST(ThreadPool, RejectsZeroThreads) {
  try {
    ThreadPool p(0);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("num_threads"), std::string::npos);
  }
}

TEST(MemoryPool, ReusesBlocksAndCountsThem) {
  auto pool = std::make_shared<MemoryPool>(host_resource(), "host");
  {
    auto a = pool->allocate(1000);
    auto b = pool->allocate(5000);
    MemoryStats s = pool->stats();
    EXPECT_EQ(s.allocated, MemoryPool::size_class(1000) + MemoryPool::size_class(5000));
    EXPECT_EQ(s.num_upstream_allocations, 2u);
  }
  EXPECT_EQ(pool->stats().allocated, 0u);
  EXPECT_GT(pool->stats().reserved, 0u);
  auto c = pool->allocate(1000);  // same class: reused
  EXPECT_EQ(pool->stats().num_upstream_allocations, 2u);
  c.reset();
  EXPECT_EQ(pool->release_unused(), MemoryPool::size_class(1000) + MemoryPool::size_class(5000));
  EXPECT_EQ(pool->stats().reserved, 0u);
}

TEST(MemoryPool, ReusesTheSmallestCachedBlockUpToTwiceTheSize) {
  auto pool = std::make_shared<MemoryPool>(host_resource(), "host");
  pool->allocate(5000).reset();
  auto a = pool->allocate(3000);  // the cached 5120-byte block is within 2x: reused
  EXPECT_EQ(pool->stats().num_upstream_allocations, 1u);
  EXPECT_EQ(pool->stats().allocated, MemoryPool::size_class(5000));
  a.reset();
  auto b = pool->allocate(2000);  // 5120 > 2 x 2048: a new block
  EXPECT_EQ(pool->stats().num_upstream_allocations, 2u);
  b.reset();
  EXPECT_EQ(pool->stats().allocated, 0u);
}

TEST(MemoryPool, SizeClassesWasteAtMostAnEighth) {
  for (size_t n : {1ul, 255ul, 256ul, 257ul, 1000ul, 4097ul, 1ul << 20, (1ul << 20) + 1, 123456789ul}) {
    size_t c = MemoryPool::size_class(n);
    EXPECT_GE(c, n);
    if (n > 256) EXPECT_LE(c, n + n / 8 + 1);
  }
}

TEST(MemoryPool, CapGivesAClearError) {
  auto pool = std::make_shared<MemoryPool>(host_resource(), "host");
  pool->set_cap(1 << 20);
  auto a = pool->allocate(600 << 10);
  try {
    auto b = pool->allocate(600 << 10);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kOutOfMemory);
    std::string m = e.what();
    EXPECT_NE(m.find("cap of 1.0 MiB"), std::string::npos) << m;
    EXPECT_NE(m.find("holds"), std::string::npos) << m;
  }
}

TEST(MemoryPool, BuffersOutliveThePoolHandle) {
  std::shared_ptr<void> keep;
  {
    auto pool = std::make_shared<MemoryPool>(host_resource(), "host");
    keep = pool->allocate(100);
    static_cast<char*>(keep.get())[0] = 1;
  }
  keep.reset();  // returns to the pool, which then goes away
}

TEST(Batch, AllocatesContiguously) {
  auto pool = std::make_shared<MemoryPool>(host_resource(), "host");
  Batch b;
  b.allocate(*pool, DType::kFloat32, {{2, 3}, {4, 1}, {0, 5}}, "HW");
  EXPECT_EQ(b.size(), 3u);
  EXPECT_TRUE(b.is_contiguous());
  EXPECT_FALSE(b.is_uniform());
  EXPECT_EQ(b.total_bytes(), (6 + 4) * 4u);
  EXPECT_EQ(to_string(b.shape(0)), "(2, 3)");
}
