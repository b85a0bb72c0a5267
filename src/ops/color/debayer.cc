// debayer (and its legacy name experimental.debayer): demosaicing of single-channel Bayer
// mosaics into RGB (kernels/cpu/color/debayer.h), bit-exact with DALI's CPU operator, which
// calls OpenCV's cvtColor. The GPU twin computes the same (kernels/cuda/color_gpu.h); DALI's GPU
// operator calls NPP instead ('default_npp', its GPU default), which stoker's GPU backend takes
// as the bilinear algorithm: one result whichever device runs it.
#include <array>
#include <cmath>
#include <string>

#include "kernels/cpu/color/debayer.h"
#include "kernels/cuda/color_gpu.h"
#include "ops/generic/gpu_twin.h"
#include "pipeline/operator.h"

namespace stoker {
namespace {

class Debayer : public Operator {
 public:
  explicit Debayer(const OpSpec& spec) : Operator(spec) {
    const std::string a = spec.has("algorithm") ? spec.get<std::string>("algorithm") : "bilinear_ocv";
    if (a == "bilinear_ocv") {
      alg_ = kernels::DebayerAlgorithm::kBilinear;
    } else if (a == "gray_ocv") {
      alg_ = kernels::DebayerAlgorithm::kGray;
    } else if (a == "default_npp") {
      if (spec.backend != Backend::kGPU)
        spec.arg_error("algorithm", "'default_npp' is the GPU operator's algorithm; on the CPU "
                                    "use 'bilinear_ocv' (the default) or 'gray_ocv'.");
      alg_ = kernels::DebayerAlgorithm::kBilinear;  // (stoker's GPU twin: the CPU's bilinear)
    } else {  // edgeaware_ocv, vng_ocv
      spec.arg_error("algorithm", "'" + a + "' is not implemented by stoker yet; use "
                                  "'bilinear_ocv' (the default) or 'gray_ocv'.");
    }
  }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    std::string l = in.layout();
    if (l.empty()) l = in.ndim() == 2 ? "HW" : in.ndim() == 3 ? "HWC" : "";
    if (l != "HW" && l != "HWC" && l != "FHW" && l != "FHWC")
      fail(ErrorKind::kInvalidArgument,
           std::string("input 0 must have layout HW, HWC, FHW or FHWC, got ") +
               (in.layout().empty() ? "no layout with " + std::to_string(in.ndim()) + " dimensions"
                                    : "'" + in.layout() + "'") + ".");
    if (in.dtype() != DType::kUInt8 && in.dtype() != DType::kUInt16)
      fail(ErrorKind::kTypeMismatch,
           std::string("input 0 must be of type UINT8 or UINT16, got ") + dtype_name(in.dtype()) + ".");
    seq_ = l[0] == 'F';
    const size_t b = seq_ ? 1 : 0;
    const bool has_c = l.back() == 'C';
    const int64_t out_c = alg_ == kernels::DebayerAlgorithm::kGray ? 1 : 3;
    std::vector<Shape> shapes(in.size());
    blue_.assign(in.size(), {0, 0});
    for (size_t k = 0; k < in.size(); ++k) {
      const Shape& s = in.shape(k);
      const std::string who = "sample " + std::to_string(k) +
                              (in[k].source.empty() ? "" : " ('" + in[k].source + "')");
      if (has_c && s.back() != 1)
        fail(ErrorKind::kInvalidArgument,
             who + " has shape " + to_string(s) + ", that is " + std::to_string(s.back()) +
                 " channels, but a Bayer mosaic has 1. For sequences of mosaics set the "
                 "layout to 'FHW'.");
      const int64_t h = s[b], w = s[b + 1];
      if (h % 2 != 0 || w % 2 != 0)
        fail(ErrorKind::kInvalidArgument,
             who + " is " + std::to_string(h) + " x " + std::to_string(w) +
                 ", but the height and width of a Bayer mosaic must be even. Crop it first.");
      std::vector<double> bp = ws.list_arg("blue_position", static_cast<int64_t>(k));
      if (bp.size() == 1) bp.push_back(bp[0]);
      if (bp.size() != 2 || std::isnan(bp[0]) || std::isnan(bp[1]) ||
          (bp[0] != 0 && bp[0] != 1) || (bp[1] != 0 && bp[1] != 1)) {
        std::string got;
        for (double v : bp) got += (got.empty() ? "" : ", ") + std::to_string(static_cast<long long>(v));
        fail(ErrorKind::kInvalidArgument,
             who + ": argument 'blue_position' must be (y, x) with y and x 0 or 1, the place of "
                   "blue in the 2x2 tile ((0, 0): BGGR, (0, 1): GBRG, (1, 0): GRBG, (1, 1): "
                   "RGGB), got (" + got + ").");
      }
      blue_[k] = {static_cast<int>(bp[0]), static_cast<int>(bp[1])};
      shapes[k] = seq_ ? Shape{s[0], h, w, out_c} : Shape{h, w, out_c};
    }
    return {OutputDesc{in.dtype(), seq_ ? "FHWC" : "HWC", shapes}};
  }

