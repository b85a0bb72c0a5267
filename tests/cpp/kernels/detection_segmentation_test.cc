#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <map>
#include <random>
#include <vector>

#include "kernels/cpu/detection/segmentation.h"

using namespace stoker;
using namespace stoker::kernels;

namespace {

// Reference labelling: breadth-first flood fill over face neighbours, blobs numbered by their
// first element in C order.
std::vector<int64_t> flood_labels(const std::vector<int32_t>& m, const std::vector<int64_t>& shape,
                                  int64_t background, int64_t* nblobs) {
  const int nd = static_cast<int>(shape.size());
  std::vector<int64_t> stride(nd, 1);
  for (int d = nd - 2; d >= 0; --d) stride[d] = stride[d + 1] * shape[d + 1];
  std::vector<int64_t> lab(m.size(), -1);
  int64_t next = 0;
  for (size_t s = 0; s < m.size(); ++s) {
    if (m[s] == background || lab[s] >= 0) continue;
    std::deque<int64_t> q{static_cast<int64_t>(s)};
    lab[s] = next;
    while (!q.empty()) {
      const int64_t e = q.front();
      q.pop_front();
      for (int d = 0; d < nd; ++d) {
        const int64_t c = (e / stride[d]) % shape[d];
        for (int step : {-1, 1}) {
          if ((step < 0 && c == 0) || (step > 0 && c == shape[d] - 1)) continue;
          const int64_t f = e + step * stride[d];
          if (lab[f] < 0 && m[f] == m[e]) {
            lab[f] = next;
            q.push_back(f);
          }
        }
      }
    }
    ++next;
  }
  *nblobs = next;
  return lab;
}

Blobs blobs_of(const std::vector<int32_t>& m, const std::vector<int64_t>& shape,
               int64_t background = 0, std::vector<int64_t>* labels = nullptr) {
  if (labels) labels->assign(m.size(), -2);
  return find_blobs(m.data(), shape.data(), static_cast<int>(shape.size()), background,
                    labels ? labels->data() : nullptr);
}

std::vector<int64_t> box(const Blobs& b, int64_t k) {
  std::vector<int64_t> v(b.lo(k), b.lo(k) + b.ndim);
  v.insert(v.end(), b.hi(k), b.hi(k) + b.ndim);
  return v;
}

Philox rng_for(uint32_t sample) { return Philox(rng_key(42, 7), 0, sample); }

}  // namespace

TEST(SegmentationBlobs, FaceNeighboursOnlyAndFirstElementOrder) {
  // 0 1 0 2
  // 1 0 0 2
  // 0 0 2 2
  const std::vector<int32_t> m{0, 1, 0, 2, 1, 0, 0, 2, 0, 0, 2, 2};
  std::vector<int64_t> lab;
  const Blobs b = blobs_of(m, {3, 4}, 0, &lab);
  ASSERT_EQ(b.size(), 3);  // the two diagonal 1s are apart
  EXPECT_EQ(b.values, (std::vector<int64_t>{1, 2, 1}));
  EXPECT_EQ(box(b, 0), (std::vector<int64_t>{0, 1, 1, 2}));
  EXPECT_EQ(box(b, 1), (std::vector<int64_t>{0, 2, 3, 4}));
  EXPECT_EQ(box(b, 2), (std::vector<int64_t>{1, 0, 2, 1}));
  EXPECT_EQ(lab, (std::vector<int64_t>{-1, 0, -1, 1, 2, -1, -1, 1, -1, -1, 1, 1}));
  EXPECT_EQ(b.box_volume(1), 6);
}

TEST(SegmentationBlobs, EqualValuesOnlyJoinAndBackgroundIsAnyLabel) {
  // Touching blobs of different labels stay apart; the background may be any value.
  const std::vector<int32_t> m{1, 1, 2, 2, 1, 3, 3, 2};
  const Blobs b = blobs_of(m, {2, 4}, 0);
  ASSERT_EQ(b.size(), 3);
  EXPECT_EQ(b.values, (std::vector<int64_t>{1, 2, 3}));
  const Blobs b3 = blobs_of(m, {2, 4}, 3);
  ASSERT_EQ(b3.size(), 2);
  EXPECT_EQ(box(b3, 0), (std::vector<int64_t>{0, 0, 2, 2}));
  EXPECT_EQ(box(b3, 1), (std::vector<int64_t>{0, 2, 2, 4}));
}

TEST(SegmentationBlobs, UShapeJoinsThroughALaterRow) {
  // The two arms meet only in the last row; the blob keeps the first arm's number.
  const std::vector<int32_t> m{1, 0, 1, 0, 5, 1, 0, 1, 0, 0, 1, 1, 1, 0, 0};
  const Blobs b = blobs_of(m, {3, 5}, 0);
  ASSERT_EQ(b.size(), 2);
  EXPECT_EQ(b.values, (std::vector<int64_t>{1, 5}));
  EXPECT_EQ(box(b, 0), (std::vector<int64_t>{0, 0, 3, 3}));
}

