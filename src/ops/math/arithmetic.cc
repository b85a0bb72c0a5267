// Element-wise arithmetic, comparisons and math functions behind the Python operators on
// pipeline nodes (`images * 2 + 1`, `labels == 3`) and stoker.math (sqrt, clamp, atan2, ...),
// with DALI's type promotion and NumPy broadcasting. One to three operands, each a batch or a
// scalar constant.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "core/convert.h"
#include "kernels/arith_op.h"
#include "kernels/cuda/arithmetic_gpu.h"
#include "ops/generic/gpu_twin.h"
#include "pipeline/gpu_batch.h"
#include "pipeline/operator.h"

namespace stoker {
namespace {

using Op = ArithOp;
using Kind = ArithKind;

// bool_ok: the operation takes operands that are all booleans (DALI refuses the others, which
// would give a boolean result of no clear meaning: True + True).
struct OpInfo { const char* name; Op op; int arity; Kind kind; bool bool_ok; };
const OpInfo kOps[] = {
    {"add", Op::kAdd, 2, Kind::kArith, false}, {"sub", Op::kSub, 2, Kind::kArith, false},
    {"mul", Op::kMul, 2, Kind::kArith, true}, {"div", Op::kDiv, 2, Kind::kFloat, false},
    {"floordiv", Op::kFloorDiv, 2, Kind::kArith, false}, {"mod", Op::kMod, 2, Kind::kArith, false},
    {"min", Op::kMin, 2, Kind::kArith, false}, {"max", Op::kMax, 2, Kind::kArith, false},
    {"pow", Op::kPow, 2, Kind::kArith, false}, {"fpow", Op::kFPow, 2, Kind::kFloat, false},
    {"atan2", Op::kAtan2, 2, Kind::kFloat, false}, {"clamp", Op::kClamp, 3, Kind::kArith, false},
    {"eq", Op::kEq, 2, Kind::kCompare, true}, {"ne", Op::kNe, 2, Kind::kCompare, true},
    {"lt", Op::kLt, 2, Kind::kCompare, true}, {"le", Op::kLe, 2, Kind::kCompare, true},
    {"gt", Op::kGt, 2, Kind::kCompare, true}, {"ge", Op::kGe, 2, Kind::kCompare, true},
    {"bitand", Op::kAnd, 2, Kind::kBitwise, true}, {"bitor", Op::kOr, 2, Kind::kBitwise, true},
    {"bitxor", Op::kXor, 2, Kind::kBitwise, true}, {"neg", Op::kNeg, 1, Kind::kArith, false},
    {"abs", Op::kAbs, 1, Kind::kArith, false},
    {"sqrt", Op::kSqrt, 1, Kind::kFloat, false}, {"rsqrt", Op::kRsqrt, 1, Kind::kFloat, false},
    {"cbrt", Op::kCbrt, 1, Kind::kFloat, false}, {"exp", Op::kExp, 1, Kind::kFloat, false},
    {"log", Op::kLog, 1, Kind::kFloat, false}, {"log2", Op::kLog2, 1, Kind::kFloat, false},
    {"log10", Op::kLog10, 1, Kind::kFloat, false}, {"fabs", Op::kFabs, 1, Kind::kFloat, false},
    {"floor", Op::kFloor, 1, Kind::kFloat, false}, {"ceil", Op::kCeil, 1, Kind::kFloat, false},
    {"sin", Op::kSin, 1, Kind::kFloat, false}, {"cos", Op::kCos, 1, Kind::kFloat, false},
    {"tan", Op::kTan, 1, Kind::kFloat, false}, {"asin", Op::kAsin, 1, Kind::kFloat, false},
    {"acos", Op::kAcos, 1, Kind::kFloat, false}, {"atan", Op::kAtan, 1, Kind::kFloat, false},
    {"sinh", Op::kSinh, 1, Kind::kFloat, false}, {"cosh", Op::kCosh, 1, Kind::kFloat, false},
    {"tanh", Op::kTanh, 1, Kind::kFloat, false}, {"asinh", Op::kAsinh, 1, Kind::kFloat, false},
    {"acosh", Op::kAcosh, 1, Kind::kFloat, false}, {"atanh", Op::kAtanh, 1, Kind::kFloat, false},
};

int bits(DType t) { return static_cast<int>(dtype_size(t) * 8); }
DType int_of(int b, bool sign) {
  switch (b) {
    case 8: return sign ? DType::kInt8 : DType::kUInt8;
    case 16: return sign ? DType::kInt16 : DType::kUInt16;
    case 32: return sign ? DType::kInt32 : DType::kUInt32;
    default: return sign ? DType::kInt64 : DType::kUInt64;
  }
}

}  // namespace

// DALI's promotion table (NumPy's for two tensors): same -> same; float with non-float -> the
// float; wider of two floats / two signed / two unsigned; signed intX with unsigned intY -> int(2Y)
// if X <= Y else intX (capped at 64 bits); bool with T -> T.
DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::kBool) return b;
  if (b == DType::kBool) return a;
  if (is_float(a) || is_float(b)) {
    if (is_float(a) && is_float(b)) return bits(a) >= bits(b) ? a : b;
    return is_float(a) ? a : b;
  }
  bool sa = is_signed(a), sb = is_signed(b);
  if (sa == sb) return bits(a) >= bits(b) ? a : b;
  DType s = sa ? a : b, u = sa ? b : a;
  if (bits(s) > bits(u)) return s;
  return int_of(std::min(64, 2 * bits(u)), true);
}

