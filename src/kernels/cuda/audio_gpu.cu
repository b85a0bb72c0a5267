#include "kernels/cuda/audio_gpu.h"

#include <algorithm>
#include <climits>
#include <cmath>

#include "codecs/audio/audio_decoder.h"
#include "core/cuda/cuda_util.h"
#include "core/error.h"
#include "kernels/cuda/cufft_loader.h"
#include "kernels/cuda/elementwise.cuh"
#include "kernels/cuda/launch_plan.h"
#include "pipeline/gpu_batch.h"
#include "pipeline/gpu_context.h"

namespace stoker::kernels::cuda {
namespace {

constexpr int kThreads = 256;

size_t align256(size_t b) { return (b + 255) & ~size_t(255); }

// ------------------------------------------------------------------------- type dispatch

// Element i of a signal of type t as Acc (float, or double for float64 input: the CPU kernel's
// accumulator).
template <typename Acc>
__device__ __forceinline__ Acc load_as(const void* p, int64_t i, DType t) {
  switch (t) {
    case DType::kUInt8: return static_cast<Acc>(static_cast<const uint8_t*>(p)[i]);
    case DType::kUInt16: return static_cast<Acc>(static_cast<const uint16_t*>(p)[i]);
    case DType::kUInt32: return static_cast<Acc>(static_cast<const uint32_t*>(p)[i]);
    case DType::kUInt64: return static_cast<Acc>(static_cast<const uint64_t*>(p)[i]);
    case DType::kInt8: return static_cast<Acc>(static_cast<const int8_t*>(p)[i]);
    case DType::kInt16: return static_cast<Acc>(static_cast<const int16_t*>(p)[i]);
    case DType::kInt32: return static_cast<Acc>(static_cast<const int32_t*>(p)[i]);
    case DType::kInt64: return static_cast<Acc>(static_cast<const int64_t*>(p)[i]);
    case DType::kFloat64: return static_cast<Acc>(static_cast<const double*>(p)[i]);
    default: return static_cast<Acc>(static_cast<const float*>(p)[i]);
  }
}

// The CPU kernel's convert_out: floats as they are, integers rounded half away from zero and
// saturated, NaN to 0.
template <typename Out, typename F>
__device__ __forceinline__ Out convert_out_dev(F v) {
  if constexpr (std::is_floating_point_v<Out>) {
    return static_cast<Out>(v);
  } else {
    if (v != v) return Out(0);
    F r;
    if constexpr (std::is_same_v<F, double>) r = round(v);
    else r = roundf(v);
    if (r <= static_cast<F>(DevLimits<Out>::lowest)) return DevLimits<Out>::lowest;
    if (r >= static_cast<F>(DevLimits<Out>::max)) return DevLimits<Out>::max;
    return static_cast<Out>(r);
  }
}

template <typename F>
__device__ __forceinline__ void store_as(void* p, int64_t i, DType t, F v) {
  switch (t) {
    case DType::kUInt8: static_cast<uint8_t*>(p)[i] = convert_out_dev<uint8_t>(v); return;
    case DType::kUInt16: static_cast<uint16_t*>(p)[i] = convert_out_dev<uint16_t>(v); return;
    case DType::kUInt32: static_cast<uint32_t*>(p)[i] = convert_out_dev<uint32_t>(v); return;
    case DType::kUInt64: static_cast<uint64_t*>(p)[i] = convert_out_dev<uint64_t>(v); return;
    case DType::kInt8: static_cast<int8_t*>(p)[i] = convert_out_dev<int8_t>(v); return;
    case DType::kInt16: static_cast<int16_t*>(p)[i] = convert_out_dev<int16_t>(v); return;
    case DType::kInt32: static_cast<int32_t*>(p)[i] = convert_out_dev<int32_t>(v); return;
    case DType::kInt64: static_cast<int64_t*>(p)[i] = convert_out_dev<int64_t>(v); return;
    case DType::kFloat64: static_cast<double*>(p)[i] = convert_out_dev<double>(v); return;
    default: static_cast<float*>(p)[i] = convert_out_dev<float>(v); return;
  }
}

__device__ __forceinline__ float mul_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double mul_rn(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ float sub_rn(float a, float b) { return __fsub_rn(a, b); }
__device__ __forceinline__ double sub_rn(double a, double b) { return __dsub_rn(a, b); }

bool signal_type(DType t) {
  return t != DType::kBool && t != DType::kFloat16 && t != DType::kNone;
}

// ------------------------------------------------------------------------- preemphasis

template <typename Acc>
__global__ void preemphasis_kernel(const PreemphasisJob* jobs, const int* block_start, int n,
                                   DType in_type, DType out_type, int border) {
  const int s = sample_of_block(block_start, n, blockIdx.x);
  const PreemphasisJob& j = jobs[s];
  const int64_t t = int64_t(blockIdx.x - block_start[s]) * kThreads + threadIdx.x;
  if (t >= j.n) return;
  const Acc c = static_cast<Acc>(j.coeff);
  const Acc x = load_as<Acc>(j.in, t, in_type);
  Acc prev = 0;
  if (t > 0) prev = load_as<Acc>(j.in, t - 1, in_type);
  else if (border == static_cast<int>(audio::PreemphasisBorder::kClamp)) prev = x;
  else if (border == static_cast<int>(audio::PreemphasisBorder::kReflect) && j.n > 1)
    prev = load_as<Acc>(j.in, 1, in_type);
  store_as(j.out, t, out_type, sub_rn(x, mul_rn(c, prev)));
}

// ------------------------------------------------------------------------- resampling

// pcm.h's conversions (integers stand for -1..1), in double as there.
template <typename T>
__device__ __forceinline__ float pcm_to_float_dev(T v) {
  if constexpr (std::is_floating_point_v<T>) return static_cast<float>(v);
  else if constexpr (std::is_signed_v<T>)
    return static_cast<float>(static_cast<double>(v) / static_cast<double>(DevLimits<T>::max));
  else
    return static_cast<float>(static_cast<double>(v) * 2.0 / static_cast<double>(DevLimits<T>::max) - 1.0);
}

// A [-1, 1] sample as PCM of type T: scaled to T's range in double, then rounded and saturated
// as every GPU store is (convert_sat_dev; NaN gives 0).
template <typename T>
__device__ __forceinline__ T pcm_from_float_dev(float v) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v);
  } else {
    const double m = static_cast<double>(DevLimits<T>::max);
    return convert_sat_dev<T>(std::is_signed_v<T> ? static_cast<double>(v) * m
                                                  : (static_cast<double>(v) + 1.0) * 0.5 * m);
  }
}

