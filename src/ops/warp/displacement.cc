// water and sphere: per-pixel displacement maps (DALI's DisplacementFilter family), sampled by
// the shared warp kernel with the fill value outside the image.
#include <algorithm>
#include <cmath>

#include "kernels/cuda/warp_gpu.h"
#include "ops/generic/gpu_twin.h"
#include "ops/warp/warp_common.h"
#include "pipeline/gpu_batch.h"

namespace stoker {
namespace {

using warp_ops::ImageDims;

enum class Displacement { kWater, kSphere };

class DisplacementOp : public Operator {
 public:
  DisplacementOp(const OpSpec& spec, Displacement kind) : Operator(spec), kind_(kind) {
    border_.clamp = false;
    border_.fill = spec.get<float>("fill_value");
    interp_ = warp_ops::warp_interp(spec, spec.get<double>("interp_type"));
    if (kind_ == Displacement::kWater) {
      water_.ampl_x = spec.get<float>("ampl_x");
      water_.ampl_y = spec.get<float>("ampl_y");
      water_.freq_x = spec.get<float>("freq_x");
      water_.freq_y = spec.get<float>("freq_y");
      water_.phase_x = spec.get<float>("phase_x");
      water_.phase_y = spec.get<float>("phase_y");
    }
  }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    std::string layout = warp_ops::image_layout(spec_, in, true);
    DType t = warp_ops::output_dtype(spec_, in.dtype());
    // Whether each sample gets the effect, read here so that both backends share it.
    apply_.assign(in.size(), true);
    for (size_t i = 0; i < in.size(); ++i)
      apply_[i] = ws.scalar_arg("mask", static_cast<int64_t>(i), 1) != 0;
    return {OutputDesc{t, layout, in.shapes()}};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const Batch& in = ws.input(0);
    Batch& out = ws.output(0);
    ImageDims d = warp_ops::image_dims(in.shape(i));
    visit_dtype(in.dtype(), [&](auto t) {
      using T = decltype(t);
      const T* src = in.data<T>(i);
      T* dst = out.data<T>(i);
      if (!apply_[i]) {  // not applied to this sample
        std::copy(src, src + volume(in.shape(i)), dst);
        return;
      }
      kernels::WarpBorder border = border_;
      border.fill = static_cast<float>(convert_sat<T>(border.fill));
      kernels::RowMap map = kind_ == Displacement::kWater ? kernels::water_row_map(water_)
                                                          : kernels::sphere_row_map(d.height, d.width);
      for (int64_t f = 0; f < d.frames; ++f)
        kernels::warp(warp_ops::frame_view(dst, d, f), warp_ops::frame_view(src, d, f), map, interp_, border);
    });
  }

  void run_gpu(Workspace& ws, const std::vector<OutputDesc>& descs) {
    require_device_input(ws);
    const Batch& in = ws.input(0);
    const OutputDesc& od = descs[0];
    STOKER_ASSERT(od.dtype == in.dtype(), "displacement: output type differs from the input's");
    ws.outputs.assign(1, allocate_device_batch(ws, od.dtype, od.shapes, od.layout));
    Batch& out = ws.outputs[0];
    float fill = 0.0f;
    visit_dtype(in.dtype(), [&](auto t) { fill = static_cast<float>(convert_sat<decltype(t)>(border_.fill)); });
    std::vector<kernels::cuda::WarpJob> jobs(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      ImageDims d = warp_ops::image_dims(in.shape(i));
      kernels::cuda::WarpJob& j = jobs[i];
      j.in = in[i].data;
      j.out = out[i].data;
      j.frames = d.frames;
      j.in_h = j.out_h = d.height;
      j.in_w = j.out_w = d.width;
      j.channels = d.channels;
      j.kind = !apply_[i] ? kernels::cuda::WarpMapKind::kCopy
               : kind_ == Displacement::kWater ? kernels::cuda::WarpMapKind::kWater
                                               : kernels::cuda::WarpMapKind::kSphere;
      j.water = water_;
      j.interp = interp_;
      j.border = border_;
      j.border.fill = fill;
    }
    kernels::cuda::warp_gpu(ws, in.dtype(), in.dtype(), jobs);
  }

 private:
  Displacement kind_;
  kernels::WarpBorder border_;
  kernels::WarpInterp interp_;
  kernels::WaterParams water_;
  std::vector<bool> apply_;
};

void displacement_args(OpSchema& s) {
  s.inputs(1, 1, {"input"}).outputs(1).input_layouts({"HWC", "FHWC"})
      .arg({.name = "mask", .type = ArgType::kInt, .default_value = int64_t{1},
            .doc = "Whether to apply this augmentation to the sample: 1 applies it, 0 passes the "
                   "input through.",
            .tensor = true, .min = 0, .max = 1})
      .arg({.name = "interp_type", .type = ArgType::kInterpType, .default_value = int64_t{0},
            .doc = "Type of interpolation used: INTERP_NN (default) or INTERP_LINEAR (DALI's "
                   "choices), or INTERP_CUBIC."})
      .arg({.name = "fill_value", .type = ArgType::kFloat, .default_value = 0.0,
            .doc = "Color value that is used for padding."});
}

}  // namespace

STOKER_REGISTER_OP_NAMED(water, "water") {
  displacement_args(schema);
  schema.doc("Performs a water augmentation, which makes the image appear to be underwater. Output "
             "pixel (x, y) reads the source at (x + ampl_x sin(freq_x y + phase_x), y + ampl_y "
             "cos(freq_y x + phase_y)), with x, y the pixel's indices, as DALI does.")
      .arg({.name = "ampl_x", .type = ArgType::kFloat, .default_value = 10.0,
            .doc = "Amplitude of the wave in the x direction."})
      .arg({.name = "ampl_y", .type = ArgType::kFloat, .default_value = 10.0,
            .doc = "Amplitude of the wave in the y direction."})
      .arg({.name = "freq_x", .type = ArgType::kFloat, .default_value = 2.0 * M_PI / 128,
            .doc = "Frequency of the wave in the x direction."})
      .arg({.name = "freq_y", .type = ArgType::kFloat, .default_value = 2.0 * M_PI / 128,
            .doc = "Frequency of the wave in the y direction."})
      .arg({.name = "phase_x", .type = ArgType::kFloat, .default_value = 0.0,
            .doc = "Phase of the wave in the x direction."})
      .arg({.name = "phase_y", .type = ArgType::kFloat, .default_value = 0.0,
            .doc = "Phase of the wave in the y direction."})
      .backend(Backend::kCPU, [](const OpSpec& s) {
        return std::make_unique<DisplacementOp>(s, Displacement::kWater);
      })
      STOKER_GPU_TWIN_WITH(DisplacementOp, Displacement::kWater);
}

STOKER_REGISTER_OP_NAMED(sphere, "sphere") {
  displacement_args(schema);
  schema.doc("Performs a sphere augmentation, which makes the image appear to be on a sphere: the "
             "point p from the centre (pixel centres at +0.5) reads the source at centre + p |p| / d, "
             "d = int(max(height, width) / 2), as DALI does.")
      .backend(Backend::kCPU, [](const OpSpec& s) {
        return std::make_unique<DisplacementOp>(s, Displacement::kSphere);
      })
      STOKER_GPU_TWIN_WITH(DisplacementOp, Displacement::kSphere);
}

}  // namespace stoker
