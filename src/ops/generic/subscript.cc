// _tensor_subscript: what `x[...]` on a DataNode builds (DataNode.__getitem__). Integer indices
// (negative from the end), slices with any nonzero step, new axes and one ellipsis, each index
// or slice bound a constant or a per-sample integer from another operator.
#include <algorithm>
#include <string>

#include "kernels/cpu/geometry/strided_copy.h"
#include "kernels/cuda/copy_gpu.h"
#include "ops/generic/gpu_twin.h"
#include "pipeline/gpu_batch.h"
#include "pipeline/operator.h"

namespace stoker {
namespace {

constexpr int kMaxSubscripts = 32;

enum class Sub : int64_t { kIndex = 0, kSlice = 1, kNewAxis = 2, kEllipsis = 3 };

std::string arg_name(const char* part, int k) { return std::string(part) + "_" + std::to_string(k); }

// Where to read one sample: per input axis, the first position, the step and the count.
struct Window {
  std::vector<int64_t> start, step;
  Shape count;
};

class TensorSubscript : public Operator {
 public:
  explicit TensorSubscript(const OpSpec& spec) : Operator(spec) {
    for (int64_t k : spec.get<std::vector<int64_t>>("kinds")) {
      if (k < 0 || k > 3) spec.arg_error("kinds", "must hold 0 to 3, got " + std::to_string(k) + ".");
      kinds_.push_back(static_cast<Sub>(k));
    }
    if (kinds_.size() > kMaxSubscripts)
      spec.arg_error("kinds", "takes at most " + std::to_string(kMaxSubscripts) + " subscripts, got " +
                                  std::to_string(kinds_.size()) + ".");
    if (std::count(kinds_.begin(), kinds_.end(), Sub::kEllipsis) > 1)
      spec.arg_error("kinds", "may hold one ellipsis at most.");
    names_ = spec.get<std::string>("new_axis_names");
    int64_t new_axes = std::count(kinds_.begin(), kinds_.end(), Sub::kNewAxis);
    if (!names_.empty() && static_cast<int64_t>(names_.size()) != new_axes)
      spec.arg_error("new_axis_names", "needs one letter per new axis (" + std::to_string(new_axes) +
                                           "), got \"" + names_ + "\".");
  }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    windows_.assign(in.size(), Window{});
    OutputDesc d;
    d.dtype = in.dtype();
    for (size_t i = 0; i < in.size(); ++i) {
      std::string layout;
      d.shapes.push_back(sample_setup(ws, static_cast<int64_t>(i), in.shape(i), in.layout(), &layout));
      if (i == 0) d.layout = layout;
    }
    if (in.size() == 0) d.layout = "";
    return {d};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const Batch& in = ws.input(0);
    const Window& w = windows_[i];
    kernels::strided_copy(ws.output(0)[i].data, in[i].data, in.shape(i), w.start, w.step, w.count,
                          dtype_size(in.dtype()));
  }

  // The GPU twin: the same windows, every sample in one strided copy.
  void run_gpu(Workspace& ws, const std::vector<OutputDesc>& descs) {
    require_device_input(ws);
    const Batch& in = ws.input(0);
    const OutputDesc& d = descs[0];
    ws.outputs.assign(1, allocate_device_batch(ws, d.dtype, d.shapes, d.layout));
    const size_t elem = dtype_size(in.dtype());
    std::vector<kernels::cuda::CopyJob> jobs(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      const Window& w = windows_[i];
      const std::vector<int64_t> dense = kernels::cuda::dense_strides(in.shape(i));
      std::vector<int64_t> in_stride(w.count.size());
      int64_t offset = 0;
      for (size_t k = 0; k < w.count.size(); ++k) {
        in_stride[k] = dense[k] * w.step[k];
        offset += dense[k] * w.start[k];
      }
      const auto* src = static_cast<const uint8_t*>(in[i].data) + offset * static_cast<int64_t>(elem);
      if (!kernels::cuda::make_copy_job(&jobs[i], src, ws.outputs[0][i].data, w.count, in_stride,
                                        kernels::cuda::dense_strides(w.count)))
        fail(ErrorKind::kUnsupported,
             spec_.display_name() + ": the GPU backend reads windows of up to " +
                 std::to_string(kernels::cuda::kMaxCopyDims) + " strided dimensions; sample " +
                 std::to_string(i) + " needs more (input shape " + to_string(in.shape(i)) +
                 "). Index on the CPU, or reshape first.");
    }
    kernels::cuda::strided_copy_gpu(ws, elem, jobs);
  }

