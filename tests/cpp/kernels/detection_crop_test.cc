// random_bbox_crop's box arithmetic and window search (kernels/cpu/detection/crop_boxes.h):
// metrics against double-precision references, the keep rule and the remapping on cases worked
// out by hand, and the search's promises checked on many random draws.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/cpu/detection/crop_boxes.h"

using namespace stoker;
using namespace stoker::kernels;

namespace {

BoxNd box2(float x0, float y0, float x1, float y1) {
  BoxNd b;
  b.lo[0] = x0;
  b.lo[1] = y0;
  b.hi[0] = x1;
  b.hi[1] = y1;
  return b;
}

double inter_ref(const BoxNd& a, const BoxNd& b, int nd) {
  double v = 1;
  for (int d = 0; d < nd; ++d) {
    double lo = std::max<double>(a.lo[d], b.lo[d]), hi = std::min<double>(a.hi[d], b.hi[d]);
    if (hi <= lo) return 0;
    v *= hi - lo;
  }
  return v;
}

double vol_ref(const BoxNd& a, int nd) {
  double v = 1;
  for (int d = 0; d < nd; ++d) v *= double(a.hi[d]) - a.lo[d];
  return v;
}

BoxNd random_box(std::mt19937& g, int nd) {
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  BoxNd b;
  for (int d = 0; d < nd; ++d) {
    float p = u(g), q = u(g);
    b.lo[d] = std::min(p, q);
    b.hi[d] = std::max(p, q);
  }
  return b;
}

}  // namespace

TEST(DetectionCrop, BoxLayouts) {
  BoxLayout l;
  ASSERT_TRUE(parse_box_layout("xyXY", 2, &l));
  EXPECT_FALSE(l.extent);
  ASSERT_TRUE(parse_box_layout("YXyx", 2, &l));
  EXPECT_EQ(std::vector<int>(l.pos, l.pos + 4), (std::vector<int>{3, 2, 1, 0}));
  ASSERT_TRUE(parse_box_layout("xyWH", 2, &l));
  EXPECT_TRUE(l.extent);
  ASSERT_TRUE(parse_box_layout("zyxDHW", 3, &l));
  EXPECT_TRUE(l.extent);
  for (const char* bad : {"xyXZ", "xyXW", "xxYY", "xyX", "xyXYZ", "xyzXYZ", "abcd", ""})
    EXPECT_FALSE(parse_box_layout(bad, 2, &l)) << bad;
  EXPECT_FALSE(parse_box_layout("xyXY", 3, &l));
  EXPECT_FALSE(parse_box_layout("xyzXYD", 3, &l));
  EXPECT_STREQ(default_box_layout(2, false), "xyXY");
  EXPECT_STREQ(default_box_layout(3, true), "xyzWHD");
}

TEST(DetectionCrop, ReadWriteBoxes) {
  BoxLayout l;
  ASSERT_TRUE(parse_box_layout("yxHW", 2, &l));
  const float in[4] = {0.25f, 0.5f, 0.125f, 0.375f};  // y, x, h, w
  BoxNd b;
  read_boxes(&b, in, 1, l);
  EXPECT_EQ(b.lo[0], 0.5f);
  EXPECT_EQ(b.lo[1], 0.25f);
  EXPECT_EQ(b.hi[0], 0.5f + 0.375f);
  EXPECT_EQ(b.hi[1], 0.25f + 0.125f);
  float out[4];
  write_boxes(out, &b, 1, l);
  for (int k = 0; k < 4; ++k) EXPECT_EQ(out[k], in[k]) << k;
  // The extent goes through the corner in float, as DALI does: w' = (x + w) - x.
  const float odd[4] = {0.1f, 0.7f, 0.3f, 0.2f};
  read_boxes(&b, odd, 1, l);
  write_boxes(out, &b, 1, l);
  EXPECT_EQ(out[2], (0.1f + 0.3f) - 0.1f);
  EXPECT_EQ(out[3], (0.7f + 0.2f) - 0.7f);
}

