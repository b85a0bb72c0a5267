// Constants and encodings: constant, full, full_like, zeros, zeros_like, ones, ones_like,
// one_hot, lookup_table. No kernels: each is a fill or a per-element table lookup.
#include <cmath>
#include <cstring>

#include "core/convert.h"
#include "kernels/cuda/copy_gpu.h"
#include "kernels/cuda/lookup_gpu.h"
#include "ops/generic/gpu_twin.h"
#include "pipeline/gpu_batch.h"
#include "pipeline/operator.h"

namespace stoker {
namespace {

std::string dims_word(size_t n) { return std::to_string(n) + (n == 1 ? " dimension" : " dimensions"); }

// A non-empty `layout` must name every dimension of the output.
void check_layout(const OpSpec& spec, const std::string& layout, size_t ndim) {
  if (!layout.empty() && layout.size() != ndim)
    spec.arg_error("layout", "'" + layout + "' has " + dims_word(layout.size()) +
                                 " but the output has " + dims_word(ndim) + "; give one letter per " +
                                 "dimension or leave layout out.");
}

// The `shape` of sample i: the per-sample tensor or the constant; () without one.
Shape shape_arg(const Workspace& ws, const OpSpec& spec, int64_t i) {
  std::vector<double> v = ws.list_arg("shape", i, {});
  Shape s;
  for (double d : v) {
    if (!(d >= 0) || d != std::floor(d))
      spec.arg_error("shape", "must be non-negative integers, got " + std::to_string(d) +
                                  " in the shape of sample " + std::to_string(i) + ".");
    s.push_back(static_cast<int64_t>(d));
  }
  return s;
}

// Copies `src` (elements of `esize` bytes, shape `ss`) into `dst` of shape `ds`, NumPy-style
// broadcasting (ss padded with leading 1s); the caller checked that it broadcasts.
void broadcast_copy(char* dst, const Shape& ds, const char* src, const Shape& ss, size_t esize) {
  int64_t n = volume(ds);
  if (n == 0) return;
  if (volume(ss) == 1) {
    for (int64_t j = 0; j < n; ++j) std::memcpy(dst + j * esize, src, esize);
    return;
  }
  size_t nd = ds.size(), off = nd - ss.size();
  std::vector<int64_t> stride(nd, 0), idx(nd, 0);
  int64_t st = 1;
  for (size_t k = ss.size(); k-- > 0;) {
    stride[k + off] = ss[k] == 1 ? 0 : st;
    st *= ss[k];
  }
  int64_t pos = 0;
  for (int64_t j = 0; j < n; ++j) {
    std::memcpy(dst + j * esize, src + pos * esize, esize);
    for (size_t k = nd; k-- > 0;) {
      pos += stride[k];
      if (++idx[k] < ds[k]) break;
      pos -= stride[k] * ds[k];
      idx[k] = 0;
    }
  }
}

bool broadcasts_to(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) return false;
  size_t off = to.size() - from.size();
  for (size_t k = 0; k < from.size(); ++k)
    if (from[k] != 1 && from[k] != to[k + off]) return false;
  return true;
}

// ---- constant: values from the arguments, the same in every sample.
class Constant : public Operator {
 public:
  explicit Constant(const OpSpec& spec) : Operator(spec) {
    bool f = spec.has("fdata"), n = spec.has("idata");
    if (f && n)
      spec.arg_error("fdata", "and 'idata' are mutually exclusive: give floating-point values in "
                              "fdata or integers in idata, not both.");
    if (!f && !n)
      spec.arg_error("fdata", "or 'idata' is required: the values of the constant.");
    float_data_ = f;
    if (f) {
      // DALI keeps fdata as float32, whatever the output type.
      for (double v : spec.get<std::vector<double>>("fdata")) floats_.push_back(static_cast<float>(v));
    }
    if (n) ints_ = spec.get<std::vector<int64_t>>("idata");
    int64_t count = f ? static_cast<int64_t>(floats_.size()) : static_cast<int64_t>(ints_.size());
    dtype_ = spec.has("dtype") ? static_cast<DType>(spec.get<int64_t>("dtype"))
                               : (f ? DType::kFloat32 : DType::kInt32);
    if (spec.has("shape")) {
      shape_ = spec.get<std::vector<int64_t>>("shape");
      int64_t v = checked_volume(shape_);
      if (v < 0)
        spec.arg_error("shape", "must be non-negative extents whose product fits in 64 bits, got " +
                                    to_string(shape_) + ".");
      if (count != v && count != 1)
        spec.arg_error("shape", to_string(shape_) + " holds " + std::to_string(v) + " values but " +
                                    (f ? "fdata" : "idata") + " has " + std::to_string(count) +
                                    "; give that many values, or one to fill the shape with.");
    } else {
      shape_ = {count};
    }
    layout_ = spec.get<std::string>("layout");
    check_layout(spec, layout_, shape_.size());
  }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    OutputDesc d{dtype_, layout_, std::vector<Shape>(ws.batch_size, shape_)};
    d.size_arg = "shape";
    return {d};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const int64_t total = volume(shape_);
    const bool f = float_data_;
    const size_t count = f ? floats_.size() : ints_.size();
    visit_dtype(dtype_, [&](auto t) {
      using T = decltype(t);
      T* dst = ws.output(0).data<T>(i);
      for (int64_t j = 0; j < total; ++j) {
        size_t k = count == 1 ? 0 : static_cast<size_t>(j);
        dst[j] = f ? convert_sat<T>(floats_[k]) : convert_sat<T>(ints_[k]);
      }
    });
  }