namespace {

// -a with two's complement wrap-around (the most negative value stays itself), without the
// undefined behaviour of negating it in signed arithmetic.
template <typename T>
T wrap_neg(T a) {
  if constexpr (std::is_signed_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(U{0} - static_cast<U>(a)));
  } else {
    return static_cast<T>(T{0} - a);
  }
}

template <typename T>
T apply_unary(Op op, T a) {
  if constexpr (std::is_same_v<T, float16>) {
    return T(apply_unary<float>(op, static_cast<float>(a)));
  } else if constexpr (std::is_same_v<T, bool>) {
    return a;  // unreachable: unary operations refuse booleans
  } else if constexpr (std::is_integral_v<T>) {
    switch (op) {
      case Op::kNeg: return wrap_neg(a);
      case Op::kAbs: if constexpr (std::is_signed_v<T>) return a < 0 ? wrap_neg(a) : a; else return a;
      default: return a;  // unreachable: float functions compute in floating point
    }
  } else {
    switch (op) {
      case Op::kNeg: return -a;
      case Op::kAbs: return a < 0 ? -a : a;  // DALI's: abs(-0.0) stays -0.0
      case Op::kFabs: return std::fabs(a);
      case Op::kSqrt: return std::sqrt(a);
      case Op::kRsqrt: return T(1) / std::sqrt(a);
      case Op::kCbrt: return std::cbrt(a);
      case Op::kExp: return std::exp(a);
      case Op::kLog: return std::log(a);
      case Op::kLog2: return std::log2(a);
      case Op::kLog10: return std::log10(a);
      case Op::kFloor: return std::floor(a);
      case Op::kCeil: return std::ceil(a);
      case Op::kSin: return std::sin(a);
      case Op::kCos: return std::cos(a);
      case Op::kTan: return std::tan(a);
      case Op::kAsin: return std::asin(a);
      case Op::kAcos: return std::acos(a);
      case Op::kAtan: return std::atan(a);
      case Op::kSinh: return std::sinh(a);
      case Op::kCosh: return std::cosh(a);
      case Op::kTanh: return std::tanh(a);
      case Op::kAsinh: return std::asinh(a);
      case Op::kAcosh: return std::acosh(a);
      case Op::kAtanh: return std::atanh(a);
      default: return a;
    }
  }
}

