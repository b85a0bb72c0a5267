// reshape, reinterpret, squeeze, expand_dims: a new shape, dtype or layout for the same bytes.
// The outputs are views of the inputs (shared_view.h); nothing is copied.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "ops/generic/gpu_twin.h"
#include "ops/generic/shared_view.h"
#include "pipeline/operator.h"

namespace stoker {
namespace {

std::string num_repr(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string list_repr(const std::vector<double>& v) {
  std::string r = "[";
  for (size_t k = 0; k < v.size(); ++k) r += (k ? ", " : "") + num_repr(v[k]);
  return r + "]";
}

[[noreturn]] void op_error(const OpSpec& spec, const std::string& what) {
  fail(ErrorKind::kInvalidArgument, spec.display_name() + ": " + what);
}

// The output layout when the user gave none: the input's, where it still fits.
std::string kept_layout(const std::string& in_layout, size_t out_ndim) {
  return in_layout.size() == out_ndim ? in_layout : std::string();
}

class Reshape : public Operator {
 public:
  explicit Reshape(const OpSpec& spec) : Operator(spec) {
    has_dtype_ = spec.has("dtype");
    if (has_dtype_) dtype_ = static_cast<DType>(spec.get<int64_t>("dtype"));
    const bool shape = spec.has("shape") || spec.is_tensor_arg("shape");
    const bool rel = spec.has("rel_shape") || spec.is_tensor_arg("rel_shape");
    const bool input = spec.num_inputs == 2;
    if (shape + rel + input > 1)
      op_error(spec, std::string("the output shape is given ") +
                         (input ? (shape ? "both as the second input and as 'shape'"
                                         : "both as the second input and as 'rel_shape'")
                                : "both as 'shape' and as 'rel_shape'") +
                         "; give only one of them.");
    if (!shape && !rel && !input && !spec.has("layout") && !has_arg("src_dims") && !has_dtype_)
      op_error(spec, std::string("nothing to do: give a new shape ('shape', 'rel_shape', "
                                 "'src_dims' or a shape input)") +
                         (spec.schema->find_arg("dtype") ? ", a 'dtype'" : "") + " or a 'layout'.");
    mode_ = input ? Mode::kInput : shape ? Mode::kShape : rel ? Mode::kRel : Mode::kNone;
    if (spec.has("shape")) {
      std::vector<int64_t> s = spec.get<std::vector<int64_t>>("shape");
      if (std::count_if(s.begin(), s.end(), [](int64_t e) { return e < 0; }) > 1)
        spec.arg_error("shape", "may have one negative extent (to be computed from the volume), "
                                "got " + to_string(s) + ".");
      if (std::count(s.begin(), s.end(), 0) > 0)
        spec.arg_error("shape", "must not have an extent of 0, got " + to_string(s) + ".");
    }
    if (spec.has("rel_shape")) {
      std::vector<double> r = spec.get<std::vector<double>>("rel_shape");
      if (r.empty()) spec.arg_error("rel_shape", "must not be empty.");
      if (std::count_if(r.begin(), r.end(), [](double e) { return e < 0; }) > 1)
        spec.arg_error("rel_shape", "may have one negative extent (to be computed from the "
                                    "volume), got " + list_repr(r) + ".");
      if (std::count(r.begin(), r.end(), 0.0) > 0)
        spec.arg_error("rel_shape", "must not have an extent of 0, got " + list_repr(r) + ".");
    }
  }
  bool sample_wise() const override { return false; }

  void run_batch(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const DType out_type = has_dtype_ ? dtype_ : in.dtype();
    if (mode_ == Mode::kInput) check_shape_input(ws);
    Batch out = view_of(in, out_type, "");
    for (size_t i = 0; i < in.size(); ++i) out[i].shape = sample_shape(ws, in, out_type, i);
    size_t ndim = in.empty() ? in.layout().size() : out[0].shape.size();
    for (size_t i = 1; i < out.size(); ++i)
      if (out[i].shape.size() != ndim)
        op_error(spec_, "the new shapes of one batch must have the same number of dimensions, "
                        "got " + to_string(out[0].shape) + " for sample 0 and " +
                        to_string(out[i].shape) + " for sample " + std::to_string(i) + ".");
    if (spec_.has("layout")) {
      std::string layout = spec_.get<std::string>("layout");
      if (!layout.empty() && layout.size() != ndim)
        spec_.arg_error("layout", "'" + layout + "' has " + std::to_string(layout.size()) +
                                      " dimensions, but the output has " + std::to_string(ndim) +
                                      " (shape " + (out.empty() ? "()" : to_string(out[0].shape)) +
                                      "). Give a layout of " + std::to_string(ndim) +
                                      " characters, or \"\" for none.");
      out.set_layout(layout);
    } else {
      out.set_layout(kept_layout(in.layout(), ndim));
    }
    ws.outputs.assign(1, std::move(out));
  }

 private:
  enum class Mode { kNone, kShape, kRel, kInput };

  bool has_arg(const std::string& name) const {
    return spec_.has(name) || spec_.is_tensor_arg(name);
  }

  void check_shape_input(const Workspace& ws) const {
    const Batch& s = ws.input(1);
    if (!is_integer(s.dtype()))
      op_error(spec_, std::string("the shape input (input 1) must hold integers, got ") +
                          dtype_name(s.dtype()) + ". Cast it to an integer type first.");
    if (s.size() != ws.input(0).size())
      op_error(spec_, "the shape input (input 1) has " + std::to_string(s.size()) +
                          " samples, the data has " + std::to_string(ws.input(0).size()) + ".");
    for (size_t i = 0; i < s.size(); ++i)
      if (s.shape(i).size() != 1)
        op_error(spec_, "the shape input (input 1) must be one 1-D tensor per sample, got shape " +
                            to_string(s.shape(i)) + " for sample " + std::to_string(i) + ".");
  }

  std::vector<double> shape_values(const Workspace& ws, size_t i) const {
    if (mode_ == Mode::kInput) {
      const Batch& s = ws.input(1);
      std::vector<double> v(s.shape(i)[0]);
      visit_dtype(s.dtype(), [&](auto t) {
        using T = decltype(t);
        for (size_t k = 0; k < v.size(); ++k) v[k] = static_cast<double>(s.data<T>(i)[k]);
      });
      return v;
    }
    return ws.list_arg(mode_ == Mode::kRel ? "rel_shape" : "shape", static_cast<int64_t>(i));
  }

  Shape sample_shape(const Workspace& ws, const Batch& in, DType out_type, size_t i) const {
    const Shape& in_shape = in.shape(i);
    const int ndim = static_cast<int>(in_shape.size());
    const int64_t in_size = static_cast<int64_t>(dtype_size(in.dtype()));
    const int64_t out_size = static_cast<int64_t>(dtype_size(out_type));
    const std::string sample = "sample " + std::to_string(i) + " (shape " + to_string(in_shape) + ")";
    std::vector<int64_t> src;
    const bool use_src = has_arg("src_dims");
    if (use_src) {
      for (double d : ws.list_arg("src_dims", static_cast<int64_t>(i))) src.push_back(static_cast<int64_t>(d));
      for (size_t d = 0; d < src.size(); ++d)
        if (src[d] < -1 || src[d] >= ndim)
          spec_.arg_error("src_dims", "[" + std::to_string(d) + "] = " + std::to_string(src[d]) +
                                          " is out of range for " + sample + ": give an input "
                                          "dimension in [0, " + std::to_string(ndim - 1) +
                                          "] or -1 for a new dimension of extent 1.");
    }
    Shape out;
    int wildcard = -1;
    if (mode_ == Mode::kNone) {
      if (!use_src) {
        out = in_shape;
      } else {
        for (int64_t d : src) out.push_back(d < 0 ? 1 : in_shape[d]);
        if (volume(out) != volume(in_shape))
          spec_.arg_error("src_dims", to_string(src) + " makes the shape " + to_string(out) +
                                          " of " + std::to_string(volume(out)) + " elements from " +
                                          sample + ", which has " + std::to_string(volume(in_shape)) +
                                          ". Only dimensions of extent 1 can be dropped.");
      }
      if (out_size != in_size) {
        // Only the dtype changes: the innermost extent takes up the difference.
        if (out.empty() || (out.back() * in_size) % out_size != 0)
          spec_.arg_error("dtype", std::string("cannot reinterpret ") + sample + " of " +
                                       dtype_name(in.dtype()) + " as " + dtype_name(out_type) +
                                       ": the innermost dimension holds " +
                                       std::to_string(out.empty() ? in_size : out.back() * in_size) +
                                       " bytes, not a multiple of " + std::to_string(out_size) +
                                       ". Give a 'shape' too.");
        out.back() = out.back() * in_size / out_size;
      }
      return out;
    }
    const bool rel = mode_ == Mode::kRel;
    const char* arg = rel ? "rel_shape" : mode_ == Mode::kShape ? "shape" : "shape input";
    std::vector<double> v = shape_values(ws, i);
    if (rel) {
      if (use_src && v.size() != src.size())
        spec_.arg_error("rel_shape", "has " + std::to_string(v.size()) + " elements and 'src_dims' " +
                                         std::to_string(src.size()) + "; give one per output dimension in both.");
      if (!use_src && static_cast<int>(v.size()) > ndim && !(static_cast<int>(v.size()) == ndim + 1 && v.back() < 0))
        spec_.arg_error("rel_shape", "has " + std::to_string(v.size()) + " elements, more than the " +
                                         std::to_string(ndim) + " dimensions of " + sample +
                                         ". To add dimensions, map them with 'src_dims' (-1 for a new one).");
    }
    for (size_t d = 0; d < v.size(); ++d) {
      // Extents past 2^62 can't be a reshape of anything in memory (and would not convert).
      if (!(std::fabs(v[d]) < 4.6e18) || (rel && !(std::fabs(v[d] * (1 + volume(in_shape))) < 4.6e18)))
        op_error(spec_, std::string(mode_ == Mode::kInput ? "the shape input" : "argument '" + std::string(arg) + "'") +
                            " is " + list_repr(v) + " for sample " + std::to_string(i) + ": the extent " +
                            num_repr(v[d]) + " is more than any sample can have.");
      if (v[d] < 0) {
        if (wildcard >= 0)
          op_error(spec_, std::string(mode_ == Mode::kInput ? "the shape input" : "argument '" + std::string(arg) + "'") +
                              " may have one negative extent, got " + list_repr(v) + " for sample " +
                              std::to_string(i) + ".");
        wildcard = static_cast<int>(d);
        out.push_back(1);
      } else if (rel) {
        int64_t s = use_src ? src[d] : static_cast<int64_t>(d);
        out.push_back(static_cast<int64_t>(std::llround(v[d] * (s < 0 ? 1 : static_cast<double>(in_shape[s])))));
      } else {
        out.push_back(static_cast<int64_t>(v[d]));
      }
    }
    const int64_t in_bytes = volume(in_shape) * in_size;
    if (wildcard >= 0) {
      int64_t rest = 0;
      if (!checked_mul(volume(out), out_size, &rest)) rest = INT64_MAX;  // fails the size check below
      if (rest == 0)
        op_error(spec_, "cannot compute the extent of dimension " + std::to_string(wildcard) +
                            " (the negative one) for " + sample + ": the other extents " +
                            to_string(out) + " hold no elements.");
      out[wildcard] = in_bytes / rest;
    }
    int64_t out_bytes = -1;
    if (!checked_mul(volume(out), out_size, &out_bytes) || out_bytes != in_bytes) {
      std::string what = sample + " has " + std::to_string(volume(in_shape)) + " elements (" +
                         std::to_string(in_bytes) + " bytes), the requested shape " + to_string(out) +
                         " has " + std::to_string(volume(out)) + " (" + std::to_string(out_bytes) +
                         " bytes). The number of bytes must stay the same: give a shape of the "
                         "same volume, or -1 for the extent to compute.";
      if (mode_ == Mode::kInput) op_error(spec_, "the shape input does not fit: " + what);
      spec_.arg_error(arg, "does not fit: " + what);
    }
    return out;
  }

  Mode mode_ = Mode::kNone;
  bool has_dtype_ = false;
  DType dtype_ = DType::kNone;
};

// Axes given as indices or layout names, in [-ndim, ndim) for `ndim` dimensions; sorted.
std::vector<int> resolve_axes(const OpSpec& spec, const Workspace& ws, const Batch& in,
                              int64_t sample, int ndim) {
  std::vector<int> axes;
  if (spec.has("axis_names")) {
    const std::string names = spec.get<std::string>("axis_names");
    for (char c : names) {
      size_t p = in.layout().find(c);
      if (p == std::string::npos)
        spec.arg_error("axis_names", std::string("names the axis '") + c + "', which the input layout \"" +
                                         in.layout() + "\" does not have.");
      axes.push_back(static_cast<int>(p));
    }
  } else {
    for (double a : ws.list_arg("axes", sample)) {
      int64_t ax = static_cast<int64_t>(a);
      if (ax < -ndim || ax >= ndim)
        spec.arg_error("axes", "has the axis " + std::to_string(ax) + ", out of range for " +
                                   std::to_string(ndim) + "-D input: give axes in [" +
                                   std::to_string(-ndim) + ", " + std::to_string(ndim - 1) + "].");
      axes.push_back(static_cast<int>(ax < 0 ? ax + ndim : ax));
    }
  }
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
    spec.arg_error(spec.has("axis_names") ? "axis_names" : "axes",
                   "names the axis " + std::to_string(*std::adjacent_find(axes.begin(), axes.end())) +
                       " twice; give each axis once.");
  return axes;
}

class Squeeze : public Operator {
 public:
  explicit Squeeze(const OpSpec& spec) : Operator(spec) {
    const bool axes = spec.has("axes") || spec.is_tensor_arg("axes");
    const bool names = spec.has("axis_names");
    if (axes && names) op_error(spec, "give either 'axes' or 'axis_names', not both.");
    if (!axes && !names) op_error(spec, "give the dimensions to remove as 'axes' or 'axis_names'.");
  }
  bool sample_wise() const override { return false; }

  void run_batch(Workspace& ws) override {
    const Batch& in = ws.input(0);
    Batch out = view_of(in, in.dtype(), "");
    std::string layout = in.layout();
    for (size_t i = 0; i < in.size(); ++i) {
      const Shape& s = in.shape(i);
      std::vector<int> axes = resolve_axes(spec_, ws, in, static_cast<int64_t>(i), static_cast<int>(s.size()));
      Shape o;
      for (size_t d = 0; d < s.size(); ++d)
        if (!std::binary_search(axes.begin(), axes.end(), static_cast<int>(d))) o.push_back(s[d]);
      for (int a : axes)
        if (s[a] != 1 && !(volume(s) == 0 && volume(o) == 0))
          spec_.arg_error(spec_.has("axis_names") ? "axis_names" : "axes",
                          "removes dimension " + std::to_string(a) + " of sample " + std::to_string(i) +
                              " (shape " + to_string(s) + "), whose extent is " + std::to_string(s[a]) +
                              ", not 1; only dimensions of extent 1 can be removed.");
      out[i].shape = o;
      if (i == 0 && !in.layout().empty()) {
        layout.clear();
        for (size_t d = 0; d < in.layout().size(); ++d)
          if (!std::binary_search(axes.begin(), axes.end(), static_cast<int>(d))) layout += in.layout()[d];
      }
    }
    out.set_layout(in.layout().empty() ? "" : layout);
    ws.outputs.assign(1, std::move(out));
  }
};

class ExpandDims : public Operator {
 public:
  explicit ExpandDims(const OpSpec& spec) : Operator(spec) {
    std::vector<int64_t> axes = spec.get<std::vector<int64_t>>("axes");
    names_ = spec.get<std::string>("new_axis_names");
    if (!names_.empty() && names_.size() != axes.size())
      spec.arg_error("new_axis_names", "has " + std::to_string(names_.size()) + " names for " +
                                           std::to_string(axes.size()) + " new axes; give one name per axis in 'axes'.");
    for (size_t k = 0; k < axes.size(); ++k) {
      if (axes[k] < 0)
        spec.arg_error("axes", "must not be negative, got " + to_string(axes) +
                                   "; the axes are positions in the output.");
      pairs_.push_back({axes[k], names_.empty() ? '\0' : names_[k]});
    }
    std::sort(pairs_.begin(), pairs_.end());
    for (size_t k = 1; k < pairs_.size(); ++k)
      if (pairs_[k].first == pairs_[k - 1].first)
        spec.arg_error("axes", "has the axis " + std::to_string(pairs_[k].first) + " twice, got " + to_string(axes) + ".");
  }
  bool sample_wise() const override { return false; }

  void run_batch(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int in_ndim = in.ndim();
    const int out_ndim = in_ndim + static_cast<int>(pairs_.size());
    for (const auto& p : pairs_)
      if (p.first >= out_ndim)
        spec_.arg_error("axes", "has the axis " + std::to_string(p.first) + ", but the output has " +
                                    std::to_string(out_ndim) + " dimensions (" + std::to_string(in_ndim) +
                                    " of the input and " + std::to_string(pairs_.size()) +
                                    " new); give axes in [0, " + std::to_string(out_ndim - 1) + "].");
    std::string layout;
    if (!names_.empty()) {
      if (in.layout().empty() && in_ndim > 0)
        spec_.arg_error("new_axis_names", "needs an input with a layout, and the input has none. "
                                          "Give the input a layout (or leave new_axis_names out).");
      layout = expand(in.layout(), [](const auto& p) { return std::string(1, p.second); },
                      [&](int k) { return std::string(1, in.layout()[k]); }, std::string());
    }
    Batch out = view_of(in, in.dtype(), layout);
    for (size_t i = 0; i < in.size(); ++i)
      out[i].shape = expand(in.shape(i), [](const auto&) { return Shape{1}; },
                            [&](int k) { return Shape{in.shape(i)[k]}; }, Shape());
    ws.outputs.assign(1, std::move(out));
  }

 private:
  // Walks the output dimensions: new ones from `fresh`, the input's in order from `old`.
  template <typename Seq, typename Fresh, typename Old>
  Seq expand(const Seq& in, Fresh fresh, Old old, Seq out) const {
    size_t p = 0;
    int k = 0;
    const size_t n = in.size() + pairs_.size();
    for (size_t d = 0; d < n; ++d) {
      if (p < pairs_.size() && pairs_[p].first == static_cast<int64_t>(d)) {
        Seq f = fresh(pairs_[p++]);
        out.insert(out.end(), f.begin(), f.end());
      } else {
        Seq o = old(k++);
        out.insert(out.end(), o.begin(), o.end());
      }
    }
    return out;
  }

  std::string names_;
  std::vector<std::pair<int64_t, char>> pairs_;
};

const char* kShapeDoc =
    "The desired shape of the output. One extent may be negative: it is computed so that the "
    "volume stays the same (input [480, 640, 3] and shape [240, -1] give [240, 3840]). "
    "Exclusive with rel_shape and the shape input.";
const char* kRelShapeDoc =
    "The output shape relative to the input's: out[i] = in[src_dims[i] or i] * rel_shape[i] "
    "(rounded). One extent may be negative (computed from the volume). Without src_dims it has "
    "at most as many elements as the input has dimensions (one more when the last is negative).";
const char* kSrcDimsDoc =
    "Input dimensions to keep, in their new order; -1 inserts a dimension of extent 1 "
    "([300, 200, 1] with src_dims [-1, 1, 0] gives [1, 200, 300]).";
const char* kLayoutDoc =
    "The output layout. Left out: the input's layout where the number of dimensions is "
    "unchanged, else none. Given: it must have one character per output dimension (\"\" clears it).";

void reshape_args(OpSchema& schema) {
  schema.inputs(1, 2, {"data", "shape_input"}).outputs(1)
      .arg({.name = "shape", .type = ArgType::kIntList, .optional = true, .doc = kShapeDoc, .tensor = true})
      .arg({.name = "rel_shape", .type = ArgType::kFloatList, .optional = true, .doc = kRelShapeDoc, .tensor = true})
      .arg({.name = "src_dims", .type = ArgType::kIntList, .optional = true, .doc = kSrcDimsDoc, .tensor = true})
      .arg({.name = "layout", .type = ArgType::kString, .optional = true, .doc = kLayoutDoc});
}

}  // namespace

STOKER_REGISTER_OP_NAMED(reshape, "reshape") {
  schema.doc("Treats the input as if it had another shape and/or layout. The data is not copied: "
             "the output shares the input's memory.");
  reshape_args(schema);
  schema.backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<Reshape>(s); })
      STOKER_GPU_VIEW(Reshape);
}

