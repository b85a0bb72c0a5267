#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/cpu/detection/boxes.h"

using namespace stoker;
using namespace stoker::kernels;

namespace {

// Reference IoU in double (the kernel works in float: compare within float rounding).
double iou_ref(const float* a, const float* b) {
  double l = std::max(a[0], b[0]), t = std::max(a[1], b[1]);
  double r = std::min(a[2], b[2]), btm = std::min(a[3], b[3]);
  if (r <= l || btm <= t) return 0;
  double inter = (r - l) * (btm - t);
  double ua = (double(a[2]) - a[0]) * (double(a[3]) - a[1]);
  double ub = (double(b[2]) - b[0]) * (double(b[3]) - b[1]);
  return inter / (ua + ub - inter);
}

std::vector<int64_t> match(const std::vector<float>& boxes, const std::vector<float>& anchors,
                           float criteria) {
  const int64_t nb = boxes.size() / 4, na = anchors.size() / 4;
  std::vector<int64_t> m(na);
  std::vector<unsigned char> scratch(match_boxes_scratch_bytes(nb, na) + 8);
  void* p = scratch.data() + (8 - reinterpret_cast<uintptr_t>(scratch.data()) % 8) % 8;
  match_boxes(m.data(), boxes.data(), nb, anchors.data(), na, criteria, p);
  return m;
}

}  // namespace

TEST(DetectionBoxes, FlipLtrbAndXywh) {
  const std::vector<float> ltrb{0.1f, 0.2f, 0.4f, 0.6f, 0, 0, 1, 1};
  std::vector<float> out(8);
  flip_boxes(out.data(), ltrb.data(), 2, true, true, false);
  EXPECT_EQ(out, (std::vector<float>{1 - 0.4f, 0.2f, 1 - 0.1f, 0.6f, 0, 0, 1, 1}));
  flip_boxes(out.data(), ltrb.data(), 2, true, true, true);
  EXPECT_EQ(out, (std::vector<float>{1 - 0.4f, 1 - 0.6f, 1 - 0.1f, 1 - 0.2f, 0, 0, 1, 1}));
  // xywh goes through the corners: w' = (1 - x) - (1 - (x + w)) in float.
  const std::vector<float> xywh{0.1f, 0.2f, 0.3f, 0.4f};
  flip_boxes(out.data(), xywh.data(), 1, false, true, false);
  const float right = 0.1f + 0.3f, bottom = 0.2f + 0.4f;
  EXPECT_EQ(out[0], 1.0f - right);
  EXPECT_EQ(out[2], (1.0f - 0.1f) - (1.0f - right));
  EXPECT_EQ(out[3], bottom - 0.2f);  // unflipped axis: still through the corner
  // In place, and flipping twice gives the box back (ltrb exactly).
  std::vector<float> twice = ltrb;
  flip_boxes(twice.data(), twice.data(), 2, true, true, true);
  flip_boxes(twice.data(), twice.data(), 2, true, true, true);
  for (int k = 0; k < 8; ++k) EXPECT_NEAR(twice[k], ltrb[k], 1e-7f) << k;
}

TEST(DetectionBoxes, FlipCoordsAboutCenters) {
  const std::vector<float> pts{0.1f, 0.2f, 0.3f, 0.9f, 1.0f, 0.0f};
  std::vector<float> out(6);
  const bool flip[3] = {true, false, true};
  const float center[3] = {0.5f, 0.5f, 0.25f};
  flip_coords(out.data(), pts.data(), 2, 3, flip, center);
  EXPECT_EQ(out, (std::vector<float>{1.0f - 0.1f, 0.2f, 0.5f - 0.3f, 1.0f - 0.9f, 1.0f, 0.5f}));
  const bool flip1[1] = {true};
  const float c1[1] = {0.3f};
  flip_coords(out.data(), pts.data(), 6, 1, flip1, c1);
  for (int k = 0; k < 6; ++k) EXPECT_EQ(out[k], 2.0f * 0.3f - pts[k]);
}

