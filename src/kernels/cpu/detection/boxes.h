// Box and coordinate arithmetic of the detection operators (bb_flip, coord_flip, bbox_paste,
// box_encoder) on plain float arrays, with DALI's float32 operations in DALI's order, so the
// results equal DALI's bit for bit.
#pragma once
#include <cstddef>
#include <cstdint>

namespace stoker {
namespace kernels {

// Mirrors n boxes (4 floats each, relative coordinates) in the unit square: x -> 1 - x
// horizontally, y -> 1 - y vertically; a box's two edges swap so that it stays ordered. `ltrb`:
// (left, top, right, bottom), else (x, y, width, height). xywh boxes go through their corners
// (right = x + w, then w = right - left), as DALI's do, also when nothing is flipped. In place
// (out == in) is fine.
void flip_boxes(float* out, const float* in, int64_t n, bool ltrb, bool horizontal, bool vertical);

// Reflects points (ndim = 1..3 coordinates each) about a center per coordinate: where flip[d],
// x_d -> (2 * center[d]) - x_d, both in float32; other coordinates are copied.
void flip_coords(float* out, const float* in, int64_t npoints, int ndim, const bool* flip,
                 const float* center);

// Where a box lands when its image is pasted onto a canvas `ratio` times larger (ratio >= 1) at
// relative position (paste_x, paste_y) in [0, 1]: p -> p * scale + offset, sizes -> size * scale.
struct BoxPaste {
  float scale = 1, offset_x = 0, offset_y = 0;
};
// The offsets are nudged down (one float step at a time) until scale + offset <= 1, so a box
// that reached the image's edge stays inside the canvas.
BoxPaste box_paste_params(float ratio, float paste_x, float paste_y);
void paste_boxes(float* out, const float* in, int64_t n, bool ltrb, const BoxPaste& p);

// Intersection over union of two ltrb boxes; 0 where they do not overlap (touching edges
// included). Box a's area is added to b's, then the intersection taken away.
float box_iou(const float* a, const float* b);

// SSD matching of nboxes ltrb boxes with nanchors ltrb anchors (DALI's box_encoder):
// - each anchor takes the box it overlaps most (IoU; on ties the later box) if that IoU is
//   above `criteria` (strictly);
// - each box is then forced onto the anchor it overlaps most (on ties the later anchor, so a
//   box that overlaps none takes the last anchor); where several boxes force the same anchor,
//   the last one keeps it.
// match[a] = the index of anchor a's box, or -1. `scratch` (8-byte aligned) must hold
// match_boxes_scratch_bytes(nboxes, nanchors) bytes; nboxes < 2^31.
size_t match_boxes_scratch_bytes(int64_t nboxes, int64_t nanchors);
void match_boxes(int64_t* match, const float* boxes, int64_t nboxes, const float* anchors,
                 int64_t nanchors, float criteria, void* scratch);

// How box_encoder writes matched boxes: (center x, center y, width, height), or with `offset`
// SSD's regression targets against the anchor, in xywh: ((c_box - c_anchor) / size_anchor -
// means[0..1]) / stds[0..1] and (log(size_box / size_anchor) - means[2..3]) / stds[2..3], every
// coordinate first multiplied by `scale`.
struct BoxEncoding {
  bool offset = false;
  float scale = 1;
  float means[4] = {0, 0, 0, 0};
  float stds[4] = {1, 1, 1, 1};
};
// out: nanchors x 4. Matched anchors get their box encoded; the others their own (center,
// size), or zeros with `offset`.
void encode_boxes(float* out, const int64_t* match, const float* boxes, const float* anchors,
                  int64_t nanchors, const BoxEncoding& enc);

}  // namespace kernels
}  // namespace stoker