// Integer `//` and `%` are C's (truncating toward zero; the remainder has the dividend's sign),
// as in DALI; a zero divisor is refused before this is called.
template <typename T>
T apply_binary(Op op, T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    switch (op) {
      case Op::kOr: return a || b;
      case Op::kXor: return a != b;
      default: return a && b;  // kMul, kAnd (the only others that take two booleans)
    }
  } else if constexpr (std::is_same_v<T, float16>) {
    return T(apply_binary<float>(op, static_cast<float>(a), static_cast<float>(b)));
  } else {
    switch (op) {
      case Op::kAdd: return static_cast<T>(a + b);
      case Op::kSub: return static_cast<T>(a - b);
      case Op::kMul: return static_cast<T>(a * b);
      case Op::kDiv: return static_cast<T>(a / b);  // floating point only (Kind::kFloat)
      case Op::kFloorDiv:
        if constexpr (std::is_integral_v<T>) {
          if constexpr (std::is_signed_v<T>) if (b == -1) return wrap_neg(a);
          return static_cast<T>(a / b);
        } else {
          return a / b;  // DALI's `//` on floats divides without rounding
        }
      case Op::kMod:
        if constexpr (std::is_integral_v<T>) {
          if constexpr (std::is_signed_v<T>) if (b == -1) return 0;
          return static_cast<T>(a % b);
        } else {
          return std::fmod(a, b);
        }
      // NaN: min(a, b) and max(a, b) give b, clamp gives the value, as DALI's do.
      case Op::kMin: return a < b ? a : b;
      case Op::kMax: return a > b ? a : b;
      case Op::kPow:
        if constexpr (std::is_integral_v<T>) {
          // A negative exponent truncates 1 / a^-b toward zero (DALI gives 0 even for 1 and -1).
          if constexpr (std::is_signed_v<T>) if (b < 0) return a == 1 ? 1 : (a == -1 ? (b % 2 ? -1 : 1) : 0);
          T r = 1, base = a;
          for (auto e = b; e > 0; e >>= 1) {
            if (e & 1) r = static_cast<T>(r * base);
            base = static_cast<T>(base * base);
          }
          return r;
        } else {
          return static_cast<T>(std::pow(a, b));
        }
      case Op::kFPow: return static_cast<T>(std::pow(a, b));
      case Op::kAtan2: return static_cast<T>(std::atan2(a, b));
      case Op::kAnd: if constexpr (std::is_integral_v<T>) return a & b; else return a;
      case Op::kOr: if constexpr (std::is_integral_v<T>) return a | b; else return a;
      case Op::kXor: if constexpr (std::is_integral_v<T>) return a ^ b; else return a;
      default: return a;
    }
  }
}

template <typename T>
T apply_clamp(T v, T lo, T hi) {
  if constexpr (std::is_same_v<T, float16>) {
    return T(apply_clamp<float>(static_cast<float>(v), static_cast<float>(lo), static_cast<float>(hi)));
  } else {
    return std::min(std::max(v, lo), hi);  // lo > hi gives hi, as in DALI
  }
}

template <typename T>
bool compare(Op op, T a, T b) {
  switch (op) {
    case Op::kEq: return a == b;
    case Op::kNe: return a != b;
    case Op::kLt: return a < b;
    case Op::kLe: return a <= b;
    case Op::kGt: return a > b;
    default: return a >= b;
  }
}

// One operand: a batch input or a scalar constant.
struct Operand {
  const Batch* batch = nullptr;
  double constant = 0;
  DType dtype = DType::kNone;
};

std::string index_string(int64_t flat, const Shape& shape) {
  Shape idx(shape.size());
  for (int k = static_cast<int>(shape.size()) - 1; k >= 0; --k) {
    idx[k] = shape[k] ? flat % shape[k] : 0;
    flat = shape[k] ? flat / shape[k] : 0;
  }
  return to_string(idx);
}

