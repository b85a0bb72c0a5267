#include "kernels/cuda/normalize_gpu.h"

#include <algorithm>
#include <cstring>

#include "core/cuda/cuda_util.h"
#include "core/error.h"
#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/elementwise.cuh"
#include "kernels/cuda/launch_plan.h"
#include "pipeline/gpu_batch.h"
#include "pipeline/gpu_context.h"

namespace stoker::kernels::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kItems = 8;
constexpr int64_t kChunk = int64_t(kThreads) * kItems;  // elements per block
constexpr int kSharedStats = 1024;                        // block-local accumulators (doubles)

// One sample with neighbouring axes that are both reduced or both kept merged (as the CPU's
// for_rows does). The statistics index of an element is sum(coord[k] * sstride[k]), sstride 0
// on reduced axes.
struct NormDesc {
  const void* in;
  void* out;
  int64_t volume;
  int64_t ext[kMaxNormalizeDims];
  int64_t sstride[kMaxNormalizeDims];
  int64_t stats_vol;  // entries of this sample's statistics
  int64_t stats_off;  // where they start in the per-sample tables (mean, mean_f, factor)
  int64_t acc_off;    // where its accumulators start (0 for all samples with batch statistics)
  double count;       // elements summed into each accumulator
  int nd;
};

struct Merged {
  int nd = 0;
  int64_t ext[kMaxNormalizeDims] = {}, sstride[kMaxNormalizeDims] = {};
  int64_t volume = 1, stats_vol = 1;
};

bool merge(const Shape& shape, const std::vector<bool>& reduce, Merged* m) {
  std::vector<int64_t> ext;
  std::vector<bool> red;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (!ext.empty() && red.back() == reduce[d]) {
      ext.back() *= shape[d];
    } else {
      ext.push_back(shape[d]);
      red.push_back(reduce[d]);
    }
  }
  if (ext.size() > static_cast<size_t>(kMaxNormalizeDims)) return false;
  m->nd = static_cast<int>(ext.size());
  int64_t s = 1, vol = 1;
  for (int d = m->nd - 1; d >= 0; --d) {
    m->ext[d] = ext[d];
    vol *= ext[d];
    if (!red[d]) {
      m->sstride[d] = s;
      s *= ext[d];
    } else {
      m->sstride[d] = 0;
    }
  }
  m->volume = vol;
  m->stats_vol = s;
  return true;
}

__device__ __forceinline__ int64_t stats_index(const NormDesc& d, int64_t idx) {
  int64_t st = 0;
  for (int k = d.nd - 1; k >= 0; --k) {
    const int64_t n = d.ext[k];
    st += (idx % n) * d.sstride[k];
    idx /= n;
  }
  return st;
}

template <typename T>
__device__ __forceinline__ double load_d(T v) {
  if constexpr (std::is_same_v<T, __half>) return static_cast<double>(__half2float(v));
  else return static_cast<double>(v);
}

