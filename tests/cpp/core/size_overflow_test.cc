// Sizes near 2^63 and 2^64: products are checked, the pool refuses what no machine holds at
// once, and an error leaves the pool as it was. Before, size_class(2^63) doubled its power of
// two past 2^63 to 0 and spun forever, and a batch of 2^64 bytes wrapped to a 0-byte buffer
// that the operator then wrote into; each test here returns or throws at once.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>

#include "core/batch.h"
#include "core/error.h"
#include "core/memory.h"
#include "core/shape.h"

using namespace stoker;

namespace {

constexpr int64_t k2_31 = int64_t{1} << 31;
constexpr int64_t k2_32 = int64_t{1} << 32;
constexpr uint64_t k2_63 = uint64_t{1} << 63;

std::string message_of(const std::function<void()>& f, ErrorKind kind) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(static_cast<int>(e.kind()), static_cast<int>(kind)) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

// Refuses blocks above `limit`, as the kernel refuses a mapping it cannot back.
class LimitedResource : public MemoryResource {
 public:
  explicit LimitedResource(size_t limit) : limit_(limit) {}
  void* allocate(size_t bytes) override {
    if (outstanding + bytes > limit_)
      fail(ErrorKind::kOutOfMemory, "out of host memory allocating " + format_bytes(static_cast<double>(bytes)));
    outstanding += bytes;
    return std::malloc(bytes ? bytes : 1);
  }
  void deallocate(void* p, size_t bytes) noexcept override {
    outstanding -= bytes;
    std::free(p);
  }
  MemoryKind kind() const override { return MemoryKind::kHost; }
  size_t outstanding = 0;

 private:
  size_t limit_;
};

}  // namespace

TEST(CheckedSizes, MultiplyNear2To63) {
  int64_t r = 0;
  EXPECT_TRUE(checked_mul(k2_31, k2_31, &r));
  EXPECT_EQ(r, int64_t{1} << 62);
  EXPECT_TRUE(checked_mul(INT64_MAX, 1, &r));
  EXPECT_EQ(r, INT64_MAX);
  EXPECT_FALSE(checked_mul(k2_31, k2_32, &r));       // 2^63
  EXPECT_FALSE(checked_mul(k2_32, k2_32, &r));       // 2^64: wraps to 0 unchecked
  EXPECT_FALSE(checked_mul(INT64_MAX, 2, &r));
  EXPECT_FALSE(checked_mul(-1, 5, &r));              // sizes are never negative
  EXPECT_TRUE(checked_mul(0, INT64_MAX, &r));
  EXPECT_EQ(r, 0);
}

TEST(CheckedSizes, Volume) {
  EXPECT_EQ(checked_volume({}), 1);
  EXPECT_EQ(checked_volume({375, 500, 3}), 562500);
  EXPECT_EQ(checked_volume({k2_31, k2_31}), int64_t{1} << 62);
  EXPECT_EQ(checked_volume({k2_31, k2_31, 2}), -1);   // 2^63
  EXPECT_EQ(checked_volume({k2_32, k2_32}), -1);      // 2^64
  EXPECT_EQ(checked_volume({k2_32, k2_32, 0}), 0);    // empty, whatever the rest
  EXPECT_EQ(checked_volume({3, -1}), -1);
  EXPECT_EQ(volume({k2_31, k2_31}), int64_t{1} << 62);
  EXPECT_EQ(message_of([] { volume({k2_32, k2_32}); }, ErrorKind::kInvalidArgument),
            "the shape (4294967296, 4294967296) has more elements than 64 bits can count");
  EXPECT_EQ(message_of([] { volume({2, -3}); }, ErrorKind::kInvalidArgument),
            "the shape (2, -3) has a negative extent");
}

TEST(CheckedSizes, SizeClassRefusesWhatNoMachineHolds) {
  EXPECT_GE(MemoryPool::size_class(MemoryPool::kMaxBytes), MemoryPool::kMaxBytes);
  EXPECT_EQ(message_of([] { MemoryPool::size_class(k2_63); }, ErrorKind::kOutOfMemory),
            "cannot allocate 9223372036854775808 bytes (8.0 EiB): more than any machine can "
            "address");
  message_of([] { MemoryPool::size_class(SIZE_MAX); }, ErrorKind::kOutOfMemory);
  message_of([] { MemoryPool::size_class(MemoryPool::kMaxBytes + 1); }, ErrorKind::kOutOfMemory);
}

TEST(CheckedSizes, PoolStaysUsableAfterAHugeRequest) {
  auto pool = std::make_shared<MemoryPool>(host_resource(), "host");
  auto a = pool->allocate(1000);
  const MemoryStats before = pool->stats();
  for (size_t huge : {static_cast<size_t>(k2_63), SIZE_MAX, MemoryPool::kMaxBytes + 1})
    message_of([&] { pool->allocate(huge); }, ErrorKind::kOutOfMemory);
  const MemoryStats after = pool->stats();
  EXPECT_EQ(after.allocated, before.allocated);
  EXPECT_EQ(after.reserved, before.reserved);
  EXPECT_EQ(after.num_allocations, before.num_allocations);
  auto b = pool->allocate(5000);
  static_cast<char*>(b.get())[4999] = 1;
  EXPECT_EQ(pool->stats().allocated, before.allocated + MemoryPool::size_class(5000));
}