TEST(DetectionCrop, CheckBox) {
  int axis = -1;
  EXPECT_EQ(check_box(box2(0, 0, 1, 1), 2, &axis), BoxFault::kNone);
  EXPECT_EQ(check_box(box2(0.5f, 0.5f, 0.5f, 0.5f), 2, &axis), BoxFault::kNone);  // a point
  EXPECT_EQ(check_box(box2(0.1f, 0.1f, 1.01f, 0.5f), 2, &axis), BoxFault::kOutside);
  EXPECT_EQ(axis, 0);
  EXPECT_EQ(check_box(box2(0.1f, -0.01f, 0.2f, 0.5f), 2, &axis), BoxFault::kOutside);
  EXPECT_EQ(axis, 1);
  EXPECT_EQ(check_box(box2(0.1f, std::nanf(""), 0.2f, 0.5f), 2, &axis), BoxFault::kOutside);
  EXPECT_EQ(check_box(box2(0.5f, 0.1f, 0.2f, 0.5f), 2, &axis), BoxFault::kInverted);
  EXPECT_EQ(axis, 0);
}

TEST(DetectionCrop, MetricsAgainstDoubleReference) {
  std::mt19937 g(7);
  for (int nd : {2, 3}) {
    for (int t = 0; t < 2000; ++t) {
      BoxNd a = random_box(g, nd), b = random_box(g, nd);
      const double inter = inter_ref(a, b, nd);
      EXPECT_NEAR(intersection_volume(a, b, nd), inter, 1e-6);
      const double iou = inter == 0 ? 0 : inter / (vol_ref(a, nd) + vol_ref(b, nd) - inter);
      EXPECT_NEAR(window_iou(a, b, nd), iou, 2e-5 * std::max(1.0, iou));
      if (vol_ref(b, nd) > 1e-4) {
        EXPECT_NEAR(window_overlap(a, b, nd), inter / vol_ref(b, nd), 1e-4);
      }
    }
  }
  // Touching boxes share nothing; a box of no volume has no overlap (DALI: NaN) and IoU 0.
  EXPECT_EQ(window_iou(box2(0, 0, 0.5f, 0.5f), box2(0.5f, 0, 1, 0.5f), 2), 0.0f);
  EXPECT_EQ(window_overlap(box2(0, 0, 1, 1), box2(0.3f, 0.3f, 0.3f, 0.6f), 2), 0.0f);
  EXPECT_EQ(window_iou(box2(0, 0, 1, 1), box2(0.3f, 0.3f, 0.3f, 0.6f), 2), 0.0f);
  // A box inside the window: overlap 1 exactly, IoU its share of the window.
  EXPECT_EQ(window_overlap(box2(0, 0, 1, 1), box2(0.25f, 0.25f, 0.75f, 0.75f), 2), 1.0f);
  EXPECT_EQ(window_iou(box2(0, 0, 1, 1), box2(0.25f, 0.25f, 0.75f, 0.75f), 2), 0.25f);
  // The range over several boxes.
  const BoxNd boxes[3] = {box2(0, 0, 0.5f, 0.5f), box2(0.25f, 0.25f, 0.75f, 0.75f),
                          box2(0.9f, 0.9f, 1, 1)};
  MetricRange r = metric_range(box2(0, 0, 0.5f, 0.5f), boxes, 3, 2, OverlapMetric::kOverlap);
  EXPECT_EQ(r.min, 0.0f);
  EXPECT_EQ(r.max, 1.0f);
  r = metric_range(box2(0, 0, 0.5f, 0.5f), boxes, 0, 2, OverlapMetric::kIoU);
  EXPECT_EQ(r.min, 0.0f);
  EXPECT_EQ(r.max, 0.0f);
}

TEST(DetectionCrop, KeepRule) {
  const BoxNd w = box2(0.25f, 0.25f, 0.75f, 0.75f);
  // Centroid: the window's low edge is in, its high edge out.
  EXPECT_TRUE(window_keeps_box(w, box2(0.2f, 0.2f, 0.3f, 0.3f), 2, -1));   // centre 0.25
  EXPECT_FALSE(window_keeps_box(w, box2(0.7f, 0.3f, 0.8f, 0.4f), 2, -1));  // centre x 0.75
  EXPECT_FALSE(window_keeps_box(w, box2(0.0f, 0.0f, 0.4f, 0.4f), 2, -1));  // centre 0.2
  EXPECT_TRUE(window_keeps_box(w, box2(0.5f, 0.5f, 0.5f, 0.5f), 2, -1));   // a point inside
  // Area: at least the threshold inside, and something inside.
  const BoxNd half = box2(0.5f, 0.3f, 1.0f, 0.4f);  // half of it in the window
  EXPECT_TRUE(window_keeps_box(w, half, 2, 0.5f));
  EXPECT_FALSE(window_keeps_box(w, half, 2, 0.50001f));
  EXPECT_TRUE(window_keeps_box(w, half, 2, 0.0f));
  EXPECT_FALSE(window_keeps_box(w, box2(0.75f, 0.3f, 1.0f, 0.4f), 2, 0.0f));  // touches
  EXPECT_FALSE(window_keeps_box(w, box2(0.5f, 0.3f, 0.5f, 0.4f), 2, 0.0f));   // no area
  EXPECT_TRUE(window_keeps_box(w, box2(0.3f, 0.3f, 0.7f, 0.7f), 2, 1.0f));
}

