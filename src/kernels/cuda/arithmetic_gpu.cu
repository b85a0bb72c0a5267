#include "kernels/cuda/arithmetic_gpu.h"

#include <cstring>

#include "core/cuda/cuda_util.h"
#include "kernels/cuda/elementwise.cuh"
#include "kernels/cuda/launch_plan.h"
#include "pipeline/gpu_batch.h"
#include "pipeline/gpu_context.h"

namespace stoker::kernels::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kItems = 4;
constexpr int64_t kChunk = int64_t(kThreads) * kItems;

// Float functions, by precision (float16 computes in float, as the CPU loop does).
#define STOKER_DEV_MATH1(name)                                                          \
  __device__ __forceinline__ float m_##name(float x) { return name##f(x); }            \
  __device__ __forceinline__ double m_##name(double x) { return name(x); }
STOKER_DEV_MATH1(sqrt) STOKER_DEV_MATH1(cbrt) STOKER_DEV_MATH1(exp) STOKER_DEV_MATH1(log)
STOKER_DEV_MATH1(log2) STOKER_DEV_MATH1(log10) STOKER_DEV_MATH1(fabs) STOKER_DEV_MATH1(floor)
STOKER_DEV_MATH1(ceil) STOKER_DEV_MATH1(sin) STOKER_DEV_MATH1(cos) STOKER_DEV_MATH1(tan)
STOKER_DEV_MATH1(asin) STOKER_DEV_MATH1(acos) STOKER_DEV_MATH1(atan) STOKER_DEV_MATH1(sinh)
STOKER_DEV_MATH1(cosh) STOKER_DEV_MATH1(tanh) STOKER_DEV_MATH1(asinh) STOKER_DEV_MATH1(acosh)
STOKER_DEV_MATH1(atanh)
#undef STOKER_DEV_MATH1
__device__ __forceinline__ float m_pow(float a, float b) { return powf(a, b); }
__device__ __forceinline__ double m_pow(double a, double b) { return pow(a, b); }
__device__ __forceinline__ float m_atan2(float a, float b) { return atan2f(a, b); }
__device__ __forceinline__ double m_atan2(double a, double b) { return atan2(a, b); }
__device__ __forceinline__ float m_fmod(float a, float b) { return fmodf(a, b); }
__device__ __forceinline__ double m_fmod(double a, double b) { return fmod(a, b); }

// The compute type C of a device type: __half computes in float.
template <typename T> struct ComputeOf { using type = T; };
template <> struct ComputeOf<__half> { using type = float; };
template <> struct ComputeOf<BoolByte> { using type = bool; };

template <typename T>
__device__ __forceinline__ T wrap_neg(T a) {
  if constexpr (std::is_signed_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(U{0} - static_cast<U>(a)));
  } else {
    return static_cast<T>(T{0} - a);
  }
}

template <typename C>
__device__ __forceinline__ C unary(ArithOp op, C a) {
  if constexpr (std::is_same_v<C, bool>) {
    return a;
  } else if constexpr (std::is_integral_v<C>) {
    if (op == ArithOp::kNeg) return wrap_neg(a);
    if constexpr (std::is_signed_v<C>) if (op == ArithOp::kAbs) return a < 0 ? wrap_neg(a) : a;
    return a;
  } else {
    switch (op) {
      case ArithOp::kNeg: return -a;
      case ArithOp::kAbs: return a < 0 ? -a : a;
      case ArithOp::kFabs: return m_fabs(a);
      case ArithOp::kSqrt: return m_sqrt(a);
      case ArithOp::kRsqrt: return C(1) / m_sqrt(a);
      case ArithOp::kCbrt: return m_cbrt(a);
      case ArithOp::kExp: return m_exp(a);
      case ArithOp::kLog: return m_log(a);
      case ArithOp::kLog2: return m_log2(a);
      case ArithOp::kLog10: return m_log10(a);
      case ArithOp::kFloor: return m_floor(a);
      case ArithOp::kCeil: return m_ceil(a);
      case ArithOp::kSin: return m_sin(a);
      case ArithOp::kCos: return m_cos(a);
      case ArithOp::kTan: return m_tan(a);
      case ArithOp::kAsin: return m_asin(a);
      case ArithOp::kAcos: return m_acos(a);
      case ArithOp::kAtan: return m_atan(a);
      case ArithOp::kSinh: return m_sinh(a);
      case ArithOp::kCosh: return m_cosh(a);
      case ArithOp::kTanh: return m_tanh(a);
      case ArithOp::kAsinh: return m_asinh(a);
      case ArithOp::kAcosh: return m_acosh(a);
      case ArithOp::kAtanh: return m_atanh(a);
      default: return a;
    }
  }
}