 private:
  bool float_data_ = true;
  std::vector<float> floats_;
  std::vector<int64_t> ints_;
  DType dtype_;
  Shape shape_;
  std::string layout_;
};

// ---- full, full_like, zeros, ones, zeros_like, ones_like.
enum class Fill { kFull, kFullLike, kZeros, kOnes, kZerosLike, kOnesLike };

class FillOp : public Operator {
 public:
  FillOp(const OpSpec& spec, Fill kind) : Operator(spec), kind_(kind) {}

  std::vector<OutputDesc> setup(Workspace& ws) override {
    OutputDesc d;
    bool like = kind_ == Fill::kFullLike || kind_ == Fill::kZerosLike || kind_ == Fill::kOnesLike;
    if (like) {
      const Batch& in = ws.input(0);
      d.dtype = in.dtype();
      if (kind_ != Fill::kFullLike && spec_.has("dtype"))
        d.dtype = static_cast<DType>(spec_.get<int64_t>("dtype"));
      d.layout = in.layout();
      d.shapes = in.shapes();
    } else {
      d.dtype = kind_ == Fill::kFull ? ws.input(0).dtype()
                                     : static_cast<DType>(spec_.get<int64_t>("dtype"));
      int64_t n = kind_ == Fill::kFull ? static_cast<int64_t>(ws.input(0).size()) : ws.batch_size;
      for (int64_t i = 0; i < n; ++i) d.shapes.push_back(shape_arg(ws, spec_, i));
      d.layout = spec_.has("layout") ? spec_.get<std::string>("layout") : "";
      for (const Shape& s : d.shapes) check_layout(spec_, d.layout, s.size());
      d.size_arg = "shape";
    }
    if (kind_ == Fill::kFull || kind_ == Fill::kFullLike) {
      const Batch& fill = ws.input(kind_ == Fill::kFull ? 0 : 1);
      if (fill.size() != d.shapes.size())
        fail(ErrorKind::kInvalidArgument,
             spec_.display_name() + ": fill_value has " + std::to_string(fill.size()) +
                 " samples but the batch has " + std::to_string(d.shapes.size()) + ".");
      for (size_t i = 0; i < d.shapes.size(); ++i)
        if (!broadcasts_to(fill.shape(i), d.shapes[i]))
          fail(ErrorKind::kInvalidArgument,
               spec_.display_name() + ": fill_value of sample " + std::to_string(i) + " has shape " +
                   to_string(fill.shape(i)) + ", which does not broadcast to the output shape " +
                   to_string(d.shapes[i]) + " (each of its trailing dimensions must be 1 or equal "
                   "to the output's).");
    }
    dtype_ = d.dtype;
    return {d};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    Batch& out = ws.output(0);
    int64_t n = volume(out.shape(i));
    if (kind_ == Fill::kFull || kind_ == Fill::kFullLike) {
      const Batch& fill = ws.input(kind_ == Fill::kFull ? 0 : 1);
      const Shape& fs = fill.shape(i);
      int64_t fn = volume(fs);
      std::vector<char> conv(fn * dtype_size(dtype_));
      visit_dtype(fill.dtype(), [&](auto tin) {
        using In = decltype(tin);
        visit_dtype(dtype_, [&](auto tout) {
          using Out = decltype(tout);
          const In* src = fill.data<In>(i);
          Out* dst = reinterpret_cast<Out*>(conv.data());
          for (int64_t k = 0; k < fn; ++k) dst[k] = convert_sat<Out>(src[k]);
        });
      });
      broadcast_copy(static_cast<char*>(out[i].data), out.shape(i), conv.data(), fs, dtype_size(dtype_));
      return;
    }
    bool one = kind_ == Fill::kOnes || kind_ == Fill::kOnesLike;
    visit_dtype(dtype_, [&](auto t) {
      using T = decltype(t);
      T v = convert_sat<T>(one ? 1 : 0);
      T* dst = out.data<T>(i);
      for (int64_t k = 0; k < n; ++k) dst[k] = v;
    });
  }

