// The arithmetic of three detection operators, in DALI's float32 operations and order where
// that decides the result: ssd_random_crop's window search (SSD's IoU choices), roi_random_crop's
// range of window starts, and bbox_rotate's boxes carried through a rotation of their image.
#pragma once
#include <cstdint>
#include <vector>

#include "core/random.h"
#include "kernels/cpu/detection/crop_boxes.h"

namespace stoker {
namespace kernels {

// ---- ssd_random_crop
// One round draws one of SSD's 7 choices: no crop, a minimum IoU of 0.1, 0.3, 0.5, 0.7 or 0.9,
// or no constraint. "No crop" keeps the image and every box. Otherwise up to num_attempts
// windows are drawn, width and height uniform in [0.3, 1) of the image's (width / height in
// [0.5, 2], else the attempt is spent), the corner uniform where the window fits; a window is
// taken when its IoU with every box reaches the minimum and it holds the centre of at least one
// box (on its edges included). Rounds repeat until a window is taken or "no crop" is drawn.
// A sample without boxes therefore always keeps its whole image.
struct SsdCropResult {
  bool cropped = false;
  float min_iou = 0;            // the minimum IoU of the choice that was taken (-1: none)
  // The window in pixels of the H x W image: columns [x0, x1), rows [y0, y1); x1 > x0, y1 > y0
  // (the whole image when not cropped).
  int64_t x0 = 0, y0 = 0, x1 = 0, y1 = 0;
  std::vector<int32_t> kept;    // indices of the boxes kept, ascending
  std::vector<BoxNd> boxes;     // those boxes relative to the pixel window, clipped to [0, 1]
};
// `boxes`: n 2-D boxes, relative to the image (ltrb in [0, 1]).
SsdCropResult ssd_random_crop(const BoxNd* boxes, int64_t n, int64_t height, int64_t width,
                              int64_t num_attempts, Philox& rng);

// ---- roi_random_crop
// The range [lo, hi] of starts of a window of `crop` along one axis for a region of interest
// [roi_start, roi_start + roi_extent): windows that hold the whole ROI when it is smaller than
// the window, windows inside the ROI when it is larger; with `extent` >= 0 (the input's size)
// also inside [0, extent). A ROI as large as the window fixes the start (lo == hi == roi_start).
struct StartRange {
  int64_t lo = 0, hi = 0;
};
StartRange roi_start_range(int64_t roi_start, int64_t roi_extent, int64_t crop, int64_t extent);

// ---- bbox_rotate
enum class BoxRotateMode {
  kExpand,   // the rotated box's bounding box: holds the whole rotated box
  kHalfway,  // half the growth of kExpand taken back on each side
  kFixed,    // the original width and height (swapped past 45 degrees), about the same centre
};

struct BoxRotateArgs {
  float angle = 0;              // radians, counter-clockwise on screen (y points down)
  bool ltrb = true;             // "xyXY"; false: "xyWH"
  bool normalized = true;       // boxes relative to the image (else pixels)
  BoxRotateMode mode = BoxRotateMode::kExpand;
  float remove_threshold = 0.1f;
  float in_w = 1, in_h = 1;     // the image the boxes belong to, pixels
  float out_w = 1, out_h = 1;   // the canvas after rotation, pixels
};

// Rotates n boxes (4 floats each, layout and scale of `a`) about the image's centre onto the
// canvas' centre, turns each into the axis-aligned box of `a.mode`, clips it to the canvas and
// keeps it when the fraction of its area left after clipping is at least remove_threshold (a
// box of no area: when clipping leaves it as it was, or remove_threshold is 0). out receives
// the kept boxes (at most n * 4 floats) in the input's layout and scale; returns their indices.
std::vector<int32_t> rotate_boxes(float* out, const float* in, int64_t n, const BoxRotateArgs& a);

}  // namespace kernels
}  // namespace stoker