TEST(DetectionCrop, RemapClipsAndRenormalizes) {
  const BoxNd w = box2(0.25f, 0.5f, 0.75f, 1.0f);
  BoxNd r = remap_box(box2(0.0f, 0.625f, 0.5f, 0.75f), w, 2);
  EXPECT_EQ(r.lo[0], 0.0f);
  EXPECT_EQ(r.hi[0], 0.5f);
  EXPECT_EQ(r.lo[1], 0.25f);
  EXPECT_EQ(r.hi[1], 0.5f);
  r = remap_box(box2(0.3f, 0.2f, 1.0f, 0.9f), w, 2);
  EXPECT_EQ(r.lo[0], (0.3f - 0.25f) / 0.5f);
  EXPECT_EQ(r.hi[0], 1.0f);
  EXPECT_EQ(r.lo[1], 0.0f);
  EXPECT_EQ(r.hi[1], (0.9f - 0.5f) / 0.5f);
  // Windows reaching outside the image (a crop_shape larger than it): boxes stay in [0, 1].
  r = remap_box(box2(0.1f, 0.1f, 0.9f, 0.9f), box2(-0.5f, -0.5f, 1.5f, 1.5f), 2);
  EXPECT_EQ(r.lo[0], 0.3f);
  EXPECT_EQ(r.hi[1], 0.7f);
}

namespace {

Philox stream(uint32_t sample, uint64_t key = 99) { return Philox(key, 3, sample); }

}  // namespace

TEST(DetectionCrop, AcceptedWindowsMeetTheirThreshold) {
  std::mt19937 g(11);
  for (int nd : {2, 3}) {
    for (int metric = 0; metric < 2; ++metric) {
      for (bool all : {true, false}) {
        CropSearchArgs a;
        a.ndim = nd;
        a.thresholds = {0.0f, 0.1f, 0.3f, 0.5f};
        a.metric = metric ? OverlapMetric::kOverlap : OverlapMetric::kIoU;
        a.all_boxes_above_threshold = all;
        a.num_attempts = 20;
        a.scale_min = 0.3f;
        a.scale_max = 1.0f;
        a.aspect_ranges = {0.5f, 2.0f};
        for (uint32_t s = 0; s < 300; ++s) {
          std::vector<BoxNd> boxes(1 + s % 4);
          for (BoxNd& b : boxes) b = random_box(g, nd);
          Philox rng = stream(s);
          CropResult r = find_crop(boxes.data(), boxes.size(), a, rng);
          ASSERT_TRUE(r.kind == CropResult::Kind::kCrop || r.kind == CropResult::Kind::kNoCrop);
          if (r.kind == CropResult::Kind::kNoCrop) {
            ASSERT_EQ(r.kept.size(), boxes.size());
            continue;
          }
          const MetricRange m = metric_range(r.window, boxes.data(), boxes.size(), nd, a.metric);
          EXPECT_GE(all ? m.min : m.max, r.threshold);
          ASSERT_FALSE(r.kept.empty());
          size_t j = 0;
          for (size_t i = 0; i < boxes.size(); ++i) {
            const bool keep = window_keeps_box(r.window, boxes[i], nd, -1);
            if (!keep) continue;
            ASSERT_LT(j, r.kept.size());
            EXPECT_EQ(r.kept[j], static_cast<int32_t>(i));
            const BoxNd want = remap_box(boxes[i], r.window, nd);
            for (int d = 0; d < nd; ++d) {
              EXPECT_EQ(r.boxes[j].lo[d], want.lo[d]);
              EXPECT_EQ(r.boxes[j].hi[d], want.hi[d]);
            }
            ++j;
          }
          EXPECT_EQ(j, r.kept.size());
          float largest = 0;
          for (int d = 0; d < nd; ++d) {
            const float e = r.window.hi[d] - r.window.lo[d];
            largest = std::max(largest, e);
            EXPECT_GE(r.window.lo[d], 0.0f);
            EXPECT_LE(r.window.hi[d], 1.0f + 1e-6f);
          }
          EXPECT_GE(largest, 0.3f - 1e-6f);
          EXPECT_LE(largest, 1.0f);
          const float ratio = (r.window.hi[0] - r.window.lo[0]) / (r.window.hi[1] - r.window.lo[1]);
          EXPECT_GE(ratio, 0.5f - 1e-5f);
          EXPECT_LE(ratio, 2.0f + 1e-5f);
        }
      }
    }
  }
}