struct ResampleDesc {
  const void* in;
  void* out;
  int64_t in_frames, out_frames;
  int channels;
  int copy;       // equal rates: the input as it is (cut or padded with zeros), as on the CPU
  double step;    // input frames per output frame
  float cutoff;   // the sinc's cutoff, a fraction of the input's Nyquist frequency
  float half;     // the window's half width, in input frames
  float beta;     // Kaiser's beta
  float norm;     // 1 / I0(beta)
};

// One thread per output value: the input frames within `half` of the output frame's position,
// weighted by cutoff * sinc(cutoff * t) times the Kaiser window at t.
template <typename In>
__global__ void resample_kernel(const ResampleDesc* jobs, const int* block_start, int n,
                                DType out_type) {
  const int s = sample_of_block(block_start, n, blockIdx.x);
  const ResampleDesc& j = jobs[s];
  const int64_t k = int64_t(blockIdx.x - block_start[s]) * kThreads + threadIdx.x;
  const int64_t ch = j.channels;
  if (k >= j.out_frames * ch) return;
  const int64_t f = k / ch, c = k - f * ch;
  const In* x = static_cast<const In*>(j.in);
  float acc = 0.f;
  if (j.copy) {
    if (f < j.in_frames) acc = pcm_to_float_dev(x[f * ch + c]);
  } else {
    const double pos = static_cast<double>(f) * j.step;
    const int64_t lo = max(int64_t(0), static_cast<int64_t>(ceil(pos - j.half)));
    const int64_t hi = min(j.in_frames - 1, static_cast<int64_t>(floor(pos + j.half)));
    const float inv_half = 1.f / j.half;
    for (int64_t i = lo; i <= hi; ++i) {
      const float t = static_cast<float>(pos - static_cast<double>(i));
      const float u = t * inv_half;
      const float w = cyl_bessel_i0f(j.beta * sqrtf(fmaxf(0.f, 1.f - u * u))) * j.norm;
      const float a = j.cutoff * t;
      const float sinc = a == 0.f ? 1.f : sinpif(a) / (3.14159265358979f * a);
      acc += pcm_to_float_dev(x[i * ch + c]) * (j.cutoff * sinc * w);
    }
  }
  switch (out_type) {
    case DType::kUInt8: static_cast<uint8_t*>(j.out)[k] = pcm_from_float_dev<uint8_t>(acc); return;
    case DType::kUInt16: static_cast<uint16_t*>(j.out)[k] = pcm_from_float_dev<uint16_t>(acc); return;
    case DType::kUInt32: static_cast<uint32_t*>(j.out)[k] = pcm_from_float_dev<uint32_t>(acc); return;
    case DType::kInt8: static_cast<int8_t*>(j.out)[k] = pcm_from_float_dev<int8_t>(acc); return;
    case DType::kInt16: static_cast<int16_t*>(j.out)[k] = pcm_from_float_dev<int16_t>(acc); return;
    case DType::kInt32: static_cast<int32_t*>(j.out)[k] = pcm_from_float_dev<int32_t>(acc); return;
    default: static_cast<float*>(j.out)[k] = acc; return;
  }
}

// ------------------------------------------------------------------------- spectrogram

struct FrameDesc {
  const float* in;  // null: padding frames (zeros)
  int64_t n, frames, frame0;
};

__device__ __forceinline__ int64_t reflect_index(int64_t j, int64_t n) {
  if (n == 1) return 0;
  const int64_t period = 2 * (n - 1);
  j %= period;
  if (j < 0) j += period;
  return j < n ? j : period - j;
}

