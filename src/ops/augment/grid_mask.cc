// grid_mask: GridMask (https://arxiv.org/abs/2001.04086) as DALI does it: black squares of
// ratio * tile pixels repeating every tile pixels in x and y, the grid rotated by `angle` about
// the origin and then shifted. Deterministic; the GPU twin repeats the CPU's float operations.
#include <cmath>
#include <cstdio>
#include <string>

#include "kernels/cpu/augment/augment.h"
#include "kernels/cuda/augment_gpu.h"
#include "ops/generic/gpu_twin.h"
#include "pipeline/operator.h"

namespace stoker {
namespace {

std::string num(double v) {
  char b[32];
  snprintf(b, sizeof(b), "%g", v);
  return b;
}

class GridMaskOp : public Operator {
 public:
  explicit GridMaskOp(const OpSpec& spec) : Operator(spec) {}

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const std::string& l = in.layout();
    const int nd = in.ndim();
    if (!((l == "HWC" || l.empty()) && nd == 3) && !((l == "HW" || l.empty()) && nd == 2))
      fail(ErrorKind::kInvalidArgument,
           spec_.display_name() + ": input 0 must be images with layout HWC (or HW), got layout '" +
               l + "' with " + std::to_string(nd) + " dimensions. Transpose channel-first data "
               "first (fn.transpose(..., perm=[1, 2, 0])).");
    if (in.dtype() == DType::kBool || in.dtype() == DType::kFloat16)
      fail(ErrorKind::kTypeMismatch,
           spec_.display_name() + ": input 0 has type " + dtype_name(in.dtype()) +
               ", which grid_mask does not take. Supported types: uint8, int8, uint16, int16, "
               "uint32, int32, uint64, int64, float32, float64; cast the input first (fn.cast).");
    return {OutputDesc{in.dtype(), in.layout(), in.shapes()}};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const Batch& in = ws.input(0);
    Batch& out = ws.output(0);
    const Shape& s = in.shape(i);
    const kernels::GridMask g = params(ws, i);
    const int64_t h = s[0], w = s[1], c = s.size() == 3 ? s[2] : 1;
    visit_dtype(in.dtype(), [&](auto t) {
      using T = decltype(t);
      if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, float16>) {
        fail(ErrorKind::kInternal, "grid_mask: unexpected element type");
      } else {
        kernels::grid_mask(ImageView<T>(out.data<T>(i), h, w, c),
                           ImageView<const T>(in.data<T>(i), h, w, c), g);
      }
    });
  }

  // The GPU twin: the same parameters, turned into the CPU kernel's float constants on the host,
  // one launch for the batch (kernels/cuda/augment_gpu.h).
  void run_gpu(Workspace& ws, const std::vector<OutputDesc>& descs) {
    require_device_input(ws);
    const Batch& in = ws.input(0);
    ws.outputs.assign(1, allocate_device_batch(ws, descs[0].dtype, descs[0].shapes, descs[0].layout));
    Batch& out = ws.outputs[0];
    std::vector<kernels::cuda::GridMaskJob> jobs(in.size());
    for (size_t k = 0; k < in.size(); ++k) {
      const Shape& s = in.shape(k);
      const kernels::GridMask g = params(ws, static_cast<int64_t>(k));
      kernels::cuda::GridMaskJob& j = jobs[k];
      j.in = in[k].data;
      j.out = out[k].data;
      j.h = s[0];
      j.w = s[1];
      j.channels = s.size() == 3 ? s[2] : 1;
      // kernels::grid_mask's constants, computed as it computes them.
      const float tile = static_cast<float>(g.tile);
      j.ca = static_cast<float>(std::cos(static_cast<double>(g.angle))) / tile;
      j.sa = static_cast<float>(std::sin(static_cast<double>(g.angle))) / tile;
      j.sx = g.shift_x / tile;
      j.sy = g.shift_y / tile;
      j.ratio = g.ratio;
    }
    kernels::cuda::grid_mask_gpu(ws, in.dtype(), jobs);
  }

 private:
  // Sample i's grid, checked.
  kernels::GridMask params(const Workspace& ws, int64_t i) const {
    kernels::GridMask g;
    double tile = ws.scalar_arg("tile", i, 100);
    if (!(tile >= 1) || tile != std::floor(tile) || tile > 2147483647.0)
      spec_.arg_error("tile", "must be a positive integer, got " + num(tile) + " for sample " +
                                  std::to_string(i) + ".");
    g.tile = static_cast<int64_t>(tile);
    auto finite = [&](const char* name, double fallback) {
      double v = ws.scalar_arg(name, i, fallback);
      if (!std::isfinite(v))
        spec_.arg_error(name, "must be a finite number, got " + num(v) + " for sample " +
                                  std::to_string(i) + ".");
      return static_cast<float>(v);
    };
    g.ratio = finite("ratio", 0.5);
    g.angle = finite("angle", 0.0);
    g.shift_x = finite("shift_x", 0.0);
    g.shift_y = finite("shift_y", 0.0);
    return g;
  }
};

}  // namespace

STOKER_REGISTER_OP_NAMED(grid_mask, "grid_mask") {
  schema.doc("Performs the gridmask augmentation (https://arxiv.org/abs/2001.04086): zeroes out "
             "pixels of an image in a grid-like fashion. The grid consists of squares repeating in "
             "x and y directions, with the same spacing in both directions; it can be rotated "
             "around the origin and shifted.")
      .inputs(1, 1, {"input"}).outputs(1).input_layouts({"HWC", "HW"})
      .arg({.name = "tile", .type = ArgType::kInt, .default_value = int64_t{100},
            .doc = "The length of a single tile, which is equal to width of black squares plus the "
                   "spacing between them.",
            .tensor = true, .min = 1})
      .arg({.name = "ratio", .type = ArgType::kFloat, .default_value = 0.5,
            .doc = "The ratio between black square width and tile width.", .tensor = true})
      .arg({.name = "angle", .type = ArgType::kFloat, .default_value = 0.0,
            .doc = "Angle, in radians, by which the grid is rotated.", .tensor = true})
      .arg({.name = "shift_x", .type = ArgType::kFloat, .default_value = 0.0,
            .doc = "The x component of the translation vector, applied after rotation.", .tensor = true})
      .arg({.name = "shift_y", .type = ArgType::kFloat, .default_value = 0.0,
            .doc = "The y component of the translation vector, applied after rotation.", .tensor = true})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<GridMaskOp>(s); })
      STOKER_GPU_TWIN(GridMaskOp);
}

}  // namespace stoker