TEST(DetectionBoxes, PasteKeepsBoxesInsideTheCanvas) {
  BoxPaste p = box_paste_params(2.0f, 0.5f, 0.5f);
  EXPECT_EQ(p.scale, 0.5f);
  EXPECT_EQ(p.offset_x, 0.25f);
  const std::vector<float> box{0, 0, 1, 1};
  std::vector<float> out(4);
  paste_boxes(out.data(), box.data(), 1, true, p);
  EXPECT_EQ(out, (std::vector<float>{0.25f, 0.25f, 0.75f, 0.75f}));
  paste_boxes(out.data(), box.data(), 1, false, p);
  EXPECT_EQ(out, (std::vector<float>{0.25f, 0.25f, 0.5f, 0.5f}));
  // At the bottom-right corner, for ratios whose float arithmetic overshoots, the box's far
  // edge still ends at or inside 1.
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> ratio(1.0f, 20.0f);
  for (int k = 0; k < 2000; ++k) {
    BoxPaste q = box_paste_params(ratio(rng), 1.0f, 1.0f);
    paste_boxes(out.data(), box.data(), 1, true, q);
    EXPECT_LE(out[2], 1.0f);
    EXPECT_LE(out[3], 1.0f);
    EXPECT_GE(out[0], 0.0f);
  }
  BoxPaste one = box_paste_params(1.0f, 0.7f, 0.2f);
  EXPECT_EQ(one.scale, 1.0f);
  EXPECT_EQ(one.offset_x, 0.0f);
}

TEST(DetectionBoxes, IouAgainstDoubleReference) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(0, 1);
  for (int k = 0; k < 5000; ++k) {
    float a[4], b[4];
    for (float* box : {a, b}) {
      float x0 = u(rng), x1 = u(rng), y0 = u(rng), y1 = u(rng);
      box[0] = std::min(x0, x1), box[2] = std::max(x0, x1);
      box[1] = std::min(y0, y1), box[3] = std::max(y0, y1);
    }
    EXPECT_NEAR(box_iou(a, b), iou_ref(a, b), 1e-5) << k;
    EXPECT_EQ(box_iou(a, b), box_iou(b, a));
  }
  const float unit[4] = {0, 0, 1, 1}, left[4] = {0, 0, 0.5f, 1}, right[4] = {0.5f, 0, 1, 1};
  EXPECT_EQ(box_iou(unit, unit), 1.0f);
  EXPECT_EQ(box_iou(unit, left), 0.5f);
  EXPECT_EQ(box_iou(left, right), 0.0f);  // touching edges do not overlap
  const float dot[4] = {0.5f, 0.5f, 0.5f, 0.5f};
  EXPECT_EQ(box_iou(dot, unit), 0.0f);
}

TEST(DetectionBoxes, MatchThresholdAndForcedBestAnchor) {
  // Four quadrant anchors and a centre one.
  const std::vector<float> anchors{0, 0, .5f, .5f, .5f, 0, 1, .5f, 0, .5f, .5f, 1,
                                   .5f, .5f, 1, 1, .25f, .25f, .75f, .75f};
  // Box 0 sits mostly in the top-left quadrant; box 1 is small, in the bottom-right one, with
  // an IoU below any threshold but still forced onto its best anchor.
  const std::vector<float> boxes{0.05f, 0.05f, 0.5f, 0.45f, 0.8f, 0.8f, 0.9f, 0.9f};
  EXPECT_EQ(match(boxes, anchors, 0.5f), (std::vector<int64_t>{0, -1, -1, 1, -1}));
  // criteria 0: every overlap counts; the centre anchor overlaps box 0 only.
  EXPECT_EQ(match(boxes, anchors, 0.0f), (std::vector<int64_t>{0, -1, -1, 1, 0}));
  // No boxes: nothing matches.
  EXPECT_EQ(match({}, anchors, 0.5f), (std::vector<int64_t>(5, -1)));
}

