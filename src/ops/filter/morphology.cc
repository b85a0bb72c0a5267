// experimental.median_blur, experimental.erode and experimental.dilate: rank filters over a
// rectangular window (kernels/cpu/filter/morphology.h). DALI 2.4 has them on the GPU only, through
// CV-CUDA; these are their CPU versions with the same arguments and results: the median with the
// edge pixels replicated, erosion and dilation with CV-CUDA's borders, repeated `iterations` times
// with the same mask and anchor. Images (HW, HWC, CHW) and sequences of them (FHWC, FCHW); planar
// channels are filtered plane by plane. The GPU twins (kernels/cuda/augment_gpu.h) give the CPU's
// results from the same setup.
#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/repr.h"
#include "kernels/cpu/filter/morphology.h"
#include "kernels/cuda/augment_gpu.h"
#include "ops/generic/gpu_twin.h"
#include "ops/image/image_layout.h"
#include "pipeline/operator.h"

namespace stoker {
namespace {

// Larger windows (per side) are refused: the padded copy of an image grows with them.
constexpr int64_t kMaxWindow = 4095;

enum class RankKind { kMedian, kErode, kDilate };

// Where H, W and C sit in a sample of each accepted layout (c < 0: no channel axis).
struct PlaneLayout {
  int frames = -1, h = 0, w = 1, c = -1;
  bool planar = false;  // channels before H and W (CHW, FCHW)
};

kernels::FilterBorder border_for(const std::string& b) {
  if (b == "replicate") return kernels::FilterBorder::kReplicate;
  if (b == "reflect") return kernels::FilterBorder::kReflect;
  if (b == "reflect_101") return kernels::FilterBorder::kReflect101;
  if (b == "wrap") return kernels::FilterBorder::kWrap;
  return kernels::FilterBorder::kConstant;
}

class RankFilter : public Operator {
 public:
  RankFilter(const OpSpec& spec, RankKind kind) : Operator(spec), kind_(kind) {
    if (kind_ != RankKind::kMedian) {
      iterations_ = spec.get<int64_t>("iterations");
      border_ = border_for(spec.get<std::string>("border_mode"));
    }
  }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    OutputDesc d;
    d.layout = image_or_sequence_layout(spec_, in);
    d.dtype = in.dtype();
    if (d.dtype != DType::kUInt8 && d.dtype != DType::kUInt16 && d.dtype != DType::kInt16 &&
        d.dtype != DType::kFloat32)
      fail(ErrorKind::kInvalidArgument,
           spec_.display_name() + ": input 0 has type " + dtype_name(d.dtype) +
               ", but the operator takes uint8, uint16, int16 or float32 images; cast them first "
               "(fn.cast).");
    layout_ = plane_layout(d.layout);
    windows_.assign(in.size(), {});
    for (size_t i = 0; i < in.size(); ++i) windows_[i] = window_for(ws, static_cast<int64_t>(i));
    d.shapes = in.shapes();
    return {d};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const Batch& in = ws.input(0);
    Batch& out = ws.output(0);
    const Shape& s = in.shape(i);
    const int64_t frames = layout_.frames < 0 ? 1 : s[layout_.frames];
    const int64_t channels = layout_.c < 0 ? 1 : s[layout_.c];
    const int64_t h = s[layout_.h], w = s[layout_.w];
    const int64_t planes = layout_.planar ? frames * channels : frames;
    const int64_t pc = layout_.planar ? 1 : channels;  // channels of one plane
    const kernels::FilterWindow& win = windows_[i];
    visit_dtype(in.dtype(), [&](auto t) {
      using T = decltype(t);
      if constexpr (std::is_same_v<T, uint8_t> || std::is_same_v<T, uint16_t> ||
                    std::is_same_v<T, int16_t> || std::is_same_v<T, float>) {
        const T* src = in.data<T>(i);
        T* dst = out.data<T>(i);
        const int64_t plane = h * w * pc;
        for (int64_t p = 0; p < planes; ++p) {
          ImageView<T> o(dst + p * plane, h, w, pc);
          ImageView<const T> v(src + p * plane, h, w, pc);
          if (kind_ == RankKind::kMedian)
            kernels::median_blur(o, v, win.width, win.height);
          else
            kernels::morphology(o, v, kind_ == RankKind::kErode ? kernels::MorphOp::kErode : kernels::MorphOp::kDilate,
                                win, iterations_, border_);
        }
      }
    });
  }