// The windowed frames, zero-padded to nfft, one row of nfft floats per frame of the batch.
__global__ void frame_kernel(const FrameDesc* jobs, const int* block_start, int njobs,
                             const float* window, float* frames_out, int nfft, int wl, int step,
                             int64_t offset, bool reflect) {
  const int s = sample_of_block(block_start, njobs, blockIdx.x);
  const FrameDesc& j = jobs[s];
  const int64_t k = int64_t(blockIdx.x - block_start[s]) * kThreads + threadIdx.x;
  if (k >= j.frames * nfft) return;
  const int64_t f = k / nfft;
  const int t = static_cast<int>(k - f * nfft);
  float v = 0.f;
  if (j.in && t < wl) {
    const int64_t i = f * step - offset + t;
    float x = 0.f;
    if (i >= 0 && i < j.n) x = j.in[i];
    else if (reflect) x = j.in[reflect_index(i, j.n)];
    v = __fmul_rn(x, window[t]);
  }
  frames_out[(j.frame0 + f) * nfft + t] = v;
}

struct PowerDesc {
  float* out;
  int64_t frames, frame0;
};

// |X|^power of each sample's bins, in its layout.
__global__ void power_kernel(const PowerDesc* jobs, const int* block_start, int njobs,
                             const float2* spectra, const float* frames, int nfft, int power,
                             bool time_major) {
  const int s = sample_of_block(block_start, njobs, blockIdx.x);
  const PowerDesc& j = jobs[s];
  const int nb = nfft / 2 + 1;
  const int64_t k = int64_t(blockIdx.x - block_start[s]) * kThreads + threadIdx.x;
  if (k >= j.frames * nb) return;
  int64_t f, b;
  if (time_major) {
    f = k / nb;
    b = k - f * nb;
  } else {
    b = k / j.frames;
    f = k - b * j.frames;
  }
  // nfft 1 (cuFFT has no transform of one point): the bin is the windowed sample.
  const float2 c = frames ? make_float2(frames[j.frame0 + f], 0.f) : spectra[(j.frame0 + f) * nb + b];
  // Bins 0 and nfft / 2 are real, as the CPU's real FFT gives them.
  const float im = (b == 0 || 2 * b == nfft) ? 0.f : c.y;
  float p = __fadd_rn(__fmul_rn(c.x, c.x), __fmul_rn(im, im));
  if (power == 1) p = __fsqrt_rn(p);
  j.out[k] = p;
}

// cuFFT plans of one operator, per (nfft, frames per transform).
struct FftPlans {
  struct Plan {
    int nfft, batch;
    cufft::Handle handle;
    size_t work;
  };
  const cufft::Api* api = nullptr;
  std::vector<Plan> plans;  // the most recently used first
  ~FftPlans() {
    for (const Plan& p : plans) api->cufftDestroy(p.handle);
  }
};

[[noreturn]] void cufft_failed(const std::string& op, const char* call, cufft::Result r) {
  fail(r == cufft::Result::kAllocFailed ? ErrorKind::kOutOfMemory : ErrorKind::kInternal,
       op + ": cuFFT's " + call + " failed with " + cufft::result_name(r) + ".");
}

const FftPlans::Plan& fft_plan(FftPlans& cache, const std::string& op, int nfft, int batch,
                               cudaStream_t stream) {
  auto& v = cache.plans;
  for (size_t k = 0; k < v.size(); ++k) {
    if (v[k].nfft == nfft && v[k].batch == batch) {
      if (k) std::rotate(v.begin(), v.begin() + k, v.begin() + k + 1);
      return v[0];
    }
  }
  const cufft::Api& api = *cache.api;
  if (v.size() >= 4) {
    // A plan's own device memory (its twiddles) may still be read by queued transforms.
    STOKER_CUDA_CHECK(cudaStreamSynchronize(stream));
    api.cufftDestroy(v.back().handle);
    v.pop_back();
  }
  FftPlans::Plan p{nfft, batch, 0, 0};
  cufft::Result r = api.cufftCreate(&p.handle);
  if (r != cufft::Result::kSuccess) cufft_failed(op, "cufftCreate", r);
  r = api.cufftSetAutoAllocation(p.handle, 0);  // the work area comes from stoker's pool
  int n = nfft;
  if (r == cufft::Result::kSuccess)
    r = api.cufftMakePlanMany(p.handle, 1, &n, nullptr, 1, nfft, nullptr, 1, nfft / 2 + 1,
                              cufft::kR2C, batch, &p.work);
  if (r != cufft::Result::kSuccess) {
    api.cufftDestroy(p.handle);
    cufft_failed(op, "cufftMakePlanMany", r);
  }
  v.insert(v.begin(), p);
  return v[0];
}

// ------------------------------------------------------------------------- band matrices

struct MatDesc {
  const float* in;
  float* out;
  int64_t outer, inner, rows, n;
  const int64_t* first;
  const int64_t* count;
  const int64_t* offset;
  const float* w;
};