 private:
  // A constant or per-sample integer for subscript part `name` ("at_1"), if given.
  bool value(Workspace& ws, const std::string& name, int64_t sample, int64_t* v) const {
    auto t = spec_.tensor_args.find(name);
    if (t != spec_.tensor_args.end()) {
      const Batch& b = *ws.arg_inputs[t->second];
      DType dt = b.dtype();
      if (is_float(dt) || dt == DType::kBool)
        fail(ErrorKind::kTypeMismatch,
             spec_.display_name() + ": the index " + describe(name) + " comes from a " + dtype_name(dt) +
                 " DataNode; indices must be integers: cast it first, e.g. fn.cast(i, dtype=types.INT64).");
      if (volume(b.shape(sample)) != 1)
        fail(ErrorKind::kInvalidArgument,
             where(ws, sample) + ": the index " + describe(name) + " must be one integer per sample, "
                 "but sample " + std::to_string(sample) + " of it has shape " + to_string(b.shape(sample)) + ".");
      visit_dtype(dt, [&](auto tv) {
        using T = decltype(tv);
        T x = *b.data<T>(sample);
        if constexpr (std::is_unsigned_v<T> && sizeof(T) == 8)
          *v = x > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(x);
        else
          *v = static_cast<int64_t>(x);
      });
      return true;
    }
    if (spec_.has(name)) {
      *v = spec_.get<int64_t>(name);
      return true;
    }
    return false;
  }

  // How messages name this subscript and sample, as the executor names a sample that fails.
  std::string where(const Workspace& ws, int64_t i) const {
    std::string r = spec_.display_name() + " [sample " + std::to_string(i);
    const std::string& src = ws.input(0)[i].source;
    if (!src.empty()) r += " ('" + src + "')";
    return r + "]";
  }

  // "of subscript 1 (the slice's start)", from the argument name.
  std::string describe(const std::string& name) const {
    std::string part = name.substr(0, name.find('_'));
    std::string what = part == "lo" ? " (the slice's start)" : part == "hi" ? " (the slice's stop)"
                       : part == "step" ? " (the slice's step)" : "";
    return "of subscript " + name.substr(name.find('_') + 1) + what;
  }

