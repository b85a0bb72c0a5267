#include "kernels/cpu/detection/crops_rotate.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "kernels/cpu/detection/boxes.h"

namespace stoker {
namespace kernels {

// ---- ssd_random_crop

namespace {

// The choices of one round, as SSD's paper lists them; the last is "no crop".
constexpr float kSsdMinIou[] = {-1.0f, 0.1f, 0.3f, 0.5f, 0.7f, 0.9f};
constexpr uint32_t kSsdChoices = 7;

// [p0, p1) of an axis of `size` pixels for the relative span [lo, hi], at least one pixel.
void pixel_span(double lo, double hi, int64_t size, int64_t* p0, int64_t* p1) {
  int64_t a = std::llround(lo * static_cast<double>(size));
  int64_t b = std::llround(hi * static_cast<double>(size));
  a = std::clamp<int64_t>(a, 0, size);
  b = std::clamp<int64_t>(b, 0, size);
  if (b <= a) {  // a window of a fraction of a pixel (images a few pixels wide)
    b = std::min(a + 1, size);
    a = b - 1;
  }
  *p0 = a;
  *p1 = b;
}

}  // namespace

SsdCropResult ssd_random_crop(const BoxNd* boxes, int64_t n, int64_t height, int64_t width,
                              int64_t num_attempts, Philox& rng) {
  SsdCropResult r;
  r.x1 = width;
  r.y1 = height;
  auto keep_all = [&] {
    r.cropped = false;
    r.min_iou = 0;
    r.x0 = r.y0 = 0;
    r.x1 = width;
    r.y1 = height;
    r.kept.resize(n);
    r.boxes.assign(boxes, boxes + n);
    for (int64_t i = 0; i < n; ++i) r.kept[i] = static_cast<int32_t>(i);
    return r;
  };
  // Without boxes no window keeps one: every round fails until "no crop" comes.
  if (n == 0 || height <= 0 || width <= 0) return keep_all();
  std::vector<int32_t> kept;
  for (;;) {
    const uint32_t choice = rng.below(kSsdChoices);
    if (choice == kSsdChoices - 1) return keep_all();
    const float min_iou = kSsdMinIou[choice];
    for (int64_t attempt = 0; attempt < num_attempts; ++attempt) {
      const float w = rng.uniform(0.3f, 1.0f);
      const float h = rng.uniform(0.3f, 1.0f);
      if (w / h < 0.5f || w / h > 2.0f) continue;
      const double left = rng.uniform(0.0f, 1.0f - w);
      const double top = rng.uniform(0.0f, 1.0f - h);
      const double right = left + w, bottom = top + h;
      const float crop[4] = {static_cast<float>(left), static_cast<float>(top),
                             static_cast<float>(right), static_cast<float>(bottom)};
      bool fail = false;
      for (int64_t i = 0; i < n && !fail; ++i) {
        const float box[4] = {boxes[i].lo[0], boxes[i].lo[1], boxes[i].hi[0], boxes[i].hi[1]};
        fail = box_iou(box, crop) < min_iou;
      }
      if (fail) continue;
      kept.clear();
      for (int64_t i = 0; i < n; ++i) {
        const double xc = 0.5 * (boxes[i].lo[0] + boxes[i].hi[0]);
        const double yc = 0.5 * (boxes[i].lo[1] + boxes[i].hi[1]);
        if (xc >= left && xc <= right && yc >= top && yc <= bottom)
          kept.push_back(static_cast<int32_t>(i));
      }
      if (kept.empty()) continue;
      r.cropped = true;
      r.min_iou = min_iou;
      pixel_span(left, right, width, &r.x0, &r.x1);
      pixel_span(top, bottom, height, &r.y0, &r.y1);
      // The boxes relative to the pixels actually cut, so that they match the image out.
      BoxNd window;
      window.lo[0] = static_cast<float>(static_cast<double>(r.x0) / static_cast<double>(width));
      window.hi[0] = static_cast<float>(static_cast<double>(r.x1) / static_cast<double>(width));
      window.lo[1] = static_cast<float>(static_cast<double>(r.y0) / static_cast<double>(height));
      window.hi[1] = static_cast<float>(static_cast<double>(r.y1) / static_cast<double>(height));
      r.kept = kept;
      r.boxes.clear();
      for (int32_t i : kept) r.boxes.push_back(remap_box(boxes[i], window, 2));
      return r;
    }
  }
}

// ---- roi_random_crop

StartRange roi_start_range(int64_t roi_start, int64_t roi_extent, int64_t crop, int64_t extent) {
  if (roi_extent == crop) return {roi_start, roi_start};
  StartRange r{roi_start, roi_start + roi_extent - crop};
  if (r.lo > r.hi) std::swap(r.lo, r.hi);
  if (extent >= 0) {
    r.lo = std::max<int64_t>(0, r.lo);
    r.hi = std::min<int64_t>(extent - crop, r.hi);
  }
  return r;
}

// ---- bbox_rotate

std::vector<int32_t> rotate_boxes(float* out, const float* in, int64_t n, const BoxRotateArgs& a) {
  const float cos_a = std::cos(a.angle), sin_a = std::sin(a.angle);
  const float half_in_w = a.in_w / 2, half_in_h = a.in_h / 2;
  const float half_out_w = a.out_w / 2, half_out_h = a.out_h / 2;
  std::vector<int32_t> kept;
  kept.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const float* b = in + 4 * i;
    const float x0 = b[0], y0 = b[1];
    const float x1 = a.ltrb ? b[2] : b[0] + b[2], y1 = a.ltrb ? b[3] : b[1] + b[3];
    // The four corners about the image's centre, in pixels.
    float cx[4] = {x0, x1, x0, x1}, cy[4] = {y0, y0, y1, y1};
    for (int k = 0; k < 4; ++k) {
      if (a.normalized) {
        cx[k] = (cx[k] - 0.5f) * a.in_w;
        cy[k] = (cy[k] - 0.5f) * a.in_h;
      } else {
        cx[k] = cx[k] - half_in_w;
        cy[k] = cy[k] - half_in_h;
      }
    }
    const float old_w = cx[1] - cx[0], old_h = cy[2] - cy[0];
    // y points down, so this turns the corners counter-clockwise on screen.
    for (int k = 0; k < 4; ++k) {
      const float x = cx[k], y = cy[k];
      cx[k] = x * cos_a + y * sin_a + half_out_w;
      cy[k] = -x * sin_a + y * cos_a + half_out_h;
    }
    float l = *std::min_element(cx, cx + 4), r = *std::max_element(cx, cx + 4);
    float t = *std::min_element(cy, cy + 4), bt = *std::max_element(cy, cy + 4);
    if (a.mode != BoxRotateMode::kExpand) {
      const float new_w = r - l, new_h = bt - t;
      float dw, dh;
      if ((old_w < old_h) != (new_w < new_h)) {  // turned past 45 degrees: the sides swap
        dw = (new_w - old_h) * 0.5f;
        dh = (new_h - old_w) * 0.5f;
      } else {
        dw = (new_w - old_w) * 0.5f;
        dh = (new_h - old_h) * 0.5f;
      }
      if (a.mode == BoxRotateMode::kHalfway) {
        dw *= 0.5f;
        dh *= 0.5f;
      }
      l += dw;
      t += dh;
      r -= dw;
      bt -= dh;
    }
    const float old_area = (r - l) * (bt - t);
    const float cl = std::clamp(l, 0.0f, a.out_w), ct = std::clamp(t, 0.0f, a.out_h);
    const float cr = std::clamp(r, 0.0f, a.out_w), cb = std::clamp(bt, 0.0f, a.out_h);
    const float new_area = (cr - cl) * (cb - ct);
    float remain;
    if (old_area > 0) {
      remain = new_area / old_area;
    } else {  // a box of no area: all of it is left, or none
      remain = (cl == l && ct == t && cr == r && cb == bt) ? 1.0f : 0.0f;
    }
    if (!(remain >= a.remove_threshold)) continue;
    float* o = out + 4 * kept.size();
    o[0] = cl;
    o[1] = ct;
    o[2] = a.ltrb ? cr : cr - cl;
    o[3] = a.ltrb ? cb : cb - ct;
    if (a.normalized) {
      const float rw = 1.f / a.out_w, rh = 1.f / a.out_h;
      o[0] *= rw;
      o[1] *= rh;
      o[2] *= rw;
      o[3] *= rh;
    }
    kept.push_back(static_cast<int32_t>(i));
  }
  return kept;
}

}  // namespace kernels
}  // namespace stoker
