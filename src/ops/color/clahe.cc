// clahe: contrast-limited adaptive histogram equalization of uint8 HWC images
// (kernels/cpu/color/histogram.h), DALI's CPU operator, which is OpenCV's CLAHE; the GPU twin
// computes the same (kernels/cuda/color_gpu.h).
#include <string>

#include "kernels/cpu/color/histogram.h"
#include "kernels/cuda/color_gpu.h"
#include "ops/generic/gpu_twin.h"
#include "pipeline/operator.h"

namespace stoker {
namespace {

class Clahe : public Operator {
 public:
  explicit Clahe(const OpSpec& spec) : Operator(spec) {
    p_.tiles_x = spec.get<int64_t>("tiles_x");
    p_.tiles_y = spec.get<int64_t>("tiles_y");
    p_.clip_limit = spec.get<double>("clip_limit");
    p_.luma_only = spec.get<bool>("luma_only");
    const int64_t bins = spec.get<int64_t>("bins");
    if (bins < 2 || (bins & (bins - 1)) != 0)
      spec.arg_error("bins", "must be a power of 2 (e.g. 256), got " + std::to_string(bins) + ".");
  }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const std::string& l = in.layout();
    if (!(l == "HWC" || (l.empty() && in.ndim() == 3)))
      fail(ErrorKind::kInvalidArgument,
           std::string("input 0 must have layout HWC, got ") +
               (l.empty() ? "no layout with " + std::to_string(in.ndim()) + " dimensions"
                          : "'" + l + "'") +
               ". Give grayscale images a channel axis (fn.expand_dims(..., axes=[2], "
               "new_axis_names=\"C\")) and process sequences frame by frame.");
    if (in.dtype() != DType::kUInt8)
      fail(ErrorKind::kTypeMismatch,
           std::string("input 0 must be of type UINT8, got ") + dtype_name(in.dtype()) +
               ". Convert it first, e.g. with fn.cast(..., dtype=types.UINT8).");
    for (size_t i = 0; i < in.size(); ++i) {
      const int64_t c = in.shape(i)[2];
      if (c != 1 && c != 3)
        fail(ErrorKind::kInvalidArgument,
             "input 0 must have 1 (grayscale) or 3 (RGB) channels, but sample " +
                 std::to_string(i) + " has shape " + to_string(in.shape(i)) + ".");
    }
    return {OutputDesc{DType::kUInt8, in.layout(), in.shapes()}};
  }

  // The GPU twin: setup() as on the CPU, then the batch in four launches.
  void run_gpu(Workspace& ws, const std::vector<OutputDesc>& descs) {
    require_device_input(ws);
    const Batch& in = ws.input(0);
    ws.outputs.assign(1, allocate_device_batch(ws, descs[0].dtype, descs[0].shapes, descs[0].layout));
    Batch& out = ws.outputs[0];
    std::vector<kernels::cuda::ClaheJob> jobs(in.size());
    for (size_t k = 0; k < in.size(); ++k) {
      const Shape& s = in.shape(k);
      jobs[k] = {static_cast<const uint8_t*>(in[k].data), static_cast<uint8_t*>(out[k].data), s[0],
                 s[1], s[2]};
    }
    kernels::cuda::clahe_gpu(ws, jobs, p_.tiles_x, p_.tiles_y, p_.clip_limit, p_.luma_only);
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const Batch& in = ws.input(0);
    const Shape& s = in.shape(i);
    kernels::clahe(ImageView<uint8_t>(ws.output(0).data<uint8_t>(i), s[0], s[1], s[2]),
                   ImageView<const uint8_t>(in.data<uint8_t>(i), s[0], s[1], s[2]), p_);
  }

 private:
  kernels::ClaheParams p_;
};

}  // namespace

STOKER_REGISTER_OP_NAMED(clahe, "clahe") {
  schema
      .doc("Contrast Limited Adaptive Histogram Equalization (CLAHE) of uint8 HWC images with 1 "
           "(grayscale) or 3 (RGB) channels, as OpenCV's CLAHE computes it.\n\n"
           "The image is divided into tiles_y x tiles_x tiles (extended down and right by "
           "mirroring where its size is not a multiple of the grid); each tile's histogram is "
           "clipped at clip_limit * tile_area / 256 (at least 1), the excess spread over all "
           "levels, and its cumulative count becomes the tile's lookup table. Each pixel blends "
           "the tables of the four nearest tiles bilinearly.\n\n"
           "For RGB images with luma_only=True (the default) CLAHE is applied to the L channel of "
           "CIE Lab and the image converted back to RGB (the channels must be in RGB order); "
           "with luma_only=False each channel is equalized on its own. stoker's Lab conversion "
           "uses the exact formulas, so luma_only results may differ from OpenCV's (and DALI's) "
           "by a few levels; the other modes are bit-exact.")
      .inputs(1, 1, {"input"})
      .outputs(1)
      .input_layouts({"HWC"})
      .arg({.name = "tiles_x", .type = ArgType::kInt,
            .doc = "Number of tiles along the image width (>= 1).", .min = 1})
      .arg({.name = "tiles_y", .type = ArgType::kInt,
            .doc = "Number of tiles along the image height (>= 1).", .min = 1})
      .arg({.name = "clip_limit", .type = ArgType::kFloat,
            .doc = "Relative clip limit: a tile's histogram is clipped at clip_limit * "
                   "(tile_area / 256), at least 1. 0 or less: no clipping (plain adaptive "
                   "equalization). Typical values: 1.5 to 4."})
      .arg({.name = "luma_only", .type = ArgType::kBool, .default_value = true,
            .doc = "For RGB inputs, apply CLAHE to the luminance (the L of CIE Lab) only; "
                   "False: to each channel on its own."})
      .arg({.name = "bins", .type = ArgType::kInt, .default_value = int64_t{256},
            .doc = "Number of histogram bins; must be a power of 2. The CPU operator, like "
                   "DALI's (OpenCV's), always uses 256 bins for uint8 images."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<Clahe>(s); })
      STOKER_GPU_TWIN(Clahe);
}

}  // namespace stoker
