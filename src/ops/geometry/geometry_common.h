// What the geometry operators share: DALI's crop window (crop, crop_h/w/d, crop_pos_x/y/z,
// rounding), its out_of_bounds_policy, layout lookups, and the call into the slice kernel.
#pragma once
#include <string>
#include <vector>

#include "kernels/cpu/geometry/slice.h"
#include "pipeline/operator.h"

namespace stoker {
namespace geometry {

// Index of axis `name` ('H', 'W', 'C', ...) in `layout`, or -1.
inline int axis_index(const std::string& layout, char name) {
  auto p = layout.find(name);
  return p == std::string::npos ? -1 : static_cast<int>(p);
}

// "'HWC'" or "no layout" for messages.
std::string layout_repr(const std::string& layout);

// One sample of a batch read as numbers, whatever its element type (anchor / shape inputs).
std::vector<double> sample_values(const Batch& b, int64_t i);

// ---- out_of_bounds_policy and fill_values, as in DALI's slice, crop and crop_mirror_normalize
enum class OutOfBounds { kError, kPad, kTrimToShape };
void add_out_of_bounds_args(OpSchema& s);
OutOfBounds out_of_bounds_policy(const OpSpec& spec);
// Applies the policy to a window on `in_shape`: kError throws a message naming `what` and the
// fix, kTrimToShape intersects the window with the input, kPad leaves it.
void apply_out_of_bounds(OutOfBounds policy, const Shape& in_shape, std::vector<int64_t>& anchor,
                         std::vector<int64_t>& shape, const std::string& what);
// Checks that `fill` has one value or one per channel (`channels`, -1 when the layout has none).
void check_fill_values(const OpSpec& spec, const std::string& arg, const std::vector<double>& fill,
                       int64_t channels);

// ---- the crop window of crop and crop_mirror_normalize
void add_crop_args(OpSchema& s);

class CropWindow {
 public:
  explicit CropWindow(const OpSpec& spec);  // checks which arguments go together
  // Anchor and extent per axis of a sample of this shape and layout; axes not cropped keep
  // anchor 0 and their full extent.
  void compute(const Workspace& ws, int64_t sample, const Shape& shape, const std::string& layout,
               std::vector<int64_t>& anchor, std::vector<int64_t>& window) const;
  // The one argument that sets the window's extents ("crop"), or "" (crop_h, crop_w, crop_d).
  std::string size_arg() const { return has_crop_ ? "crop" : ""; }

 private:
  const OpSpec& spec_;
  bool has_crop_ = false, has_hw_ = false, has_d_ = false, truncate_ = false;
};

// ---- axes / axis_names, as DALI's geometry operators take them: layout letters, or indices
// (negative ones count from the end); the names win when both are given.
class AxisArgs {
 public:
  // `exclusive`: giving both is an error (pad, normalize) rather than the names winning.
  AxisArgs(const OpSpec& spec, bool exclusive);
  bool given() const { return !names_.empty() || !axes_.empty(); }
  // The axes for data of this layout and dimensionality; empty when neither argument was given
  // (each operator has its own default). Errors name the argument and the layout.
  std::vector<int> resolve(const std::string& layout, int nd) const;

 private:
  const OpSpec& spec_;
  std::string names_;
  std::vector<int64_t> axes_;
};

// ---- the slice window of slice and decoders.image_slice: start/rel_start with end/rel_end/
// shape/rel_shape, or the anchor and shape inputs (normalized_anchor, normalized_shape)
// `extent` names what the relative values are relative to ("input's", "image's"), `unit` what
// the absolute ones count ("elements", "pixels"); axes and axis_names are each operator's own.
void add_slice_args(OpSchema& s, const std::string& extent, const std::string& unit);

class SliceWindow {
 public:
  explicit SliceWindow(const OpSpec& spec);  // checks which arguments go together
  // The start and end of the window on each axis in `axes` (j-th value for axes[j]) of a sample
  // whose extent on axis d is extents[d]. Ends may come before starts or outside the extent:
  // callers check, each with its own rules.
  void compute(const Workspace& ws, int64_t sample, const std::vector<int>& axes,
               const std::vector<int64_t>& extents, std::vector<int64_t>& start,
               std::vector<int64_t>& end) const;

 private:
  void check_count(const std::string& what, size_t got, size_t want, int64_t sample) const;
  const OpSpec& spec_;
  bool normalized_anchor_ = true, normalized_shape_ = true;
  std::string start_arg_, end_arg_;  // the named arguments given, if any
};

// A per-sample scalar argument that must lie in [0, 1] (crop_pos_x, paste_x, ...).
double unit_arg(const Workspace& ws, const std::string& name, int64_t sample, double fallback);

// ---- the slice kernel
// Whether the kernel converts In to Out (same type, or to float, float16, uint8, int8).
bool slice_converts(DType out, DType in);
void run_slice(const Batch& in, Batch& out, int64_t sample, const kernels::SliceArgs& args);

// The operators that are one call of the slice kernel per sample (crop, slice, flip, transpose,
// pad, paste, crop_mirror_normalize): setup() computes args_ and the output shapes, and the
// sample's run is the kernel.
class SliceOperator : public Operator {
 public:
  using Operator::Operator;
  void run_sample(Workspace& ws, int64_t i, int) override {
    run_slice(ws.input(0), ws.output(0), i, args_[i]);
  }

 protected:
  std::vector<kernels::SliceArgs> args_;
};

// Their GPU twin: the CPU operator's setup (so the same arguments, checks, shapes and random
// choices), then the whole batch in one launch of the GPU slice kernel.
void run_slice_gpu(Workspace& ws, const std::vector<OutputDesc>& descs,
                   const std::vector<kernels::SliceArgs>& args);

template <class Op>
class SliceGpu final : public Op {
 public:
  using Op::Op;
  bool sample_wise() const override { return false; }
  void run_batch(Workspace& ws) override {
    std::vector<OutputDesc> descs = this->setup(ws);
    run_slice_gpu(ws, descs, this->args_);
  }
};

}  // namespace geometry
}  // namespace stoker

// Chained after a SliceOperator's CPU backend: `.backend(kCPU, ...) STOKER_SLICE_GPU_BACKEND(Op);`
#ifdef STOKER_WITH_CUDA
#define STOKER_SLICE_GPU_BACKEND(Op)                                      \
  .backend(::stoker::Backend::kGPU, [](const ::stoker::OpSpec& s) {       \
    return std::make_unique<::stoker::geometry::SliceGpu<Op>>(s);         \
  })
#else
#define STOKER_SLICE_GPU_BACKEND(Op)
#endif