  // The GPU twin of full (the other fills are HostGpuTwins): fill_value has the output's type,
  // so the output is fill_value broadcast, a strided copy with steps of 0 where it repeats.
  void run_gpu(Workspace& ws, const std::vector<OutputDesc>& descs) {
    STOKER_ASSERT(kind_ == Fill::kFull, "FillOp::run_gpu: only full runs on the GPU this way");
    require_device_input(ws);
    const Batch& fill = ws.input(0);
    const OutputDesc& d = descs[0];
    ws.outputs.assign(1, allocate_device_batch(ws, d.dtype, d.shapes, d.layout));
    std::vector<kernels::cuda::CopyJob> jobs(fill.size());
    for (size_t i = 0; i < fill.size(); ++i) {
      const Shape& os = d.shapes[i];
      const Shape& fs = fill.shape(i);
      const std::vector<int64_t> dense = kernels::cuda::dense_strides(fs);
      std::vector<int64_t> in_stride(os.size(), 0);
      const size_t off = os.size() - fs.size();
      for (size_t k = 0; k < fs.size(); ++k) in_stride[off + k] = fs[k] == 1 ? 0 : dense[k];
      if (!kernels::cuda::make_copy_job(&jobs[i], fill[i].data, ws.outputs[0][i].data, os, in_stride,
                                        kernels::cuda::dense_strides(os)))
        fail(ErrorKind::kUnsupported,
             spec_.display_name() + ": the GPU backend broadcasts fill_value over up to " +
                 std::to_string(kernels::cuda::kMaxCopyDims) + " distinct dimensions; sample " +
                 std::to_string(i) + " needs more (output shape " + to_string(os) + ").");
    }
    kernels::cuda::strided_copy_gpu(ws, dtype_size(d.dtype), jobs);
  }

 private:
  Fill kind_;
  DType dtype_ = DType::kNone;
};

