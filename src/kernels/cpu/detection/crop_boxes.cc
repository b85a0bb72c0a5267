#include "kernels/cpu/detection/crop_boxes.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace stoker {
namespace kernels {

bool parse_box_layout(const std::string& s, int ndim, BoxLayout* out) {
  if ((ndim != 2 && ndim != 3) || static_cast<int>(s.size()) != 2 * ndim) return false;
  static const char kLo[] = "xyz", kHi[] = "XYZ", kSize[] = "WHD";
  BoxLayout l;
  l.ndim = ndim;
  const bool extent = s.find_first_of(kSize) != std::string::npos;
  l.extent = extent;
  const char* second = extent ? kSize : kHi;
  for (int k = 0; k < 2 * ndim; ++k) {
    const char c = k < ndim ? kLo[k] : second[k - ndim];
    const size_t at = s.find(c);
    if (at == std::string::npos || s.find(c, at + 1) != std::string::npos) return false;
    l.pos[k] = static_cast<int>(at);
  }
  *out = l;
  return true;
}

const char* default_box_layout(int ndim, bool extent) {
  if (ndim == 3) return extent ? "xyzWHD" : "xyzXYZ";
  return extent ? "xyWH" : "xyXY";
}

void read_boxes(BoxNd* out, const float* in, int64_t n, const BoxLayout& layout) {
  const int nd = layout.ndim;
  for (int64_t i = 0; i < n; ++i) {
    const float* b = in + i * 2 * nd;
    BoxNd& o = out[i];
    for (int d = 0; d < nd; ++d) {
      o.lo[d] = b[layout.pos[d]];
      o.hi[d] = b[layout.pos[nd + d]];
      if (layout.extent) o.hi[d] += o.lo[d];
    }
  }
}

void write_boxes(float* out, const BoxNd* in, int64_t n, const BoxLayout& layout) {
  const int nd = layout.ndim;
  for (int64_t i = 0; i < n; ++i) {
    float* b = out + i * 2 * nd;
    const BoxNd& o = in[i];
    for (int d = 0; d < nd; ++d) {
      b[layout.pos[d]] = o.lo[d];
      b[layout.pos[nd + d]] = layout.extent ? o.hi[d] - o.lo[d] : o.hi[d];
    }
  }
}

BoxFault check_box(const BoxNd& b, int ndim, int* axis) {
  for (int d = 0; d < ndim; ++d) {
    // Written so that NaN fails too.
    if (!(b.lo[d] >= 0.0f && b.lo[d] <= 1.0f && b.hi[d] >= 0.0f && b.hi[d] <= 1.0f)) {
      *axis = d;
      return BoxFault::kOutside;
    }
  }
  for (int d = 0; d < ndim; ++d) {
    if (b.hi[d] < b.lo[d]) {
      *axis = d;
      return BoxFault::kInverted;
    }
  }
  return BoxFault::kNone;
}

float box_volume(const BoxNd& b, int ndim) {
  float v = b.hi[0] - b.lo[0];
  for (int d = 1; d < ndim; ++d) v *= b.hi[d] - b.lo[d];
  return v;
}

float intersection_volume(const BoxNd& a, const BoxNd& b, int ndim) {
  BoxNd c;
  for (int d = 0; d < ndim; ++d) {
    c.lo[d] = std::max(a.lo[d], b.lo[d]);
    c.hi[d] = std::min(a.hi[d], b.hi[d]);
    if (!(c.hi[d] > c.lo[d])) return 0.0f;
  }
  return box_volume(c, ndim);
}

float window_iou(const BoxNd& window, const BoxNd& box, int ndim) {
  const float inter = intersection_volume(window, box, ndim);
  if (inter == 0.0f) return 0.0f;
  const float uni = box_volume(window, ndim) + box_volume(box, ndim) - inter;
  return inter / uni;
}

float window_overlap(const BoxNd& window, const BoxNd& box, int ndim) {
  // DALI divides by the box's volume even when it is 0 (NaN, which then poisons the minimum
  // or maximum over the boxes, depending on their order); a box with no volume has none inside.
  const float vol = box_volume(box, ndim);
  if (!(vol > 0.0f)) return 0.0f;
  return intersection_volume(window, box, ndim) / vol;
}

MetricRange metric_range(const BoxNd& window, const BoxNd* boxes, int64_t n, int ndim,
                         OverlapMetric metric) {
  MetricRange r;
  for (int64_t i = 0; i < n; ++i) {
    const float m = metric == OverlapMetric::kIoU ? window_iou(window, boxes[i], ndim)
                                                  : window_overlap(window, boxes[i], ndim);
    if (i == 0) {
      r.min = r.max = m;
    } else {
      r.min = std::min(r.min, m);
      r.max = std::max(r.max, m);
    }
  }
  return r;
}

bool window_keeps_box(const BoxNd& window, const BoxNd& box, int ndim, float prune_threshold) {
  if (prune_threshold < 0.0f) {
    for (int d = 0; d < ndim; ++d) {
      const float c = 0.5f * (box.hi[d] + box.lo[d]);
      if (!(c >= window.lo[d] && c < window.hi[d])) return false;
    }
    return true;
  }
  const float inter = intersection_volume(window, box, ndim);
  return inter > 0.0f && inter / box_volume(box, ndim) >= prune_threshold;
}

BoxNd remap_box(const BoxNd& box, const BoxNd& window, int ndim) {
  BoxNd r;
  for (int d = 0; d < ndim; ++d) {
    const float extent = window.hi[d] - window.lo[d];
    const float start = (std::max(window.lo[d], box.lo[d]) - window.lo[d]) / extent;
    const float end = (std::min(window.hi[d], box.hi[d]) - window.lo[d]) / extent;
    r.lo[d] = std::clamp(start, 0.0f, 1.0f);
    r.hi[d] = std::clamp(end, 0.0f, 1.0f);
  }
  return r;
}

namespace {

// The aspect-ratio range of each pair of axes (x/y, x/z, y/z, in that order): one range
// serves every pair when only one is given; in 2-D only the first is used.
struct AspectRanges {
  float min[3], max[3];
};

AspectRanges aspect_ranges(const CropSearchArgs& a) {
  AspectRanges r;
  const int given = static_cast<int>(a.aspect_ranges.size() / 2);
  for (int k = 0; k < 3; ++k) {
    const int j = given > 0 ? k % given : 0;
    r.min[k] = given > 0 ? a.aspect_ranges[2 * j] : 1.0f;
    r.max[k] = given > 0 ? a.aspect_ranges[2 * j + 1] : 1.0f;
  }
  return r;
}

// Makes the fixed ratios (min == max) hold, pair by pair in a random order of the axes, then
// scales the window back to its largest extent (DALI's FixAspectRatios). False if no ratio is
// fixed (and nothing is drawn from rng).
bool fix_aspect_ratios(float* ext, int ndim, const AspectRanges& ar, Philox& rng) {
  float fixed[kMaxBoxDims][kMaxBoxDims] = {};
  bool need = false;
  int k = 0;
  for (int d0 = 0; d0 < ndim; ++d0) {
    for (int d1 = d0 + 1; d1 < ndim; ++d1, ++k) {
      if (ar.min[k] == ar.max[k]) {
        fixed[d0][d1] = ar.min[k];
        fixed[d1][d0] = static_cast<float>(1.0 / ar.min[k]);
        need = true;
      }
    }
  }
  if (!need) return false;
  int order[kMaxBoxDims] = {0, 1, 2};
  for (int i = ndim - 1; i > 0; --i)
    std::swap(order[i], order[rng.below(static_cast<uint32_t>(i + 1))]);
  float max_extent = 0.0f;
  for (int d = 0; d < ndim; ++d) max_extent = std::max(max_extent, ext[d]);
  for (int i0 = 0; i0 < ndim; ++i0) {
    for (int i1 = i0 + 1; i1 < ndim; ++i1) {
      const int d0 = order[i0], d1 = order[i1];
      if (fixed[d1][d0] > 0.0f) ext[d1] = ext[d0] * fixed[d1][d0];
    }
  }
  float new_max = 0.0f;
  for (int d = 0; d < ndim; ++d) new_max = std::max(new_max, ext[d]);
  for (int d = 0; d < ndim; ++d) ext[d] = max_extent * ext[d] / new_max;
  return true;
}

// Whether the window's ratios are in their ranges (inclusive), exactly as DALI tests them. A
// fixed ratio that is not a power of two (aspect_ratio=[0.75, 0.75]) then fails by a last bit
// in about 4 windows of 10, which DALI counts as attempts; doing the same keeps the share of
// "no crop" and of each threshold DALI's.
bool aspect_ratios_ok(const float* ext, int ndim, const AspectRanges& ar) {
  int k = 0;
  for (int i = 0; i < ndim; ++i) {
    for (int j = i + 1; j < ndim; ++j, ++k) {
      const float r = ext[i] / ext[j];
      if (!(r >= ar.min[k] && r <= ar.max[k])) return false;
    }
  }
  return true;
}

// One candidate window: `rel` relative to the image, `out` as the result gives it (pixels with
// a fixed crop_shape). False when its aspect ratios are out of range.
bool draw_window(const CropSearchArgs& a, const AspectRanges& ar, Philox& rng, BoxNd* rel,
                 BoxNd* out) {
  const int nd = a.ndim;
  if (a.has_crop_shape) {
    for (int d = 0; d < nd; ++d) {
      const float in = static_cast<float>(a.input_shape[d]);
      const float shape = static_cast<float>(a.crop_shape[d]);
      // A window larger than the image gets an anchor in [in - crop, 0], as in DALI.
      const int64_t diff = a.input_shape[d] - a.crop_shape[d];
      int64_t anchor = 0;
      if (diff > 0) anchor = rng.below(static_cast<uint32_t>(diff + 1));
      else if (diff < 0) anchor = diff + rng.below(static_cast<uint32_t>(1 - diff));
      const float anchor_f = static_cast<float>(anchor);
      out->lo[d] = anchor_f;
      out->hi[d] = shape + anchor_f;
      rel->lo[d] = anchor_f / in;
      rel->hi[d] = shape / in + rel->lo[d];
    }
    return true;
  }
  float shape[kMaxBoxDims], ext[kMaxBoxDims];
  float drawn_max = 0.0f;
  for (int d = 0; d < nd; ++d) {
    shape[d] = rng.uniform(a.scale_min, a.scale_max);
    drawn_max = std::max(drawn_max, shape[d]);
  }
  // With the image's size known, the ratios are of pixels.
  for (int d = 0; d < nd; ++d)
    ext[d] = a.has_input_shape ? shape[d] * static_cast<float>(a.input_shape[d]) : shape[d];
  const bool fixed = fix_aspect_ratios(ext, nd, ar, rng);
  if (!aspect_ratios_ok(ext, nd, ar)) return false;
  if (fixed) {
    float rel_max = 0.0f;
    for (int d = 0; d < nd; ++d) {
      shape[d] = a.has_input_shape ? ext[d] / static_cast<float>(a.input_shape[d]) : ext[d];
      rel_max = std::max(rel_max, shape[d]);
    }
    // Fixing the ratio in pixels keeps the largest extent in pixels, which on an image of
    // another shape can be larger than the image (DALI gives such windows: 0.9 x 1.8 of a 2:1
    // image for scaling 0.9 and a square window). Scaled down, it fits and keeps its ratio.
    if (rel_max > 1.0f && drawn_max <= 1.0f)
      for (int d = 0; d < nd; ++d) shape[d] /= rel_max;
  }
  for (int d = 0; d < nd; ++d) {
    const float anchor = rng.uniform(0.0f, 1.0f - shape[d]);
    rel->lo[d] = anchor;
    rel->hi[d] = anchor + shape[d];
  }
  *out = *rel;
  return true;
}

BoxNd whole_image(const CropSearchArgs& a) {
  BoxNd w;
  for (int d = 0; d < a.ndim; ++d) {
    w.lo[d] = 0.0f;
    w.hi[d] = a.has_crop_shape ? static_cast<float>(a.input_shape[d]) : 1.0f;
  }
  return w;
}

// The boxes `rel` keeps, mapped into it.
void keep_boxes(CropResult& r, const BoxNd& rel, const BoxNd* boxes, int64_t n,
                const CropSearchArgs& a) {
  r.kept.clear();
  r.boxes.clear();
  for (int64_t i = 0; i < n; ++i) {
    if (!window_keeps_box(rel, boxes[i], a.ndim, a.prune_threshold)) continue;
    r.kept.push_back(static_cast<int32_t>(i));
    r.boxes.push_back(remap_box(boxes[i], rel, a.ndim));
  }
}

}  // namespace

CropResult find_crop(const BoxNd* boxes, int64_t n, const CropSearchArgs& a, Philox& rng) {
  const AspectRanges ar = aspect_ranges(a);
  const uint32_t choices =
      static_cast<uint32_t>(a.thresholds.size()) + (a.allow_no_crop ? 1u : 0u);
  const int64_t limit = a.total_num_attempts >= 0 ? a.total_num_attempts : a.attempt_limit;
  CropResult r;
  bool have_best = false;
  BoxNd best_rel, best_out;
  int64_t count = 0;
  while (count < limit && choices > 0) {
    const uint32_t choice = rng.below(choices);
    if (choice == a.thresholds.size()) {
      r.kind = CropResult::Kind::kNoCrop;
      r.window = whole_image(a);
      r.attempts = count;
      for (int64_t i = 0; i < n; ++i) {
        r.kept.push_back(static_cast<int32_t>(i));
        r.boxes.push_back(boxes[i]);
      }
      return r;
    }
    r.threshold = a.thresholds[choice];
    for (int64_t k = 0; k < a.num_attempts && count < limit; ++k) {
      ++count;
      BoxNd rel, out;
      if (!draw_window(a, ar, rng, &rel, &out)) continue;
      float metric = 0.0f;
      if (n > 0) {
        const MetricRange m = metric_range(rel, boxes, n, a.ndim, a.metric);
        metric = a.all_boxes_above_threshold ? m.min : m.max;
      }
      if (n == 0 || metric >= r.threshold) {
        keep_boxes(r, rel, boxes, n, a);
        if (n == 0 || !r.kept.empty()) {
          r.kind = CropResult::Kind::kCrop;
          r.window = out;
          r.attempts = count;
          return r;
        }
      }
      if (!have_best || metric > r.best_metric) {
        have_best = true;
        r.best_metric = metric;
        best_rel = rel;
        best_out = out;
      }
    }
  }
  r.attempts = count;
  if (a.total_num_attempts < 0) {
    r.kind = CropResult::Kind::kGaveUp;
    return r;
  }
  if (!have_best) {
    r.kind = CropResult::Kind::kWholeImage;
    r.window = whole_image(a);
    r.kept.clear();
    r.boxes.clear();
    for (int64_t i = 0; i < n; ++i) {
      r.kept.push_back(static_cast<int32_t>(i));
      r.boxes.push_back(boxes[i]);
    }
    return r;
  }
  r.kind = CropResult::Kind::kBest;
  r.window = best_out;
  keep_boxes(r, best_rel, boxes, n, a);
  return r;
}

}  // namespace kernels
}  // namespace stoker