  // The GPU twin: setup() as on the CPU, then one launch for the batch.
  void run_gpu(Workspace& ws, const std::vector<OutputDesc>& descs) {
    require_device_input(ws);
    const Batch& in = ws.input(0);
    ws.outputs.assign(1, allocate_device_batch(ws, descs[0].dtype, descs[0].shapes, descs[0].layout));
    Batch& out = ws.outputs[0];
    std::vector<kernels::cuda::DebayerJob> jobs(in.size());
    const size_t b = seq_ ? 1 : 0;
    for (size_t k = 0; k < in.size(); ++k) {
      const Shape& s = in.shape(k);
      kernels::cuda::DebayerJob& j = jobs[k];
      j.in = in[k].data;
      j.out = out[k].data;
      j.frames = seq_ ? s[0] : 1;
      j.h = s[b];
      j.w = s[b + 1];
      j.blue_y = blue_[k][0];
      j.blue_x = blue_[k][1];
    }
    kernels::cuda::debayer_gpu(ws, in.dtype(), alg_ == kernels::DebayerAlgorithm::kGray, jobs);
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const Batch& in = ws.input(0);
    const Shape& s = in.shape(i);
    const size_t b = seq_ ? 1 : 0;
    const int64_t frames = seq_ ? s[0] : 1, h = s[b], w = s[b + 1];
    const int64_t out_c = alg_ == kernels::DebayerAlgorithm::kGray ? 1 : 3;
    auto go = [&](auto* out, const auto* src) {
      for (int64_t f = 0; f < frames; ++f)
        kernels::debayer(out + f * h * w * out_c, src + f * h * w, h, w, blue_[i][0], blue_[i][1], alg_);
    };
    if (in.dtype() == DType::kUInt8)
      go(ws.output(0).data<uint8_t>(i), in.data<uint8_t>(i));
    else
      go(ws.output(0).data<uint16_t>(i), in.data<uint16_t>(i));
  }

 private:
  kernels::DebayerAlgorithm alg_ = kernels::DebayerAlgorithm::kBilinear;
  bool seq_ = false;
  std::vector<std::array<int, 2>> blue_;
};

void define(OpSchema& schema, bool legacy) {
  std::string doc =
      "Performs image demosaicing/debayering.\n\n"
      "Converts single-channel images (HW, or HWC with 1 channel; FHW / FHWC for sequences) of "
      "uint8_t or uint16_t holding a Bayer mosaic to RGB, as OpenCV's cvtColor does it. The "
      "height and width must be even. The output is HWC (FHWC for sequences) of the input type.";
  if (legacy) doc = "Legacy alias for :meth:`debayer` (deprecated; use fn.debayer).\n\n" + doc;
  schema.doc(doc)
      .inputs(1, 1, {"input"})
      .outputs(1)
      .input_layouts({"HW", "HWC", "FHW", "FHWC"})
      .arg({.name = "blue_position", .type = ArgType::kIntList,
            .doc = "The position (y, x) of blue in the 2x2 Bayer tile that starts at the second "
                   "row and column of the sensor (OpenCV's convention): (0, 0) BG/BGGR, (0, 1) "
                   "GB/GBRG, (1, 0) GR/GRBG, (1, 1) RG/RGGB. One value is used for both. May be a "
                   "per-sample tensor.",
            .tensor = true, .min = 0, .max = 1, .list_min = 1, .list_max = 2})
      .arg({.name = "algorithm", .type = ArgType::kString, .optional = true,
            .doc = "How missing colours are inferred: 'bilinear_ocv' (the default; bilinear "
                   "interpolation) or 'gray_ocv' (a 1-channel gray image, from the same "
                   "neighbourhoods), on the CPU and the GPU alike. 'edgeaware_ocv' and 'vng_ocv' "
                   "(DALI's other CPU algorithms) are not implemented yet. 'default_npp' (DALI's "
                   "GPU algorithm, NPP's) is accepted on the GPU and computed as 'bilinear_ocv'.",
            .choices = {"bilinear_ocv", "edgeaware_ocv", "vng_ocv", "gray_ocv", "default_npp"}})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<Debayer>(s); })
      STOKER_GPU_TWIN(Debayer);
}

}  // namespace

STOKER_REGISTER_OP_NAMED(debayer, "debayer") { define(schema, false); }
STOKER_REGISTER_OP_NAMED(experimental_debayer, "experimental.debayer") { define(schema, true); }

}  // namespace stoker