TEST(CheckedSizes, BatchOf2To64BytesIsRefusedNotWrappedToZero) {
  auto pool = std::make_shared<MemoryPool>(host_resource(), "host");
  Batch b;
  // 2^31 x 2^31 x 4 bytes = 2^64: unchecked, this was a 0-byte buffer.
  EXPECT_EQ(message_of([&] { b.allocate(*pool, DType::kUInt8, {{k2_31, k2_31, 4}}, "HWC"); },
                       ErrorKind::kInvalidArgument),
            "the output would be 18446744073709551616 bytes (16.0 EiB: 1 sample of shape "
            "(2147483648, 2147483648, 4), uint8), more than any machine can address");
  // Each sample fits; the batch does not (2 x 2^62 x 4 bytes).
  EXPECT_EQ(message_of([&] { Batch::bytes_for({{k2_31, k2_31}, {k2_31, k2_31}, {1}}, DType::kFloat32); },
                       ErrorKind::kInvalidArgument),
            "the output would be 36893488147419103236 bytes (32.0 EiB: 3 samples, the largest of "
            "shape (2147483648, 2147483648), float32), more than any machine can address");
  EXPECT_EQ(message_of([&] { Batch::bytes_for({{k2_32, k2_32, k2_32}}, DType::kUInt8); },
                       ErrorKind::kInvalidArgument),
            "the output would be 79228162514264337593543950336 bytes (68719476736.0 EiB: 1 sample of shape "
            "(4294967296, 4294967296, 4294967296), uint8), more than any machine can address");
  EXPECT_EQ(message_of([&] { Batch::bytes_for({{2, 2}, {3, -1}}, DType::kUInt8); },
                       ErrorKind::kInvalidArgument),
            "output sample 1 would have the shape (3, -1), with a negative extent");
  EXPECT_EQ(Batch::bytes_for({{k2_31, k2_31}}, DType::kUInt8), MemoryPool::kMaxBytes);
  EXPECT_EQ(Batch::bytes_for({{2, 3}, {0, k2_32, k2_32}}, DType::kInt16), 12u);
  EXPECT_EQ(pool->stats().num_allocations, 0u);
}

TEST(CheckedSizes, OutputPastTheCapSaysSizeHoldingsAndWhatToDo) {
  auto pool = std::make_shared<MemoryPool>(host_resource(), "host");
  pool->set_cap(1 << 20);
  Batch b;
  EXPECT_EQ(message_of([&] { b.allocate(*pool, DType::kFloat32, {{512, 512}, {512, 512}}, "HW"); },
                       ErrorKind::kOutOfMemory),
            "the output would be 2097152 bytes (2.0 MiB: 2 samples of shape (512, 512), float32): "
            "the host memory pool would exceed its cap of 1.0 MiB: it holds 0.0 MiB in live "
            "buffers and 0.0 MiB cached, and needs 2.0 MiB more. Lower batch_size or "
            "prefetch_queue_depth, release batches you hold, or raise the cap with "
            "Pipeline.set_host_memory_cap() (the default is 80% of RAM; "
            "STOKER_HOST_MEMORY_CAP=<bytes> sets it)");
  b.allocate(*pool, DType::kFloat32, {{256, 256}}, "HW");
  EXPECT_EQ(b.total_bytes(), 256u * 256 * 4);
}

TEST(CheckedSizes, SystemRefusalGivesTheCacheBackThenNamesSizeAndCap) {
  constexpr size_t MiB = size_t{1} << 20;
  auto res = std::make_shared<LimitedResource>(8 * MiB);
  auto pool = std::make_shared<MemoryPool>(res, "host");
  pool->set_cap(size_t{1} << 40);
  auto a = pool->allocate(4 * MiB);
  auto b = pool->allocate(3 * MiB);
  a.reset();  // cached: 7 MiB held, the system's 8 MiB nearly gone
  // The system refuses 1.5 MiB more until the pool gives its cached block back.
  auto c = pool->allocate(3 * MiB / 2);
  EXPECT_EQ(res->outstanding, 9 * MiB / 2);
  EXPECT_EQ(pool->stats().reserved, 9 * MiB / 2);
  EXPECT_EQ(message_of([&] { pool->allocate(6 * MiB); }, ErrorKind::kOutOfMemory),
            "out of host memory allocating 6.0 MiB (the host memory pool holds 4.5 MiB in live "
            "buffers and 0.0 MiB cached, under a cap of 1.0 TiB)");
  EXPECT_EQ(pool->stats().allocated, 9 * MiB / 2);
  c.reset();
  auto d = pool->allocate(4 * MiB);
  EXPECT_NE(d.get(), nullptr);
  EXPECT_EQ(res->outstanding, 7 * MiB);
}

TEST(DefaultHostCap, IsAShareOfRamOrTheEnvironmentsBytes) {
  const char* old = std::getenv("STOKER_HOST_MEMORY_CAP");
  const std::string saved = old ? old : "";
  unsetenv("STOKER_HOST_MEMORY_CAP");
  const size_t ram = usable_memory_bytes();
  ASSERT_GT(ram, 0u);
  EXPECT_EQ(default_host_memory_cap(), static_cast<size_t>(static_cast<double>(ram) * 0.8));
  setenv("STOKER_HOST_MEMORY_CAP", "12345", 1);
  EXPECT_EQ(default_host_memory_cap(), 12345u);
  setenv("STOKER_HOST_MEMORY_CAP", "0", 1);
  EXPECT_EQ(default_host_memory_cap(), 0u);
  setenv("STOKER_HOST_MEMORY_CAP", "8G", 1);
  EXPECT_EQ(message_of([] { default_host_memory_cap(); }, ErrorKind::kInvalidArgument),
            "STOKER_HOST_MEMORY_CAP must be a number of bytes (0: no cap), got '8G'; unset it "
            "for the default cap of 80% of RAM");
  if (old) setenv("STOKER_HOST_MEMORY_CAP", saved.c_str(), 1);
  else unsetenv("STOKER_HOST_MEMORY_CAP");
}