  // The GPU twin: one job per plane, as run_sample() splits a sample (kernels/cuda/augment_gpu.h).
  void run_gpu(Workspace& ws, const std::vector<OutputDesc>& descs) {
    require_device_input(ws);
    const Batch& in = ws.input(0);
    ws.outputs.assign(1, allocate_device_batch(ws, descs[0].dtype, descs[0].shapes, descs[0].layout));
    Batch& out = ws.outputs[0];
    const size_t es = dtype_size(in.dtype());
    std::vector<kernels::cuda::RankJob> jobs;
    for (size_t i = 0; i < in.size(); ++i) {
      const Shape& s = in.shape(i);
      const int64_t frames = layout_.frames < 0 ? 1 : s[layout_.frames];
      const int64_t channels = layout_.c < 0 ? 1 : s[layout_.c];
      kernels::cuda::RankJob j;
      j.h = s[layout_.h];
      j.w = s[layout_.w];
      j.channels = layout_.planar ? 1 : channels;
      j.window = windows_[i];
      const int64_t planes = layout_.planar ? frames * channels : frames;
      const int64_t plane = j.h * j.w * j.channels;
      for (int64_t p = 0; p < planes; ++p) {
        j.in = static_cast<const char*>(in[i].data) + static_cast<size_t>(p * plane) * es;
        j.out = static_cast<char*>(out[i].data) + static_cast<size_t>(p * plane) * es;
        jobs.push_back(j);
      }
    }
    if (kind_ == RankKind::kMedian)
      kernels::cuda::median_blur_gpu(ws, in.dtype(), jobs);
    else
      kernels::cuda::morphology_gpu(ws, in.dtype(),
                                    kind_ == RankKind::kErode ? kernels::MorphOp::kErode : kernels::MorphOp::kDilate,
                                    border_, iterations_, jobs);
  }

 private:
  static PlaneLayout plane_layout(const std::string& l) {
    if (l == "HW") return {-1, 0, 1, -1, false};
    if (l == "HWC") return {-1, 0, 1, 2, false};
    if (l == "FHWC") return {0, 1, 2, 3, false};
    if (l == "CHW") return {-1, 1, 2, 0, true};
    return {0, 2, 3, 1, true};  // FCHW
  }

  // (width, height) from an argument of 1 value (square) or 2 (width, height).
  std::pair<int64_t, int64_t> size_arg(const Workspace& ws, const char* name, int64_t i,
                                       std::vector<double> fallback) const {
    std::vector<double> v = ws.list_arg(name, i, std::move(fallback));
    if (v.size() == 1) v.push_back(v[0]);
    if (v.size() != 2)
      spec_.arg_error(name, "takes 1 value or 2 (width, height), got " + std::to_string(v.size()) +
                                " for sample " + std::to_string(i) + ".");
    for (double e : v)
      if (e != std::floor(e) || !std::isfinite(e))
        spec_.arg_error(name, "must be integers, got (" + num(v[0]) + ", " + num(v[1]) + ") for sample " +
                                  std::to_string(i) + ".");
    return {static_cast<int64_t>(std::max(-1e12, std::min(1e12, v[0]))),
            static_cast<int64_t>(std::max(-1e12, std::min(1e12, v[1])))};
  }

  kernels::FilterWindow window_for(const Workspace& ws, int64_t i) const {
    const std::string where = " for sample " + std::to_string(i);
    kernels::FilterWindow win;
    if (kind_ == RankKind::kMedian) {
      auto [w, h] = size_arg(ws, "window_size", i, {3, 3});
      if (w < 1 || h < 1 || w % 2 == 0 || h % 2 == 0 || w > kMaxWindow || h > kMaxWindow)
        spec_.arg_error("window_size", "must be odd numbers from 1 to " + std::to_string(kMaxWindow) +
                                           " (width, height), got (" + std::to_string(w) + ", " +
                                           std::to_string(h) + ")" + where + ".");
      win.width = w;
      win.height = h;
      win.anchor_x = w / 2;
      win.anchor_y = h / 2;
      return win;
    }
    auto [w, h] = size_arg(ws, "mask_size", i, {3, 3});
    if (w < 1 || h < 1 || w > kMaxWindow || h > kMaxWindow)
      spec_.arg_error("mask_size", "must be from 1 to " + std::to_string(kMaxWindow) + " (width, height), got (" +
                                       std::to_string(w) + ", " + std::to_string(h) + ")" + where + ".");
    auto [ax, ay] = size_arg(ws, "anchor", i, {-1, -1});
    if (ax >= w || ay >= h)
      spec_.arg_error("anchor", "must lie inside the mask, 0 <= anchor < mask_size, or be -1 (the centre); "
                                "got (" + std::to_string(ax) + ", " + std::to_string(ay) + ") with mask_size (" +
                                    std::to_string(w) + ", " + std::to_string(h) + ")" + where + ".");
    win.width = w;
    win.height = h;
    win.anchor_x = ax < 0 ? w / 2 : ax;
    win.anchor_y = ay < 0 ? h / 2 : ay;
    return win;
  }