TEST(DetectionCrop, SameStreamSameWindow) {
  CropSearchArgs a;
  a.thresholds = {0.1f, 0.5f};
  a.scale_min = 0.3f;
  a.aspect_ranges = {0.5f, 2.0f};
  a.num_attempts = 10;
  const BoxNd boxes[2] = {box2(0.1f, 0.2f, 0.4f, 0.6f), box2(0.5f, 0.5f, 0.9f, 0.8f)};
  int differ = 0;
  for (uint32_t s = 0; s < 50; ++s) {
    Philox r1 = stream(s), r2 = stream(s), r3 = stream(s + 1);
    CropResult x = find_crop(boxes, 2, a, r1), y = find_crop(boxes, 2, a, r2);
    CropResult z = find_crop(boxes, 2, a, r3);
    EXPECT_EQ(std::memcmp(&x.window, &y.window, sizeof(BoxNd)), 0);
    EXPECT_EQ(x.kept, y.kept);
    differ += std::memcmp(&x.window, &z.window, sizeof(BoxNd)) != 0;
  }
  EXPECT_GT(differ, 30);
}

TEST(DetectionCrop, NoCropIsOneChoiceAmongTheThresholds) {
  // Every window is valid (threshold 0, a box covering the image), so each round ends at once:
  // "no crop" comes 1 time in (thresholds + 1).
  CropSearchArgs a;
  a.thresholds = {0.0f, 0.0f, 0.0f};
  a.scale_min = 0.5f;
  const BoxNd whole = box2(0, 0, 1, 1);
  int no_crop = 0;
  const int n = 20000;
  for (uint32_t s = 0; s < n; ++s) {
    Philox rng = stream(s);
    CropResult r = find_crop(&whole, 1, a, rng);
    if (r.kind == CropResult::Kind::kNoCrop) {
      ++no_crop;
      EXPECT_EQ(r.window.lo[0], 0.0f);
      EXPECT_EQ(r.window.hi[1], 1.0f);
    }
  }
  EXPECT_NEAR(no_crop / double(n), 0.25, 0.015);
  a.allow_no_crop = false;
  for (uint32_t s = 0; s < 200; ++s) {
    Philox rng = stream(s);
    EXPECT_EQ(find_crop(&whole, 1, a, rng).kind, CropResult::Kind::kCrop);
  }
}