TEST(DetectionBoxes, MatchTiesGoToTheLaterBoxAndAnchor) {
  // Two identical anchors: a box takes the later one.
  const std::vector<float> twins{0, 0, .5f, .5f, 0, 0, .5f, .5f};
  const std::vector<float> box{0, 0, .5f, .5f};
  EXPECT_EQ(match(box, twins, 0.5f), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(match(box, twins, 1.0f), (std::vector<int64_t>{-1, 0}));  // IoU 1 is not > 1
  // Two identical boxes: the later box wins the anchor.
  const std::vector<float> one{0, 0, .5f, .5f};
  const std::vector<float> boxes{0, 0, .5f, .5f, 0, 0, .5f, .5f};
  EXPECT_EQ(match(boxes, one, 0.5f), (std::vector<int64_t>{1}));
  // A zero-area box overlaps nothing: it is forced onto the last anchor.
  const std::vector<float> anchors3{0, 0, .5f, .5f, .5f, .5f, 1, 1, .25f, .25f, .75f, .75f};
  const std::vector<float> dot{0.1f, 0.1f, 0.1f, 0.1f};
  EXPECT_EQ(match(dot, anchors3, 0.5f), (std::vector<int64_t>{-1, -1, 0}));
}

TEST(DetectionBoxes, MatchTiesAcrossVectorLanes) {
  // Eleven equal anchors around one other: a box equal to them takes the last (index 11, after
  // the odd one at 5), and each of them takes the box.
  std::vector<float> anchors;
  for (int a = 0; a < 12; ++a) {
    if (a == 5) anchors.insert(anchors.end(), {.6f, .6f, .9f, .9f});
    else anchors.insert(anchors.end(), {.1f, .2f, .3f, .5f});
  }
  const std::vector<float> box{.1f, .2f, .3f, .5f};
  std::vector<int64_t> want(12, 0);
  want[5] = -1;
  EXPECT_EQ(match(box, anchors, 0.5f), want);
  want.assign(12, -1);
  want[11] = 0;
  EXPECT_EQ(match(box, anchors, 1.0f), want);
  // Two boxes with the same best anchor: the later keeps it; the earlier one's other ties stay.
  const std::vector<float> boxes{.1f, .2f, .3f, .5f, .1f, .2f, .3f, .5f, .6f, .6f, .9f, .9f};
  want.assign(12, 1);
  want[5] = 2;
  EXPECT_EQ(match(boxes, anchors, 0.5f), want);
}

TEST(DetectionBoxes, MatchAgainstBruteForce) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(0, 1);
  // On odd trials coordinates are multiples of 1/4: many equal boxes, equal IoUs (ties) and
  // zero areas.
  bool coarse = false;
  auto coord = [&] { return coarse ? std::round(u(rng) * 4) / 4 : u(rng); };
  auto random_boxes = [&](int n) {
    std::vector<float> v;
    for (int k = 0; k < n; ++k) {
      float x0 = coord(), x1 = coord(), y0 = coord(), y1 = coord();
      v.insert(v.end(), {std::min(x0, x1), std::min(y0, y1), std::max(x0, x1), std::max(y0, y1)});
    }
    return v;
  };
  for (int trial = 0; trial < 200; ++trial) {
    coarse = trial % 2 == 1;
    const int nb = trial % 7, na = 1 + (trial * 7) % 37;
    std::vector<float> boxes = random_boxes(nb), anchors = random_boxes(na);
    const float criteria = 0.1f * (trial % 6);
    // The IoU matrix with each box's best anchor set to 2, then each anchor's best box (the
    // definition, written the long way).
    std::vector<std::vector<float>> iou(nb, std::vector<float>(na));
    for (int b = 0; b < nb; ++b) {
      int best = 0;
      for (int a = 0; a < na; ++a) {
        iou[b][a] = box_iou(&boxes[4 * b], &anchors[4 * a]);
        if (iou[b][a] >= iou[b][best]) best = a;
      }
      iou[b][best] = 2;
    }
    std::vector<int64_t> want(na, -1);
    for (int a = 0; a < na && nb > 0; ++a) {
      int best = 0;
      for (int b = 1; b < nb; ++b)
        if (iou[b][a] >= iou[best][a]) best = b;
      if (iou[best][a] > criteria) want[a] = best;
    }
    EXPECT_EQ(match(boxes, anchors, criteria), want) << trial;
  }
}

TEST(DetectionBoxes, EncodeCentersSizesAndOffsets) {
  const std::vector<float> anchors{0, 0, .5f, .5f, .5f, .5f, 1, 1};
  const std::vector<float> boxes{0.1f, 0.1f, 0.4f, 0.5f};
  const std::vector<int64_t> m{0, -1};
  std::vector<float> out(8);
  encode_boxes(out.data(), m.data(), boxes.data(), anchors.data(), 2, BoxEncoding{});
  EXPECT_EQ(out, (std::vector<float>{0.5f * (0.4f + 0.1f), 0.5f * (0.5f + 0.1f), 0.4f - 0.1f,
                                     0.5f - 0.1f, 0.75f, 0.75f, 0.5f, 0.5f}));
  BoxEncoding enc;
  enc.offset = true;
  enc.scale = 300;
  const float means[4] = {0.1f, -0.2f, 0.3f, 0.0f}, stds[4] = {0.1f, 0.1f, 0.2f, 0.2f};
  for (int k = 0; k < 4; ++k) enc.means[k] = means[k], enc.stds[k] = stds[k];
  encode_boxes(out.data(), m.data(), boxes.data(), anchors.data(), 2, enc);
  const double cx = 0.25, cy = 0.3, w = 0.3, h = 0.4, acx = 0.25, acy = 0.25, aw = 0.5, ah = 0.5;
  const double want[4] = {((cx - acx) / aw - means[0]) / stds[0], ((cy - acy) / ah - means[1]) / stds[1],
                          (std::log(w / aw) - means[2]) / stds[2], (std::log(h / ah) - means[3]) / stds[3]};
  for (int k = 0; k < 4; ++k) EXPECT_NEAR(out[k], want[k], 2e-5) << k;
  for (int k = 4; k < 8; ++k) EXPECT_EQ(out[k], 0.0f) << k;  // unmatched: zeros with offset
}