__global__ void band_matrix_kernel(const MatDesc* jobs, const int* block_start, int njobs) {
  const int s = sample_of_block(block_start, njobs, blockIdx.x);
  const MatDesc& j = jobs[s];
  const int64_t k = int64_t(blockIdx.x - block_start[s]) * kThreads + threadIdx.x;
  if (k >= j.outer * j.rows * j.inner) return;
  const int64_t t = k % j.inner;
  const int64_t r = (k / j.inner) % j.rows;
  const int64_t o = k / (j.inner * j.rows);
  const int64_t first = j.first[r], count = j.count[r];
  const float* w = j.w + j.offset[r];
  const float* x = j.in + (o * j.n + first) * j.inner + t;
  float acc = 0.f;
  for (int64_t q = 0; q < count; ++q) acc = __fadd_rn(acc, __fmul_rn(w[q], x[q * j.inner]));
  j.out[k] = acc;
}

// ------------------------------------------------------------------------- block reductions

// The largest non-negative value of the block (NaNs passed over), valid in thread 0.
__device__ float block_max(float v) {
  __shared__ float part[kThreads / 32];
  for (int o = 16; o > 0; o >>= 1) {
    const float u = __shfl_down_sync(0xffffffffu, v, o);
    v = u > v ? u : v;
  }
  if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < kThreads / 32 ? part[threadIdx.x] : 0.f;
    for (int o = 16; o > 0; o >>= 1) {
      const float u = __shfl_down_sync(0xffffffffu, v, o);
      v = u > v ? u : v;
    }
  }
  return v;
}

// Non-negative floats order as their bits do: the max goes through an unsigned atomicMax.
__device__ __forceinline__ void atomic_max_nonneg(unsigned* slot, float v) {
  if (v > 0.f) atomicMax(slot, __float_as_uint(v));
}

// ------------------------------------------------------------------------- decibels

struct DbDesc {
  const float* in;
  float* out;
  int64_t n;
  unsigned* max;  // float bits
};

constexpr int kMaxPerThread = 8;

__global__ void db_max_kernel(const DbDesc* jobs, const int* block_start, int njobs) {
  const int s = sample_of_block(block_start, njobs, blockIdx.x);
  const DbDesc& j = jobs[s];
  const int64_t base = int64_t(blockIdx.x - block_start[s]) * kThreads * kMaxPerThread;
  float m = 0.f;
  for (int it = 0; it < kMaxPerThread; ++it) {
    const int64_t i = base + it * kThreads + threadIdx.x;
    if (i < j.n) {
      const float v = j.in[i];
      if (v > m) m = v;
    }
  }
  m = block_max(m);
  if (threadIdx.x == 0) atomic_max_nonneg(j.max, m);
}

__global__ void db_kernel(const DbDesc* jobs, const int* block_start, int njobs, float mul_log2,
                          double reference, float min_ratio) {
  const int s = sample_of_block(block_start, njobs, blockIdx.x);
  const DbDesc& j = jobs[s];
  const int64_t i = int64_t(blockIdx.x - block_start[s]) * kThreads + threadIdx.x;
  if (i >= j.n) return;
  const double ref = reference > 0 ? reference : static_cast<double>(__uint_as_float(*j.max));
  const float inv_ref = ref == 1.0 ? 1.f : __double2float_rn(__ddiv_rn(1.0, ref));
  const float r = __fmul_rn(j.in[i], inv_ref);
  j.out[i] = __fmul_rn(mul_log2, log2f(min_ratio < r ? r : min_ratio));
}

// ------------------------------------------------------------------------- nonsilent region

constexpr int kChunk = kThreads;  // the moving sums' chunks: one block's inclusive scan each

struct NsDesc {
  const void* in;
  int64_t n;
  double* prefix;  // n: the inclusive sum of squares within each chunk
  double* totals;  // one per chunk
  float* mms;      // n: the short-term power
  unsigned* max;   // float bits
  int* first;
  int* last;
  int32_t* begin;
  int32_t* length;
};

template <typename T>
__global__ void ns_scan_kernel(const NsDesc* jobs, const int* block_start, int njobs) {
  __shared__ double buf[kChunk];
  const int s = sample_of_block(block_start, njobs, blockIdx.x);
  const NsDesc& j = jobs[s];
  const int64_t chunk = blockIdx.x - block_start[s];
  const int64_t i = chunk * kChunk + threadIdx.x;
  double v = 0;
  if (i < j.n) {
    const double x = static_cast<double>(static_cast<const T*>(j.in)[i]);
    v = __dmul_rn(x, x);
  }
  buf[threadIdx.x] = v;
  __syncthreads();
  for (int o = 1; o < kChunk; o <<= 1) {
    const double add = threadIdx.x >= o ? buf[threadIdx.x - o] : 0.0;
    __syncthreads();
    buf[threadIdx.x] = __dadd_rn(buf[threadIdx.x], add);
    __syncthreads();
  }
  if (i < j.n) j.prefix[i] = buf[threadIdx.x];
  if (threadIdx.x == kChunk - 1) j.totals[chunk] = buf[kChunk - 1];
}