TEST(DetectionCrop, FixedAspectRatios) {
  for (float ar : {1.0f, 0.75f, 2.0f, 1.0f / 3.0f}) {
    CropSearchArgs a;
    a.allow_no_crop = false;
    a.scale_min = 0.3f;
    a.scale_max = 0.9f;
    a.aspect_ranges = {ar, ar};
    a.total_num_attempts = 1;
    int first = 0;
    for (uint32_t s = 0; s < 500; ++s) {
      Philox rng = stream(s);
      CropResult r = find_crop(nullptr, 0, a, rng);
      // The exact test of the ratio turns away some windows of ratios that are not powers of
      // two (as DALI's does); then no window was found in one attempt: the whole image.
      if (r.kind == CropResult::Kind::kWholeImage) {
        EXPECT_EQ(r.window.hi[0], 1.0f);
        continue;
      }
      ASSERT_EQ(r.kind, CropResult::Kind::kCrop) << ar;
      ++first;
      const float w = r.window.hi[0] - r.window.lo[0], h = r.window.hi[1] - r.window.lo[1];
      EXPECT_NEAR(w / h, ar, 2e-5 * ar);
      EXPECT_LE(std::max(w, h), 0.9f + 1e-6f);
      EXPECT_GE(std::max(w, h), 0.3f - 1e-6f);
    }
    if (ar == 1.0f || ar == 2.0f) {
      EXPECT_EQ(first, 500) << ar;
    } else {
      EXPECT_GT(first, 150) << ar;
      EXPECT_LT(first, 450) << ar;
    }
  }
  // 3-D: x/y in a range, x/z and y/z fixed.
  CropSearchArgs a;
  a.ndim = 3;
  a.allow_no_crop = false;
  a.scale_min = 0.3f;
  a.aspect_ranges = {0.5f, 2.0f, 1.0f, 1.0f, 0.5f, 0.5f};
  a.total_num_attempts = 1000;
  int found = 0;
  for (uint32_t s = 0; s < 200; ++s) {
    Philox rng = stream(s);
    CropResult r = find_crop(nullptr, 0, a, rng);
    if (r.kind != CropResult::Kind::kCrop) continue;
    ++found;
    float e[3];
    for (int d = 0; d < 3; ++d) e[d] = r.window.hi[d] - r.window.lo[d];
    EXPECT_NEAR(e[0] / e[2], 1.0f, 2e-5);
    EXPECT_NEAR(e[1] / e[2], 0.5f, 2e-5);
  }
  EXPECT_EQ(found, 200);
}

TEST(DetectionCrop, AspectRatioOfPixelsStaysInsideTheImage) {
  // A 200 x 100 image, square windows in pixels, 0.9 of the image: DALI makes 0.9 x 1.8
  // windows; these are scaled down to fit, still square in pixels.
  CropSearchArgs a;
  a.allow_no_crop = false;
  a.scale_min = a.scale_max = 0.9f;
  a.has_input_shape = true;
  a.input_shape[0] = 200;
  a.input_shape[1] = 100;
  for (uint32_t s = 0; s < 200; ++s) {
    Philox rng = stream(s);
    CropResult r = find_crop(nullptr, 0, a, rng);
    const float w = r.window.hi[0] - r.window.lo[0], h = r.window.hi[1] - r.window.lo[1];
    EXPECT_NEAR(w * 200 / (h * 100), 1.0f, 1e-5);
    EXPECT_LE(h, 1.0f);
    EXPECT_GE(r.window.lo[1], 0.0f);
    EXPECT_LE(r.window.hi[1], 1.0f + 1e-6f);
  }
}

TEST(DetectionCrop, FixedCropShapeDrawsWholePixels) {
  CropSearchArgs a;
  a.allow_no_crop = false;
  a.has_input_shape = a.has_crop_shape = true;
  a.input_shape[0] = 10;
  a.input_shape[1] = 8;
  a.crop_shape[0] = 4;   // anchors 0..6
  a.crop_shape[1] = 11;  // larger than the image: anchors -3..0
  a.prune_threshold = 0;  // every window keeps the box: all anchors are accepted
  const BoxNd whole = box2(0, 0, 1, 1);
  std::vector<int> seen_x(7), seen_y(4);
  for (uint32_t s = 0; s < 2000; ++s) {
    Philox rng = stream(s);
    CropResult r = find_crop(&whole, 1, a, rng);
    ASSERT_EQ(r.kind, CropResult::Kind::kCrop);
    const float x = r.window.lo[0], y = r.window.lo[1];
    ASSERT_EQ(x, std::floor(x));
    ASSERT_GE(x, 0);
    ASSERT_LE(x, 6);
    ASSERT_GE(y, -3);
    ASSERT_LE(y, 0);
    EXPECT_EQ(r.window.hi[0] - r.window.lo[0], 4.0f);
    EXPECT_EQ(r.window.hi[1] - r.window.lo[1], 11.0f);
    seen_x[static_cast<int>(x)]++;
    seen_y[static_cast<int>(-y)]++;
    // The box, in the window: the image's part of it.
    const float x0 = x / 10.0f, x1 = 4.0f / 10.0f + x0;
    EXPECT_EQ(r.boxes[0].lo[0], (std::max(x0, 0.0f) - x0) / (x1 - x0));
  }
  for (int c : seen_x) EXPECT_NEAR(c, 2000 / 7.0, 80);
  for (int c : seen_y) EXPECT_NEAR(c, 500, 90);
}

