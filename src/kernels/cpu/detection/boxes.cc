#include "kernels/cpu/detection/boxes.h"

#include <algorithm>
#include <cmath>
#include <limits>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace stoker {
namespace kernels {

void flip_boxes(float* out, const float* in, int64_t n, bool ltrb, bool horizontal, bool vertical) {
  for (int64_t i = 0; i < n; ++i, in += 4, out += 4) {
    float lo_x = in[0], lo_y = in[1], hi_x = in[2], hi_y = in[3];
    if (!ltrb) {
      hi_x = lo_x + hi_x;
      hi_y = lo_y + hi_y;
    }
    if (horizontal) {
      const float l = 1.0f - hi_x, r = 1.0f - lo_x;
      lo_x = l;
      hi_x = r;
    }
    if (vertical) {
      const float t = 1.0f - hi_y, b = 1.0f - lo_y;
      lo_y = t;
      hi_y = b;
    }
    if (!ltrb) {
      hi_x = hi_x - lo_x;
      hi_y = hi_y - lo_y;
    }
    out[0] = lo_x;
    out[1] = lo_y;
    out[2] = hi_x;
    out[3] = hi_y;
  }
}

void flip_coords(float* out, const float* in, int64_t npoints, int ndim, const bool* flip,
                 const float* center) {
  float mirror[3] = {0, 0, 0};
  for (int d = 0; d < ndim; ++d) mirror[d] = 2.0f * center[d];
  for (int64_t i = 0; i < npoints; ++i, in += ndim, out += ndim)
    for (int d = 0; d < ndim; ++d) out[d] = flip[d] ? mirror[d] - in[d] : in[d];
}

BoxPaste box_paste_params(float ratio, float paste_x, float paste_y) {
  BoxPaste p;
  p.scale = 1.0f / ratio;
  const float offset_mul = (ratio - 1.0f) / ratio;
  float offset[2] = {paste_x * offset_mul, paste_y * offset_mul};
  for (float& o : offset) {
    if (p.scale + o > 1.0f) {
      o = 1.0f - p.scale;
      while (p.scale + o > 1.0f) o = std::nextafter(o, -1.0f);
    }
  }
  p.offset_x = offset[0];
  p.offset_y = offset[1];
  return p;
}

void paste_boxes(float* out, const float* in, int64_t n, bool ltrb, const BoxPaste& p) {
  for (int64_t i = 0; i < n; ++i, in += 4, out += 4) {
    const float x0 = in[0], y0 = in[1], x1 = in[2], y1 = in[3];
    out[0] = x0 * p.scale + p.offset_x;
    out[1] = y0 * p.scale + p.offset_y;
    out[2] = ltrb ? x1 * p.scale + p.offset_x : x1 * p.scale;
    out[3] = ltrb ? y1 * p.scale + p.offset_y : y1 * p.scale;
  }
}

namespace {

inline float area(const float* b) { return (b[2] - b[0]) * (b[3] - b[1]); }

// IoU given both areas (computed once per box and anchor).
inline float iou_with_areas(const float* a, float area_a, const float* b, float area_b) {
  const float l = std::max(a[0], b[0]), t = std::max(a[1], b[1]);
  const float r = std::min(a[2], b[2]), btm = std::min(a[3], b[3]);
  if (!(r > l && btm > t)) return 0.0f;
  const float inter = (r - l) * (btm - t);
  if (inter == 0.0f) return 0.0f;
  return inter / (area_a + area_b - inter);
}

// Anchors as separate arrays of edges and areas, so that four go in one SSE register.
struct AnchorsSoA {
  const float *l, *t, *r, *b, *area;
};

// One box against all anchors, one row of the IoU matrix, with iou_with_areas' float
// operations (no fused multiply-adds, min/max equal to std::min/max for the finite values
// callers pass): anchors whose best IoU so far is <= this box's take it (so later boxes win
// ties); returns the box's best anchor, the last of equals.
int64_t match_row(const float* box, float box_area, const AnchorsSoA& an, int64_t n,
                  float* best_iou, int32_t* best_box, int32_t b) {
  float best = -1.0f;
  int64_t best_a = 0;
  int64_t a = 0;
#if defined(__SSE2__)
  const __m128 bl = _mm_set1_ps(box[0]), bt = _mm_set1_ps(box[1]);
  const __m128 br = _mm_set1_ps(box[2]), bb = _mm_set1_ps(box[3]);
  const __m128 barea = _mm_set1_ps(box_area), zero = _mm_setzero_ps();
  const __m128i bi = _mm_set1_epi32(b), four = _mm_set1_epi32(4);
  __m128i idx = _mm_setr_epi32(0, 1, 2, 3), lane_best_idx = _mm_setzero_si128();
  __m128 lane_best = _mm_set1_ps(-1.0f);
  for (; a + 4 <= n; a += 4) {
    const __m128 l = _mm_max_ps(bl, _mm_loadu_ps(an.l + a)), t = _mm_max_ps(bt, _mm_loadu_ps(an.t + a));
    const __m128 r = _mm_min_ps(br, _mm_loadu_ps(an.r + a)), btm = _mm_min_ps(bb, _mm_loadu_ps(an.b + a));
    const __m128 inter = _mm_mul_ps(_mm_sub_ps(r, l), _mm_sub_ps(btm, t));
    const __m128 uni = _mm_sub_ps(_mm_add_ps(barea, _mm_loadu_ps(an.area + a)), inter);
    const __m128 overlap = _mm_and_ps(_mm_and_ps(_mm_cmpgt_ps(r, l), _mm_cmpgt_ps(btm, t)),
                                      _mm_cmpneq_ps(inter, zero));
    const __m128 iou = _mm_and_ps(overlap, _mm_div_ps(inter, uni));
    // Per anchor: keep this box where it is at least as good.
    const __m128 old = _mm_loadu_ps(best_iou + a);
    const __m128 better = _mm_cmpge_ps(iou, old);
    _mm_storeu_ps(best_iou + a, _mm_or_ps(_mm_and_ps(better, iou), _mm_andnot_ps(better, old)));
    const __m128i old_box = _mm_loadu_si128(reinterpret_cast<const __m128i*>(best_box + a));
    const __m128i take = _mm_castps_si128(better);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(best_box + a),
                     _mm_or_si128(_mm_and_si128(take, bi), _mm_andnot_si128(take, old_box)));
    // Per lane: the last anchor with the highest IoU.
    const __m128 lane_better = _mm_cmpge_ps(iou, lane_best);
    lane_best = _mm_or_ps(_mm_and_ps(lane_better, iou), _mm_andnot_ps(lane_better, lane_best));
    const __m128i take_idx = _mm_castps_si128(lane_better);
    lane_best_idx = _mm_or_si128(_mm_and_si128(take_idx, idx), _mm_andnot_si128(take_idx, lane_best_idx));
    idx = _mm_add_epi32(idx, four);
  }
  if (a > 0) {
    alignas(16) float v[4];
    alignas(16) int32_t k[4];
    _mm_store_ps(v, lane_best);
    _mm_store_si128(reinterpret_cast<__m128i*>(k), lane_best_idx);
    for (int j = 0; j < 4; ++j)
      if (v[j] > best || (v[j] == best && k[j] > best_a)) best = v[j], best_a = k[j];
  }
#endif
  for (; a < n; ++a) {
    const float aa[4] = {an.l[a], an.t[a], an.r[a], an.b[a]};
    const float iou = iou_with_areas(box, box_area, aa, an.area[a]);
    if (iou >= best_iou[a]) best_iou[a] = iou, best_box[a] = b;
    if (iou >= best) best = iou, best_a = a;
  }
  return best_a;
}

}  // namespace