// ---- one_hot
class OneHot : public Operator {
 public:
  explicit OneHot(const OpSpec& spec) : Operator(spec) {
    num_classes_ = spec.get<int64_t>("num_classes");
    // `axis` has no schema default so that an explicit -1 can be told from none: DALI reads
    // one-value samples as scalars only when no axis is given.
    axis_given_ = spec.has("axis");
    if (axis_given_) axis_ = spec.get<int64_t>("axis");
    dtype_ = static_cast<DType>(spec.get<int64_t>("dtype"));
    on_ = spec.get<double>("on_value");
    off_ = spec.get<double>("off_value");
    if (spec.has("axis_name")) {
      axis_name_ = spec.get<std::string>("axis_name");
      if (axis_name_.size() != 1)
        spec.arg_error("axis_name", "must be a single character, got \"" + axis_name_ + "\".");
    }
  }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    // DALI's legacy rule: when every sample holds one value (and no axis was given), the input
    // is a batch of scalars and each output is just the `num_classes` axis.
    scalar_ = !axis_given_ || in.ndim() == 0;
    for (size_t i = 0; i < in.size() && scalar_; ++i) scalar_ = volume(in.shape(i)) == 1;
    int ndim = scalar_ ? 0 : in.ndim();
    if (axis_ < -1 || axis_ > ndim)
      spec_.arg_error("axis", "must be in [-1, " + std::to_string(ndim) + "] for " +
                                  dims_word(ndim) + " of input, got " + std::to_string(axis_) + ".");
    int axis = axis_ == -1 ? ndim : static_cast<int>(axis_);
    OutputDesc d;
    d.dtype = dtype_;
    for (size_t i = 0; i < in.size(); ++i) {
      Shape s = scalar_ ? Shape{} : in.shape(i);
      s.insert(s.begin() + axis, num_classes_);
      d.shapes.push_back(s);
    }
    if (!axis_name_.empty()) {
      std::string layout = scalar_ ? "" : in.layout();
      if (static_cast<int>(layout.size()) != ndim)
        spec_.arg_error("axis_name", "names the new axis within the input's layout, but the input "
                                     "has no layout (its samples have " + dims_word(ndim) +
                                     "); give the input a layout or leave axis_name out.");
      layout.insert(layout.begin() + axis, axis_name_[0]);
      d.layout = layout;
    }
    axis_pos_ = axis;
    return {d};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const Batch& in = ws.input(0);
    Batch& out = ws.output(0);
    const Shape& os = out.shape(i);
    // outer x classes x inner
    int64_t outer = 1, inner = 1;
    for (int k = 0; k < axis_pos_; ++k) outer *= os[k];
    for (size_t k = axis_pos_ + 1; k < os.size(); ++k) inner *= os[k];
    visit_dtype(in.dtype(), [&](auto tin) {
      using In = decltype(tin);
      const In* src = in.data<In>(i);
      visit_dtype(dtype_, [&](auto tout) {
        using Out = decltype(tout);
        // Truncated toward zero as DALI's cast of on_value / off_value; saturated where DALI's
        // cast is undefined (out of range).
        auto cast = [](double v) {
          if constexpr (std::is_integral_v<Out>) v = std::trunc(v);
          return convert_sat<Out>(v);
        };
        Out on = cast(on_), off = cast(off_);
        Out* dst = out.data<Out>(i);
        for (int64_t k = 0; k < volume(os); ++k) dst[k] = off;
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t j = 0; j < inner; ++j) {
            double c = static_cast<double>(src[o * inner + j]);
            // A class is the input truncated toward zero; NaN and out-of-range values set none.
            if (!(c > -1.0 && c < static_cast<double>(num_classes_))) continue;
            int64_t cls = static_cast<int64_t>(c);
            dst[(o * num_classes_ + cls) * inner + j] = on;
          }
      });
    });
  }

  void run_gpu(Workspace& ws, const std::vector<OutputDesc>& descs) {
    require_device_input(ws);
    const Batch& in = ws.input(0);
    const OutputDesc& d = descs[0];
    ws.outputs.assign(1, allocate_device_batch(ws, d.dtype, d.shapes, d.layout));
    Batch& out = ws.outputs[0];
    uint64_t on = 0, off = 0;
    visit_dtype(dtype_, [&](auto tout) {
      using Out = decltype(tout);
      auto cast = [](double v) {
        if constexpr (std::is_integral_v<Out>) v = std::trunc(v);
        return convert_sat<Out>(v);
      };
      Out a = cast(on_), b = cast(off_);
      std::memcpy(&on, &a, sizeof(Out));
      std::memcpy(&off, &b, sizeof(Out));
    });
    std::vector<kernels::cuda::OneHotJob> jobs(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      const Shape& os = out.shape(i);
      int64_t outer = 1, inner = 1;
      for (int k = 0; k < axis_pos_; ++k) outer *= os[k];
      for (size_t k = axis_pos_ + 1; k < os.size(); ++k) inner *= os[k];
      jobs[i] = {in[i].data, out[i].data, outer, inner};
    }
    kernels::cuda::one_hot_gpu(ws, in.dtype(), dtype_size(dtype_), num_classes_, on, off, jobs);
  }

 private:
  int64_t num_classes_ = 0, axis_ = -1;
  bool axis_given_ = false, scalar_ = false;
  int axis_pos_ = 0;
  DType dtype_;
  double on_ = 1, off_ = 0;
  std::string axis_name_;
};