// As the CPU loop's apply_binary: integer // and % are C's; a zero divisor gives 0 (and is
// reported by the caller).
template <typename C>
__device__ __forceinline__ C binary(ArithOp op, C a, C b) {
  if constexpr (std::is_same_v<C, bool>) {
    switch (op) {
      case ArithOp::kOr: return a || b;
      case ArithOp::kXor: return a != b;
      default: return a && b;
    }
  } else {
    switch (op) {
      case ArithOp::kAdd: return static_cast<C>(a + b);
      case ArithOp::kSub: return static_cast<C>(a - b);
      case ArithOp::kMul: return static_cast<C>(a * b);
      case ArithOp::kDiv: return static_cast<C>(a / b);
      case ArithOp::kFloorDiv:
        if constexpr (std::is_integral_v<C>) {
          if (b == 0) return 0;
          if constexpr (std::is_signed_v<C>) if (b == -1) return wrap_neg(a);
          return static_cast<C>(a / b);
        } else {
          return a / b;
        }
      case ArithOp::kMod:
        if constexpr (std::is_integral_v<C>) {
          if (b == 0) return 0;
          if constexpr (std::is_signed_v<C>) if (b == -1) return 0;
          return static_cast<C>(a % b);
        } else {
          return m_fmod(a, b);
        }
      case ArithOp::kMin: return a < b ? a : b;
      case ArithOp::kMax: return a > b ? a : b;
      case ArithOp::kPow:
        if constexpr (std::is_integral_v<C>) {
          if constexpr (std::is_signed_v<C>) if (b < 0) return a == 1 ? 1 : (a == -1 ? (b % 2 ? -1 : 1) : 0);
          C r = 1, base = a;
          for (C e = b; e > 0; e >>= 1) {
            if (e & 1) r = static_cast<C>(r * base);
            base = static_cast<C>(base * base);
          }
          return r;
        } else {
          return static_cast<C>(m_pow(a, b));
        }
      // fpow and atan2 compute in floating point (ArithKind::kFloat): C is never an integer.
      case ArithOp::kFPow: if constexpr (!std::is_integral_v<C>) return m_pow(a, b); else return a;
      case ArithOp::kAtan2: if constexpr (!std::is_integral_v<C>) return m_atan2(a, b); else return a;
      case ArithOp::kAnd: if constexpr (std::is_integral_v<C>) return a & b; else return a;
      case ArithOp::kOr: if constexpr (std::is_integral_v<C>) return a | b; else return a;
      case ArithOp::kXor: if constexpr (std::is_integral_v<C>) return a ^ b; else return a;
      default: return a;
    }
  }
}

template <typename C>
__device__ __forceinline__ bool compare(ArithOp op, C a, C b) {
  switch (op) {
    case ArithOp::kEq: return a == b;
    case ArithOp::kNe: return a != b;
    case ArithOp::kLt: return a < b;
    case ArithOp::kLe: return a <= b;
    case ArithOp::kGt: return a > b;
    default: return a >= b;
  }
}

// One element of any stoker type as the device type D (the promoted type, so conversions keep
// the value where it fits, saturating where it does not: uint64 into int64), as convert_sat.
template <typename D, typename T>
__device__ __forceinline__ D convert_one(T v) {
  if constexpr (std::is_same_v<D, BoolByte>) {
    if constexpr (std::is_same_v<T, BoolByte>) return BoolByte{static_cast<uint8_t>(v.v != 0)};
    else return BoolByte{static_cast<uint8_t>(load_f(v) != 0.0f)};
  } else if constexpr (std::is_same_v<T, BoolByte>) {
    if constexpr (std::is_same_v<D, __half>) return __float2half_rn(v.v != 0 ? 1.0f : 0.0f);
    else return static_cast<D>(v.v != 0 ? 1 : 0);
  } else {
    return convert_sat_dev<D>(v);
  }
}

template <typename D>
__device__ __forceinline__ D load_as(const void* p, int64_t k, DType t) {
  switch (t) {
    case DType::kUInt8: return convert_one<D>(static_cast<const uint8_t*>(p)[k]);
    case DType::kUInt16: return convert_one<D>(static_cast<const uint16_t*>(p)[k]);
    case DType::kUInt32: return convert_one<D>(static_cast<const uint32_t*>(p)[k]);
    case DType::kUInt64: return convert_one<D>(static_cast<const uint64_t*>(p)[k]);
    case DType::kInt8: return convert_one<D>(static_cast<const int8_t*>(p)[k]);
    case DType::kInt16: return convert_one<D>(static_cast<const int16_t*>(p)[k]);
    case DType::kInt32: return convert_one<D>(static_cast<const int32_t*>(p)[k]);
    case DType::kInt64: return convert_one<D>(static_cast<const int64_t*>(p)[k]);
    case DType::kFloat16: return convert_one<D>(static_cast<const __half*>(p)[k]);
    case DType::kFloat32: return convert_one<D>(static_cast<const float*>(p)[k]);
    case DType::kFloat64: return convert_one<D>(static_cast<const double*>(p)[k]);
    default: return convert_one<D>(static_cast<const BoolByte*>(p)[k]);
  }
}

