// gaussian_blur: separable Gaussian convolution over the data axes of any layout (HW, HWC,
// DHWC, CHW, FHWC ...): leading F / C axes are independent planes, a trailing C is interleaved
// channels, and the rest (1 to 3 axes) are blurred.
#include <cmath>
#include <cstdio>

#include "core/repr.h"
#include "core/convert.h"
#include "kernels/cpu/warp/gaussian_blur.h"
#include "kernels/cuda/blur_gpu.h"
#include "ops/generic/gpu_twin.h"
#include "pipeline/gpu_batch.h"
#include "pipeline/operator.h"

namespace stoker {
namespace {

constexpr int kMaxWindow = 100001;

struct BlurLayout {
  int lead = 0;          // leading F / C axes: independent planes
  int axes = 0;          // data axes
  bool channels = false; // trailing interleaved channels
};

class GaussianBlur : public Operator {
 public:
  explicit GaussianBlur(const OpSpec& spec) : Operator(spec) {}

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    layout_ = parse_layout(in.layout(), in.ndim());
    if (in.dtype() == DType::kBool)
      fail(ErrorKind::kInvalidArgument, spec_.display_name() + ": input 0 has type bool; cast it to "
                                        "uint8 or float first.");
    DType out = in.dtype();
    if (spec_.has("dtype")) {
      out = static_cast<DType>(spec_.get<int64_t>("dtype"));
      if (out != in.dtype() && out != DType::kFloat32)
        spec_.arg_error("dtype", std::string("must be the input type (") + dtype_name(in.dtype()) +
                                     ") or float32, got " + dtype_name(out) + ".");
    }
    windows_.assign(in.size(), {});
    for (size_t i = 0; i < in.size(); ++i) windows_[i] = sample_windows(ws, static_cast<int64_t>(i));
    return {OutputDesc{out, in.layout(), in.shapes()}};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const Batch& in = ws.input(0);
    Batch& out = ws.output(0);
    const Shape& s = in.shape(i);
    int64_t planes = 1;
    for (int k = 0; k < layout_.lead; ++k) planes *= s[k];
    std::vector<int64_t> spatial(s.begin() + layout_.lead, s.begin() + layout_.lead + layout_.axes);
    int64_t channels = layout_.channels ? s.back() : 1;
    int64_t plane = channels;
    for (int64_t e : spatial) plane *= e;
    thread_local std::vector<float> scratch;
    visit_dtype(in.dtype(), [&](auto ti) {
      using In = decltype(ti);
      auto go = [&](auto to) {
        using Out = decltype(to);
        const In* src = in.data<In>(i);
        Out* dst = out.data<Out>(i);
        for (int64_t p = 0; p < planes; ++p)
          kernels::separable_convolution(dst + p * plane, src + p * plane, spatial, channels,
                                         windows_[i], &scratch);
      };
      if (out.dtype() == in.dtype()) go(In{});
      else go(float{});
    });
  }

  void run_gpu(Workspace& ws, const std::vector<OutputDesc>& descs) {
    require_device_input(ws);
    const Batch& in = ws.input(0);
    const OutputDesc& d = descs[0];
    ws.outputs.assign(1, allocate_device_batch(ws, d.dtype, d.shapes, d.layout));
    Batch& out = ws.outputs[0];
    std::vector<kernels::cuda::BlurJob> jobs(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      const Shape& s = in.shape(i);
      kernels::cuda::BlurJob& j = jobs[i];
      j.in = in[i].data;
      j.out = out[i].data;
      for (int k = 0; k < layout_.lead; ++k) j.planes *= s[k];
      j.spatial.assign(s.begin() + layout_.lead, s.begin() + layout_.lead + layout_.axes);
      j.channels = layout_.channels ? s.back() : 1;
      j.windows = windows_[i];
    }
    kernels::cuda::gaussian_blur_gpu(ws, d.dtype, in.dtype(), jobs);
  }