__global__ void ns_power_kernel(const NsDesc* jobs, const int* block_start, int njobs, int64_t w,
                                double inv_w, bool want_max) {
  const int s = sample_of_block(block_start, njobs, blockIdx.x);
  const NsDesc& j = jobs[s];
  const int64_t i = int64_t(blockIdx.x - block_start[s]) * kChunk + threadIdx.x;
  float m = 0.f;
  if (i < j.n) {
    // The sum of squares over [a, i]: the chunks' own sums, never the difference of two large
    // prefix sums, so that quiet windows after loud ones keep their precision.
    const int64_t a = i - w + 1 > 0 ? i - w + 1 : 0;
    const int64_t ca = a / kChunk, ci = i / kChunk;
    const double before_a = a % kChunk ? j.prefix[a - 1] : 0.0;
    double sum;
    if (ca == ci) {
      sum = __dsub_rn(j.prefix[i], before_a);
    } else {
      sum = __dsub_rn(j.totals[ca], before_a);
      for (int64_t c = ca + 1; c < ci; ++c) sum = __dadd_rn(sum, j.totals[c]);
      sum = __dadd_rn(sum, j.prefix[i]);
    }
    m = __double2float_rn(__dmul_rn(sum, inv_w));
    j.mms[i] = m;
  }
  if (want_max) {
    m = block_max(m);
    if (threadIdx.x == 0) atomic_max_nonneg(j.max, m);
  }
}

__device__ __forceinline__ int warp_min(int v) {
  for (int o = 16; o > 0; o >>= 1) v = min(v, __shfl_down_sync(0xffffffffu, v, o));
  return v;
}
__device__ __forceinline__ int warp_max(int v) {
  for (int o = 16; o > 0; o >>= 1) v = max(v, __shfl_down_sync(0xffffffffu, v, o));
  return v;
}

__global__ void ns_cross_kernel(const NsDesc* jobs, const int* block_start, int njobs,
                                float reference, bool use_max, double factor) {
  __shared__ int lo[kThreads / 32], hi[kThreads / 32];
  const int s = sample_of_block(block_start, njobs, blockIdx.x);
  const NsDesc& j = jobs[s];
  const int64_t i = int64_t(blockIdx.x - block_start[s]) * kChunk + threadIdx.x;
  const float ref = use_max ? __uint_as_float(*j.max) : reference;
  const float threshold = __double2float_rn(__dmul_rn(static_cast<double>(ref), factor));
  const bool on = i < j.n && j.mms[i] >= threshold;
  int a = warp_min(on ? static_cast<int>(i) : INT_MAX);
  int b = warp_max(on ? static_cast<int>(i) : -1);
  if ((threadIdx.x & 31) == 0) {
    lo[threadIdx.x >> 5] = a;
    hi[threadIdx.x >> 5] = b;
  }
  __syncthreads();
  if (threadIdx.x < 32) {
    a = threadIdx.x < kThreads / 32 ? lo[threadIdx.x] : INT_MAX;
    b = threadIdx.x < kThreads / 32 ? hi[threadIdx.x] : -1;
    a = warp_min(a);
    b = warp_max(b);
    if (threadIdx.x == 0 && b >= 0) {
      atomicMin(j.first, a);
      atomicMax(j.last, b);
    }
  }
}

__global__ void ns_region_kernel(const NsDesc* jobs, int njobs, int64_t w) {
  const int s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= njobs) return;
  const NsDesc& j = jobs[s];
  int64_t begin = 0, length = 0;
  if (*j.last >= 0) {
    begin = *j.first - w + 1 > 0 ? *j.first - w + 1 : 0;
    length = *j.last + 1 - begin;
  }
  *j.begin = static_cast<int32_t>(begin);
  *j.length = static_cast<int32_t>(length);
}

}  // namespace

// ------------------------------------------------------------------------- host side

void preemphasis_gpu(Workspace& ws, DType out_type, DType in_type,
                     audio::PreemphasisBorder border, const std::vector<PreemphasisJob>& jobs) {
  STOKER_ASSERT(signal_type(in_type) && signal_type(out_type), "preemphasis_gpu: bad types");
  LaunchPlan plan(kThreads);
  for (const PreemphasisJob& j : jobs) plan.add(j.n);
  if (plan.blocks() == 0) return;
  DeviceParams p(ws);
  const size_t starts = p.add(plan.block_start());
  const size_t descs = p.add(jobs);
  p.upload();
  auto stream = static_cast<cudaStream_t>(ws.gpu->stream());
  const unsigned blocks = static_cast<unsigned>(plan.blocks());
  if (in_type == DType::kFloat64)
    preemphasis_kernel<double><<<blocks, kThreads, 0, stream>>>(
        p.device<PreemphasisJob>(descs), p.device<int>(starts), plan.jobs(), in_type, out_type,
        static_cast<int>(border));
  else
    preemphasis_kernel<float><<<blocks, kThreads, 0, stream>>>(
        p.device<PreemphasisJob>(descs), p.device<int>(starts), plan.jobs(), in_type, out_type,
        static_cast<int>(border));
  check_launch("preemphasis_gpu");
}