// ---- lookup_table
class LookupTable : public Operator {
 public:
  static constexpr int64_t kMaxKey = 65535;
  explicit LookupTable(const OpSpec& spec) : Operator(spec) {
    dtype_ = static_cast<DType>(spec.get<int64_t>(spec.has("output_dtype") ? "output_dtype" : "dtype"));
    std::vector<int64_t> keys = spec.get<std::vector<int64_t>>("keys");
    std::vector<double> values = spec.get<std::vector<double>>("values");
    if (keys.size() != values.size())
      spec.arg_error("keys", "and 'values' must have the same length, got " +
                                 std::to_string(keys.size()) + " keys and " +
                                 std::to_string(values.size()) + " values.");
    int64_t max_key = -1;
    for (int64_t k : keys) {
      if (k < 0 || k > kMaxKey)
        spec.arg_error("keys", "must be in [0, 65535], got " + std::to_string(k) + ".");
      max_key = std::max(max_key, k);
    }
    // As DALI: values are float32, converted to the output type with rounding and saturation.
    default_ = static_cast<float>(spec.get<double>("default_value"));
    table_.assign(max_key + 1, default_);
    for (size_t j = 0; j < keys.size(); ++j) table_[keys[j]] = static_cast<float>(values[j]);  // last wins
  }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    if (!is_integer(in.dtype()))
      fail(ErrorKind::kTypeMismatch,
           spec_.display_name() + ": the input must have an integer type (its values are the keys), "
           "got " + dtype_name(in.dtype()) + "; cast it with fn.cast first.");
    return {OutputDesc{dtype_, in.layout(), in.shapes()}};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const Batch& in = ws.input(0);
    Batch& out = ws.output(0);
    int64_t n = volume(in.shape(i));
    visit_dtype(in.dtype(), [&](auto tin) {
      using In = decltype(tin);
      if constexpr (std::is_integral_v<In> && !std::is_same_v<In, bool>) {
        const In* src = in.data<In>(i);
        visit_dtype(dtype_, [&](auto tout) {
          using Out = decltype(tout);
          std::vector<Out> lut(table_.size());
          for (size_t k = 0; k < lut.size(); ++k) lut[k] = convert_sat<Out>(table_[k]);
          Out dflt = convert_sat<Out>(default_);
          Out* dst = out.data<Out>(i);
          const uint64_t size = lut.size();
          for (int64_t k = 0; k < n; ++k) {
            In key = src[k];
            bool inside;
            if constexpr (std::is_signed_v<In>) inside = key >= 0 && static_cast<uint64_t>(key) < size;
            else inside = static_cast<uint64_t>(key) < size;
            dst[k] = inside ? lut[static_cast<size_t>(key)] : dflt;
          }
        });
      }
    });
  }

  void run_gpu(Workspace& ws, const std::vector<OutputDesc>& descs) {
    require_device_input(ws);
    const Batch& in = ws.input(0);
    const OutputDesc& d = descs[0];
    ws.outputs.assign(1, allocate_device_batch(ws, d.dtype, d.shapes, d.layout));
    std::vector<uint64_t> table(table_.size(), 0);
    uint64_t dflt = 0;
    visit_dtype(dtype_, [&](auto tout) {
      using Out = decltype(tout);
      for (size_t k = 0; k < table.size(); ++k) {
        Out v = convert_sat<Out>(table_[k]);
        std::memcpy(&table[k], &v, sizeof(Out));
      }
      Out v = convert_sat<Out>(default_);
      std::memcpy(&dflt, &v, sizeof(Out));
    });
    std::vector<kernels::cuda::LookupJob> jobs(in.size());
    for (size_t i = 0; i < in.size(); ++i) jobs[i] = {in[i].data, ws.outputs[0][i].data, volume(in.shape(i))};
    kernels::cuda::lookup_gpu(ws, in.dtype(), dtype_size(dtype_), table, dflt, jobs);
  }

 private:
  DType dtype_;
  float default_ = 0;
  std::vector<float> table_;
};

