// cat and stack: join the samples at the same position of several inputs, along an existing
// axis (cat) or a new one (stack).
#include <cstring>

#include "kernels/cuda/copy_gpu.h"
#include "ops/generic/gpu_twin.h"
#include "pipeline/gpu_batch.h"
#include "pipeline/operator.h"

namespace stoker {
namespace {

[[noreturn]] void op_error(const OpSpec& spec, const std::string& what) {
  fail(ErrorKind::kInvalidArgument, spec.display_name() + ": " + what);
}

class Join : public Operator {
 public:
  Join(const OpSpec& spec, bool new_axis) : Operator(spec), new_axis_(new_axis) {
    // stack takes both: axis_name names the axis inserted at axis.
    if (!new_axis_ && spec.has("axis") && spec.has("axis_name"))
      op_error(spec, "give either 'axis' or 'axis_name', not both.");
    if (new_axis_ && spec.has("axis_name") && spec.get<std::string>("axis_name").size() != 1)
      spec.arg_error("axis_name", "must be one character (the new axis' name in the layout), got '" +
                                      spec.get<std::string>("axis_name") + "'.");
  }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& first = ws.input(0);
    const int n_in = static_cast<int>(ws.inputs.size());
    const int ndim = first.ndim();
    for (int j = 1; j < n_in; ++j) {
      const Batch& b = ws.input(j);
      if (b.dtype() != first.dtype() || b.ndim() != ndim)
        op_error(spec_, std::string("all inputs must have the same element type and number of "
                                    "dimensions; input 0 is ") + dtype_name(first.dtype()) + ", " +
                            std::to_string(ndim) + "-D and input " + std::to_string(j) + " is " +
                            dtype_name(b.dtype()) + ", " + std::to_string(b.ndim()) + "-D.");
      if (b.size() != first.size())
        op_error(spec_, "all inputs must have the same number of samples; input 0 has " +
                            std::to_string(first.size()) + " and input " + std::to_string(j) +
                            " has " + std::to_string(b.size()) + ".");
    }
    // The output takes input 0's layout (as DALI's does); axis_name is looked up in the
    // inputs' layout, which those that have one must agree on.
    std::string in_layout = first.layout(), named;
    for (int j = 0; j < n_in; ++j)
      if (!ws.input(j).layout().empty()) {
        if (named.empty()) named = ws.input(j).layout();
        else if (spec_.has("axis_name") && ws.input(j).layout() != named)
          spec_.arg_error("axis_name", "needs the inputs' layouts to agree, but input " + std::to_string(j) +
                                           " has \"" + ws.input(j).layout() + "\" and an earlier one \"" +
                                           named + "\".");
      }
    std::string layout;
    if (new_axis_) {
      // The axis is a position among ndim + 1 output dimensions.
      axis_ = spec_.has("axis") ? spec_.get<int>("axis") : 0;
      // DALI's range: [-ndim, ndim], where -1 is the position after the last dimension.
      if (axis_ < -ndim || axis_ > ndim)
        spec_.arg_error("axis", "is " + std::to_string(axis_) + ", out of range for " + std::to_string(ndim) +
                                    "-D inputs: give an axis in [" + std::to_string(-ndim) + ", " +
                                    std::to_string(ndim) + "] (negative ones count from the back).");
      if (axis_ < 0) axis_ += ndim + 1;
      if (spec_.has("axis_name")) {
        if (in_layout.empty() && ndim > 0)
          spec_.arg_error("axis_name", "names the new axis in the input layout, but the inputs have "
                                       "no layout. Give the inputs a layout, or leave axis_name out.");
        layout = in_layout;
        layout.insert(layout.begin() + axis_, spec_.get<std::string>("axis_name")[0]);
      }
    } else {
      if (spec_.has("axis_name")) {
        const std::string name = spec_.get<std::string>("axis_name");
        size_t p = name.size() == 1 ? named.find(name[0]) : std::string::npos;
        if (p == std::string::npos)
          spec_.arg_error("axis_name", "is '" + name + "', which is not an axis of the input layout \"" +
                                           named + "\".");
        axis_ = static_cast<int>(p);
        if (in_layout.empty()) in_layout = named;
      } else {
        axis_ = spec_.has("axis") ? spec_.get<int>("axis") : 0;
        if (axis_ < -ndim || axis_ >= ndim)
          spec_.arg_error("axis", "is " + std::to_string(axis_) + ", out of range for " + std::to_string(ndim) +
                                      "-D inputs: give an axis in [" + std::to_string(-ndim) + ", " +
                                      std::to_string(ndim - 1) + "] (negative ones count from the back).");
        if (axis_ < 0) axis_ += ndim;
      }
      layout = in_layout;
    }
    OutputDesc d{first.dtype(), layout, {}};
    for (size_t i = 0; i < first.size(); ++i) {
      const Shape& s0 = first.shape(i);
      Shape out = s0;
      if (new_axis_) out.insert(out.begin() + axis_, n_in);
      for (int j = 1; j < n_in; ++j) {
        const Shape& s = ws.input(j).shape(i);
        bool ok = true;
        for (int d = 0; d < ndim; ++d) ok &= s[d] == s0[d] || (!new_axis_ && d == axis_);
        if (!ok)
          op_error(spec_, std::string(new_axis_ ? "stacked samples must have the same shape"
                                                : "joined samples may differ only in the axis " +
                                                      std::to_string(axis_)) +
                              ", but sample " + std::to_string(i) + " of input 0 has shape " + to_string(s0) +
                              " and of input " + std::to_string(j) + " " + to_string(s) + ".");
        if (!new_axis_) out[axis_] += s[axis_];
      }
      d.shapes.push_back(out);
    }
    return {d};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    // Each input contributes a block of (its extent at the axis) x (the inner volume) per outer
    // index; the blocks alternate between the inputs.
    const int n_in = static_cast<int>(ws.inputs.size());
    const size_t elem = dtype_size(ws.input(0).dtype());
    const Shape& s0 = ws.input(0).shape(i);
    int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis_; ++d) outer *= s0[d];
    for (size_t d = axis_ + (new_axis_ ? 0 : 1); d < s0.size(); ++d) inner *= s0[d];
    std::vector<size_t> block(n_in);
    for (int j = 0; j < n_in; ++j)
      block[j] = (new_axis_ ? 1 : ws.input(j).shape(i)[axis_]) * inner * elem;
    auto* dst = static_cast<uint8_t*>(ws.output(0)[i].data);
    for (int64_t o = 0; o < outer; ++o)
      for (int j = 0; j < n_in; ++j) {
        if (!block[j]) continue;
        std::memcpy(dst, static_cast<const uint8_t*>(ws.input(j)[i].data) + o * block[j], block[j]);
        dst += block[j];
      }
  }