// Sums of the elements (kSquares: of (x - mean)^2) over the reduced axes into acc.
template <typename In, bool kSquares>
__global__ void reduce_kernel(const NormDesc* descs, const int* block_start, int n, double* acc,
                              const double* mean) {
  __shared__ NormDesc d;
  __shared__ double sh[kSharedStats];
  const int s = sample_of_block(block_start, n, blockIdx.x);
  if (threadIdx.x == 0) d = descs[s];
  __syncthreads();
  const bool scalar = d.stats_vol == 1;
  const bool use_shared = !scalar && d.stats_vol <= kSharedStats;
  if (use_shared) {
    for (int64_t k = threadIdx.x; k < d.stats_vol; k += blockDim.x) sh[k] = 0.0;
    __syncthreads();
  }
  const In* in = static_cast<const In*>(d.in);
  const int64_t base = int64_t(blockIdx.x - block_start[s]) * kChunk;
  double local = 0.0;
  for (int it = 0; it < kItems; ++it) {
    const int64_t idx = base + it * kThreads + threadIdx.x;
    if (idx >= d.volume) break;
    const int64_t st = scalar ? 0 : stats_index(d, idx);
    double v = load_d(in[idx]);
    if constexpr (kSquares) {
      v = __dsub_rn(v, mean[d.stats_off + st]);
      v = __dmul_rn(v, v);
    }
    if (scalar) local = __dadd_rn(local, v);
    else if (use_shared) atomicAdd(&sh[st], v);
    else atomicAdd(&acc[d.acc_off + st], v);
  }
  if (scalar) {
    for (int off = 16; off > 0; off >>= 1) local = __dadd_rn(local, __shfl_down_sync(0xffffffffu, local, off));
    if ((threadIdx.x & 31) == 0 && local != 0.0) atomicAdd(&acc[d.acc_off], local);
  } else if (use_shared) {
    __syncthreads();
    for (int64_t k = threadIdx.x; k < d.stats_vol; k += blockDim.x)
      if (sh[k] != 0.0) atomicAdd(&acc[d.acc_off + k], sh[k]);
  }
}

// mean = sum / count (0 without elements), per statistics entry of each sample.
__global__ void finish_mean_kernel(const NormDesc* descs, const int* block_start, int n,
                                   const double* sum, double* mean) {
  const int s = sample_of_block(block_start, n, blockIdx.x);
  const NormDesc& d = descs[s];
  const int64_t k = int64_t(blockIdx.x - block_start[s]) * kThreads + threadIdx.x;
  if (k >= d.stats_vol) return;
  mean[d.stats_off + k] = d.count > 0 ? __ddiv_rn(sum[d.acc_off + k], d.count) : 0.0;
}

// The CPU's finish(): v = stddev^2 or sq / (count - ddof); v += epsilon;
// factor = v > 0 ? scale / sqrt(v) : 0 (as float), mean_f = float(mean).
__global__ void finish_factor_kernel(const NormDesc* descs, const int* block_start, int n,
                                     const double* sq, const double* stddev, const double* mean,
                                     float* mean_f, float* factor, double ddof, double epsilon,
                                     double scale) {
  const int s = sample_of_block(block_start, n, blockIdx.x);
  const NormDesc& d = descs[s];
  const int64_t k = int64_t(blockIdx.x - block_start[s]) * kThreads + threadIdx.x;
  if (k >= d.stats_vol) return;
  const int64_t e = d.stats_off + k;
  double v;
  if (stddev) v = __dmul_rn(stddev[e], stddev[e]);
  else v = __ddiv_rn(sq[d.acc_off + k], __dsub_rn(d.count, ddof));
  v = __dadd_rn(v, epsilon);
  mean_f[e] = static_cast<float>(mean[e]);
  factor[e] = v > 0 ? static_cast<float>(__ddiv_rn(scale, __dsqrt_rn(v))) : 0.0f;
}

template <typename Out, typename In>
__global__ void apply_kernel(const NormDesc* descs, const int* block_start, int n,
                             const float* mean_f, const float* factor, float shift) {
  __shared__ NormDesc d;
  const int s = sample_of_block(block_start, n, blockIdx.x);
  if (threadIdx.x == 0) d = descs[s];
  __syncthreads();
  const In* in = static_cast<const In*>(d.in);
  Out* out = static_cast<Out*>(d.out);
  const int64_t base = int64_t(blockIdx.x - block_start[s]) * kChunk;
#pragma unroll
  for (int it = 0; it < kItems; ++it) {
    const int64_t idx = base + it * kThreads + threadIdx.x;
    if (idx >= d.volume) return;
    const int64_t e = d.stats_off + (d.stats_vol == 1 ? 0 : stats_index(d, idx));
    const float x = load_f(in[idx]);
    out[idx] = convert_sat_dev<Out>(__fadd_rn(__fmul_rn(__fsub_rn(x, mean_f[e]), factor[e]), shift));
  }
}

