// pad: extends the chosen axes at their ends with fill_value, to the largest extent in the batch
// (default), to a given shape, and/or to a multiple of `align`.
#include <cstdio>

#include "ops/geometry/geometry_common.h"

namespace stoker {
namespace {

class Pad : public geometry::SliceOperator {
 public:
  explicit Pad(const OpSpec& spec) : SliceOperator(spec), axes_(spec_, /*exclusive=*/true) {
    align_ = spec.get<std::vector<int64_t>>("align");
    for (int64_t a : align_)
      if (a <= 0) spec.arg_error("align", "must be positive, got " + to_string(Shape(align_)) + ".");
  }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const std::string& layout = in.layout();
    const int nd = in.ndim();
    const int64_t n = static_cast<int64_t>(in.size());
    std::vector<int> axes = resolve_axes(layout, nd);
    const size_t naxes = axes.size();
    if (align_.size() > 1 && align_.size() != naxes)
      spec_.arg_error("align", "has " + std::to_string(align_.size()) + " values for " +
                                   std::to_string(naxes) + " padded axes; give one, or one per axis.");
    std::vector<int64_t> batch_max(naxes, 0);
    for (int64_t i = 0; i < n; ++i)
      for (size_t j = 0; j < naxes; ++j) batch_max[j] = std::max(batch_max[j], in.shape(i)[axes[j]]);
    args_.assign(n, {});
    OutputDesc desc{in.dtype(), layout, {}, ""};
    for (int64_t i = 0; i < n; ++i) {
      kernels::SliceArgs& a = args_[i];
      a.in_shape = in.shape(i);
      a.anchor.assign(nd, 0);
      a.shape = a.in_shape;
      std::vector<double> target = ws.list_arg("shape", i);
      if (!target.empty() && target.size() != naxes)
        spec_.arg_error("shape", "has " + std::to_string(target.size()) + " values for sample " +
                                     std::to_string(i) + ", but " + std::to_string(naxes) +
                                     " axes are padded; give one extent (or -1) per padded axis.");
      for (size_t j = 0; j < naxes; ++j) {
        int d = axes[j];
        // Past 2^62 the conversion to an integer is undefined; no memory holds such a sample.
        if (!target.empty() && target[j] > static_cast<double>(int64_t{1} << 62)) {
          char got[32];
          snprintf(got, sizeof(got), "%.0f", target[j]);
          spec_.arg_error("shape", std::string("must be at most 2^62 per axis, got ") + got +
                                       " for sample " + std::to_string(i) + ".");
        }
        int64_t t = target.empty() ? -1 : static_cast<int64_t>(target[j]);
        int64_t ext = t < 0 ? batch_max[j] : std::max(t, a.in_shape[d]);
        if (t >= 0) desc.size_arg = "shape";
        if (!align_.empty()) {
          int64_t al = align_[align_.size() == 1 ? 0 : j];
          int64_t up = 0;
          if (__builtin_add_overflow(ext, al - 1, &up))
            spec_.arg_error("align", "rounds extent " + std::to_string(ext) + " of sample " +
                                         std::to_string(i) + " up past 2^63: " + to_string(Shape(align_)) + ".");
          ext = up / al * al;
        }
        a.shape[d] = ext;
      }
      a.fill = {ws.scalar_arg("fill_value", i, 0.0)};
      desc.shapes.push_back(kernels::slice_output_shape(a));
    }
    return {desc};
  }


 private:
  std::vector<int> resolve_axes(const std::string& layout, int nd) const {
    if (axes_.given()) return axes_.resolve(layout, nd);
    std::vector<int> all(nd);
    for (int d = 0; d < nd; ++d) all[d] = d;
    return all;
  }

  geometry::AxisArgs axes_;
  std::vector<int64_t> align_;
};

}  // namespace

STOKER_REGISTER_OP_NAMED(pad, "pad") {
  schema
      .doc("Pads the chosen axes at their ends with fill_value: to the largest extent in the batch, "
           "to `shape` (never smaller than the sample), and/or up to a multiple of `align`.")
      .inputs(1, 1, {"input"})
      .outputs(1)
      .arg({.name = "axes", .type = ArgType::kIntList, .optional = true,
            .doc = "Indices of the padded axes; default: all (unless axis_names is given)."})
      .arg({.name = "axis_names", .type = ArgType::kString, .optional = true,
            .doc = "Layout letters of the padded axes, e.g. 'HW'."})
      .arg({.name = "align", .type = ArgType::kIntList, .default_value = std::vector<int64_t>{},
            .doc = "Pad each padded axis up to a multiple of this (one value, or one per axis)."})
      .arg({.name = "fill_value", .type = ArgType::kFloat, .default_value = 0.0,
            .doc = "The value of the padding.", .tensor = true})
      .arg({.name = "shape", .type = ArgType::kIntList, .default_value = std::vector<int64_t>{},
            .doc = "Extent per padded axis; -1 pads to the batch's largest extent; an extent "
                   "smaller than the sample's keeps the sample's (alignment still applies).",
            .tensor = true})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<Pad>(s); })
      STOKER_SLICE_GPU_BACKEND(Pad);
}

}  // namespace stoker