float box_iou(const float* a, const float* b) { return iou_with_areas(a, area(a), b, area(b)); }

size_t match_boxes_scratch_bytes(int64_t nboxes, int64_t nanchors) {
  return static_cast<size_t>(nboxes) * sizeof(int64_t) + static_cast<size_t>(nanchors) * 7 * 4;
}

void match_boxes(int64_t* match, const float* boxes, int64_t nboxes, const float* anchors,
                 int64_t nanchors, float criteria, void* scratch) {
  // Scratch: each box's best anchor (int64), then per anchor (4 bytes each): its edges and area
  // as separate arrays, so that the IoU loop vectorises, and the best IoU seen so far and its
  // box.
  int64_t* best_anchor = static_cast<int64_t*>(scratch);
  float* al = reinterpret_cast<float*>(best_anchor + nboxes);
  float *at = al + nanchors, *ar = at + nanchors, *ab = ar + nanchors;
  float *aarea = ab + nanchors, *best_iou = aarea + nanchors;
  int32_t* best_box = reinterpret_cast<int32_t*>(best_iou + nanchors);
  for (int64_t a = 0; a < nanchors; ++a) {
    const float* an = anchors + 4 * a;
    al[a] = an[0], at[a] = an[1], ar[a] = an[2], ab[a] = an[3];
    aarea[a] = area(an);
    best_iou[a] = -std::numeric_limits<float>::infinity();
    best_box[a] = -1;
  }
  if (nanchors == 0) return;
  const AnchorsSoA soa{al, at, ar, ab, aarea};
  for (int64_t b = 0; b < nboxes; ++b) {
    const float* box = boxes + 4 * b;
    best_anchor[b] = match_row(box, area(box), soa, nanchors, best_iou, best_box,
                               static_cast<int32_t>(b));
  }
  for (int64_t a = 0; a < nanchors; ++a) match[a] = best_iou[a] > criteria ? best_box[a] : -1;
  // Each box keeps its best anchor whatever the IoU (the later box where two want the same).
  for (int64_t b = 0; b < nboxes; ++b) match[best_anchor[b]] = b;
}