class Arithmetic : public Operator {
 public:
  explicit Arithmetic(const OpSpec& spec) : Operator(spec) {
    std::string name = spec.get<std::string>("op");
    for (const OpInfo& o : kOps)
      if (name == o.name) info_ = &o;
    if (!info_) spec.arg_error("op", "names no arithmetic operation: '" + name + "'.");
    if (spec.has("constants")) {
      constants_ = spec.get<std::vector<double>>("constants");
      std::vector<int64_t> dt = spec.get<std::vector<int64_t>>("constant_dtypes");
      positions_ = spec.get<std::vector<int64_t>>("constant_positions");
      if (dt.size() != constants_.size() || positions_.size() != constants_.size())
        spec.arg_error("constants", "needs one constant_dtypes and one constant_positions entry per "
                                    "constant, got " + std::to_string(constants_.size()) + ", " +
                                    std::to_string(dt.size()) + " and " +
                                    std::to_string(positions_.size()) + ".");
      for (int64_t d : dt) constant_dtypes_.push_back(static_cast<DType>(d));
    }
    int given = spec.num_inputs + static_cast<int>(constants_.size());
    if (given != info_->arity)
      spec.arg_error("op", std::string("'") + info_->name + "' takes " + std::to_string(info_->arity) +
                               " operands, got " + std::to_string(given) + ".");
    for (int64_t p : positions_)
      if (p < 0 || p >= info_->arity)
        spec.arg_error("constant_positions", "must be operand positions from 0 to " +
                                                 std::to_string(info_->arity - 1) + ", got " +
                                                 std::to_string(p) + ".");
  }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    ops_.clear();
    size_t next_input = 0;
    for (int pos = 0; pos < info_->arity; ++pos) {
      auto c = std::find(positions_.begin(), positions_.end(), pos);
      if (c != positions_.end()) {
        size_t k = static_cast<size_t>(c - positions_.begin());
        ops_.push_back({nullptr, constants_[k], constant_dtypes_[k]});
      } else {
        const Batch* b = ws.inputs[next_input++];
        ops_.push_back({b, 0, b->dtype()});
      }
    }
    bool all_bool = true;
    compute_ = ops_[0].dtype;
    for (const Operand& o : ops_) {
      compute_ = promote_types(compute_, o.dtype);
      all_bool = all_bool && o.dtype == DType::kBool;
    }
    if (all_bool && !info_->bool_ok)
      fail(ErrorKind::kTypeMismatch,
           spec_.display_name() + ": " +
               (info_->arity == 1 ? "the operand is boolean" : "all operands are boolean") +
               ", and this operation takes numbers (only *, &, |, ^ and comparisons take booleans "
               "alone). Cast first, e.g. fn.cast(x, dtype=types.INT32).");
    if (info_->kind == Kind::kFloat && !is_float(compute_)) compute_ = DType::kFloat32;
    if (info_->kind == Kind::kBitwise && is_float(compute_))
      fail(ErrorKind::kTypeMismatch, spec_.display_name() + ": needs integer or boolean operands, got " +
                                         dtype_name(compute_) + ".");
    out_dtype_ = info_->kind == Kind::kCompare ? DType::kBool : compute_;

