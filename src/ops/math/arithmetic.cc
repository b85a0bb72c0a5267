// Element-wise arithmetic and comparisons behind the Python operators on pipeline nodes
// (`images * 2 + 1`, `labels == 3`), with DALI's type promotion and NumPy broadcasting.
#include <cmath>
#include <cstring>

#include "core/convert.h"
#include "pipeline/operator.h"

namespace stoker {
namespace {

enum class Op { kAdd, kSub, kMul, kDiv, kFloorDiv, kMod, kMin, kMax, kPow,
                kEq, kNe, kLt, kLe, kGt, kGe, kAnd, kOr, kXor, kNeg, kAbs };

struct OpInfo { const char* name; Op op; int arity; bool compare; bool bitwise; };
const OpInfo kOps[] = {
    {"add", Op::kAdd, 2, false, false}, {"sub", Op::kSub, 2, false, false},
    {"mul", Op::kMul, 2, false, false}, {"div", Op::kDiv, 2, false, false},
    {"floordiv", Op::kFloorDiv, 2, false, false}, {"mod", Op::kMod, 2, false, false},
    {"min", Op::kMin, 2, false, false}, {"max", Op::kMax, 2, false, false},
    {"pow", Op::kPow, 2, false, false},
    {"eq", Op::kEq, 2, true, false}, {"ne", Op::kNe, 2, true, false},
    {"lt", Op::kLt, 2, true, false}, {"le", Op::kLe, 2, true, false},
    {"gt", Op::kGt, 2, true, false}, {"ge", Op::kGe, 2, true, false},
    {"bitand", Op::kAnd, 2, false, true}, {"bitor", Op::kOr, 2, false, true},
    {"bitxor", Op::kXor, 2, false, true}, {"neg", Op::kNeg, 1, false, false},
    {"abs", Op::kAbs, 1, false, false},
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

template <typename T>
T apply(Op op, T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    switch (op) {
      case Op::kAdd: case Op::kOr: case Op::kMax: return a || b;
      case Op::kMul: case Op::kAnd: case Op::kMin: return a && b;
      case Op::kSub: case Op::kXor: return a != b;
      default: return a;
    }
  } else if constexpr (std::is_same_v<T, float16>) {
    return T(apply<float>(op, static_cast<float>(a), static_cast<float>(b)));
  } else {
    switch (op) {
      case Op::kAdd: return static_cast<T>(a + b);
      case Op::kSub: return static_cast<T>(a - b);
      case Op::kMul: return static_cast<T>(a * b);
      case Op::kDiv:
        if constexpr (std::is_integral_v<T>) {
          if (b == 0) return 0;
          if constexpr (std::is_signed_v<T>) if (b == -1) return static_cast<T>(0 - a);
          return static_cast<T>(a / b);
        } else {
          return a / b;
        }
      case Op::kFloorDiv:
        if constexpr (std::is_integral_v<T>) {
          if (b == 0) return 0;
          if constexpr (std::is_signed_v<T>) {
            if (b == -1) return static_cast<T>(0 - a);
            T q = static_cast<T>(a / b);
            if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
            return q;
          }
          return static_cast<T>(a / b);
        } else {
          return std::floor(a / b);
        }
      case Op::kMod:
        if constexpr (std::is_integral_v<T>) {
          if (b == 0) return 0;
          if constexpr (std::is_signed_v<T>) {
            if (b == -1) return 0;
            T r = static_cast<T>(a % b);
            if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
            return r;
          }
          return static_cast<T>(a % b);
        } else {
          T r = std::fmod(a, b);
          if (r != 0 && ((r < 0) != (b < 0))) r += b;
          return r;
        }
      case Op::kMin: return a < b ? a : b;
      case Op::kMax: return a < b ? b : a;
      case Op::kPow:
        if constexpr (std::is_integral_v<T>) {
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
      case Op::kAnd: if constexpr (std::is_integral_v<T>) return a & b; else return a;
      case Op::kOr: if constexpr (std::is_integral_v<T>) return a | b; else return a;
      case Op::kXor: if constexpr (std::is_integral_v<T>) return a ^ b; else return a;
      case Op::kNeg: return static_cast<T>(-a);
      case Op::kAbs: if constexpr (std::is_signed_v<T>) return a < 0 ? static_cast<T>(-a) : a; else return a;
      default: return a;
    }
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

// One operand: a batch input or the constant.
struct Operand {
  const Batch* batch = nullptr;
  double constant = 0;
  DType dtype = DType::kNone;
};

class Arithmetic : public Operator {
 public:
  explicit Arithmetic(const OpSpec& spec) : Operator(spec) {
    std::string name = spec.get<std::string>("op");
    for (const OpInfo& o : kOps)
      if (name == o.name) info_ = &o;
    if (!info_) spec.arg_error("op", "names no arithmetic operation: '" + name + "'.");
    has_constant_ = spec.has("constant");
    if (has_constant_) {
      constant_ = spec.get<double>("constant");
      constant_dtype_ = static_cast<DType>(spec.get<int64_t>("constant_dtype"));
      constant_left_ = spec.get<bool>("constant_left");
    }
    int given = spec.num_inputs + (has_constant_ ? 1 : 0);
    if (given != info_->arity)
      spec.arg_error("op", std::string("'") + info_->name + "' takes " + std::to_string(info_->arity) +
                               " operands, got " + std::to_string(given) + ".");
  }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    ops_.clear();
    for (size_t k = 0; k < ws.inputs.size(); ++k) ops_.push_back({ws.inputs[k], 0, ws.inputs[k]->dtype()});
    if (has_constant_) {
      Operand c{nullptr, constant_, constant_dtype_};
      if (constant_left_) ops_.insert(ops_.begin(), c); else ops_.push_back(c);
    }
    compute_ = ops_[0].dtype;
    for (size_t k = 1; k < ops_.size(); ++k) compute_ = promote_types(compute_, ops_[k].dtype);
    if ((info_->op == Op::kDiv) && !is_float(compute_)) compute_ = DType::kFloat32;
    if (info_->bitwise && is_float(compute_))
      spec_.arg_error("op", std::string("'") + info_->name + "' needs integer or boolean operands, got " +
                                dtype_name(compute_) + ".");
    out_dtype_ = info_->compare ? DType::kBool : compute_;

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
          spec_.arg_error("op", "operands have different batch sizes: " + std::to_string(first.size()) +
                                    " and " + std::to_string(o.batch->size()) + ".");
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
      if (info_->compare) {
        bool* dst = out.data<bool>(i);
        for (int64_t j = 0; j < n; ++j) dst[j] = compare<C>(info_->op, at(0, j), at(1, j));
      } else if (info_->arity == 1) {
        C* dst = out.data<C>(i);
        for (int64_t j = 0; j < n; ++j) dst[j] = apply<C>(info_->op, at(0, j), C{});
      } else {
        C* dst = out.data<C>(i);
        for (int64_t j = 0; j < n; ++j) dst[j] = apply<C>(info_->op, at(0, j), at(1, j));
      }
    });
  }

 private:
  Shape broadcast(const Shape& a, const Shape& b, int64_t sample) const {
    Shape r(std::max(a.size(), b.size()));
    for (size_t k = 0; k < r.size(); ++k) {
      int64_t da = k < r.size() - a.size() ? 1 : a[k - (r.size() - a.size())];
      int64_t db = k < r.size() - b.size() ? 1 : b[k - (r.size() - b.size())];
      if (da != db && da != 1 && db != 1)
        spec_.arg_error("op", "cannot broadcast the operands of sample " + std::to_string(sample) +
                                  ": shapes " + to_string(a) + " and " + to_string(b) + ".");
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
  bool has_constant_ = false, constant_left_ = false;
  double constant_ = 0;
  DType constant_dtype_ = DType::kInt32;
  std::vector<Operand> ops_;
  DType compute_ = DType::kNone, out_dtype_ = DType::kNone;
};

}  // namespace

STOKER_REGISTER_OP_NAMED(arithmetic, "arithmetic_generic") {
  std::vector<std::string> names;
  for (const OpInfo& o : kOps) names.push_back(o.name);
  schema.doc("Element-wise arithmetic on one or two tensors and an optional constant; what the "
             "Python operators on pipeline nodes (+, -, *, /, //, %, **, ==, <, &, ...) build.")
      .inputs(1, 2, {"left", "right"}).outputs(1)
      .arg({.name = "op", .type = ArgType::kString, .doc = "The operation.", .choices = names})
      .arg({.name = "constant", .type = ArgType::kFloat, .optional = true,
            .doc = "A scalar constant operand."})
      .arg({.name = "constant_dtype", .type = ArgType::kDType,
            .default_value = int64_t{static_cast<int>(DType::kInt32)},
            .doc = "The constant's type (Python int: int32, float: float32, as in DALI)."})
      .arg({.name = "constant_left", .type = ArgType::kBool, .default_value = false,
            .doc = "The constant is the left operand."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<Arithmetic>(s); });
}

}  // namespace stoker