 private:
  BlurLayout parse_layout(const std::string& l, int nd) const {
    BlurLayout r;
    if (l.empty()) {
      if (nd < 1 || nd > 3)
        fail(ErrorKind::kInvalidArgument,
             spec_.display_name() + ": input 0 has no layout and " + std::to_string(nd) +
                 " dimensions; without a layout it must have 1 to 3 data dimensions (set a layout "
                 "such as HWC for more).");
      r.axes = nd;
      return r;
    }
    int n = static_cast<int>(l.size());
    while (r.lead < n && r.lead < 2 && (l[r.lead] == 'F' || l[r.lead] == 'C')) ++r.lead;
    r.channels = l.back() == 'C' && n - 1 >= r.lead;
    int end = r.channels ? n - 1 : n;
    r.axes = end - r.lead;
    bool bad = r.axes < 1 || r.axes > 3;
    for (int k = r.lead; k < end; ++k) bad |= l[k] == 'C' || l[k] == 'F';
    if (bad)
      fail(ErrorKind::kInvalidArgument,
           spec_.display_name() + ": input 0 has layout '" + l + "'; gaussian_blur needs 1 to 3 "
           "data axes, channels first or last, and frames ('F') first, as in HW, HWC, CHW, DHWC "
           "or FHWC.");
    return r;
  }

  // One Gaussian window per data axis for sample i (arguments ordered outermost first).
  std::vector<std::vector<float>> sample_windows(const Workspace& ws, int64_t i) const {
    const int n = layout_.axes;
    std::vector<double> sig = ws.list_arg("sigma", i, {0.0});
    std::vector<double> win = ws.list_arg("window_size", i, {0.0});
    auto expand = [&](std::vector<double>& v, const char* name) {
      if (v.size() == 1) v.assign(n, v[0]);
      if (static_cast<int>(v.size()) != n)
        spec_.arg_error(name, "takes 1 or " + std::to_string(n) + " values (one per data axis), got " +
                                  std::to_string(v.size()) + " for sample " + std::to_string(i) + ".");
    };
    expand(sig, "sigma");
    expand(win, "window_size");
    std::vector<std::vector<float>> w(n);
    for (int a = 0; a < n; ++a) {
      std::string where = " for sample " + std::to_string(i) + ", axis " + std::to_string(a) + ".";
      double s = sig[a], ws_ = win[a];
      if (!(s >= 0) || !std::isfinite(s)) spec_.arg_error("sigma", "must be >= 0, got " + num(s) + where);
      if (!(ws_ >= 0) || ws_ != std::floor(ws_))
        spec_.arg_error("window_size", "must be a non-negative integer, got " + num(ws_) + where);
      if (s == 0 && ws_ == 0)
        spec_.arg_error("sigma", "and window_size are both 0" + where + " Give at least one of them.");
      if (s * 6 + 1 > kMaxWindow || ws_ > kMaxWindow)
        spec_.arg_error(ws_ > kMaxWindow ? "window_size" : "sigma",
                        "gives a window larger than " + std::to_string(kMaxWindow) + where);
      int size = ws_ > 0 ? static_cast<int>(ws_) : kernels::gaussian_window_size(s);
      if (size % 2 == 0) spec_.arg_error("window_size", "must be odd, got " + std::to_string(size) + where);
      if (s == 0) s = kernels::gaussian_sigma_for_window(size);
      w[a] = kernels::gaussian_window(size, s);
    }
    return w;
  }

  BlurLayout layout_;
  std::vector<std::vector<std::vector<float>>> windows_;  // [sample][axis]
};

}  // namespace

STOKER_REGISTER_OP_NAMED(gaussian_blur, "gaussian_blur") {
  schema.doc("Applies a Gaussian blur to the input: a separable convolution with Gaussian windows, "
             "innermost axis first, with a mirrored border (reflect-101) and a float intermediate. "
             "With only sigma, the window is 2 * ceil(3 * sigma) + 1; with only window_size, sigma = "
             "((window_size - 1) / 2 - 1) * 0.3 + 0.8. Both take one value for all data axes or one "
             "per axis, outermost first (F and C are not data axes).")
      .inputs(1, 1, {"input"}).outputs(1)
      .input_layouts({"HW", "HWC", "CHW", "FHWC", "DHWC", "FDHWC"})
      .arg({.name = "sigma", .type = ArgType::kFloatList, .default_value = std::vector<double>{0.0},
            .doc = "Sigma of the Gaussian kernel, per data axis or one for all.", .tensor = true,
            .list_min = 1, .list_max = 3})
      .arg({.name = "window_size", .type = ArgType::kIntList, .default_value = std::vector<int64_t>{0},
            .doc = "The diameter of the kernel (odd), per data axis or one for all.", .tensor = true,
            .list_min = 1, .list_max = 3})
      .arg({.name = "dtype", .type = ArgType::kDType, .optional = true,
            .doc = "Output data type: the input type (default) or float."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<GaussianBlur>(s); })
      STOKER_GPU_TWIN(GaussianBlur);
}

}  // namespace stoker