void encode_boxes(float* out, const int64_t* match, const float* boxes, const float* anchors,
                  int64_t nanchors, const BoxEncoding& enc) {
  for (int64_t a = 0; a < nanchors; ++a, out += 4) {
    const float* anchor = anchors + 4 * a;
    if (match[a] < 0) {
      if (enc.offset) {
        std::fill(out, out + 4, 0.0f);
      } else {
        out[0] = 0.5f * (anchor[2] + anchor[0]);
        out[1] = 0.5f * (anchor[3] + anchor[1]);
        out[2] = anchor[2] - anchor[0];
        out[3] = anchor[3] - anchor[1];
      }
      continue;
    }
    const float* box = boxes + 4 * match[a];
    float bc[2] = {0.5f * (box[2] + box[0]), 0.5f * (box[3] + box[1])};
    float bs[2] = {box[2] - box[0], box[3] - box[1]};
    if (!enc.offset) {
      out[0] = bc[0];
      out[1] = bc[1];
      out[2] = bs[0];
      out[3] = bs[1];
      continue;
    }
    float ac[2] = {0.5f * (anchor[2] + anchor[0]), 0.5f * (anchor[3] + anchor[1])};
    float as[2] = {anchor[2] - anchor[0], anchor[3] - anchor[1]};
    for (int d = 0; d < 2; ++d) {
      bc[d] *= enc.scale;
      bs[d] *= enc.scale;
      ac[d] *= enc.scale;
      as[d] *= enc.scale;
    }
    for (int d = 0; d < 2; ++d) {
      out[d] = ((bc[d] - ac[d]) / as[d] - enc.means[d]) / enc.stds[d];
      out[2 + d] = (std::log(bs[d] / as[d]) - enc.means[2 + d]) / enc.stds[2 + d];
    }
  }
}

}  // namespace kernels
}  // namespace stoker