template <typename D>
__device__ __forceinline__ typename ComputeOf<D>::type to_compute(D v) {
  if constexpr (std::is_same_v<D, __half>) return __half2float(v);
  else if constexpr (std::is_same_v<D, BoolByte>) return v.v != 0;
  else return v;
}

template <typename D>
__device__ __forceinline__ D from_compute(typename ComputeOf<D>::type v) {
  if constexpr (std::is_same_v<D, __half>) return __float2half_rn(v);
  else if constexpr (std::is_same_v<D, BoolByte>) return BoolByte{static_cast<uint8_t>(v ? 1 : 0)};
  else return v;
}

// The operand's value at output element `flat` (index `idx`), as D then as its compute type:
// float16 operands and results round through __half at the same points as the CPU loop's.
template <typename D>
__device__ __forceinline__ typename ComputeOf<D>::type operand(const ArithOperand& o, int64_t flat,
                                                             const int64_t* idx, int ndim) {
  D v;
  if (!o.data) {
    memcpy(&v, &o.constant, sizeof(D));
  } else if (o.scalar) {
    v = load_as<D>(o.data, 0, o.dtype);
  } else if (o.dense) {
    v = load_as<D>(o.data, flat, o.dtype);
  } else {
    int64_t off = 0;
    for (int k = 0; k < ndim; ++k) off += idx[k] * o.stride[k];
    v = load_as<D>(o.data, off, o.dtype);
  }
  return to_compute(v);
}

template <typename D, bool kCompare>
__global__ void arith_kernel(const ArithJob* jobs, const int* block_start, int n, ArithOp op,
                             int arity, unsigned long long* zero_at) {
  using C = typename ComputeOf<D>::type;
  const int s = sample_of_block(block_start, n, blockIdx.x);
  const ArithJob& j = jobs[s];
  int64_t total = 1;
  for (int k = 0; k < j.ndim; ++k) total *= j.count[k];
  const int64_t base = int64_t(blockIdx.x - block_start[s]) * kChunk;
  for (int it = 0; it < kItems; ++it) {
    const int64_t flat = base + it * kThreads + threadIdx.x;
    if (flat >= total) return;
    int64_t idx[kMaxArithDims];
    int64_t rest = flat;
    for (int k = j.ndim - 1; k >= 0; --k) {
      idx[k] = rest % j.count[k];
      rest /= j.count[k];
    }
    const C a = operand<D>(j.ops[0], flat, idx, j.ndim);
    if constexpr (kCompare) {
      const C b = operand<D>(j.ops[1], flat, idx, j.ndim);
      static_cast<uint8_t*>(j.out)[flat] = compare<C>(op, a, b) ? 1 : 0;
    } else {
      C r;
      if (arity == 1) {
        r = unary<C>(op, a);
      } else if (arity == 2) {
        const C b = operand<D>(j.ops[1], flat, idx, j.ndim);
        if constexpr (std::is_integral_v<C> && !std::is_same_v<C, bool>) {
          if (b == 0 && zero_at && (op == ArithOp::kFloorDiv || op == ArithOp::kMod))
            atomicMin(zero_at, (static_cast<unsigned long long>(s) << 40) |
                                   static_cast<unsigned long long>(flat < (int64_t(1) << 40) ? flat : (int64_t(1) << 40) - 1));
        }
        r = binary<C>(op, a, b);
      } else {
        const C lo = operand<D>(j.ops[1], flat, idx, j.ndim);
        const C hi = operand<D>(j.ops[2], flat, idx, j.ndim);
        r = a < lo ? lo : a;  // min(max(a, lo), hi): lo > hi gives hi, as on the CPU
        r = hi < r ? hi : r;
      }
      static_cast<D*>(j.out)[flat] = from_compute<D>(r);
    }
  }
}

}  // namespace