  Shape sample_setup(Workspace& ws, int64_t i, const Shape& in, const std::string& in_layout,
                     std::string* out_layout) {
    const int nd = static_cast<int>(in.size());
    int consumed = 0;
    for (Sub s : kinds_) consumed += s == Sub::kIndex || s == Sub::kSlice;
    if (consumed > nd)
      fail(ErrorKind::kInvalidArgument,
           where(ws, i) + ": " + std::to_string(consumed) + " indices for a sample of " +
               std::to_string(nd) + " dimension" + (nd == 1 ? "" : "s") + " (shape " + to_string(in) +
               "); index at most " + std::to_string(nd) + " axes.");
    Window& w = windows_[i];
    w.start.assign(nd, 0);
    w.step.assign(nd, 1);
    w.count = in;
    Shape out;
    std::string layout;
    bool keep_layout = static_cast<int>(in_layout.size()) == nd, unnamed_new = false;
    int ax = 0, new_k = 0;
    auto full = [&](int a) {
      out.push_back(in[a]);
      if (keep_layout) layout += in_layout[a];
    };
    for (size_t k = 0; k < kinds_.size(); ++k) {
      int sk = static_cast<int>(k);
      switch (kinds_[k]) {
        case Sub::kEllipsis:
          for (int n = nd - consumed; n > 0; --n) full(ax++);
          break;
        case Sub::kNewAxis:
          out.push_back(1);
          if (names_.empty()) unnamed_new = true;
          else layout += names_[new_k];
          ++new_k;
          break;
        case Sub::kIndex: {
          int64_t v = 0;
          value(ws, arg_name("at", sk), i, &v);
          int64_t n = in[ax];
          if (v < -n || v >= n)
            fail(ErrorKind::kInvalidArgument,
                 where(ws, i) + ": index " + std::to_string(v) + " is out of range for axis " +
                     std::to_string(ax) + " of extent " + std::to_string(n) + " (the sample's shape is " +
                     to_string(in) + "); " +
                     (n ? "valid indices are " + std::to_string(-n) + " to " + std::to_string(n - 1) + "."
                        : "the axis is empty."));
          w.start[ax] = v < 0 ? v + n : v;
          w.count[ax] = 1;
          ++ax;
          break;
        }
        case Sub::kSlice: {
          int64_t n = in[ax], step = 1, lo = 0, hi = 0;
          if (value(ws, arg_name("step", sk), i, &step) && step == 0)
            fail(ErrorKind::kInvalidArgument,
                 where(ws, i) + ": the slice step at axis " + std::to_string(ax) +
                     " is 0; a step must be nonzero (negative steps go backwards).");
          // Python's slice.indices(): bounds clamp to the axis, negative ones count from the end.
          bool has_lo = value(ws, arg_name("lo", sk), i, &lo);
          bool has_hi = value(ws, arg_name("hi", sk), i, &hi);
          auto clamp_bound = [&](int64_t b) {
            if (b < 0) b = b < -n ? (step < 0 ? -1 : 0) : b + n;
            else if (b >= n) b = step < 0 ? n - 1 : n;
            return b;
          };
          int64_t first = has_lo ? clamp_bound(lo) : (step < 0 ? n - 1 : 0);
          int64_t stop = has_hi ? clamp_bound(hi) : (step < 0 ? -1 : n);
          int64_t cnt = step > 0 ? (stop > first ? (stop - first + step - 1) / step : 0)
                                 : (first > stop ? (first - stop + (-step) - 1) / (-step) : 0);
          w.start[ax] = cnt ? first : 0;
          w.step[ax] = step;
          w.count[ax] = cnt;
          out.push_back(cnt);
          if (keep_layout) layout += in_layout[ax];
          ++ax;
          break;
        }
      }
    }
    while (ax < nd) full(ax++);
    if (!names_.empty() && !keep_layout)
      fail(ErrorKind::kInvalidArgument,
           spec_.display_name() + ": newaxis(\"" + names_ + "\") names the new axes, but the input has " +
               "no layout to add the names to. Use unnamed new axes (None), or give the input a layout.");
    // DALI drops the layout when a new axis has no name: no letter would be right for it.
    *out_layout = keep_layout && !unnamed_new ? layout : "";
    return out;
  }

  std::vector<Sub> kinds_;
  std::string names_;
  std::vector<Window> windows_;
};

}  // namespace

STOKER_REGISTER_OP_NAMED(tensor_subscript, "_tensor_subscript") {
  schema.doc("Indexes and slices each sample as NumPy does (`x[0]`, `x[:, 1:-1:2]`, `x[..., None]`); "
             "what DataNode subscripts build.")
      .inputs(1, 1, {"input"}).outputs(1)
      .arg({.name = "kinds", .type = ArgType::kIntList,
            .doc = "Per subscript: 0 an index, 1 a slice, 2 a new axis, 3 the ellipsis."})
      .arg({.name = "new_axis_names", .type = ArgType::kString, .default_value = std::string(),
            .doc = "One layout letter per new axis (all named or none)."})
      .arg({.name = "_display_name", .type = ArgType::kString, .optional = true,
            .doc = "How messages name the subscript (\"subscript [:, 0]\")."});
  for (int k = 0; k < kMaxSubscripts; ++k) {
    schema.arg({.name = arg_name("at", k), .type = ArgType::kInt, .optional = true,
                .doc = "The index of subscript k.", .tensor = true})
        .arg({.name = arg_name("lo", k), .type = ArgType::kInt, .optional = true,
              .doc = "The start of slice k.", .tensor = true})
        .arg({.name = arg_name("hi", k), .type = ArgType::kInt, .optional = true,
              .doc = "The stop of slice k.", .tensor = true})
        .arg({.name = arg_name("step", k), .type = ArgType::kInt, .optional = true,
              .doc = "The step of slice k.", .tensor = true});
  }
  schema.backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<TensorSubscript>(s); })
      STOKER_GPU_TWIN(TensorSubscript);
}

}  // namespace stoker