  // The GPU twin: per sample and input, a copy of (outer) rows of its block into the output rows.
  void run_gpu(Workspace& ws, const std::vector<OutputDesc>& descs) {
    const int n_in = static_cast<int>(ws.inputs.size());
    for (int j = 0; j < n_in; ++j) require_device_input(ws, j);
    const OutputDesc& d = descs[0];
    ws.outputs.assign(1, allocate_device_batch(ws, d.dtype, d.shapes, d.layout));
    const size_t elem = dtype_size(d.dtype);
    std::vector<kernels::cuda::CopyJob> jobs;
    for (size_t i = 0; i < d.shapes.size(); ++i) {
      const Shape& s0 = ws.input(0).shape(i);
      int64_t outer = 1, inner = 1;
      for (int k = 0; k < axis_; ++k) outer *= s0[k];
      for (size_t k = axis_ + (new_axis_ ? 0 : 1); k < s0.size(); ++k) inner *= s0[k];
      int64_t row = 0;
      std::vector<int64_t> block(n_in);
      for (int j = 0; j < n_in; ++j) {
        block[j] = (new_axis_ ? 1 : ws.input(j).shape(i)[axis_]) * inner;
        row += block[j];
      }
      auto* dst = static_cast<uint8_t*>(ws.outputs[0][i].data);
      for (int j = 0; j < n_in; ++j) {
        kernels::cuda::CopyJob job;
        kernels::cuda::make_copy_job(&job, ws.input(j)[i].data, dst, Shape{outer, block[j]},
                                     {block[j], 1}, {row, 1});
        jobs.push_back(job);
        dst += block[j] * elem;
      }
    }
    kernels::cuda::strided_copy_gpu(ws, elem, jobs);
  }

 private:
  bool new_axis_;
  int axis_ = 0;  // this iteration's, in [0, output ndim)
};

void join_args(OpSchema& schema, const char* axis_doc, const char* name_doc) {
  schema.inputs(1, 999).outputs(1)
      .arg({.name = "axis", .type = ArgType::kInt, .optional = true, .doc = axis_doc})
      .arg({.name = "axis_name", .type = ArgType::kString, .optional = true, .doc = name_doc});
}

}  // namespace

STOKER_REGISTER_OP_NAMED(cat, "cat") {
  schema.doc("Joins the inputs along an existing axis; their shapes must match in all other "
             "dimensions.");
  join_args(schema, "The axis to join along (default 0), in [-ndim, ndim-1]; negative ones count from the back.",
            "The layout name of the axis to join along (instead of axis).");
  schema.backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<Join>(s, false); })
      STOKER_GPU_TWIN_WITH(Join, false);
}

STOKER_REGISTER_OP_NAMED(stack, "stack") {
  schema.doc("Joins the inputs along a new axis; their shapes must be equal.");
  join_args(schema, "The position of the new axis in the output (default 0), in [-ndim, ndim]; ndim (or -1) "
                    "interleaves the inputs' values.",
            "One character: the new axis' name, inserted into the input layout at axis.");
  schema.backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<Join>(s, true); })
      STOKER_GPU_TWIN_WITH(Join, true);
}

}  // namespace stoker