STOKER_REGISTER_OP_NAMED(reinterpret, "reinterpret") {
  schema.doc("Treats the input as if it had another element type, shape and/or layout. The data "
             "is not copied. With a new dtype and no new shape, the innermost extent changes so "
             "that the number of bytes stays the same.");
  reshape_args(schema);
  schema.arg({.name = "dtype", .type = ArgType::kDType, .optional = true,
              .doc = "The output element type; the sample's size in bytes stays the same."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<Reshape>(s); })
      STOKER_GPU_VIEW(Reshape);
}

STOKER_REGISTER_OP_NAMED(squeeze, "squeeze") {
  schema.doc("Removes the dimensions given as axes or axis_names, which must have extent 1 "
             "(or leave an empty sample empty). The data is not copied.")
      .inputs(1, 1, {"data"}).outputs(1)
      .arg({.name = "axes", .type = ArgType::kIntList, .optional = true,
            .doc = "Indices of the dimensions to remove (negative ones count from the back).", .tensor = true})
      .arg({.name = "axis_names", .type = ArgType::kString, .optional = true,
            .doc = "Layout names of the dimensions to remove."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<Squeeze>(s); })
      STOKER_GPU_VIEW(Squeeze);
}

STOKER_REGISTER_OP_NAMED(expand_dims, "expand_dims") {
  schema.doc("Inserts dimensions of extent 1 at the output positions given as axes. With "
             "new_axis_names the layout gets their names; without, the layout is cleared. The "
             "data is not copied.")
      .inputs(1, 1, {"data"}).outputs(1)
      .arg({.name = "axes", .type = ArgType::kIntList, .doc = "Positions of the new dimensions in the output."})
      .arg({.name = "new_axis_names", .type = ArgType::kString, .default_value = std::string(),
            .doc = "Names of the new dimensions in the layout, one per axis."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<ExpandDims>(s); })
      STOKER_GPU_VIEW(ExpandDims);
}

}  // namespace stoker