template <typename F>
void visit_numeric(DType t, F&& f) {
  STOKER_ASSERT(t != DType::kBool, "normalize_gpu: bool");
  visit_dev_type(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, BoolByte>) f(tag);
  });
}

size_t align8(size_t v) { return (v + 7) & ~size_t(7); }

}  // namespace

bool normalize_gpu_supports(DType out, DType in, const Shape& shape, const std::vector<bool>& reduce) {
  if (out == DType::kBool || in == DType::kBool) return false;
  Merged m;
  return merge(shape, reduce, &m);
}

void normalize_gpu(Workspace& ws, DType out_type, DType in_type,
                   const std::vector<NormalizeSample>& samples, const NormalizeArgs& args) {
  const int n = static_cast<int>(samples.size());
  if (n == 0) return;
  const bool ready = !args.mean_f.empty();
  const bool mean_given = !args.mean.empty(), std_given = !args.stddev.empty();
  std::vector<NormDesc> descs(n);
  LaunchPlan elems(kChunk), stats(kThreads);
  int64_t total_stats = 0;
  // Elements summed into each statistic: the product of the reduced extents (the CPU's count).
  auto reduced_count = [&](const Shape& shape) {
    int64_t c = 1;
    for (size_t k = 0; k < shape.size(); ++k)
      if (args.reduce[k]) c *= shape[k];
    return c;
  };
  int64_t batch_count = 0;
  for (int i = 0; i < n; ++i) {
    STOKER_ASSERT(samples[i].shape.size() == args.reduce.size(), "normalize_gpu: bad reduce mask");
    batch_count += reduced_count(samples[i].shape);
  }
  for (int i = 0; i < n; ++i) {
    Merged m;
    STOKER_ASSERT(merge(samples[i].shape, args.reduce, &m), "normalize_gpu: too many dimensions");
    NormDesc& d = descs[i];
    std::memset(&d, 0, sizeof d);
    d.in = samples[i].in;
    d.out = samples[i].out;
    d.volume = m.volume;
    d.nd = m.nd;
    for (int k = 0; k < m.nd; ++k) {
      d.ext[k] = m.ext[k];
      d.sstride[k] = m.sstride[k];
    }
    d.stats_vol = m.stats_vol;
    d.stats_off = total_stats;
    d.acc_off = args.batch ? 0 : total_stats;
    d.count = static_cast<double>(args.batch ? batch_count : reduced_count(samples[i].shape));
    if (args.batch)
      STOKER_ASSERT(m.stats_vol == descs[0].stats_vol, "normalize_gpu: batch statistics of different shapes");
    total_stats += m.stats_vol;
    elems.add(m.volume);
    stats.add(m.stats_vol);
  }
  if (elems.blocks() == 0) return;
  auto concat = [&](const auto& per_sample, auto zero) {
    std::vector<decltype(zero)> v;
    v.reserve(total_stats);
    for (int i = 0; i < n; ++i) {
      STOKER_ASSERT(static_cast<int64_t>(per_sample[i].size()) == descs[i].stats_vol,
                    "normalize_gpu: statistics of the wrong size");
      v.insert(v.end(), per_sample[i].begin(), per_sample[i].end());
    }
    return v;
  };
  DeviceParams params(ws);
  const size_t descs_off = params.add(descs);
  const size_t elem_starts_off = params.add(elems.block_start());
  const size_t stat_starts_off = params.add(stats.block_start());
  size_t mean_f_off = 0, factor_off = 0, mean_off = 0, std_off = 0;
  if (ready) {
    mean_f_off = params.add(concat(args.mean_f, 0.0f));
    factor_off = params.add(concat(args.factor, 0.0f));
  } else {
    if (mean_given) mean_off = params.add(concat(args.mean, 0.0));
    if (std_given) std_off = params.add(concat(args.stddev, 0.0));
  }
  params.upload();
  const NormDesc* dd = params.device<NormDesc>(descs_off);
  const int* elem_starts = params.device<int>(elem_starts_off);
  const int* stat_starts = params.device<int>(stat_starts_off);
  auto stream = static_cast<cudaStream_t>(ws.gpu->stream());
  const float* mean_f = nullptr;
  const float* factor = nullptr;
  std::shared_ptr<void> scratch;  // back to the pool after the queued work, when this returns
  if (ready) {
    mean_f = params.device<float>(mean_f_off);
    factor = params.device<float>(factor_off);
  } else {
    const int64_t acc_size = args.batch ? descs[0].stats_vol : total_stats;
    // mean (double), sums and squares (double), mean_f and factor (float)
    const size_t o_mean = 0;
    const size_t o_sum = align8(o_mean + total_stats * sizeof(double));
    const size_t o_sq = align8(o_sum + acc_size * sizeof(double));
    const size_t o_mf = align8(o_sq + acc_size * sizeof(double));
    const size_t o_fac = align8(o_mf + total_stats * sizeof(float));
    const size_t bytes = std::max<size_t>(align8(o_fac + total_stats * sizeof(float)), 8);
    scratch = ws.gpu->allocate_device(bytes);
    char* b = static_cast<char*>(scratch.get());
    double* mean = mean_given ? params.device<double>(mean_off) : reinterpret_cast<double*>(b + o_mean);
    double* sum = reinterpret_cast<double*>(b + o_sum);
    double* sq = reinterpret_cast<double*>(b + o_sq);
    float* mf = reinterpret_cast<float*>(b + o_mf);
    float* fac = reinterpret_cast<float*>(b + o_fac);
    const unsigned eblocks = static_cast<unsigned>(elems.blocks());
    const unsigned sblocks = static_cast<unsigned>(stats.blocks());
    if (!mean_given) {
      STOKER_CUDA_CHECK(cudaMemsetAsync(sum, 0, acc_size * sizeof(double), stream));
      visit_numeric(in_type, [&](auto ti) {
        using In = typename decltype(ti)::type;
        reduce_kernel<In, false><<<eblocks, kThreads, 0, stream>>>(dd, elem_starts, n, sum, nullptr);
      });
      check_launch("normalize_gpu (sums)");
      if (sblocks) finish_mean_kernel<<<sblocks, kThreads, 0, stream>>>(dd, stat_starts, n, sum, mean);
      check_launch("normalize_gpu (mean)");
    }
    if (!std_given) {
      STOKER_CUDA_CHECK(cudaMemsetAsync(sq, 0, acc_size * sizeof(double), stream));
      visit_numeric(in_type, [&](auto ti) {
        using In = typename decltype(ti)::type;
        reduce_kernel<In, true><<<eblocks, kThreads, 0, stream>>>(dd, elem_starts, n, sq, mean);
      });
      check_launch("normalize_gpu (squared deviations)");
    }
    const double* sd = std_given ? params.device<double>(std_off) : nullptr;
    if (sblocks)
      finish_factor_kernel<<<sblocks, kThreads, 0, stream>>>(dd, stat_starts, n, sq, sd, mean, mf, fac,
                                                             static_cast<double>(args.ddof),
                                                             args.epsilon, args.scale);
    check_launch("normalize_gpu (factor)");
    mean_f = mf;
    factor = fac;
  }
  const unsigned blocks = static_cast<unsigned>(elems.blocks());
  visit_numeric(in_type, [&](auto ti) {
    using In = typename decltype(ti)::type;
    visit_numeric(out_type, [&](auto to) {
      using Out = typename decltype(to)::type;
      apply_kernel<Out, In><<<blocks, kThreads, 0, stream>>>(dd, elem_starts, n, mean_f, factor, args.shift);
    });
  });
  check_launch("normalize_gpu");
}

}  // namespace stoker::kernels::cuda