void resample_gpu(Workspace& ws, DType out_type, DType in_type, double quality,
                  const std::vector<ResampleJob>& jobs) {
  // libsoxr's recipe for the quality: a rejection of `bits` x 6.02 dB and a passband ending at
  // 1385/2048 of the Nyquist frequency (low quality) or at 1 - 0.05 / to_3dB(rejection), its
  // stopband beginning at the Nyquist frequency. A Kaiser window reaching 10 dB past that
  // rejection gives libsoxr's values on LibriSpeech within 4.4e-5 of full scale at high quality,
  // 6e-5 at very high, 2.5e-4 at medium and 8e-4 at low (tests/python/test_gpu_audio.py checks
  // 5e-4, and 2e-3 at low quality).
  using codecs::audio::ResamplerQuality;
  const ResamplerQuality q = codecs::audio::resampler_quality(quality);
  const double bits = q == ResamplerQuality::kVeryHigh ? 28 : q == ResamplerQuality::kHigh ? 20 : 16;
  const double rejection = bits * 20 * std::log10(2.0);
  const double to_3db = (1.6e-6 * rejection - 7.5e-4) * rejection + 0.646;
  const double passband = q == ResamplerQuality::kLow ? 1385.0 / 2048 : 1 - 0.05 / to_3db;
  const double att = rejection + 10;
  const double beta = 0.1102 * (att - 8.7);
  LaunchPlan plan(kThreads);
  std::vector<ResampleDesc> descs;
  descs.reserve(jobs.size());
  for (const ResampleJob& j : jobs) {
    ResampleDesc d{};
    d.in = j.in;
    d.out = j.out;
    d.in_frames = j.in_frames;
    d.out_frames = j.out_frames;
    d.channels = j.channels;
    d.copy = j.in_rate == j.out_rate || j.in_frames == 0;
    d.step = j.in_rate / j.out_rate;
    const double band = std::min(1.0, j.out_rate / j.in_rate);  // of the input's Nyquist
    d.cutoff = static_cast<float>(band * (passband + 1) / 2);
    d.half = static_cast<float>((att - 8) / (2.285 * M_PI * band * (1 - passband)) / 2);
    d.beta = static_cast<float>(beta);
    d.norm = static_cast<float>(1 / std::cyl_bessel_i(0.0, beta));
    descs.push_back(d);
    plan.add(j.out_frames * j.channels);
  }
  if (plan.blocks() == 0) return;
  DeviceParams p(ws);
  const size_t starts = p.add(plan.block_start());
  const size_t dd = p.add(descs);
  p.upload();
  auto stream = static_cast<cudaStream_t>(ws.gpu->stream());
  const unsigned blocks = static_cast<unsigned>(plan.blocks());
  STOKER_ASSERT(out_type != DType::kFloat64 && out_type != DType::kInt64 &&
                    out_type != DType::kUInt64, "resample_gpu: unsupported output type");
  visit_dev_type(in_type, [&](auto it) {
    using In = typename decltype(it)::type;
    if constexpr (std::is_arithmetic_v<In> && sizeof(In) <= 4) {
      resample_kernel<In><<<blocks, kThreads, 0, stream>>>(
          p.device<ResampleDesc>(dd), p.device<int>(starts), plan.jobs(), out_type);
    } else {
      STOKER_ASSERT(false, "resample_gpu: unsupported input type");
    }
  });
  check_launch("resample_gpu");
}