TEST(SegmentationBlobs, EmptyOneDAndBool) {
  const std::vector<int32_t> none;
  EXPECT_EQ(blobs_of(none, {0, 4}).size(), 0);
  const Blobs line = blobs_of({0, 3, 3, 0, 3, 7}, {6});
  ASSERT_EQ(line.size(), 3);
  EXPECT_EQ(box(line, 1), (std::vector<int64_t>{4, 5}));
  const bool bm[] = {true, false, true, true};
  const int64_t shape[] = {2, 2};
  const Blobs bb = find_blobs(bm, shape, 2, 0);
  ASSERT_EQ(bb.size(), 1);  // (0,0) touches (1,0)
  EXPECT_EQ(bb.values[0], 1);
  const Blobs all = blobs_of({0, 0, 0, 0}, {2, 2}, -1);  // background absent: one blob of zeros
  ASSERT_EQ(all.size(), 1);
  EXPECT_EQ(box(all, 0), (std::vector<int64_t>{0, 0, 2, 2}));
}

TEST(SegmentationBlobs, MatchesFloodFillOnRandomMasks) {
  std::mt19937 gen(3);
  const std::vector<std::vector<int64_t>> shapes{
      {1, 1}, {7, 1}, {1, 9}, {13, 17}, {5, 6, 7}, {3, 4, 5, 6}, {2, 3, 2, 3, 2}, {40, 50}};
  for (const auto& shape : shapes) {
    for (int density : {2, 3, 5}) {
      int64_t vol = 1;
      for (int64_t s : shape) vol *= s;
      std::vector<int32_t> m(vol);
      std::uniform_int_distribution<int> val(0, density);
      for (auto& v : m) v = val(gen) % 3 == 0 ? 0 : 1 + val(gen) % 2;
      int64_t nref = 0;
      const std::vector<int64_t> ref = flood_labels(m, shape, 0, &nref);
      std::vector<int64_t> lab;
      const Blobs b = blobs_of(m, shape, 0, &lab);
      ASSERT_EQ(b.size(), nref);
      EXPECT_EQ(lab, ref);
      // Boxes and values from the labels.
      const int nd = static_cast<int>(shape.size());
      for (int64_t k = 0; k < nref; ++k) {
        std::vector<int64_t> lo(nd, INT64_MAX), hi(nd, -1);
        int64_t value = -1;
        for (int64_t e = 0; e < vol; ++e) {
          if (ref[e] != k) continue;
          value = m[e];
          int64_t rest = e;
          for (int d = nd - 1; d >= 0; --d) {
            const int64_t c = rest % shape[d];
            rest /= shape[d];
            lo[d] = std::min(lo[d], c);
            hi[d] = std::max(hi[d], c + 1);
          }
        }
        lo.insert(lo.end(), hi.begin(), hi.end());
        EXPECT_EQ(box(b, k), lo);
        EXPECT_EQ(b.values[k], value);
      }
    }
  }
}

TEST(SegmentationChoice, KLargestByBoxVolumeTiesToTheEarlierBlob) {
  // An L of 15 pixels (box 8x8) and a 4x4 square (16 pixels): the L's box is larger.
  std::vector<int32_t> m(100, 0);
  for (int x = 0; x < 8; ++x) m[x] = 1;
  for (int y = 0; y < 8; ++y) m[y * 10] = 1;
  for (int y = 5; y < 9; ++y)
    for (int x = 5; x < 9; ++x) m[y * 10 + x] = 1;
  const Blobs b = blobs_of(m, {10, 10});
  ObjectChoiceArgs a;
  a.k_largest = 1;
  for (uint32_t s = 0; s < 20; ++s) {
    Philox r = rng_for(s);
    const ObjectChoice c = choose_object(b, a, r);
    EXPECT_EQ(c.blob, 0);
    EXPECT_EQ(c.class_label, 1);
  }
  // Two 2x2 blobs: the one met first wins the tie.
  std::vector<int32_t> t(45, 0);
  for (int y : {0, 1})
    for (int x : {6, 7}) t[y * 9 + x] = 1;
  for (int y : {3, 4})
    for (int x : {0, 1}) t[y * 9 + x] = 1;
  const Blobs tb = blobs_of(t, {5, 9});
  for (uint32_t s = 0; s < 20; ++s) {
    Philox r = rng_for(s);
    EXPECT_EQ(box(tb, choose_object(tb, a, r).blob), (std::vector<int64_t>{0, 6, 2, 8}));
  }
}