  RankKind kind_;
  int64_t iterations_ = 1;
  kernels::FilterBorder border_ = kernels::FilterBorder::kConstant;
  PlaneLayout layout_;
  std::vector<kernels::FilterWindow> windows_;
};

const char* kLayoutsDoc = " Images with layout HW, HWC or CHW, or sequences of them (FHWC, FCHW); "
                          "uint8, uint16, int16 or float32; the output has the input's type and shape.";

void morphology_args(OpSchema& schema) {
  schema.inputs(1, 1, {"input"})
      .outputs(1)
      .input_layouts({"HW", "HWC", "FHWC", "CHW", "FCHW"})
      .arg({.name = "mask_size", .type = ArgType::kIntList, .default_value = std::vector<int64_t>{3, 3},
            .doc = "Size of the structuring element (a rectangle): (width, height), or one value for "
                   "a square.",
            .tensor = true, .list_min = 1, .list_max = 2})
      .arg({.name = "anchor", .type = ArgType::kIntList, .default_value = std::vector<int64_t>{-1, -1},
            .doc = "The element's pixel (x, y) that sits on the output pixel, 0 <= anchor < "
                   "mask_size. The default (-1, -1) uses the element's centre (mask_size // 2).",
            .tensor = true, .list_min = 1, .list_max = 2})
      .arg({.name = "iterations", .type = ArgType::kInt, .default_value = int64_t{1},
            .doc = "Number of times to apply the operation (each time with the same mask and "
                   "anchor), typically 1.",
            .min = 1})
      .arg({.name = "border_mode", .type = ArgType::kString, .default_value = std::string("constant"),
            .doc = "How pixels outside the image are read: \"constant\" (they do not count: the "
                   "extreme of the pixels inside), \"replicate\" (aaa|abcd|ddd), \"reflect\" "
                   "(cba|abcd|dcb), \"reflect_101\" (dcb|abcd|cba) or \"wrap\" (bcd|abcd|abc).",
            .choices = {"constant", "replicate", "reflect", "reflect_101", "wrap"}});
}

}  // namespace

STOKER_REGISTER_OP_NAMED(experimental_median_blur, "experimental.median_blur") {
  schema
      .doc(std::string("Median blur: each pixel (each channel apart) becomes the median of the "
                       "window_size rectangle centred on it, with the edge pixels replicated outside "
                       "the image (as OpenCV's medianBlur and CV-CUDA's MedianBlur).") +
           kLayoutsDoc)
      .inputs(1, 1, {"input"})
      .outputs(1)
      .input_layouts({"HW", "HWC", "FHWC", "CHW", "FCHW"})
      .arg({.name = "window_size", .type = ArgType::kIntList, .default_value = std::vector<int64_t>{3, 3},
            .doc = "The size of the window over which the smoothing is performed: (width, height), "
                   "odd, or one value for a square.",
            .tensor = true, .list_min = 1, .list_max = 2})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<RankFilter>(s, RankKind::kMedian); })
      STOKER_GPU_TWIN_WITH(RankFilter, RankKind::kMedian);
}

STOKER_REGISTER_OP_NAMED(experimental_erode, "experimental.erode") {
  schema.doc(std::string("Performs an erosion operation on the input image: each pixel (each channel "
                         "apart) becomes the minimum of the mask_size rectangle placed on it at its "
                         "anchor (as OpenCV's erode with a rectangular kernel).") +
             kLayoutsDoc);
  morphology_args(schema);
  schema.backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<RankFilter>(s, RankKind::kErode); })
      STOKER_GPU_TWIN_WITH(RankFilter, RankKind::kErode);
}

STOKER_REGISTER_OP_NAMED(experimental_dilate, "experimental.dilate") {
  schema.doc(std::string("Performs a dilation operation on the input image: each pixel (each channel "
                         "apart) becomes the maximum of the mask_size rectangle placed on it at its "
                         "anchor (as OpenCV's dilate with a rectangular kernel).") +
             kLayoutsDoc);
  morphology_args(schema);
  schema.backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<RankFilter>(s, RankKind::kDilate); })
      STOKER_GPU_TWIN_WITH(RankFilter, RankKind::kDilate);
}

}  // namespace stoker