void shape_layout_args(OpSchema& s, const char* what) {
  s.arg({.name = "shape", .type = ArgType::kIntList, .optional = true,
         .doc = std::string("Shape of each output sample; without it each sample is a scalar ") + what + ".",
         .tensor = true})
      .arg({.name = "layout", .type = ArgType::kString, .optional = true,
            .doc = "Layout of the output (one letter per dimension)."});
}

}  // namespace

STOKER_REGISTER_OP_NAMED(constant, "constant") {
  schema.doc("A batch of constant tensors: fdata (floats) or idata (integers), reshaped to `shape` "
             "(one value fills the whole shape). What types.Constant([...]) and arrays in "
             "arithmetic (`images + [1, 2, 3]`) build.")
      .inputs(0, 0).outputs(1)
      .arg({.name = "fdata", .type = ArgType::kFloatList, .optional = true,
            .doc = "The values, for floating-point constants (kept as float32). Excludes idata."})
      .arg({.name = "idata", .type = ArgType::kIntList, .optional = true,
            .doc = "The values, for integer constants. Excludes fdata."})
      .arg({.name = "shape", .type = ArgType::kIntList, .optional = true,
            .doc = "Shape of the output; without it, a 1-D tensor of the values."})
      .arg({.name = "dtype", .type = ArgType::kDType, .optional = true,
            .doc = "Output type; float32 for fdata, int32 for idata when not given."})
      .arg({.name = "layout", .type = ArgType::kString, .default_value = std::string(""),
            .doc = "Layout of the output (one letter per dimension of shape)."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<Constant>(s); })
      STOKER_GPU_HOST_TWIN(Constant);
}

STOKER_REGISTER_OP_NAMED(full, "full") {
  schema.doc("New data of the given shape, filled with fill_value (broadcast NumPy-style) and of "
             "its type.")
      .inputs(1, 1, {"fill_value"}).outputs(1);
  shape_layout_args(schema, "");
  schema.backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<FillOp>(s, Fill::kFull); })
      STOKER_GPU_TWIN_WITH(FillOp, Fill::kFull);
}

STOKER_REGISTER_OP_NAMED(full_like, "full_like") {
  schema.doc("New data with the shape, type and layout of data_like, filled with fill_value "
             "(broadcast NumPy-style, converted to data_like's type).")
      .inputs(2, 2, {"data_like", "fill_value"}).outputs(1)
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<FillOp>(s, Fill::kFullLike); });
}

STOKER_REGISTER_OP_NAMED(zeros, "zeros") {
  schema.doc("New data of the given shape and type, filled with zeros.")
      .inputs(0, 0).outputs(1)
      .arg({.name = "dtype", .type = ArgType::kDType,
            .default_value = int64_t{static_cast<int>(DType::kInt32)}, .doc = "Output type."});
  shape_layout_args(schema, "");
  schema.backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<FillOp>(s, Fill::kZeros); })
      STOKER_GPU_HOST_TWIN_WITH(FillOp, Fill::kZeros);
}