void spectrogram_gpu(Workspace& ws, std::shared_ptr<void>& plans, const std::string& op,
                     const audio::SpectrogramParams& p, const std::vector<float>& window,
                     const std::vector<SpectrogramJob>& jobs) {
  int64_t total = 0;
  for (const SpectrogramJob& j : jobs) total += j.frames;
  if (total == 0) return;
  const cufft::Api& api = cufft::cufft_api(op);
  if (!plans) {
    auto cache = std::make_shared<FftPlans>();
    cache->api = &api;
    plans = cache;
  }
  FftPlans& cache = *static_cast<FftPlans*>(plans.get());
  const int nfft = p.nfft, nb = nfft / 2 + 1;
  // Frames per transform: a power of two (a few plans serve every batch), at most 2^23 samples
  // of frames at once; the batch's frames are padded with zero frames to a multiple of it.
  int64_t cap = 1;
  while (cap * 2 * nfft <= (int64_t{1} << 23) && cap < (int64_t{1} << 20)) cap *= 2;
  int64_t batch = 1;
  while (batch < total && batch < cap) batch *= 2;
  const int64_t padded = (total + batch - 1) / batch * batch;
  auto stream = static_cast<cudaStream_t>(ws.gpu->stream());
  const FftPlans::Plan no_plan{nfft, 0, 0, 0};
  const FftPlans::Plan& plan_fft =
      nfft > 1 ? fft_plan(cache, op, nfft, static_cast<int>(batch), stream) : no_plan;

  // Scratch: the spectra, the frames, cuFFT's work area.
  const size_t spectra_bytes = align256(static_cast<size_t>(padded) * nb * sizeof(float2));
  const size_t frames_bytes = align256(static_cast<size_t>(padded) * nfft * sizeof(float));
  std::shared_ptr<void> scratch =
      ws.gpu->allocate_device(spectra_bytes + frames_bytes + align256(plan_fft.work));
  char* base = static_cast<char*>(scratch.get());
  auto* spectra = reinterpret_cast<float2*>(base);
  auto* frames = reinterpret_cast<float*>(base + spectra_bytes);
  void* work = base + spectra_bytes + frames_bytes;

  DeviceParams prm(ws);
  LaunchPlan fplan(kThreads), pplan(kThreads);
  std::vector<FrameDesc> fd;
  std::vector<PowerDesc> pd;
  int64_t frame0 = 0;
  for (const SpectrogramJob& j : jobs) {
    fd.push_back({j.in, j.n, j.frames, frame0});
    pd.push_back({j.out, j.frames, frame0});
    fplan.add(j.frames * nfft);
    pplan.add(j.frames * nb);
    frame0 += j.frames;
  }
  if (padded > total) {
    fd.push_back({nullptr, 0, padded - total, total});
    fplan.add((padded - total) * nfft);
  }
  const size_t win = prm.add(window);
  const size_t fstarts = prm.add(fplan.block_start());
  const size_t fdescs = prm.add(fd);
  const size_t pstarts = prm.add(pplan.block_start());
  const size_t pdescs = prm.add(pd);
  prm.upload();
  frame_kernel<<<static_cast<unsigned>(fplan.blocks()), kThreads, 0, stream>>>(
      prm.device<FrameDesc>(fdescs), prm.device<int>(fstarts), fplan.jobs(), prm.device<float>(win),
      frames, nfft, p.window_length, p.window_step, p.center ? p.window_length / 2 : 0,
      p.center && p.reflect);
  check_launch("spectrogram_gpu (frames)");
  if (nfft > 1) {
    cufft::Result r = api.cufftSetStream(plan_fft.handle, reinterpret_cast<cufft::Stream>(stream));
    if (r != cufft::Result::kSuccess) cufft_failed(op, "cufftSetStream", r);
    r = api.cufftSetWorkArea(plan_fft.handle, plan_fft.work ? work : nullptr);
    if (r != cufft::Result::kSuccess) cufft_failed(op, "cufftSetWorkArea", r);
  }
  for (int64_t c = 0; nfft > 1 && c < padded; c += batch) {
    const cufft::Result r = api.cufftExecR2C(plan_fft.handle, frames + c * nfft, spectra + c * nb);
    if (r != cufft::Result::kSuccess) cufft_failed(op, "cufftExecR2C", r);
  }
  if (pplan.blocks())
    power_kernel<<<static_cast<unsigned>(pplan.blocks()), kThreads, 0, stream>>>(
        prm.device<PowerDesc>(pdescs), prm.device<int>(pstarts), pplan.jobs(), spectra,
        nfft == 1 ? frames : nullptr, nfft, p.power, p.time_major);
  check_launch("spectrogram_gpu (power)");
}

void band_matrix_gpu(Workspace& ws, const std::vector<const BandMatrix*>& matrices,
                     const std::vector<MatrixJob>& jobs) {
  LaunchPlan plan(kThreads);
  for (const MatrixJob& j : jobs)
    plan.add(j.outer * static_cast<int64_t>(matrices[j.matrix]->first.size()) * j.inner);
  if (plan.blocks() == 0) return;
  DeviceParams p(ws);
  struct Offsets {
    size_t first, count, offset, w;
  };
  std::vector<Offsets> mo;
  for (const BandMatrix* m : matrices)
    mo.push_back({p.add(m->first), p.add(m->count), p.add(m->offset), p.add(m->weights)});
  const size_t starts = p.add(plan.block_start());
  // The descriptors hold device addresses inside that block, known once it is uploaded: they
  // go in a second one.
  p.upload();
  DeviceParams q(ws);
  std::vector<MatDesc> d;
  for (const MatrixJob& j : jobs) {
    const BandMatrix& m = *matrices[j.matrix];
    const Offsets& o = mo[j.matrix];
    d.push_back({j.in, j.out, j.outer, j.inner, static_cast<int64_t>(m.first.size()), m.n,
                 p.device<int64_t>(o.first), p.device<int64_t>(o.count),
                 p.device<int64_t>(o.offset), p.device<float>(o.w)});
  }
  const size_t descs = q.add(d);
  q.upload();
  auto stream = static_cast<cudaStream_t>(ws.gpu->stream());
  band_matrix_kernel<<<static_cast<unsigned>(plan.blocks()), kThreads, 0, stream>>>(
      q.device<MatDesc>(descs), p.device<int>(starts), plan.jobs());
  check_launch("band_matrix_gpu");
}