TEST(SegmentationChoice, ThresholdDropsClassesAndFallsBackToNone) {
  // Class 1: a 1x3 blob; class 2: a 3x1 blob.
  const std::vector<int32_t> m{1, 1, 1, 2, 0, 0, 0, 2, 0, 0, 0, 2};
  const Blobs b = blobs_of(m, {3, 4});
  ObjectChoiceArgs a;
  a.threshold = {2, 1};  // only class 2's blob is tall enough
  for (uint32_t s = 0; s < 30; ++s) {
    Philox r = rng_for(s);
    const ObjectChoice c = choose_object(b, a, r);
    EXPECT_EQ(c.class_label, 2);
    EXPECT_EQ(c.blob, 1);
  }
  a.threshold = {2, 2};
  Philox r = rng_for(0);
  const ObjectChoice c = choose_object(b, a, r);
  EXPECT_EQ(c.blob, -1);
  EXPECT_EQ(c.class_label, 0);
}

TEST(SegmentationChoice, ClassesAndWeights) {
  const std::vector<int32_t> m{1, 0, 2, 0, 3, 0};
  const Blobs b = blobs_of(m, {6});
  ObjectChoiceArgs a;
  a.from_labels = false;
  a.classes = {3, 9};  // 9 is absent: its weight drops to 0
  a.weights = {1, 100};
  for (uint32_t s = 0; s < 20; ++s) {
    Philox r = rng_for(s);
    EXPECT_EQ(choose_object(b, a, r).class_label, 3);
  }
  a.classes = {1, 2};
  a.weights = {0, 1};
  for (uint32_t s = 0; s < 20; ++s) {
    Philox r = rng_for(s);
    EXPECT_EQ(choose_object(b, a, r).blob, 1);
  }
  a.weights = {0, 0};
  Philox r = rng_for(0);
  EXPECT_EQ(choose_object(b, a, r).blob, -1);
  // Weights 1:3 between classes 1 and 3.
  a.classes = {1, 3};
  a.weights = {1, 3};
  int threes = 0;
  for (uint32_t s = 0; s < 4000; ++s) {
    Philox q = rng_for(s);
    threes += choose_object(b, a, q).class_label == 3;
  }
  EXPECT_NEAR(threes / 4000.0, 0.75, 0.03);
}

TEST(SegmentationChoice, IgnoreClassDrawsEveryBlobAlike) {
  // Class 1 has three blobs, class 2 one: by class, class 2's blob comes half the time; with
  // ignore_class a quarter.
  const std::vector<int32_t> m{1, 0, 1, 0, 1, 0, 2};
  const Blobs b = blobs_of(m, {7});
  ObjectChoiceArgs by_class, all;
  all.ignore_class = true;
  int n_class = 0, n_all = 0;
  for (uint32_t s = 0; s < 4000; ++s) {
    Philox r1 = rng_for(s), r2 = rng_for(s);
    n_class += choose_object(b, by_class, r1).blob == 3;
    const ObjectChoice c = choose_object(b, all, r2);
    n_all += c.blob == 3;
    EXPECT_EQ(c.class_label, 0);
  }
  EXPECT_NEAR(n_class / 4000.0, 0.5, 0.03);
  EXPECT_NEAR(n_all / 4000.0, 0.25, 0.03);
}

TEST(SegmentationForeground, ValueAndThreshold) {
  const std::vector<uint8_t> m{0, 3, 0, 255, 3};
  ForegroundTest v;
  v.by_value = true;
  v.value = 3;
  EXPECT_EQ(count_foreground(m.data(), 5, v), 2);
  EXPECT_EQ(find_foreground(m.data(), 5, v, 0), 1);
  EXPECT_EQ(find_foreground(m.data(), 5, v, 1), 4);
  v.value = -1;  // uint8 holds no -1: nothing matches (not 255)
  EXPECT_EQ(count_foreground(m.data(), 5, v), 0);
  v.value = 255;
  EXPECT_EQ(count_foreground(m.data(), 5, v), 1);
  ForegroundTest t;
  t.threshold = 2.5f;
  EXPECT_EQ(count_foreground(m.data(), 5, t), 3);
  EXPECT_EQ(find_foreground(m.data(), 5, t, 2), 4);
  const std::vector<float> f{0.5f, 1.0f, 1.5f, -2.0f};
  v.value = 1;
  EXPECT_EQ(count_foreground(f.data(), 4, v), 1);
  t.threshold = 0.5f;  // strictly above
  EXPECT_EQ(count_foreground(f.data(), 4, t), 2);
  // int32 is compared in float32, as DALI does: 16777217 rounds to 16777216.
  const std::vector<int32_t> big{16777217};
  t.threshold = 16777216.0f;
  EXPECT_EQ(count_foreground(big.data(), 1, t), 0);
  const std::vector<uint64_t> u{~uint64_t{0}};
  v.value = -1;
  EXPECT_EQ(count_foreground(u.data(), 1, v), 0);
}

