#include "kernels/cuda/reduce_gpu.h"

#include "kernels/cuda/elementwise.cuh"
#include "kernels/cuda/launch_plan.h"
#include "pipeline/gpu_batch.h"
#include "pipeline/gpu_context.h"

namespace stoker::kernels::cuda {
namespace {

constexpr int kThreads = 256;
// Reductions of fewer elements than this run one thread per output element.
constexpr int64_t kBlockThreshold = 1024;

// The accumulator of a sum of T (and the value type min/max compare).
template <typename T>
using SumAcc = std::conditional_t<kIsDevFloat<T>, double,
                                  std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>;

template <typename T>
__device__ __forceinline__ double to_double(T v) {
  if constexpr (std::is_same_v<T, __half>) return static_cast<double>(__half2float(v));
  else return static_cast<double>(v);
}

// min / max as the CPU's: `better(a, b)` is a < b (min) or b < a (max); NaN never wins.
template <typename T>
__device__ __forceinline__ bool less(T a, T b) {
  if constexpr (std::is_same_v<T, __half>) return __half2float(a) < __half2float(b);
  else if constexpr (std::is_same_v<T, BoolByte>) return a.v < b.v;
  else return a < b;
}

template <typename T>
__device__ __forceinline__ T neutral(bool is_min) {
  if constexpr (std::is_same_v<T, __half>) return __float2half_rn(is_min ? 65504.0f : -65504.0f);
  else if constexpr (std::is_same_v<T, BoolByte>) return BoolByte{static_cast<uint8_t>(is_min ? 1 : 0)};
  else return is_min ? DevLimits<T>::max : DevLimits<T>::lowest;
}

__device__ __forceinline__ int64_t offset_of(int64_t flat, const int64_t* count, const int64_t* stride, int nd) {
  int64_t off = 0;
  for (int k = nd - 1; k >= 0; --k) {
    const int64_t c = count[k];
    off += (flat % c) * stride[k];
    flat /= c;
  }
  return off;
}

// Stores a result as the operator's store(): integer sums wrap into integer outputs, doubles
// truncate toward zero into integers (saturating), anything else converts as convert_sat.
template <typename Acc>
__device__ void store(void* out, int64_t k, DType t, Acc v) {
  auto put = [&](auto tag) {
    using Out = typename decltype(tag)::type;
    Out* o = static_cast<Out*>(out) + k;
    if constexpr (std::is_same_v<Out, BoolByte>) {
      *o = BoolByte{static_cast<uint8_t>(v != 0)};
    } else if constexpr (std::is_integral_v<Acc> && std::is_integral_v<Out>) {
      *o = static_cast<Out>(v);
    } else if constexpr (!std::is_integral_v<Acc> && std::is_integral_v<Out>) {
      *o = convert_sat_dev<Out>(trunc(v));
    } else {
      *o = convert_sat_dev<Out>(v);
    }
  };
  visit_dev_type_device(t, put);
}

template <typename T, ReduceKind K>
struct Op {
  // The accumulator type and its start.
  using Acc = std::conditional_t<K == ReduceKind::kMin || K == ReduceKind::kMax, T,
                                 std::conditional_t<K == ReduceKind::kSum, SumAcc<T>, double>>;
  __device__ static Acc start() {
    if constexpr (K == ReduceKind::kMin) return neutral<T>(true);
    else if constexpr (K == ReduceKind::kMax) return neutral<T>(false);
    else return Acc(0);
  }
  __device__ static Acc add(Acc a, T x, double mean) {
    if constexpr (K == ReduceKind::kMin) return less(x, a) ? x : a;
    else if constexpr (K == ReduceKind::kMax) return less(a, x) ? x : a;
    else if constexpr (K == ReduceKind::kSum) {
      if constexpr (std::is_same_v<Acc, double>) return a + to_double(x);
      else return static_cast<Acc>(a + static_cast<Acc>(x));
    } else if constexpr (K == ReduceKind::kMean) return a + to_double(x);
    else if constexpr (K == ReduceKind::kMeanSquare) { const double d = to_double(x); return a + d * d; }
    else { const double d = to_double(x) - mean; return a + d * d; }
  }
  __device__ static Acc merge(Acc a, Acc b) {
    if constexpr (K == ReduceKind::kMin) return less(b, a) ? b : a;
    else if constexpr (K == ReduceKind::kMax) return less(a, b) ? b : a;
    else return static_cast<Acc>(a + b);
  }
};

struct Params {
  DType out_type, mean_type;
  int64_t ddof;
  bool sqrt_result;
};

template <typename T, ReduceKind K>
__device__ void finish(const ReduceJob& j, int64_t o, typename Op<T, K>::Acc acc, const Params& p) {
  if constexpr (K == ReduceKind::kMin || K == ReduceKind::kMax) {
    static_cast<T*>(j.out)[o] = acc;
  } else if constexpr (K == ReduceKind::kSum) {
    store(j.out, o, p.out_type, acc);
  } else {
    const int64_t div = K == ReduceKind::kVariance ? (j.n - p.ddof > 0 ? j.n - p.ddof : 0) : j.n;
    double v = acc / static_cast<double>(div);
    if (p.sqrt_result) v = sqrt(v);
    store(j.out, o, p.out_type, v);
  }
}

template <ReduceKind K>
__device__ double mean_of(const ReduceJob& j, int64_t o, DType t) {
  if constexpr (K != ReduceKind::kVariance) {
    return 0.0;
  } else {
    const int64_t k = j.mean_n == 1 ? 0 : o;
    double r = 0;
    visit_dev_type_device(t, [&](auto tag) {
      using M = typename decltype(tag)::type;
      const M v = static_cast<const M*>(j.mean)[k];
      if constexpr (std::is_same_v<M, BoolByte>) r = v.v;
      else r = to_double(v);
    });
    return r;
  }
}

// One thread per output element.
template <typename T, ReduceKind K>
__global__ void reduce_thread_kernel(const ReduceJob* jobs, const int* block_start, int n, Params p) {
  const int s = sample_of_block(block_start, n, blockIdx.x);
  const ReduceJob& j = jobs[s];
  const int64_t o = int64_t(blockIdx.x - block_start[s]) * kThreads + threadIdx.x;
  if (o >= j.outputs) return;
  const T* in = static_cast<const T*>(j.in) + offset_of(o, j.kept_count, j.kept_stride, j.kept_ndim);
  const double mean = mean_of<K>(j, o, p.mean_type);
  auto acc = Op<T, K>::start();
  for (int64_t r = 0; r < j.n; ++r) acc = Op<T, K>::add(acc, in[offset_of(r, j.red_count, j.red_stride, j.red_ndim)], mean);
  finish<T, K>(j, o, acc, p);
}

// One block per output element.
template <typename T, ReduceKind K>
__global__ void reduce_block_kernel(const ReduceJob* jobs, const int* block_start, int n, Params p) {
  using Acc = typename Op<T, K>::Acc;
  __shared__ Acc part[kThreads];
  const int s = sample_of_block(block_start, n, blockIdx.x);
  const ReduceJob& j = jobs[s];
  const int64_t o = blockIdx.x - block_start[s];
  const T* in = static_cast<const T*>(j.in) + offset_of(o, j.kept_count, j.kept_stride, j.kept_ndim);
  const double mean = mean_of<K>(j, o, p.mean_type);
  Acc acc = Op<T, K>::start();
  for (int64_t r = threadIdx.x; r < j.n; r += kThreads)
    acc = Op<T, K>::add(acc, in[offset_of(r, j.red_count, j.red_stride, j.red_ndim)], mean);
  part[threadIdx.x] = acc;
  __syncthreads();
  for (int w = kThreads / 2; w > 0; w >>= 1) {
    if (threadIdx.x < w) part[threadIdx.x] = Op<T, K>::merge(part[threadIdx.x], part[threadIdx.x + w]);
    __syncthreads();
  }
  if (threadIdx.x == 0) finish<T, K>(j, o, part[0], p);
}

template <typename T, ReduceKind K>
void launch(Workspace& ws, const std::vector<ReduceJob>& jobs, const Params& p) {
  std::vector<ReduceJob> small, large;
  for (const ReduceJob& j : jobs) {
    if (j.outputs == 0) continue;
    (j.n >= kBlockThreshold ? large : small).push_back(j);
  }
  auto stream = static_cast<cudaStream_t>(ws.gpu->stream());
  for (int mode = 0; mode < 2; ++mode) {
    const std::vector<ReduceJob>& js = mode == 0 ? small : large;
    if (js.empty()) continue;
    LaunchPlan plan(mode == 0 ? kThreads : 1);
    for (const ReduceJob& j : js) plan.add(j.outputs);
    DeviceParams params(ws);
    const size_t starts_off = params.add(plan.block_start());
    const size_t jobs_off = params.add(js);
    params.upload();
    const unsigned blocks = static_cast<unsigned>(plan.blocks());
    if (mode == 0)
      reduce_thread_kernel<T, K><<<blocks, kThreads, 0, stream>>>(
          params.device<ReduceJob>(jobs_off), params.device<int>(starts_off), plan.jobs(), p);
    else
      reduce_block_kernel<T, K><<<blocks, kThreads, 0, stream>>>(
          params.device<ReduceJob>(jobs_off), params.device<int>(starts_off), plan.jobs(), p);
    check_launch("reduce_gpu");
  }
}

// Merges neighbouring axes of one kind (kept or reduced) that are contiguous in memory.
bool split_axes(const Shape& shape, const std::vector<bool>& reduced, bool want_reduced,
                int* nd, int64_t* count, int64_t* stride) {
  std::vector<int64_t> st(shape.size(), 1);
  for (int k = static_cast<int>(shape.size()) - 2; k >= 0; --k) st[k] = st[k + 1] * shape[k + 1];
  std::vector<int64_t> c, s;
  int last = -2;
  for (int k = 0; k < static_cast<int>(shape.size()); ++k) {
    if (reduced[k] != want_reduced || shape[k] == 1) continue;
    if (last == k - 1 && !c.empty() && s.back() == st[k] * shape[k]) {
      c.back() *= shape[k];
      s.back() = st[k];
    } else {
      c.push_back(shape[k]);
      s.push_back(st[k]);
    }
    last = k;
  }
  if (c.size() > static_cast<size_t>(kMaxReduceDims)) return false;
  *nd = static_cast<int>(c.size());
  for (size_t k = 0; k < c.size(); ++k) {
    count[k] = c[k];
    stride[k] = s[k];
  }
  return true;
}

}  // namespace

bool make_reduce_job(ReduceJob* job, const void* in, void* out, const Shape& shape,
                     const std::vector<bool>& reduced) {
  *job = ReduceJob{};
  job->in = in;
  job->out = out;
  job->outputs = 1;
  job->n = 1;
  for (size_t k = 0; k < shape.size(); ++k) (reduced[k] ? job->n : job->outputs) *= shape[k];
  return split_axes(shape, reduced, false, &job->kept_ndim, job->kept_count, job->kept_stride) &&
         split_axes(shape, reduced, true, &job->red_ndim, job->red_count, job->red_stride);
}

void reduce_gpu(Workspace& ws, ReduceKind kind, DType in_type, DType out_type, DType mean_type,
                int64_t ddof, bool sqrt_result, const std::vector<ReduceJob>& jobs) {
  const Params p{out_type, mean_type, ddof, sqrt_result};
  // Sums and moments of bool read its bytes as uint8.
  const DType as = in_type == DType::kBool && kind != ReduceKind::kMin && kind != ReduceKind::kMax
                       ? DType::kUInt8 : in_type;
  visit_dev_type(as, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (kind == ReduceKind::kMin) return launch<T, ReduceKind::kMin>(ws, jobs, p);
    if (kind == ReduceKind::kMax) return launch<T, ReduceKind::kMax>(ws, jobs, p);
    if constexpr (!std::is_same_v<T, BoolByte>) {  // bool: read as uint8 above
      if (kind == ReduceKind::kSum) return launch<T, ReduceKind::kSum>(ws, jobs, p);
      if (kind == ReduceKind::kMean) return launch<T, ReduceKind::kMean>(ws, jobs, p);
      if (kind == ReduceKind::kMeanSquare) return launch<T, ReduceKind::kMeanSquare>(ws, jobs, p);
      return launch<T, ReduceKind::kVariance>(ws, jobs, p);
    }
  });
}

}  // namespace stoker::kernels::cuda
