// transpose: permutes the axes of each sample (a copy through the slice kernel).
#include "ops/geometry/geometry_common.h"

namespace stoker {
namespace {

class Transpose : public geometry::SliceOperator {
 public:
  explicit Transpose(const OpSpec& spec) : SliceOperator(spec) {
    if (spec.has("perm")) {
      perm_ = spec.get<std::vector<int64_t>>("perm");
      std::vector<bool> seen(perm_.size(), false);
      for (int64_t p : perm_) {
        if (p < 0 || p >= static_cast<int64_t>(perm_.size()) || seen[p])
          spec.arg_error("perm", "must be a permutation of 0.." + std::to_string(perm_.size() - 1) +
                                     " (each axis once), got " + to_string(Shape(perm_)) + ".");
        seen[p] = true;
      }
    }
    if (spec.has("output_layout")) output_layout_ = spec.get<std::string>("output_layout");
    transpose_layout_ = spec.get<bool>("transpose_layout");
  }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int nd = in.ndim();
    std::vector<int> perm(nd);
    if (perm_.empty()) {
      for (int k = 0; k < nd; ++k) perm[k] = nd - 1 - k;  // DALI: no perm reverses the axes
    } else {
      if (static_cast<int>(perm_.size()) != nd)
        spec_.arg_error("perm", "has " + std::to_string(perm_.size()) + " entries, but the input has " +
                                    std::to_string(nd) + " dimensions; give one entry per dimension.");
      for (int k = 0; k < nd; ++k) perm[k] = static_cast<int>(perm_[k]);
    }
    std::string layout = in.layout();
    if (!output_layout_.empty()) {
      if (static_cast<int>(output_layout_.size()) != nd)
        spec_.arg_error("output_layout", "has " + std::to_string(output_layout_.size()) +
                                             " axes, but the input has " + std::to_string(nd) +
                                             " dimensions, got '" + output_layout_ + "'.");
      layout = output_layout_;
    } else if (transpose_layout_ && static_cast<int>(layout.size()) == nd) {
      std::string l(nd, ' ');
      for (int k = 0; k < nd; ++k) l[k] = in.layout()[perm[k]];
      layout = l;
    }
    const int64_t n = static_cast<int64_t>(in.size());
    args_.assign(n, {});
    OutputDesc desc{in.dtype(), layout, {}};
    for (int64_t i = 0; i < n; ++i) {
      kernels::SliceArgs& a = args_[i];
      a.in_shape = in.shape(i);
      a.anchor.assign(nd, 0);
      a.shape = a.in_shape;
      a.perm = perm;
      desc.shapes.push_back(kernels::slice_output_shape(a));
    }
    return {desc};
  }


 private:
  std::vector<int64_t> perm_;
  std::string output_layout_;
  bool transpose_layout_ = true;
};

}  // namespace

STOKER_REGISTER_OP_NAMED(transpose, "transpose") {
  schema.doc("Transposes the axes of each sample: output axis k is input axis perm[k].")
      .inputs(1, 1, {"input"})
      .outputs(1)
      .arg({.name = "perm", .type = ArgType::kIntList, .optional = true,
            .doc = "Permutation of the input's axes, e.g. [2, 0, 1]. Default: the axes reversed."})
      .arg({.name = "output_layout", .type = ArgType::kString, .optional = true,
            .doc = "Layout of the output; when given, transpose_layout is ignored."})
      .arg({.name = "transpose_layout", .type = ArgType::kBool, .default_value = true,
            .doc = "Permute the layout's axis names with the data; otherwise keep the input's layout."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<Transpose>(s); })
      STOKER_SLICE_GPU_BACKEND(Transpose);
}

}  // namespace stoker