    const Batch& first = ws.input(0);
    OutputDesc d;
    d.dtype = out_dtype_;
    d.layout = first.layout();
    for (size_t i = 0; i < first.size(); ++i) {
      Shape s;
      std::string layout;
      for (const Operand& o : ops_) {
        if (!o.batch) continue;
        if (o.batch->size() != first.size())
          fail(ErrorKind::kInvalidArgument,
               spec_.display_name() + ": operands have different batch sizes: " +
                   std::to_string(first.size()) + " and " + std::to_string(o.batch->size()) + ".");
        s = broadcast(s, o.batch->shape(i), i);
        if (o.batch->shape(i).size() >= s.size() && layout.empty()) layout = o.batch->layout();
      }
      if (!layout.empty() && layout.size() == s.size()) d.layout = layout;
      d.shapes.push_back(s);
    }
    if (d.layout.size() != (d.shapes.empty() ? 0 : d.shapes[0].size())) d.layout.clear();
    return {d};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    Batch& out = ws.output(0);
    const Shape& oshape = out.shape(i);
    int64_t n = volume(oshape);
    visit_dtype(compute_, [&](auto tc) {
      using C = decltype(tc);
      std::vector<std::vector<C>> vals(ops_.size());
      for (size_t k = 0; k < ops_.size(); ++k) vals[k] = load<C>(ops_[k], i, oshape);
      auto at = [&](size_t k, int64_t j) { return vals[k].size() == 1 ? vals[k][0] : vals[k][j]; };
      if constexpr (std::is_integral_v<C> && !std::is_same_v<C, bool>) {
        if (info_->op == Op::kFloorDiv || info_->op == Op::kMod) {
          for (int64_t j = 0; j < n; ++j)
            if (at(1, j) == 0) zero_divisor(j, oshape);
        }
      }
      if (info_->kind == Kind::kCompare) {
        bool* dst = out.data<bool>(i);
        for (int64_t j = 0; j < n; ++j) dst[j] = compare<C>(info_->op, at(0, j), at(1, j));
        return;
      }
      C* dst = out.data<C>(i);
      if (info_->arity == 1) {
        for (int64_t j = 0; j < n; ++j) dst[j] = apply_unary<C>(info_->op, at(0, j));
      } else if (info_->arity == 2) {
        for (int64_t j = 0; j < n; ++j) dst[j] = apply_binary<C>(info_->op, at(0, j), at(1, j));
      } else {
        for (int64_t j = 0; j < n; ++j) dst[j] = apply_clamp<C>(at(0, j), at(1, j), at(2, j));
      }
    });
  }

  // The GPU twin: the same setup, then every sample in one launch (kernels/cuda/arithmetic_gpu).
  void run_gpu(Workspace& ws, const std::vector<OutputDesc>& descs) {
    namespace kc = kernels::cuda;
    for (size_t k = 0; k < ws.inputs.size(); ++k)
      if (ws.input(static_cast<int>(k)).memory() != MemoryKind::kDevice)
        fail(ErrorKind::kInvalidArgument,
             spec_.display_name() + ": operand " + std::to_string(k) + " is on the CPU and another "
             "on the GPU; move it with .gpu() (constants and Python numbers need nothing).");
    const OutputDesc& d = descs[0];
    ws.outputs.assign(1, allocate_device_batch(ws, d.dtype, d.shapes, d.layout));
    Batch& out = ws.outputs[0];
    const int arity = info_->arity;
    kc::ArithOperand proto[3];
    bool tensor_divisor = false;
    for (int a = 0; a < arity; ++a) {
      const Operand& o = ops_[a];
      if (o.batch) {
        proto[a].dtype = o.batch->dtype();
        tensor_divisor = tensor_divisor || a == 1;
        continue;
      }
      visit_dtype(compute_, [&](auto tc) {
        using C = decltype(tc);
        C v = is_float(o.dtype) ? convert_sat<C>(o.constant) : convert_sat<C>(static_cast<int64_t>(o.constant));
        if constexpr (std::is_integral_v<C> && !std::is_same_v<C, bool>)
          if (a == 1 && v == 0 && (info_->op == Op::kFloorDiv || info_->op == Op::kMod) && !out.empty())
            zero_divisor(0, out.shape(0), 0);
        std::memcpy(&proto[a].constant, &v, sizeof(C));
      });
    }
    std::vector<kc::ArithJob> jobs(out.size());
    std::vector<std::vector<int64_t>> shapes(arity);
    for (size_t i = 0; i < out.size(); ++i) {
      for (int a = 0; a < arity; ++a) {
        proto[a].data = ops_[a].batch ? (*ops_[a].batch)[i].data : nullptr;
        shapes[a] = ops_[a].batch ? ops_[a].batch->shape(i) : Shape{};
      }
      if (!kc::make_arith_job(&jobs[i], out[i].data, out.shape(i), proto, shapes, arity))
        fail(ErrorKind::kUnsupported,
             spec_.display_name() + ": the GPU backend broadcasts over up to " +
                 std::to_string(kc::kMaxArithDims) + " distinct dimensions; sample " +
                 std::to_string(i) + " needs more (output shape " + to_string(out.shape(i)) +
                 "). Reshape the operands to fewer dimensions, or compute on the CPU.");
    }
    const bool check_zero = tensor_divisor && is_integer_type(compute_) &&
                            (info_->op == Op::kFloorDiv || info_->op == Op::kMod);
    kc::ZeroDivisor z = kc::arithmetic_gpu(ws, info_->op, arity, compute_, jobs, check_zero);
    if (z.sample >= 0) zero_divisor(z.index, out.shape(z.sample), z.sample);
  }

 private:
  static bool is_integer_type(DType t) { return !is_float(t) && t != DType::kBool; }

  // `gpu_sample`: the sample, named as the executor names a CPU sample that fails.
  [[noreturn]] void zero_divisor(int64_t j, const Shape& oshape, int64_t gpu_sample = -1) const {
    std::string where = oshape.empty() ? "" : " at index " + index_string(j, oshape) + " of the result";
    const std::string sample = gpu_sample >= 0 ? " [sample " + std::to_string(gpu_sample) + "]" : "";
    fail(ErrorKind::kInvalidArgument,
         spec_.display_name() + sample + ": integer division by zero: the divisor is 0" + where + " (" +
             dtype_name(compute_) + " operands). Integer // and % have no value there: keep the "
             "divisor nonzero (e.g. math.max(d, 1)), or divide floats (x / d gives inf).");
  }

  Shape broadcast(const Shape& a, const Shape& b, int64_t sample) const {
    Shape r(std::max(a.size(), b.size()));
    for (size_t k = 0; k < r.size(); ++k) {
      int64_t da = k < r.size() - a.size() ? 1 : a[k - (r.size() - a.size())];
      int64_t db = k < r.size() - b.size() ? 1 : b[k - (r.size() - b.size())];
      if (da != db && da != 1 && db != 1)
        fail(ErrorKind::kInvalidArgument,
             spec_.display_name() + ": cannot broadcast the operands of sample " +
                 std::to_string(sample) + ": shapes " + to_string(a) + " and " + to_string(b) + ".");
      r[k] = da == 1 ? db : da;
    }
    return r;
  }

  // The operand as values of type C: one value for a constant or a single-element sample,
  // else the sample broadcast to `oshape`.
  template <typename C>
  std::vector<C> load(const Operand& o, int64_t i, const Shape& oshape) const {
    if (!o.batch) {
      C v = is_float(o.dtype) ? convert_sat<C>(o.constant) : convert_sat<C>(static_cast<int64_t>(o.constant));
      return {v};
    }
    const Shape& s = o.batch->shape(i);
    int64_t n = volume(s);
    std::vector<C> r;
    visit_dtype(o.batch->dtype(), [&](auto ti) {
      using In = decltype(ti);
      const In* src = o.batch->data<In>(i);
      if (n == 1 || s == oshape) {
        r.resize(n);
        for (int64_t j = 0; j < n; ++j) r[j] = convert_sat<C>(src[j]);
        return;
      }
      // General broadcast: walk the output index and map it into this operand.
      int64_t on = volume(oshape);
      r.resize(on);
      size_t nd = oshape.size(), off = nd - s.size();
      std::vector<int64_t> stride(nd, 0), idx(nd, 0);
      int64_t st = 1;
      for (int k = static_cast<int>(s.size()) - 1; k >= 0; --k) {
        stride[k + off] = s[k] == 1 ? 0 : st;
        st *= s[k];
      }
      int64_t pos = 0;
      for (int64_t j = 0; j < on; ++j) {
        r[j] = convert_sat<C>(src[pos]);
        for (int k = static_cast<int>(nd) - 1; k >= 0; --k) {
          pos += stride[k];
          if (++idx[k] < oshape[k]) break;
          pos -= stride[k] * oshape[k];
          idx[k] = 0;
        }
      }
    });
    return r;
  }

  const OpInfo* info_ = nullptr;
  std::vector<double> constants_;
  std::vector<DType> constant_dtypes_;
  std::vector<int64_t> positions_;
  std::vector<Operand> ops_;
  DType compute_ = DType::kNone, out_dtype_ = DType::kNone;
};

}  // namespace