TEST(SegmentationForeground, UniformIndexCoversTheRange) {
  std::vector<int> hits(7, 0);
  Philox r = rng_for(1);
  for (int k = 0; k < 7000; ++k) ++hits[uniform_index(r, 7)];
  for (int h : hits) EXPECT_NEAR(h, 1000, 150);
  const int64_t big = int64_t{1} << 40;
  for (int k = 0; k < 100; ++k) {
    const int64_t x = uniform_index(r, big);
    EXPECT_GE(x, 0);
    EXPECT_LT(x, big);
  }
}

TEST(SegmentationSelect, DalisDocumentedExamples) {
  const std::vector<int32_t> polys{0, 0, 3, 1, 3, 7, 2, 7, 10};
  std::vector<float> verts(20);
  for (int k = 0; k < 20; ++k) verts[k] = static_cast<float>(k);
  const int32_t one[] = {1};
  SelectPlan p = plan_select_masks(one, 1, polys.data(), 3, 10, false);
  ASSERT_EQ(p.fault, SelectFault::kNone);
  std::vector<int32_t> op(3 * p.polygons.size());
  std::vector<float> ov(2 * p.nvertices);
  select_masks(op.data(), ov.data(), p, polys.data(), verts.data(), 2 * sizeof(float));
  EXPECT_EQ(op, (std::vector<int32_t>{1, 0, 4}));
  EXPECT_EQ(ov, (std::vector<float>{6, 7, 8, 9, 10, 11, 12, 13}));

  const int32_t two[] = {2, 0};
  p = plan_select_masks(two, 2, polys.data(), 3, 10, true);
  ASSERT_EQ(p.fault, SelectFault::kNone);
  op.resize(3 * p.polygons.size());
  ov.resize(2 * p.nvertices);
  select_masks(op.data(), ov.data(), p, polys.data(), verts.data(), 2 * sizeof(float));
  EXPECT_EQ(op, (std::vector<int32_t>{0, 0, 3, 1, 3, 6}));
  EXPECT_EQ(ov, (std::vector<float>{14, 15, 16, 17, 18, 19, 0, 1, 2, 3, 4, 5}));
}

TEST(SegmentationSelect, EveryPolygonOfAMaskIsKept) {
  // Mask 0 has two polygons: both come out, in input order.
  const std::vector<int32_t> polys{0, 0, 3, 1, 3, 5, 0, 5, 7};
  const std::vector<int16_t> verts{0, 1, 2, 3, 4, 5, 6};
  const int32_t ids[] = {0};
  const SelectPlan p = plan_select_masks(ids, 1, polys.data(), 3, 7, false);
  ASSERT_EQ(p.fault, SelectFault::kNone);
  std::vector<int32_t> op(3 * p.polygons.size());
  std::vector<int16_t> ov(p.nvertices);
  select_masks(op.data(), ov.data(), p, polys.data(), verts.data(), sizeof(int16_t));
  EXPECT_EQ(op, (std::vector<int32_t>{0, 0, 3, 0, 3, 5}));
  EXPECT_EQ(ov, (std::vector<int16_t>{0, 1, 2, 5, 6}));
}

TEST(SegmentationSelect, FaultsInDalisOrder) {
  const std::vector<int32_t> polys{0, 0, 3, 1, 3, 12, 2, 5, 3};
  const int32_t dup[] = {0, 4, 0};
  SelectPlan p = plan_select_masks(dup, 3, polys.data(), 3, 10, false);
  EXPECT_EQ(p.fault, SelectFault::kDuplicateId);
  EXPECT_EQ(p.fault_index, 2);
  const int32_t far[] = {4, 1};  // polygon 1 is checked before the missing id 4 is noticed
  p = plan_select_masks(far, 2, polys.data(), 3, 10, false);
  EXPECT_EQ(p.fault, SelectFault::kOutOfRange);
  EXPECT_EQ(p.fault_index, 1);
  const int32_t rev[] = {2};
  p = plan_select_masks(rev, 1, polys.data(), 3, 10, false);
  EXPECT_EQ(p.fault, SelectFault::kReversed);
  EXPECT_EQ(p.fault_index, 2);
  const int32_t missing[] = {0, 4};  // the bad polygons 1 and 2 are not selected: not checked
  p = plan_select_masks(missing, 2, polys.data(), 3, 10, false);
  EXPECT_EQ(p.fault, SelectFault::kMissingId);
  EXPECT_EQ(p.fault_index, 1);
  p = plan_select_masks(nullptr, 0, polys.data(), 3, 10, true);
  EXPECT_EQ(p.fault, SelectFault::kNone);
  EXPECT_TRUE(p.polygons.empty());
  EXPECT_EQ(p.nvertices, 0);
}