STOKER_REGISTER_OP_NAMED(ones, "ones") {
  schema.doc("New data of the given shape and type, filled with ones.")
      .inputs(0, 0).outputs(1)
      .arg({.name = "dtype", .type = ArgType::kDType,
            .default_value = int64_t{static_cast<int>(DType::kInt32)}, .doc = "Output type."});
  shape_layout_args(schema, "");
  schema.backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<FillOp>(s, Fill::kOnes); })
      STOKER_GPU_HOST_TWIN_WITH(FillOp, Fill::kOnes);
}

STOKER_REGISTER_OP_NAMED(zeros_like, "zeros_like") {
  schema.doc("New data with the shape, type and layout of data_like, filled with zeros.")
      .inputs(1, 1, {"data_like"}).outputs(1)
      .arg({.name = "dtype", .type = ArgType::kDType, .optional = true,
            .doc = "Output type instead of data_like's."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<FillOp>(s, Fill::kZerosLike); })
      STOKER_GPU_HOST_TWIN_WITH(FillOp, Fill::kZerosLike);
}

STOKER_REGISTER_OP_NAMED(ones_like, "ones_like") {
  schema.doc("New data with the shape, type and layout of data_like, filled with ones.")
      .inputs(1, 1, {"data_like"}).outputs(1)
      .arg({.name = "dtype", .type = ArgType::kDType, .optional = true,
            .doc = "Output type instead of data_like's."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<FillOp>(s, Fill::kOnesLike); })
      STOKER_GPU_HOST_TWIN_WITH(FillOp, Fill::kOnesLike);
}

STOKER_REGISTER_OP_NAMED(one_hot, "one_hot") {
  schema.doc("One-hot encoding: a new axis of num_classes elements, on_value at the input's class "
             "(the value truncated toward zero) and off_value elsewhere. When every sample holds "
             "one value and no axis is given, each output is just that axis.")
      .inputs(1, 1, {"input"}).outputs(1)
      .arg({.name = "num_classes", .type = ArgType::kInt, .default_value = int64_t{0},
            .doc = "Number of classes: the size of the new axis.", .min = 0.0})
      .arg({.name = "axis", .type = ArgType::kInt, .optional = true,
            .doc = "Where the new axis goes; -1 or not given: last."})
      .arg({.name = "axis_name", .type = ArgType::kString, .optional = true,
            .doc = "One letter naming the new axis in the output layout."})
      .arg({.name = "on_value", .type = ArgType::kFloat, .default_value = 1.0,
            .doc = "The value at the class (cast to dtype)."})
      .arg({.name = "off_value", .type = ArgType::kFloat, .default_value = 0.0,
            .doc = "The value elsewhere (cast to dtype)."})
      .arg({.name = "dtype", .type = ArgType::kDType,
            .default_value = int64_t{static_cast<int>(DType::kFloat32)}, .doc = "Output type."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<OneHot>(s); })
      STOKER_GPU_TWIN(OneHot);
}

STOKER_REGISTER_OP_NAMED(lookup_table, "lookup_table") {
  schema.doc("Maps integer inputs through a table given by keys and values (the last value of a "
             "repeated key wins); inputs not among the keys get default_value.")
      .inputs(1, 1, {"input"}).outputs(1)
      .arg({.name = "keys", .type = ArgType::kIntList, .default_value = std::vector<int64_t>{},
            .doc = "The keys, in [0, 65535]."})
      .arg({.name = "values", .type = ArgType::kFloatList, .default_value = std::vector<double>{},
            .doc = "The value of each key."})
      .arg({.name = "default_value", .type = ArgType::kFloat, .default_value = 0.0,
            .doc = "The output for inputs that are not keys."})
      .arg({.name = "dtype", .type = ArgType::kDType,
            .default_value = int64_t{static_cast<int>(DType::kFloat32)}, .doc = "Output type."})
      .arg({.name = "output_dtype", .type = ArgType::kDType, .optional = true,
            .doc = "Old name of dtype.", .deprecated_alias = true, .alias_of = "dtype"})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<LookupTable>(s); })
      STOKER_GPU_TWIN(LookupTable);
}

}  // namespace stoker
