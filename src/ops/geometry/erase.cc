// erase: fills one or more boxes of each sample with fill_value (per channel when given so).
#include <cmath>
#include <cstring>

#include "core/convert.h"
#include "kernels/cpu/geometry/erase.h"
#include "kernels/cuda/erase_gpu.h"
#include "ops/generic/gpu_twin.h"
#include "ops/geometry/geometry_common.h"
#include "pipeline/gpu_batch.h"

namespace stoker {
namespace {

class Erase : public Operator {
 public:
  explicit Erase(const OpSpec& spec) : Operator(spec), axes_(spec_, /*exclusive=*/false) {
    bool normalized = spec.get<bool>("normalized");
    bool na = spec.get<bool>("normalized_anchor"), ns = spec.get<bool>("normalized_shape");
    if (normalized && (na || ns))
      spec.arg_error("normalized", "cannot be combined with 'normalized_anchor' or 'normalized_shape'; "
                                   "use either.");
    normalized_anchor_ = normalized || na;
    normalized_shape_ = normalized || ns;
    centered_ = spec.get<bool>("centered_anchor");
    fill_ = spec.get<std::vector<double>>("fill_value");
    if (fill_.empty()) spec.arg_error("fill_value", "must not be empty.");
  }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const std::string& layout = in.layout();
    const int nd = in.ndim();
    std::vector<int> axes = resolve_axes(layout, nd);
    const size_t naxes = axes.size();
    channel_dim_ = geometry::axis_index(layout, 'C');
    const int64_t n = static_cast<int64_t>(in.size());
    boxes_.assign(n, {});
    for (int64_t i = 0; i < n; ++i) {
      const Shape& shape = in.shape(i);
      geometry::check_fill_values(spec_, "fill_value", fill_, channel_dim_ >= 0 ? shape[channel_dim_] : -1);
      std::vector<double> anchor = ws.list_arg("anchor", i), extent = ws.list_arg("shape", i);
      if (anchor.empty()) anchor.assign(extent.size(), 0.0);
      if (anchor.size() != extent.size())
        spec_.arg_error("anchor", "has " + std::to_string(anchor.size()) + " values but 'shape' has " +
                                      std::to_string(extent.size()) + " for sample " + std::to_string(i) +
                                      "; they describe the same regions.");
      if (naxes == 0 || extent.size() % naxes != 0)
        spec_.arg_error("shape", "has " + std::to_string(extent.size()) + " values for sample " +
                                     std::to_string(i) + ", not a multiple of the " + std::to_string(naxes) +
                                     " erased axes (" + axes_repr(axes, layout) + ").");
      for (size_t r = 0; r < extent.size() / naxes; ++r) {
        kernels::EraseBox box;
        box.lo.assign(nd, 0);
        box.hi.assign(shape.begin(), shape.end());
        for (size_t j = 0; j < naxes; ++j) {
          int d = axes[j];
          double e = static_cast<double>(shape[d]);
          double a = anchor[r * naxes + j], s = extent[r * naxes + j];
          // float32 and truncation toward zero, as DALI, so fractional boxes cover DALI's pixels
          if (normalized_anchor_) a = static_cast<float>(a) * static_cast<float>(e);
          if (normalized_shape_) s = static_cast<float>(s) * static_cast<float>(e);
          if (s < 0)
            spec_.arg_error("shape", "must not be negative, got " + std::to_string(s) + " for sample " +
                                         std::to_string(i) + ".");
          if (centered_) a -= s / 2;
          auto index = [&](float v) {  // clipped to the sample before converting (NaN: 0)
            return v > 0 ? static_cast<int64_t>(std::min<double>(std::trunc(v), e)) : int64_t{0};
          };
          box.lo[d] = index(static_cast<float>(a));
          box.hi[d] = index(static_cast<float>(a) + static_cast<float>(s));
        }
        boxes_[i].push_back(std::move(box));
      }
    }
    return {OutputDesc{in.dtype(), layout, in.shapes()}};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const Batch& in = ws.input(0);
    Batch& out = ws.output(0);
    visit_dtype(in.dtype(), [&](auto t) {
      using T = decltype(t);
      std::vector<T> fill(fill_.size());
      for (size_t k = 0; k < fill_.size(); ++k) fill[k] = convert_sat<T>(fill_[k]);
      kernels::erase<T>(out.data<T>(i), in.data<T>(i), in.shape(i), boxes_[i], channel_dim_, fill);
    });
  }