TEST(DetectionCrop, TotalAttemptsTakeTheBestWindow) {
  // IoU 0.99 with a small box is out of reach; after 50 windows the best is taken.
  CropSearchArgs a;
  a.thresholds = {0.99f};
  a.allow_no_crop = false;
  a.scale_min = 0.2f;
  a.num_attempts = 7;
  a.total_num_attempts = 50;
  a.aspect_ranges = {0.5f, 2.0f};
  const BoxNd small = box2(0.4f, 0.4f, 0.5f, 0.5f);
  Philox rng = stream(0);
  CropResult r = find_crop(&small, 1, a, rng);
  EXPECT_EQ(r.kind, CropResult::Kind::kBest);
  EXPECT_EQ(r.attempts, 50);
  EXPECT_EQ(window_iou(r.window, small, 2), r.best_metric);
  EXPECT_GT(r.best_metric, 0.0f);
  // The best of those 50: no window of a search that stops earlier beats it.
  for (int64_t t : {1, 10, 49}) {
    a.total_num_attempts = t;
    Philox again = stream(0);
    EXPECT_LE(find_crop(&small, 1, a, again).best_metric, r.best_metric) << t;
  }
  // Without total_num_attempts the search gives up at its limit.
  a.total_num_attempts = -1;
  a.attempt_limit = 1000;
  Philox rng2 = stream(0);
  r = find_crop(&small, 1, a, rng2);
  EXPECT_EQ(r.kind, CropResult::Kind::kGaveUp);
  EXPECT_EQ(r.attempts, 1000);
  // No window of a valid aspect ratio at all: the whole image.
  a.total_num_attempts = 5;
  a.scale_min = a.scale_max = 0.5f;
  a.aspect_ranges = {2.0f, 3.0f};  // every drawn window is square
  Philox rng3 = stream(0);
  r = find_crop(&small, 1, a, rng3);
  EXPECT_EQ(r.kind, CropResult::Kind::kWholeImage);
  EXPECT_EQ(r.kept, std::vector<int32_t>{0});
}

TEST(DetectionCrop, NoBoxesTakeTheFirstWindow) {
  CropSearchArgs a;
  a.thresholds = {0.9f};
  a.allow_no_crop = false;
  a.scale_min = 0.3f;
  for (uint32_t s = 0; s < 100; ++s) {
    Philox rng = stream(s);
    CropResult r = find_crop(nullptr, 0, a, rng);
    EXPECT_EQ(r.kind, CropResult::Kind::kCrop);
    EXPECT_EQ(r.attempts, 1);
    EXPECT_TRUE(r.kept.empty());
  }
}

TEST(DetectionCrop, PruneThresholdKeepsByArea) {
  CropSearchArgs a;
  a.allow_no_crop = false;
  a.scale_min = 0.4f;
  a.scale_max = 0.6f;
  a.aspect_ranges = {0.5f, 2.0f};
  a.all_boxes_above_threshold = false;
  a.thresholds = {0.05f};
  std::mt19937 g(5);
  for (float p : {0.0f, 0.3f, 1.0f}) {
    a.prune_threshold = p;
    for (uint32_t s = 0; s < 200; ++s) {
      std::vector<BoxNd> boxes(5);
      for (BoxNd& b : boxes) b = random_box(g, 2);
      Philox rng = stream(s);
      CropResult r = find_crop(boxes.data(), boxes.size(), a, rng);
      std::vector<int32_t> want;
      for (size_t i = 0; i < boxes.size(); ++i) {
        const double in = inter_ref(r.window, boxes[i], 2), v = vol_ref(boxes[i], 2);
        const double frac = in / v;
        if (in > 0 && std::fabs(frac - p) > 1e-5 && frac >= p) want.push_back(i);
        if (in > 0 && std::fabs(frac - p) <= 1e-5) {  // on the edge: whatever float says
          if (window_keeps_box(r.window, boxes[i], 2, p)) want.push_back(i);
        }
      }
      EXPECT_EQ(r.kept, want) << p << " " << s;
    }
  }
}
