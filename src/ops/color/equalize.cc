// equalize (and its legacy name experimental.equalize): histogram equalization of each channel
// of each uint8 image or frame (kernels/cpu/color/histogram.h), as DALI's CPU operator does it
// with OpenCV's equalizeHist.
#include <string>

#include "kernels/cpu/color/histogram.h"
#include "kernels/cuda/filter_gpu.h"
#include "ops/generic/gpu_twin.h"
#include "pipeline/operator.h"

namespace stoker {
namespace {

const char* kLayouts = "HW, HWC, CHW, FHW, FHWC or FCHW";

class Equalize : public Operator {
 public:
  explicit Equalize(const OpSpec& spec) : Operator(spec) {}

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    layout_ = in.layout();
    if (layout_.empty()) {
      if (in.ndim() == 2) layout_ = "HW";
      else if (in.ndim() == 3) layout_ = "HWC";
      else if (in.ndim() == 4) layout_ = "FHWC";
    }
    if (layout_ != "HW" && layout_ != "HWC" && layout_ != "CHW" && layout_ != "FHW" &&
        layout_ != "FHWC" && layout_ != "FCHW")
      fail(ErrorKind::kInvalidArgument,
           std::string("input 0 must have layout ") + kLayouts + ", got " +
               (in.layout().empty() ? "no layout with " + std::to_string(in.ndim()) + " dimensions"
                                    : "'" + in.layout() + "'") + ".");
    if (in.dtype() != DType::kUInt8)
      fail(ErrorKind::kTypeMismatch,
           std::string("input 0 must be of type UINT8, got ") + dtype_name(in.dtype()) +
               ". Convert it first, e.g. with fn.cast(..., dtype=types.UINT8).");
    return {OutputDesc{DType::kUInt8, in.layout(), in.shapes()}};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const Planes g = planes(ws.input(0).shape(i));
    const uint8_t* src = ws.input(0).data<uint8_t>(i);
    uint8_t* dst = ws.output(0).data<uint8_t>(i);
    for (int64_t f = 0; f < g.frames; ++f)
      kernels::equalize_hist(dst + f * g.frame, src + f * g.frame, g.pixels, g.channels,
                             g.channel_stride, g.pixel_stride);
  }

  // The GPU twin: one job per channel of each frame (kernels/cuda/filter_gpu.h).
  void run_gpu(Workspace& ws, const std::vector<OutputDesc>& descs) {
    require_device_input(ws);
    const Batch& in = ws.input(0);
    ws.outputs.assign(1, allocate_device_batch(ws, descs[0].dtype, descs[0].shapes, descs[0].layout));
    std::vector<kernels::cuda::EqualizeJob> jobs;
    for (size_t i = 0; i < in.size(); ++i) {
      const Planes g = planes(in.shape(i));
      const uint8_t* src = static_cast<const uint8_t*>(in[i].data);
      uint8_t* dst = static_cast<uint8_t*>(ws.outputs[0][i].data);
      for (int64_t f = 0; f < g.frames; ++f)
        for (int64_t c = 0; c < g.channels; ++c) {
          const int64_t off = f * g.frame + c * g.channel_stride;
          jobs.push_back({src + off, dst + off, g.pixels, g.pixel_stride});
        }
    }
    kernels::cuda::equalize_gpu(ws, jobs);
  }

 private:
  // Where a sample's channels and pixels are: frames of `frame` bytes, each `channels` channels
  // of `pixels` pixels, channel c of pixel p at c * channel_stride + p * pixel_stride.
  struct Planes {
    int64_t frames = 1, frame = 0, channels = 1, pixels = 0, channel_stride = 1, pixel_stride = 1;
  };
  Planes planes(const Shape& s) const {
    Planes g;
    const bool seq = layout_[0] == 'F';
    g.frames = seq ? s[0] : 1;
    const size_t b = seq ? 1 : 0;  // first axis of a frame
    const bool planar = layout_.find("CHW") != std::string::npos;
    const bool has_c = layout_.find('C') != std::string::npos;
    if (planar) {
      g.channels = s[b];
      g.pixels = s[b + 1] * s[b + 2];
    } else {
      g.channels = has_c ? s[b + 2] : 1;
      g.pixels = s[b] * s[b + 1];
    }
    g.frame = g.channels * g.pixels;
    g.channel_stride = planar ? g.pixels : 1;
    g.pixel_stride = planar ? 1 : g.channels;
    return g;
  }

  std::string layout_;
};

void define(OpSchema& schema, bool legacy) {
  std::string doc =
      "Performs grayscale/per-channel histogram equalization.\n\n"
      "The supported inputs are images and videos of uint8_t type: each channel of each image "
      "(or frame) is equalized on its own, as OpenCV's equalizeHist does it (the lowest level "
      "present maps to 0, the others by their cumulative count scaled to 255, halves rounded to "
      "even; an image of one level is left unchanged).";
  if (legacy) doc = "Legacy alias for :meth:`equalize` (deprecated; use fn.equalize).\n\n" + doc;
  schema.doc(doc)
      .inputs(1, 1, {"input"})
      .outputs(1)
      .input_layouts({"HW", "HWC", "CHW", "FHW", "FHWC", "FCHW"})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<Equalize>(s); })
      STOKER_GPU_TWIN(Equalize);
}

}  // namespace

STOKER_REGISTER_OP_NAMED(equalize, "equalize") { define(schema, false); }
STOKER_REGISTER_OP_NAMED(experimental_equalize, "experimental.equalize") { define(schema, true); }

}  // namespace stoker
