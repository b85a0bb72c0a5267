#include "readers/sample_order.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"

namespace stoker::readers {
namespace {

OrderConfig make(int64_t n, int shards, int shard, int batch) {
  OrderConfig c;
  c.num_samples = n;
  c.num_shards = shards;
  c.shard_id = shard;
  c.batch_size = batch;
  c.seed = 42;
  return c;
}

// Picks of the first `epochs` epochs, grouped by epoch (padding included).
std::vector<std::vector<Pick>> by_epoch(SampleOrder& order, int epochs) {
  std::vector<std::vector<Pick>> out(epochs);
  for (;;) {
    Pick p = order.next();
    if (p.epoch >= epochs) return out;
    out[p.epoch].push_back(p);
  }
}

std::vector<int64_t> indices(const std::vector<Pick>& picks, bool with_padding = false) {
  std::vector<int64_t> v;
  for (auto& p : picks)
    if (with_padding || !p.padded) v.push_back(p.index);
  return v;
}

std::vector<int64_t> range(int64_t a, int64_t b) {
  std::vector<int64_t> v(b - a);
  std::iota(v.begin(), v.end(), a);
  return v;
}

std::vector<int64_t> sorted(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

std::string error_of(const OrderConfig& c) {
  try {
    SampleOrder o(c);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    return e.what();
  }
  return "(no error)";
}

TEST(SampleOrder, ShardSizesFollowDaliFormula) {
  for (int64_t n = 1; n <= 80; ++n) {
    for (int s = 1; s <= std::min<int64_t>(n, 13); ++s) {
      int64_t total = 0;
      for (int i = 0; i < s; ++i) {
        EXPECT_EQ(shard_begin(i, s, n), i * n / s);
        int64_t size = shard_size(i, s, n);
        EXPECT_EQ(size, (i + 1) * n / s - i * n / s);
        EXPECT_TRUE(size == n / s || size == (n + s - 1) / s) << n << " " << s << " " << i;
        total += size;
      }
      EXPECT_EQ(total, n);
    }
  }
  EXPECT_EQ(shard_begin(3, 4, int64_t{1} << 62), (int64_t{1} << 62) / 4 * 3);  // no overflow
}

TEST(SampleOrder, EverySampleOncePerEpochPerShard) {
  struct Mode { bool shuffle, after_epoch, stick; int fill; };
  const Mode modes[] = {{false, false, false, 1}, {false, false, true, 1}, {true, false, false, 1},
                        {true, false, false, 5}, {true, false, true, 1024},
                        {false, true, false, 1}};
  for (const auto& m : modes) {
    for (int64_t n : {1, 7, 10, 33}) {
      for (int s : {1, 2, 3, 4}) {
        if (s > n) continue;
        for (int batch : {1, 3, 8}) {
          // All shards of one epoch together: a partition of the data set.
          std::vector<std::vector<int64_t>> epoch_union(4);
          for (int shard = 0; shard < s; ++shard) {
            auto c = make(n, s, shard, batch);
            c.random_shuffle = m.shuffle;
            c.shuffle_after_epoch = m.after_epoch;
            c.stick_to_shard = m.stick;
            c.initial_fill = m.fill;
            c.seed = 1000 + shard;  // every pipeline has its own seed, shards still agree
            SampleOrder order(c);
            auto epochs = by_epoch(order, 4);
            for (int e = 0; e < 4; ++e) {
              auto got = sorted(indices(epochs[e]));
              int sh = shard_for_epoch(order.meta(), e);
              ASSERT_EQ(got.size(), size_t(shard_size(sh, s, n)))
                  << "n=" << n << " s=" << s << " shard=" << shard << " e=" << e;
              ASSERT_EQ(std::set<int64_t>(got.begin(), got.end()).size(), got.size());
              if (!m.shuffle && !m.after_epoch) {
                EXPECT_EQ(got, range(shard_begin(sh, s, n), shard_begin(sh + 1, s, n)));
              }
              epoch_union[e].insert(epoch_union[e].end(), got.begin(), got.end());
            }
          }
          // Without stick_to_shard, epoch e of all pipelines covers every shard once.
          if (!m.stick) {
            for (int e = 0; e < 4; ++e) EXPECT_EQ(sorted(epoch_union[e]), range(0, n));
          }
        }
      }
    }
  }
}

TEST(SampleOrder, WalksShardsUnlessSticking) {
  auto c = make(10, 3, 0, 1);  // shards [0,3) [3,6) [6,10)
  SampleOrder walk(c);
  auto e = by_epoch(walk, 4);
  EXPECT_EQ(indices(e[0]), range(0, 3));
  EXPECT_EQ(indices(e[1]), range(3, 6));
  EXPECT_EQ(indices(e[2]), range(6, 10));
  EXPECT_EQ(indices(e[3]), range(0, 3));

  c.stick_to_shard = true;
  c.shard_id = 2;
  SampleOrder stick(c);
  e = by_epoch(stick, 3);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(indices(e[i]), range(6, 10));
}

TEST(SampleOrder, PadLastBatchRepeatsLastAndRestartsAtBatchBoundary) {
  auto c = make(10, 3, 0, 4);  // shard 0 has 3 samples, ceil(10/3) = 4
  c.pad_last_batch = true;
  SampleOrder order(c);
  auto b = order.next_batch();
  EXPECT_EQ(indices(b, true), (std::vector<int64_t>{0, 1, 2, 2}));
  EXPECT_FALSE(b[2].padded);
  EXPECT_TRUE(b[3].padded);
  EXPECT_EQ(b[3].epoch, 0);
  b = order.next_batch();  // next epoch, next shard, fresh batch
  EXPECT_EQ(indices(b, true), (std::vector<int64_t>{3, 4, 5, 5}));
  EXPECT_EQ(b[0].epoch, 1);
  EXPECT_TRUE(b[3].padded);
  b = order.next_batch();  // shard 2 has 4 = a whole batch, no padding
  EXPECT_EQ(indices(b, true), (std::vector<int64_t>{6, 7, 8, 9}));
  for (auto& p : b) EXPECT_FALSE(p.padded);

  // Batch 3: shard 0 (3 samples) pads a whole extra batch to reach ceil(10/3) = 4 samples,
  // as DALI does, so every shard gives 2 batches.
  c.batch_size = 3;
  SampleOrder three(c);
  std::vector<std::vector<int64_t>> batches;
  for (int i = 0; i < 6; ++i) batches.push_back(indices(three.next_batch(), true));
  EXPECT_EQ(batches[0], (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(batches[1], (std::vector<int64_t>{2, 2, 2}));
  EXPECT_EQ(batches[2], (std::vector<int64_t>{3, 4, 5}));
  EXPECT_EQ(batches[3], (std::vector<int64_t>{5, 5, 5}));
  EXPECT_EQ(batches[4], (std::vector<int64_t>{6, 7, 8}));
  EXPECT_EQ(batches[5], (std::vector<int64_t>{9, 9, 9}));
}

TEST(SampleOrder, PaddedCountsMatchShardEpochCount) {
  for (int64_t n : {5, 10, 17, 64}) {
    for (int s : {1, 2, 3, 5}) {
      for (int batch : {1, 2, 4, 7}) {
        for (bool pad : {false, true}) {
          for (bool shuffle : {false, true}) {
            auto c = make(n, s, s - 1, batch);
            c.pad_last_batch = pad;
            c.random_shuffle = shuffle;
            c.initial_fill = 6;
            SampleOrder order(c);
            auto epochs = by_epoch(order, 3);
            for (int e = 0; e < 3; ++e) {
              auto count = shard_epoch_count(order.meta(), shard_for_epoch(order.meta(), e), batch);
              EXPECT_EQ(int64_t(indices(epochs[e]).size()), count.samples);
              EXPECT_EQ(int64_t(epochs[e].size()), count.padded);
              if (pad) {
                EXPECT_EQ(count.padded % batch, 0);
                EXPECT_EQ(count.batches * batch, count.padded);
                // The padding repeats the last real sample.
                auto real = indices(epochs[e]);
                for (auto& p : epochs[e]) {
                  if (p.padded) {
                    EXPECT_EQ(p.index, real.back());
                  }
                }
              }
            }
          }
        }
      }
    }
  }
}

TEST(SampleOrder, WrapsAroundWithoutPadding) {
  auto c = make(10, 1, 0, 4);
  SampleOrder order(c);
  order.next_batch();
  order.next_batch();
  auto b = order.next_batch();
  EXPECT_EQ(indices(b), (std::vector<int64_t>{8, 9, 0, 1}));
  EXPECT_EQ(b[1].epoch, 0);
  EXPECT_EQ(b[2].epoch, 1);

  auto c3 = make(10, 3, 0, 2);  // shard 0 = {0,1,2}, then shard 1 = {3,4,5}
  SampleOrder walk(c3);
  walk.next_batch();
  EXPECT_EQ(indices(walk.next_batch()), (std::vector<int64_t>{2, 3}));
}

TEST(SampleOrder, MetaAsDali) {
  auto c = make(10, 3, 1, 4);
  auto m = SampleOrder(c).meta();
  EXPECT_EQ(m.epoch_size, 10);
  EXPECT_EQ(m.epoch_size_padded, 10);
  EXPECT_EQ(m.number_of_shards, 3);
  EXPECT_EQ(m.shard_id, 1);
  EXPECT_FALSE(m.pad_last_batch);
  EXPECT_FALSE(m.stick_to_shard);
  c.pad_last_batch = true;
  m = SampleOrder(c).meta();
  EXPECT_EQ(m.epoch_size_padded, 12);  // ceil(10/3) * 3, DALI's Loader::Size(true)
  EXPECT_TRUE(m.pad_last_batch);
  c.shuffle_after_epoch = true;  // DALI forces stick_to_shard and reports it
  EXPECT_TRUE(SampleOrder(c).meta().stick_to_shard);

  auto count = shard_epoch_count(m, 0, 4);
  EXPECT_EQ(count.samples, 3);
  EXPECT_EQ(count.padded, 4);
  EXPECT_EQ(count.batches, 1);
  m.pad_last_batch = false;
  count = shard_epoch_count(m, 2, 3);
  EXPECT_EQ(count.samples, 4);
  EXPECT_EQ(count.padded, 4);
  EXPECT_EQ(count.batches, 2);
}

std::vector<int64_t> first_picks(const OrderConfig& c, int n) {
  SampleOrder o(c);
  std::vector<int64_t> v;
  for (int i = 0; i < n; ++i) v.push_back(o.next().index);
  return v;
}

TEST(SampleOrder, SeedDecidesTheOrder) {
  auto c = make(200, 1, 0, 8);
  c.random_shuffle = true;
  c.initial_fill = 32;
  auto a = first_picks(c, 400);
  EXPECT_EQ(a, first_picks(c, 400));
  EXPECT_NE(a, range(0, 400));
  c.seed = 43;
  EXPECT_NE(a, first_picks(c, 400));

  // shuffle_after_epoch: a different permutation each epoch, the same one for the same list_seed.
  auto s = make(50, 1, 0, 5);
  s.shuffle_after_epoch = true;
  SampleOrder o1(s), o2(s);
  auto e1 = by_epoch(o1, 3), e2 = by_epoch(o2, 3);
  EXPECT_EQ(indices(e1[0]), indices(e2[0]));
  EXPECT_NE(indices(e1[0]), indices(e1[1]));
  EXPECT_NE(indices(e1[1]), indices(e1[2]));
  EXPECT_NE(indices(e1[0]), range(0, 50));
  s.list_seed = 7;
  SampleOrder o3(s);
  EXPECT_NE(indices(by_epoch(o3, 1)[0]), indices(e1[0]));
  // It does not depend on the pipeline's seed, so shards of differently seeded pipelines agree.
  s.list_seed = kDefaultListSeed;
  s.seed = 999;
  SampleOrder o4(s);
  EXPECT_EQ(indices(by_epoch(o4, 1)[0]), indices(e1[0]));
}

TEST(SampleOrder, RandomShuffleShardsAreRandomSubsets) {
  auto c = make(100, 4, 0, 5);
  c.random_shuffle = true;
  SampleOrder o(c);
  auto got = sorted(indices(by_epoch(o, 1)[0]));
  EXPECT_EQ(got.size(), 25u);
  EXPECT_NE(got, range(0, 25));  // the whole list was permuted once before sharding
}

void expect_resume(OrderConfig c, int warmup_samples, int check_samples) {
  SampleOrder a(c);
  for (int i = 0; i < warmup_samples; ++i) a.next();
  std::string state = a.serialize();
  SampleOrder b(c);
  b.restore(state);
  EXPECT_EQ(b.serialize(), state);
  EXPECT_EQ(b.epoch(), a.epoch());
  for (int i = 0; i < check_samples; ++i) {
    Pick pa = a.next(), pb = b.next();
    ASSERT_EQ(pa.index, pb.index) << "sample " << i << " after " << warmup_samples;
    ASSERT_EQ(pa.padded, pb.padded);
    ASSERT_EQ(pa.epoch, pb.epoch);
  }
}

TEST(SampleOrder, SerializeRestoreContinuesIdentically) {
  auto c = make(37, 3, 1, 4);
  c.random_shuffle = true;
  c.initial_fill = 10;
  for (int warm : {0, 1, 5, 12, 13, 40, 101}) expect_resume(c, warm, 120);
  c.pad_last_batch = true;
  for (int warm : {0, 3, 12, 13, 14, 15, 16, 50}) expect_resume(c, warm, 120);
  c.initial_fill = 1024;  // buffer spans many epochs
  expect_resume(c, 77, 200);
  auto s = make(23, 2, 0, 3);
  s.shuffle_after_epoch = true;
  for (int warm : {0, 11, 12, 30}) expect_resume(s, warm, 80);
  auto plain = make(9, 1, 0, 2);
  expect_resume(plain, 7, 30);
}

std::string restore_error(SampleOrder& o, const std::string& state) {
  try {
    o.restore(state);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    return e.what();
  }
  return "(no error)";
}

TEST(SampleOrder, RestoreRejectsBadStrings) {
  auto c = make(20, 2, 0, 4);
  c.random_shuffle = true;
  c.initial_fill = 8;
  SampleOrder a(c);
  a.next_batch();
  const std::string state = a.serialize();
  const std::string before = a.serialize();

  EXPECT_NE(restore_error(a, "").find("reader state is not valid"), std::string::npos);
  EXPECT_NE(restore_error(a, "hello world").find("does not start with"), std::string::npos);
  EXPECT_NE(restore_error(a, state.substr(0, state.size() / 2)).find("checksum"),
            std::string::npos);
  std::string tampered = state;
  tampered[tampered.find(" pos ") + 5] = '7';
  EXPECT_NE(restore_error(a, tampered).find("checksum"), std::string::npos);
  EXPECT_EQ(a.serialize(), before);  // a failed restore leaves the reader as it was

  auto other = c;
  other.num_shards = 4;
  SampleOrder b(other);
  auto msg = restore_error(b, state);
  EXPECT_NE(msg.find("num_shards=2, this one has num_shards=4"), std::string::npos) << msg;
  other = c;
  other.seed = 1;
  SampleOrder d(other);
  msg = restore_error(d, state);
  EXPECT_NE(msg.find("seed=42"), std::string::npos) << msg;
}

TEST(SampleOrder, BadConfigsNameTheArgument) {
  auto c = make(10, 2, 2, 4);
  EXPECT_EQ(error_of(c), "shard_id must be in [0, num_shards) = [0, 2), got shard_id=2; give each "
                         "pipeline a shard_id below num_shards");
  c = make(10, 0, 0, 4);
  EXPECT_EQ(error_of(c), "num_shards must be at least 1, got 0");
  c = make(3, 4, 0, 4);
  EXPECT_NE(error_of(c).find("num_shards (4) must not exceed the number of samples (3)"),
            std::string::npos);
  c = make(0, 1, 0, 4);
  EXPECT_NE(error_of(c).find("no samples"), std::string::npos);
  c = make(10, 1, 0, 0);
  EXPECT_EQ(error_of(c), "batch_size must be at least 1, got 0");
  c = make(10, 1, 0, 4);
  c.random_shuffle = true;
  c.initial_fill = 0;
  EXPECT_EQ(error_of(c), "initial_fill must be at least 1 when random_shuffle is True, got 0");
  c.initial_fill = 16;
  c.shuffle_after_epoch = true;
  EXPECT_NE(error_of(c).find("shuffle_after_epoch and random_shuffle cannot both be True"),
            std::string::npos);
  c.random_shuffle = false;
  c.stick_to_shard = true;
  EXPECT_NE(error_of(c).find("shuffle_after_epoch and stick_to_shard cannot both be True"),
            std::string::npos);
}

TEST(SampleOrder, ReaderStateKeepsBadSamplesAndResumes) {
  auto c = make(30, 2, 1, 4);
  c.random_shuffle = true;
  c.initial_fill = 6;
  SampleOrder a(c);
  for (int i = 0; i < 21; ++i) a.next();
  const std::set<int64_t> bad = {3, 17, 29};
  const std::string state = serialize_reader_state(a, bad);
  EXPECT_EQ(state.rfind("stoker.reader 1 bad 3 3 17 29 sum ", 0), 0u) << state;

  SampleOrder b(c);
  std::set<int64_t> b_bad;
  restore_reader_state(state, b, b_bad);
  EXPECT_EQ(b_bad, bad);
  EXPECT_EQ(serialize_reader_state(b, b_bad), state);
  for (int i = 0; i < 50; ++i) ASSERT_EQ(a.next().index, b.next().index) << i;

  auto error = [&](const std::string& s, SampleOrder& o) -> std::string {
    std::set<int64_t> got = {1};
    const std::string before = serialize_reader_state(o, got);
    try {
      restore_reader_state(s, o, got);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
      EXPECT_EQ(serialize_reader_state(o, got), before);  // nothing changed
      return e.what();
    }
    return "(no error)";
  };
  SampleOrder d(c);
  std::string tampered = state;
  tampered[tampered.find(" 17 ") + 2] = '8';
  EXPECT_NE(error(tampered, d).find("the checksum does not match"), std::string::npos);
  EXPECT_NE(error("stoker.sample_order 1", d).find("does not start with 'stoker.reader'"),
            std::string::npos);
  SampleOrder plain(make(30, 2, 1, 4));
  EXPECT_NE(error(state, plain).find("random_shuffle=True, this one has random_shuffle=False"),
            std::string::npos)
      << error(state, plain);
  // A bad sample outside the data set (a state made for a bigger one) is refused.
  SampleOrder small(c);
  std::set<int64_t> big = {40};
  auto c40 = make(41, 2, 1, 4);
  c40.random_shuffle = true;
  c40.initial_fill = 6;
  SampleOrder o40(c40);
  const std::string s40 = serialize_reader_state(o40, big);
  EXPECT_NE(error(s40, small).find("out of order or out of range"), std::string::npos)
      << error(s40, small);
}

}  // namespace
}  // namespace stoker::readers
