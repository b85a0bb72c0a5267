// DALI's output-size rules for fn.resize (and the operators that share its arguments:
// resize_crop_mirror, random_resized_crop's resize step, ...), as pure functions of the
// arguments and one sample's shape. No pipeline types, so the schema, the CPU and GPU operators
// and the tests all use the same code.
//
// Axes are in shape order, outer first: (H, W) for images, (D, H, W) for volumes, the order of
// DALI's `size`, `max_size`, `roi_start` and `roi_end`. resize_x is the last axis (W), resize_y
// the one before (H), resize_z the one before that (D).
//
// Arithmetic follows DALI step by step, including where it is float and where double, so sizes
// that land near .5 round the same way.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace stoker {

enum class ResizeMode : int8_t {
  kDefault,     // given extents as given; missing ones scaled by the geometric mean of the
                // given scales
  kStretch,     // given extents as given; missing ones keep the input extent
  kNotSmaller,  // keep the aspect ratio; no extent smaller than given (then capped by max_size)
  kNotLarger,   // keep the aspect ratio; no extent larger than given
};

// "default", "stretch", "not_smaller", "not_larger"; anything else throws kInvalidArgument.
ResizeMode parse_resize_mode(const std::string& name);
const char* resize_mode_name(ResizeMode mode);

// The arguments as the user gave them: an empty optional means "not given" (which differs from
// 0: DALI counts a given resize_x=0 as a way of specifying the size).
struct ResizeArgs {
  std::optional<float> resize_x, resize_y, resize_z;  // negative flips the axis
  std::optional<std::vector<float>> size;             // one value per axis or one for all; 0 = free
  std::optional<float> resize_shorter, resize_longer;
  std::optional<ResizeMode> mode;
  std::vector<float> max_size;  // empty: no limit; one value for all axes or one per axis
  bool subpixel_scale = true;
  std::optional<std::vector<float>> roi_start, roi_end;  // one value per axis or one for all
  bool roi_relative = false;
};

// Checks which arguments were given together and the lengths of the list arguments; throws
// kInvalidArgument naming the arguments. compute_resize() calls it too; an operator calls it at
// construction to fail early.
void check_resize_args(const ResizeArgs& args, int spatial_ndim);

// The mode that applies: resize_shorter -> kNotSmaller, resize_longer -> kNotLarger, else `mode`
// or kDefault.
ResizeMode effective_resize_mode(const ResizeArgs& args);

// One sample's result, per spatial axis.
struct ResizeResult {
  std::vector<int64_t> out_size;
  // Source window mapped onto the whole output, in input pixels (edges). roi_lo > roi_hi means
  // the axis is flipped. With subpixel_scale it is widened or narrowed about its centre so that
  // the scale stays the unrounded one; it may then reach past the image edges.
  std::vector<double> roi_lo, roi_hi;
};

// `in_size`: the sample's spatial extents (2 or 3 of them), in shape order.
ResizeResult compute_resize(const ResizeArgs& args, const std::vector<int64_t>& in_size);

// How a fractional extent becomes a whole one: tensor_resize's size_rounding.
enum class SizeRounding : int8_t { kRound, kTruncate, kCeil };

// DALI's sizing of one sample over any number of axes (compute_resize after it has read the
// arguments; tensor_resize): `requested` extents (0: free, negative: flip), the input windows
// [lo, hi) per axis (lo > hi flips), the mode, max_size per axis (nullptr: none); each extent is
// made whole by `rounding` (half away from 0 by default) and, with subpixel_scale, its window
// scaled about its `alignment` point (0 its start, 1 its end; nullptr: 0.5 on every axis) so
// that the scale stays the unrounded one.
ResizeResult plan_resize(std::vector<float> requested, std::vector<float> lo,
                         std::vector<float> hi, const std::vector<int64_t>& in_shape,
                         ResizeMode mode, const float* max_size, bool subpixel_scale,
                         const std::vector<float>* alignment, SizeRounding rounding);

// roi_start / roi_end of one axis of extent `extent` as the window plan_resize takes (relative
// ones scaled; a window thinner than 1e-3 widened so that it still maps somewhere).
void input_window(double start, double end, float extent, bool relative, float* lo, float* hi);

// The same for an image: in and out as (H, W), the window as y0, x0, y1, x1, which is what
// kernels::resample takes as its roi.
struct ResizeResult2D {
  int64_t out_h = 0, out_w = 0;
  double y0 = 0, x0 = 0, y1 = 0, x1 = 0;
};
ResizeResult2D compute_resize_2d(const ResizeArgs& args, int64_t in_h, int64_t in_w);

}  // namespace stoker