void to_decibels_gpu(Workspace& ws, float multiplier, double reference, float min_ratio,
                     const std::vector<DecibelsJob>& jobs) {
  LaunchPlan plan(kThreads), mplan(int64_t(kThreads) * kMaxPerThread);
  for (const DecibelsJob& j : jobs) {
    plan.add(j.n);
    mplan.add(j.n);
  }
  if (plan.blocks() == 0) return;
  // The per-sample maxima live in the parameter block, uploaded as zeros.
  DeviceParams p(ws);
  const size_t maxima = p.add(std::vector<unsigned>(jobs.size(), 0u));
  const size_t starts = p.add(plan.block_start());
  const size_t mstarts = p.add(mplan.block_start());
  p.upload();
  DeviceParams q(ws);
  std::vector<DbDesc> d;
  for (size_t s = 0; s < jobs.size(); ++s)
    d.push_back({jobs[s].in, jobs[s].out, jobs[s].n, p.device<unsigned>(maxima) + s});
  const size_t descs = q.add(d);
  q.upload();
  auto stream = static_cast<cudaStream_t>(ws.gpu->stream());
  if (!(reference > 0))
    db_max_kernel<<<static_cast<unsigned>(mplan.blocks()), kThreads, 0, stream>>>(
        q.device<DbDesc>(descs), p.device<int>(mstarts), mplan.jobs());
  const float mul_log2 = static_cast<float>(multiplier / std::log2(10.0));
  db_kernel<<<static_cast<unsigned>(plan.blocks()), kThreads, 0, stream>>>(
      q.device<DbDesc>(descs), p.device<int>(starts), plan.jobs(), mul_log2, reference, min_ratio);
  check_launch("to_decibels_gpu");
}

void nonsilent_region_gpu(Workspace& ws, DType type, const audio::NonsilentParams& prm,
                          const std::vector<NonsilentJob>& jobs) {
  STOKER_ASSERT(signal_type(type), "nonsilent_region_gpu: bad type");
  if (jobs.empty()) return;
  LaunchPlan plan(kChunk);
  int64_t elems = 0, chunks = 0;
  for (const NonsilentJob& j : jobs) {
    STOKER_ASSERT(j.n < INT32_MAX, "nonsilent_region_gpu: signal too long");
    plan.add(j.n);
    elems += j.n;
    chunks += (j.n + kChunk - 1) / kChunk;
  }
  struct Slot {
    unsigned max;
    int first, last;
  };
  DeviceParams p(ws);
  const size_t slots = p.add(std::vector<Slot>(jobs.size(), Slot{0u, INT_MAX, -1}));
  const size_t starts = p.add(plan.block_start());
  p.upload();
  const size_t prefix_bytes = align256(static_cast<size_t>(elems) * sizeof(double));
  const size_t totals_bytes = align256(static_cast<size_t>(chunks) * sizeof(double));
  std::shared_ptr<void> scratch;
  if (elems > 0)
    scratch = ws.gpu->allocate_device(prefix_bytes + totals_bytes +
                                      align256(static_cast<size_t>(elems) * sizeof(float)));
  char* base = static_cast<char*>(scratch.get());
  DeviceParams q(ws);
  std::vector<NsDesc> d;
  int64_t e0 = 0, c0 = 0;
  for (size_t s = 0; s < jobs.size(); ++s) {
    const NonsilentJob& j = jobs[s];
    Slot* slot = p.device<Slot>(slots) + s;
    NsDesc x{};
    x.in = j.in;
    x.n = j.n;
    if (base) {
      x.prefix = reinterpret_cast<double*>(base) + e0;
      x.totals = reinterpret_cast<double*>(base + prefix_bytes) + c0;
      x.mms = reinterpret_cast<float*>(base + prefix_bytes + totals_bytes) + e0;
    }
    x.max = &slot->max;
    x.first = &slot->first;
    x.last = &slot->last;
    x.begin = j.begin;
    x.length = j.length;
    d.push_back(x);
    e0 += j.n;
    c0 += (j.n + kChunk - 1) / kChunk;
  }
  const size_t descs = q.add(d);
  q.upload();
  auto stream = static_cast<cudaStream_t>(ws.gpu->stream());
  const unsigned blocks = static_cast<unsigned>(plan.blocks());
  const NsDesc* dd = q.device<NsDesc>(descs);
  const int* bs = p.device<int>(starts);
  if (blocks) {
    visit_dev_type(type, [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (!std::is_same_v<T, __half> && !std::is_same_v<T, BoolByte>)
        ns_scan_kernel<T><<<blocks, kChunk, 0, stream>>>(dd, bs, plan.jobs());
    });
    const int64_t w = prm.window_length;
    ns_power_kernel<<<blocks, kChunk, 0, stream>>>(dd, bs, plan.jobs(), w,
                                                   1.0 / static_cast<double>(w),
                                                   !(prm.reference_power > 0));
    ns_cross_kernel<<<blocks, kChunk, 0, stream>>>(
        dd, bs, plan.jobs(), static_cast<float>(prm.reference_power), !(prm.reference_power > 0),
        std::pow(10.0, prm.cutoff_db / 10.0));
  }
  const int njobs = static_cast<int>(jobs.size());
  ns_region_kernel<<<static_cast<unsigned>((njobs + 127) / 128), 128, 0, stream>>>(
      dd, njobs, prm.window_length);
  check_launch("nonsilent_region_gpu");
}

}  // namespace stoker::kernels::cuda