bool make_arith_job(ArithJob* job, void* out, const std::vector<int64_t>& out_shape,
                    const ArithOperand* ops, const std::vector<std::vector<int64_t>>& shapes, int arity) {
  *job = ArithJob{};
  job->out = out;
  const int nd = static_cast<int>(out_shape.size());
  int64_t total = 1;
  for (int64_t e : out_shape) total *= e;
  // Per operand: its strides over the output's dimensions (0 where broadcast).
  std::vector<std::vector<int64_t>> strides(arity, std::vector<int64_t>(nd, 0));
  for (int a = 0; a < arity; ++a) {
    job->ops[a] = ops[a];
    ArithOperand& o = job->ops[a];
    if (!o.data) continue;
    const std::vector<int64_t>& s = shapes[a];
    int64_t vol = 1;
    for (int64_t e : s) vol *= e;
    o.scalar = vol == 1;
    o.dense = !o.scalar && vol == total;  // broadcasting keeps a full-volume operand in place
    int64_t st = 1;
    const int off = nd - static_cast<int>(s.size());
    for (int k = static_cast<int>(s.size()) - 1; k >= 0; --k) {
      strides[a][k + off] = s[k] == 1 ? 0 : st;
      st *= s[k];
    }
  }
  // Merge neighbouring output dimensions that every operand steps through alike.
  std::vector<int64_t> count;
  std::vector<std::vector<int64_t>> merged(arity);
  for (int k = 0; k < nd; ++k) {
    if (out_shape[k] == 1) continue;
    bool merge = !count.empty();
    for (int a = 0; a < arity && merge; ++a)
      merge = merged[a].back() == strides[a][k] * out_shape[k];
    if (merge) {
      count.back() *= out_shape[k];
      for (int a = 0; a < arity; ++a) merged[a].back() = strides[a][k];
      continue;
    }
    count.push_back(out_shape[k]);
    for (int a = 0; a < arity; ++a) merged[a].push_back(strides[a][k]);
  }
  if (total == 0) count.assign(1, 0);
  if (count.size() > static_cast<size_t>(kMaxArithDims)) return false;
  job->ndim = static_cast<int>(count.size());
  for (size_t k = 0; k < count.size(); ++k) {
    job->count[k] = count[k];
    for (int a = 0; a < arity; ++a) job->ops[a].stride[k] = total == 0 ? 0 : merged[a][k];
  }
  return true;
}

ZeroDivisor arithmetic_gpu(Workspace& ws, ArithOp op, int arity, DType compute,
                           const std::vector<ArithJob>& jobs, bool check_zero) {
  ZeroDivisor result;
  LaunchPlan plan(kChunk);
  for (const ArithJob& j : jobs) {
    int64_t total = 1;
    for (int k = 0; k < j.ndim; ++k) total *= j.count[k];
    plan.add(total);
  }
  if (plan.blocks() == 0) return result;
  DeviceParams params(ws);
  const size_t starts_off = params.add(plan.block_start());
  const size_t jobs_off = params.add(jobs);
  const unsigned long long none = ~0ull;
  const size_t flag_off = params.add(&none, 1);
  params.upload();
  const int* starts = params.device<int>(starts_off);
  const ArithJob* dj = params.device<ArithJob>(jobs_off);
  unsigned long long* flag = check_zero ? params.device<unsigned long long>(flag_off) : nullptr;
  auto stream = static_cast<cudaStream_t>(ws.gpu->stream());
  const unsigned blocks = static_cast<unsigned>(plan.blocks());
  const int n = plan.jobs();
  const bool is_compare = op == ArithOp::kEq || op == ArithOp::kNe || op == ArithOp::kLt ||
                          op == ArithOp::kLe || op == ArithOp::kGt || op == ArithOp::kGe;
  visit_dev_type(compute, [&](auto tc) {
    using D = typename decltype(tc)::type;
    if (is_compare)
      arith_kernel<D, true><<<blocks, kThreads, 0, stream>>>(dj, starts, n, op, arity, flag);
    else
      arith_kernel<D, false><<<blocks, kThreads, 0, stream>>>(dj, starts, n, op, arity, flag);
  });
  check_launch("arithmetic_gpu");
  if (check_zero) {
    std::shared_ptr<void> host = ws.gpu->allocate_pinned(sizeof(unsigned long long));
    STOKER_CUDA_CHECK(cudaMemcpyAsync(host.get(), flag, sizeof(unsigned long long),
                                      cudaMemcpyDeviceToHost, stream));
    STOKER_CUDA_CHECK(cudaStreamSynchronize(stream));
    unsigned long long v;
    std::memcpy(&v, host.get(), sizeof(v));
    if (v != none) {
      result.sample = static_cast<int64_t>(v >> 40);
      result.index = static_cast<int64_t>(v & ((1ull << 40) - 1));
    }
  }
  return result;
}

}  // namespace stoker::kernels::cuda