STOKER_REGISTER_OP_NAMED(arithmetic, "arithmetic_generic") {
  std::vector<std::string> names;
  for (const OpInfo& o : kOps) names.push_back(o.name);
  schema.doc("Element-wise arithmetic on one to three operands, tensors or scalar constants; what "
             "the Python operators on pipeline nodes (+, -, *, /, //, %, **, ==, <, &, ...) and "
             "the stoker.math functions build.")
      .inputs(1, 3, {"input0", "input1", "input2"}).outputs(1)
      .arg({.name = "op", .type = ArgType::kString, .doc = "The operation.", .choices = names})
      .arg({.name = "constants", .type = ArgType::kFloatList, .optional = true,
            .doc = "The scalar constant operands."})
      .arg({.name = "constant_dtypes", .type = ArgType::kIntList, .optional = true,
            .doc = "Each constant's type, as a DType code (Python int: int32, float: float32, "
                   "as in DALI)."})
      .arg({.name = "constant_positions", .type = ArgType::kIntList, .optional = true,
            .doc = "Each constant's position among the operands (0: the left one)."})
      .arg({.name = "_display_name", .type = ArgType::kString, .optional = true,
            .doc = "How messages name the operation (\"operator //\", \"math.sqrt\")."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<Arithmetic>(s); })
      STOKER_GPU_TWIN(Arithmetic);
}

}  // namespace stoker