  void run_gpu(Workspace& ws, const std::vector<OutputDesc>& descs) {
    require_device_input(ws);
    const Batch& in = ws.input(0);
    const OutputDesc& d = descs[0];
    if (in.ndim() > kernels::cuda::kMaxEraseDims)
      fail(ErrorKind::kUnsupported,
           spec_.display_name() + ": the GPU backend erases up to " +
               std::to_string(kernels::cuda::kMaxEraseDims) + " dimensions, the input has " +
               std::to_string(in.ndim()) + "; run it with device='cpu'.");
    ws.outputs.assign(1, allocate_device_batch(ws, d.dtype, d.shapes, d.layout));
    Batch& out = ws.outputs[0];
    std::vector<uint64_t> fill(fill_.size(), 0);
    visit_dtype(in.dtype(), [&](auto t) {
      using T = decltype(t);
      for (size_t k = 0; k < fill_.size(); ++k) {
        T v = convert_sat<T>(fill_[k]);
        std::memcpy(&fill[k], &v, sizeof(T));
      }
    });
    std::vector<kernels::cuda::EraseJob> jobs(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      kernels::cuda::EraseJob& j = jobs[i];
      j.in = in[i].data;
      j.out = out[i].data;
      j.shape = in.shape(i);
      j.channel_dim = channel_dim_;
      j.boxes = boxes_[i];
      j.fill = fill;
    }
    kernels::cuda::erase_gpu(ws, dtype_size(in.dtype()), jobs);
  }

 private:
  static std::string axes_repr(const std::vector<int>& axes, const std::string& layout) {
    std::string r;
    for (int d : axes) r += static_cast<int>(layout.size()) > d ? std::string(1, layout[d]) : std::to_string(d);
    return r;
  }

  std::vector<int> resolve_axes(const std::string& layout, int nd) const {
    if (axes_.given()) return axes_.resolve(layout, nd);
    // DALI: without axes or axis_names, every axis but the channels is given.
    std::vector<int> axes;
    for (int d = 0; d < nd; ++d)
      if (d >= static_cast<int>(layout.size()) || layout[d] != 'C') axes.push_back(d);
    return axes;
  }

  geometry::AxisArgs axes_;
  bool normalized_anchor_ = false, normalized_shape_ = false, centered_ = false;
  std::vector<double> fill_;
  int channel_dim_ = -1;
  std::vector<std::vector<kernels::EraseBox>> boxes_;
};

}  // namespace

STOKER_REGISTER_OP_NAMED(erase, "erase") {
  schema
      .doc("Erases regions of each sample: fills boxes given by anchor and shape (several regions "
           "back to back: anchor=(y0, x0, y1, x1, ...)) over the chosen axes; other axes are "
           "erased whole. Regions reaching outside the sample are clipped.")
      .inputs(1, 1, {"input"})
      .outputs(1)
      .arg({.name = "anchor", .type = ArgType::kFloatList, .default_value = std::vector<double>{},
            .doc = "Start of each region per axis (all zeros when empty).", .tensor = true})
      .arg({.name = "shape", .type = ArgType::kFloatList, .default_value = std::vector<double>{},
            .doc = "Extent of each region per axis.", .tensor = true})
      .arg({.name = "axes", .type = ArgType::kIntList, .optional = true,
            .doc = "Indices of the axes anchor and shape refer to."})
      .arg({.name = "axis_names", .type = ArgType::kString, .optional = true,
            .doc = "Layout letters of the axes anchor and shape refer to (wins over axes). Without "
                   "axes or axis_names: every axis except C."})
      .arg({.name = "centered_anchor", .type = ArgType::kBool, .default_value = false,
            .doc = "The anchor is the region's centre, not its start."})
      .arg({.name = "fill_value", .type = ArgType::kFloatList, .default_value = std::vector<double>{0.0},
            .doc = "Value of the erased elements: one, or one per channel."})
      .arg({.name = "normalized", .type = ArgType::kBool, .default_value = false,
            .doc = "anchor and shape are relative (0..1) to the extents."})
      .arg({.name = "normalized_anchor", .type = ArgType::kBool, .default_value = false,
            .doc = "anchor is relative (0..1) to the extents."})
      .arg({.name = "normalized_shape", .type = ArgType::kBool, .default_value = false,
            .doc = "shape is relative (0..1) to the extents."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<Erase>(s); })
      STOKER_GPU_TWIN(Erase);
}

}  // namespace stoker
