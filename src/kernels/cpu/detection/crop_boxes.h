// The box arithmetic of random_bbox_crop: DALI's box layouts, the overlap of a window with boxes
// (IoU or the fraction of each box inside), the rule that keeps a box in a window, boxes mapped
// into a window, and the random search for a window. Everything is float32 in DALI's order of
// operations, so that a window decides exactly what DALI's would decide for it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/random.h"

namespace stoker {
namespace kernels {

constexpr int kMaxBoxDims = 3;

// An axis-aligned box or window of 2 or 3 dimensions: its low and high corners, in (x, y, z)
// order. Boxes are relative to their image ([0, 1] on every axis); the windows of a fixed
// crop_shape also exist in pixels.
struct BoxNd {
  float lo[kMaxBoxDims] = {0, 0, 0};
  float hi[kMaxBoxDims] = {0, 0, 0};
};

// How a box's 2 * ndim numbers are stored: a permutation of "xyXY" (both corners) or "xyWH"
// (low corner and extent); "xyzXYZ" / "xyzWHD" in 3-D.
struct BoxLayout {
  int ndim = 2;
  bool extent = false;             // W, H, D: the second half is the box's size
  int pos[2 * kMaxBoxDims] = {};   // pos[k]: where coordinate k of (lo..., hi or size...) is stored
};
// false where `s` is neither form for `ndim` dimensions.
bool parse_box_layout(const std::string& s, int ndim, BoxLayout* out);
const char* default_box_layout(int ndim, bool extent);  // "xyXY", "xyWH", "xyzXYZ", "xyzWHD"

// n boxes of 2 * ndim floats <-> BoxNd. With an extent layout, hi = lo + size on reading and
// size = hi - lo on writing (so a box read and written back may move by a rounding step, as
// in DALI).
void read_boxes(BoxNd* out, const float* in, int64_t n, const BoxLayout& layout);
void write_boxes(float* out, const BoxNd* in, int64_t n, const BoxLayout& layout);

// What is wrong with a box, if anything: a coordinate that is NaN or outside [0, 1], or a high
// corner below the low one. `axis` gets the axis at fault.
enum class BoxFault { kNone, kOutside, kInverted };
BoxFault check_box(const BoxNd& b, int ndim, int* axis);

float box_volume(const BoxNd& b, int ndim);
// The volume two boxes share; 0 where they do not overlap or only touch.
float intersection_volume(const BoxNd& a, const BoxNd& b, int ndim);
// Intersection over union of a window and a box (0 where they do not overlap).
float window_iou(const BoxNd& window, const BoxNd& box, int ndim);
// The fraction of the box's volume inside the window; 0 for a box of no volume.
float window_overlap(const BoxNd& window, const BoxNd& box, int ndim);

enum class OverlapMetric { kIoU, kOverlap };

// The smallest and the largest metric of the window over n boxes (0 and 0 for none).
struct MetricRange {
  float min = 0, max = 0;
};
MetricRange metric_range(const BoxNd& window, const BoxNd* boxes, int64_t n, int ndim,
                         OverlapMetric metric);

// Whether a window keeps a box. prune_threshold < 0 (DALI's default): the box's centroid is in
// the window, lo <= c < hi on every axis. Otherwise: some of the box is inside and the fraction
// inside is at least prune_threshold.
bool window_keeps_box(const BoxNd& window, const BoxNd& box, int ndim, float prune_threshold);

// The box in the window's coordinates: clipped to the window, 0 to 1 across it.
BoxNd remap_box(const BoxNd& box, const BoxNd& window, int ndim);

// The random search of random_bbox_crop for one sample.
struct CropSearchArgs {
  int ndim = 2;
  std::vector<float> thresholds{0.0f};  // one is drawn per round of num_attempts windows
  bool allow_no_crop = true;            // "no crop" is one more choice beside the thresholds
  OverlapMetric metric = OverlapMetric::kIoU;
  bool all_boxes_above_threshold = true;  // the window's metric: min over boxes, else max
  int64_t num_attempts = 1;               // windows per drawn threshold
  // The most windows drawn in all: total_num_attempts when >= 0 (then the best window so far is
  // taken), else `attempt_limit` (then the search gives up; see CropResult::gave_up).
  int64_t total_num_attempts = -1;
  int64_t attempt_limit = 1000000;
  // Random windows: each extent drawn in [scale_min, scale_max) of the image's, then fitted to
  // the aspect-ratio ranges (x/y; in 3-D x/y, x/z, y/z, one range serving all three if only
  // one is given); a range with min == max fixes that ratio.
  float scale_min = 1, scale_max = 1;
  std::vector<float> aspect_ranges{1.0f, 1.0f};  // min0, max0 (, min1, max1, min2, max2)
  // Image size in pixels (x, y, z order), where known: aspect ratios are then of pixels.
  bool has_input_shape = false;
  int64_t input_shape[kMaxBoxDims] = {1, 1, 1};
  // A fixed window size in pixels (needs input_shape): its anchor is drawn in whole pixels, and
  // the result's window is in pixels too.
  bool has_crop_shape = false;
  int64_t crop_shape[kMaxBoxDims] = {1, 1, 1};
  float prune_threshold = -1;  // see window_keeps_box
};

struct CropResult {
  enum class Kind {
    kCrop,        // a window that meets the drawn threshold and keeps a box (any, with no boxes)
    kNoCrop,      // "no crop" was drawn: the whole image, every box as it was
    kBest,        // total_num_attempts ran out: the window with the best metric seen
    kWholeImage,  // total_num_attempts ran out before any window had a valid aspect ratio
    kGaveUp,      // attempt_limit ran out (only without total_num_attempts)
  };
  Kind kind = Kind::kCrop;
  BoxNd window;              // anchor = lo, shape = hi - lo; pixels with a fixed crop_shape
  std::vector<int32_t> kept; // indices of the boxes kept, ascending
  std::vector<BoxNd> boxes;  // those boxes in the window's coordinates
  int64_t attempts = 0;      // windows drawn
  float best_metric = -1;    // the best window's metric (kBest, kGaveUp)
  float threshold = 0;       // the last threshold drawn
};

// Draws windows from `rng` until one is accepted (see CropResult::Kind). Every round draws a
// choice among the thresholds (and "no crop"), then up to num_attempts windows; a window whose
// aspect ratios fall outside the ranges counts as an attempt. A window is accepted when its
// metric is >= the threshold and it keeps at least one box; with no boxes, the first window
// of valid aspect ratio is.
CropResult find_crop(const BoxNd* boxes, int64_t n, const CropSearchArgs& args, Philox& rng);

}  // namespace kernels
}  // namespace stoker
