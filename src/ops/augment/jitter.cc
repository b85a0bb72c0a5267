// jitter: every pixel moved by a random whole-pixel amount within nDegree, as DALI's GPU-only
// jitter does; here on the CPU, drawn from the counter-based stream of (seed, operator instance,
// iteration, sample), so a seed gives the same output whatever num_threads is. The GPU twin
// draws the same numbers (kernels/cuda/augment_gpu.h).
#include <algorithm>
#include <string>
#include <vector>

#include "kernels/cpu/augment/augment.h"
#include "kernels/cuda/augment_gpu.h"
#include "ops/generic/gpu_twin.h"
#include "ops/warp/warp_common.h"

namespace stoker {
namespace {

class JitterOp : public Operator {
 public:
  explicit JitterOp(const OpSpec& spec) : Operator(spec) {
    degree_ = spec.get<int64_t>("nDegree");
    fill_ = spec.get<double>("fill_value");
    // Whole-pixel moves sample pixel centres, where NN and LINEAR agree.
    (void)warp_ops::warp_interp(spec, static_cast<double>(spec.get<int64_t>("interp_type")));
  }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    std::string layout = warp_ops::image_layout(spec_, in, true);
    if (in.dtype() == DType::kBool || in.dtype() == DType::kFloat16)
      fail(ErrorKind::kTypeMismatch,
           spec_.display_name() + ": input 0 has type " + dtype_name(in.dtype()) +
               ", which jitter does not take. Supported types: uint8, int8, uint16, int16, "
               "uint32, int32, uint64, int64, float32, float64; cast the input first (fn.cast).");
    apply_.assign(in.size(), true);
    for (size_t i = 0; i < in.size(); ++i)
      apply_[i] = ws.scalar_arg("mask", static_cast<int64_t>(i), 1) != 0;
    return {OutputDesc{in.dtype(), layout, in.shapes()}};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const Batch& in = ws.input(0);
    Batch& out = ws.output(0);
    warp_ops::ImageDims d = warp_ops::image_dims(in.shape(i));
    Philox rng = ws.rng(i);
    visit_dtype(in.dtype(), [&](auto t) {
      using T = decltype(t);
      if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, float16>) {
        fail(ErrorKind::kInternal, "jitter: unexpected element type");
      } else {
        const T* src = in.data<T>(i);
        T* dst = out.data<T>(i);
        if (!apply_[i]) {
          std::copy(src, src + volume(in.shape(i)), dst);
          return;
        }
        for (int64_t f = 0; f < d.frames; ++f)
          kernels::jitter(warp_ops::frame_view(dst, d, f), warp_ops::frame_view(src, d, f),
                          degree_, fill_, rng);
      }
    });
  }

  // The GPU twin: the same streams and offsets, two launches for the batch
  // (kernels/cuda/augment_gpu.h).
  void run_gpu(Workspace& ws, const std::vector<OutputDesc>& descs) {
    require_device_input(ws);
    const Batch& in = ws.input(0);
    ws.outputs.assign(1, allocate_device_batch(ws, descs[0].dtype, descs[0].shapes, descs[0].layout));
    Batch& out = ws.outputs[0];
    std::vector<kernels::cuda::JitterJob> jobs(in.size());
    for (size_t k = 0; k < in.size(); ++k) {
      const warp_ops::ImageDims d = warp_ops::image_dims(in.shape(k));
      kernels::cuda::JitterJob& j = jobs[k];
      j.in = in[k].data;
      j.out = out[k].data;
      j.frames = d.frames;
      j.h = d.height;
      j.w = d.width;
      j.channels = d.channels;
      // Workspace::rng()'s stream.
      j.key = rng_key(ws.spec->seed, static_cast<uint64_t>(ws.spec->instance));
      j.iteration = static_cast<uint64_t>(ws.iteration);
      j.sample = static_cast<uint32_t>(ws.origins ? (*ws.origins)[k] : static_cast<int64_t>(k));
      j.degree = degree_;
      j.apply = apply_[k];
      j.fill = fill_;
    }
    kernels::cuda::jitter_gpu(ws, in.dtype(), jobs);
  }

 private:
  int64_t degree_ = 2;
  double fill_ = 0;
  std::vector<bool> apply_;
};

}  // namespace

STOKER_REGISTER_OP_NAMED(jitter, "jitter") {
  schema.doc("Performs a random Jitter augmentation: each output pixel (all its channels) is read "
             "from the input moved by a random whole number of pixels in x and y, each drawn "
             "uniformly from the nDegree values -(nDegree // 2) ... nDegree - 1 - nDegree // 2 (as "
             "DALI draws them). Pixels read from outside the image take fill_value. Sequences "
             "(FHWC) draw anew for every frame.")
      .inputs(1, 1, {"input"}).outputs(1).input_layouts({"HWC", "FHWC"}).random()
      .arg({.name = "nDegree", .type = ArgType::kInt, .default_value = int64_t{2},
            .doc = "Each pixel is moved by a random amount in the [-nDegree/2, nDegree/2] range "
                   "(nDegree distinct values; 0 or 1 leaves the image as it is).",
            .min = 0, .max = 65535})
      .arg({.name = "fill_value", .type = ArgType::kFloat, .default_value = 0.0,
            .doc = "Color value that is used for padding (rounded and saturated to the input's type)."})
      .arg({.name = "interp_type", .type = ArgType::kInterpType, .default_value = int64_t{0},
            .doc = "Type of interpolation used: INTERP_NN or INTERP_LINEAR (the moves are whole "
                   "pixels, so both give the same result)."})
      .arg({.name = "mask", .type = ArgType::kInt, .default_value = int64_t{1},
            .doc = "Determines whether to apply this augmentation to the input image: 1 applies "
                   "it, 0 passes the input through.",
            .tensor = true, .min = 0, .max = 1})
      .arg({.name = "seed", .type = ArgType::kInt, .default_value = int64_t{-1},
            .doc = "Random seed; -1 takes it from the pipeline's seed and this operator's place in "
                   "the graph."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<JitterOp>(s); })
      STOKER_GPU_TWIN(JitterOp);
}

}  // namespace stoker
