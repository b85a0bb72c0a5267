#include "kernels/cuda/augment_gpu.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "kernels/cpu/augment/poisson.h"
#include "kernels/cuda/elementwise.cuh"
#include "kernels/cuda/launch_plan.h"
#include "pipeline/gpu_batch.h"
#include "pipeline/gpu_context.h"

namespace stoker::kernels::cuda {
namespace {

constexpr int kThreads = 256;
// Up to this many pixels, a median's window is read once into registers.
constexpr int kLocalWindow = 64;

// The morphology kernel's border_index (warp.h's fold_index for the folds), in device code: the
// source index of `i` along an axis of `n` pixels, -1 where a constant border reads no pixel.
__device__ __forceinline__ int64_t rank_border(int64_t i, int64_t n, FilterBorder b) {
  if (i >= 0 && i < n) return i;
  if (b == FilterBorder::kConstant) return -1;
  if (b == FilterBorder::kReplicate) return i < 0 ? 0 : n - 1;
  if (n <= 1) return 0;
  const int64_t p = b == FilterBorder::kWrap ? n : b == FilterBorder::kReflect ? 2 * n : 2 * n - 2;
  i %= p;
  if (i < 0) i += p;
  if (i < n) return i;
  return b == FilterBorder::kReflect ? p - 1 - i : p - i;
}

// The identity of the extreme (the CPU's constant border value).
template <typename T, bool kMax>
__device__ __forceinline__ T neutral() {
  if constexpr (std::is_same_v<T, float>) return kMax ? -INFINITY : INFINITY;
  else return kMax ? DevLimits<T>::lowest : DevLimits<T>::max;
}

template <bool kMax, typename T>
__device__ __forceinline__ T pick(T a, T b) {
  if constexpr (kMax) return a < b ? b : a;
  else return b < a ? b : a;
}

struct RankDesc {
  const void* src = nullptr;
  void* dst = nullptr;
  int64_t h = 0, w = 0, c = 1;
  int64_t size = 3, anchor = 1;  // along the pass's axis
};

// One pass of erosion / dilation: along rows (kRows) or down columns.
template <typename T, bool kMax, bool kRows>
__global__ void extreme_pass_kernel(const RankDesc* descs, const int* block_start, int n,
                                    FilterBorder border) {
  const int s = sample_of_block(block_start, n, blockIdx.x);
  const RankDesc& d = descs[s];
  const int64_t k = int64_t(blockIdx.x - block_start[s]) * kThreads + threadIdx.x;
  if (k >= d.h * d.w * d.c) return;
  const int64_t ch = k % d.c, px = k / d.c, x = px % d.w, y = px / d.w;
  const T* src = static_cast<const T*>(d.src);
  T v = neutral<T, kMax>();
  for (int64_t j = 0; j < d.size; ++j) {
    if constexpr (kRows) {
      const int64_t sx = rank_border(x + j - d.anchor, d.w, border);
      if (sx >= 0) v = pick<kMax>(v, src[(y * d.w + sx) * d.c + ch]);
    } else {
      const int64_t sy = rank_border(y + j - d.anchor, d.h, border);
      if (sy >= 0) v = pick<kMax>(v, src[(sy * d.w + x) * d.c + ch]);
    }
  }
  static_cast<T*>(d.dst)[k] = v;
}

// Order-preserving unsigned keys of the values.
template <typename T> struct Key;
template <> struct Key<uint8_t> {
  using U = uint32_t;
  static constexpr int kBits = 8;
  __device__ static U of(uint8_t v) { return v; }
  __device__ static uint8_t value(U k) { return static_cast<uint8_t>(k); }
};
template <> struct Key<uint16_t> {
  using U = uint32_t;
  static constexpr int kBits = 16;
  __device__ static U of(uint16_t v) { return v; }
  __device__ static uint16_t value(U k) { return static_cast<uint16_t>(k); }
};
template <> struct Key<int16_t> {
  using U = uint32_t;
  static constexpr int kBits = 16;
  __device__ static U of(int16_t v) { return static_cast<uint16_t>(v) ^ 0x8000u; }
  __device__ static int16_t value(U k) { return static_cast<int16_t>(static_cast<uint16_t>(k ^ 0x8000u)); }
};
template <> struct Key<float> {
  using U = uint32_t;
  static constexpr int kBits = 32;
  __device__ static U of(float v) {
    const U b = __float_as_uint(v);
    return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
  }
  __device__ static float value(U k) {
    return __uint_as_float((k & 0x80000000u) ? (k & 0x7fffffffu) : ~k);
  }
};

struct MedianDesc {
  const void* src = nullptr;
  void* dst = nullptr;
  int64_t h = 0, w = 0, c = 1;
  int64_t kw = 3, kh = 3;
};

// The key of rank `rank` among the window's keys: fixes one bit per sweep, highest first.
template <typename T, typename Get>
__device__ __forceinline__ typename Key<T>::U select_key(int64_t area, int64_t rank, Get get) {
  using U = typename Key<T>::U;
  U prefix = 0, mask = 0;
  for (int b = Key<T>::kBits - 1; b >= 0; --b) {
    const U bit = U(1) << b;
    const U m = mask | bit;
    int64_t zeros = 0;  // keys matching the prefix with this bit clear
    for (int64_t i = 0; i < area; ++i) zeros += (get(i) & m) == prefix;
    if (rank >= zeros) {
      rank -= zeros;
      prefix |= bit;
    }
    mask = m;
  }
  return prefix;
}

template <typename T>
__global__ void median_kernel(const MedianDesc* descs, const int* block_start, int n) {
  using U = typename Key<T>::U;
  const int s = sample_of_block(block_start, n, blockIdx.x);
  const MedianDesc& d = descs[s];
  const int64_t k = int64_t(blockIdx.x - block_start[s]) * kThreads + threadIdx.x;
  if (k >= d.h * d.w * d.c) return;
  const int64_t ch = k % d.c, px = k / d.c, x = px % d.w, y = px / d.w;
  const T* src = static_cast<const T*>(d.src);
  const int64_t rx = d.kw / 2, ry = d.kh / 2, area = d.kw * d.kh;
  auto at = [&](int64_t i) {
    const int64_t wy = i / d.kw, wx = i - wy * d.kw;
    int64_t sy = y + wy - ry, sx = x + wx - rx;
    sy = sy < 0 ? 0 : sy >= d.h ? d.h - 1 : sy;
    sx = sx < 0 ? 0 : sx >= d.w ? d.w - 1 : sx;
    return Key<T>::of(src[(sy * d.w + sx) * d.c + ch]);
  };
  U key;
  if (area <= kLocalWindow) {
    U local[kLocalWindow];
    for (int64_t i = 0; i < area; ++i) local[i] = at(i);
    key = select_key<T>(area, area / 2, [&](int64_t i) { return local[i]; });
  } else {
    key = select_key<T>(area, area / 2, at);
  }
  static_cast<T*>(d.dst)[k] = Key<T>::value(key);
}


// ---- noise

// Philox4x32-10's block `block` of the stream (key, iteration, sample): core/random.h's refill()
// with its draw counter at `block`.
__device__ __forceinline__ void philox_block(uint64_t key, uint64_t iteration, uint32_t sample,
                                             uint32_t block, uint32_t out[4]) {
  uint32_t x0 = block, x1 = sample, x2 = static_cast<uint32_t>(iteration),
           x3 = static_cast<uint32_t>(iteration >> 32);
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
#pragma unroll
  for (int r = 0; r < 10; ++r) {
    const uint32_t hi0 = __umulhi(0xD2511F53u, x0), lo0 = 0xD2511F53u * x0;
    const uint32_t hi1 = __umulhi(0xCD9E8D57u, x2), lo1 = 0xCD9E8D57u * x2;
    x0 = hi1 ^ x1 ^ k0;
    x1 = lo1;
    x2 = hi0 ^ x3 ^ k1;
    x3 = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  out[0] = x0;
  out[1] = x1;
  out[2] = x2;
  out[3] = x3;
}

// augment.cc's round_away_sat<T>(double).
template <typename T>
__device__ __forceinline__ T round_away_sat_dev(double v) {
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v);
  } else {
    if (v != v) return T(0);
    const double r = round(v);
    if (r <= static_cast<double>(DevLimits<T>::lowest)) return DevLimits<T>::lowest;
    if (r >= static_cast<double>(DevLimits<T>::max)) return DevLimits<T>::max;
    return static_cast<T>(r);
  }
}

template <typename T>
using NoiseFloat = std::conditional_t<((std::is_integral_v<T> && sizeof(T) >= 4) || sizeof(T) > 4),
                                      double, float>;

__device__ __forceinline__ float add_rn(float a, float b) { return __fadd_rn(a, b); }
__device__ __forceinline__ double add_rn(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ float mul_rn(float a, float b) { return __fmul_rn(a, b); }
__device__ __forceinline__ double mul_rn(double a, double b) { return __dmul_rn(a, b); }

template <typename T>
__global__ void gaussian_noise_kernel(const NoiseJob* jobs, const int* block_start, int n) {
  const int s = sample_of_block(block_start, n, blockIdx.x);
  const NoiseJob& j = jobs[s];
  const int64_t k = int64_t(blockIdx.x - block_start[s]) * kThreads + threadIdx.x;
  if (k >= j.n) return;
  uint32_t x[4];
  philox_block(j.key, j.iteration, j.sample, static_cast<uint32_t>(k), x);
  // Philox::normal(): two uniform_double() draws, each the top 53 bits of two numbers.
  const uint64_t a = (static_cast<uint64_t>(x[0]) << 32) | x[1];
  const uint64_t b = (static_cast<uint64_t>(x[2]) << 32) | x[3];
  const double u1 = __dsub_rn(1.0, static_cast<double>(a >> 11) * (1.0 / 9007199254740992.0));
  const double u2 = static_cast<double>(b >> 11) * (1.0 / 9007199254740992.0);
  const double normal = __dmul_rn(sqrt(__dmul_rn(-2.0, log(u1))), cos(__dmul_rn(6.283185307179586, u2)));
  using F = NoiseFloat<T>;
  const F noise = add_rn(static_cast<F>(j.mean), mul_rn(static_cast<F>(j.stddev), static_cast<F>(normal)));
  const F v = add_rn(static_cast<F>(static_cast<const T*>(j.in)[k]), noise);
  static_cast<T*>(j.out)[k] = round_away_sat_dev<T>(static_cast<double>(v));
}

template <typename T>
__global__ void salt_and_pepper_kernel(const NoiseJob* jobs, const int* block_start, int n) {
  const int s = sample_of_block(block_start, n, blockIdx.x);
  const NoiseJob& j = jobs[s];
  const int64_t k = int64_t(blockIdx.x - block_start[s]) * kThreads + threadIdx.x;
  if (k >= j.n) return;
  const int64_t C = j.channels < 1 ? 1 : j.channels;
  // The number of the draw that decides value k, as the CPU's loops take them.
  int64_t draw = k;
  if (C > 1) draw = j.channel_first ? k % (j.n / C) : k / C;
  uint32_t x[4];
  philox_block(j.key, j.iteration, j.sample, static_cast<uint32_t>(draw >> 2), x);
  const float u = static_cast<float>(x[draw & 3] >> 8) * (1.0f / 16777216.0f);
  const float salt_prob = __fmul_rn(j.sp.prob, j.sp.salt_vs_pepper);
  const T v = static_cast<const T*>(j.in)[k];
  static_cast<T*>(j.out)[k] =
      u < j.sp.prob ? (u < salt_prob ? static_cast<T>(j.sp.salt) : static_cast<T>(j.sp.pepper)) : v;
}

template <typename T>
__global__ void shot_noise_kernel(const NoiseJob* jobs, const int* block_start, int n) {
  const int s = sample_of_block(block_start, n, blockIdx.x);
  const NoiseJob& j = jobs[s];
  const int64_t k = int64_t(blockIdx.x - block_start[s]) * kThreads + threadIdx.x;
  if (k >= j.n) return;
  const T v = static_cast<const T*>(j.in)[k];
  if (j.factor == 0) {
    static_cast<T*>(j.out)[k] = v;
    return;
  }
  const double lambda = fmax(0.0, __dmul_rn(static_cast<double>(v), 1.0 / j.factor));
  Philox rng = shot_stream(j.key, j.iteration, j.sample, static_cast<uint64_t>(k));
  static_cast<T*>(j.out)[k] = round_away_sat_dev<T>(__dmul_rn(poisson(lambda, rng), j.factor));
}

template <typename T>
__global__ void grid_mask_kernel(const GridMaskJob* jobs, const int* block_start, int n) {
  const int s = sample_of_block(block_start, n, blockIdx.x);
  const GridMaskJob& j = jobs[s];
  const int64_t p = int64_t(blockIdx.x - block_start[s]) * kThreads + threadIdx.x;
  if (p >= j.h * j.w) return;
  const int64_t y = p / j.w, x = p - y * j.w;
  const float fy_f = static_cast<float>(y), fx_f = static_cast<float>(x);
  const float fxy = __fadd_rn(-j.sx, __fmul_rn(fy_f, -j.sa));
  const float fyy = __fadd_rn(-j.sy, __fmul_rn(fy_f, j.ca));
  const float fx = __fadd_rn(fxy, __fmul_rn(fx_f, j.ca));
  const float fy = __fadd_rn(fyy, __fmul_rn(fx_f, j.sa));
  const bool keep = __fsub_rn(fx, floorf(fx)) >= j.ratio || __fsub_rn(fy, floorf(fy)) >= j.ratio;
  const T* src = static_cast<const T*>(j.in) + p * j.channels;
  T* dst = static_cast<T*>(j.out) + p * j.channels;
  for (int64_t c = 0; c < j.channels; ++c) dst[c] = keep ? src[c] : T(0);
}

// ---- jitter

// What the launches need beyond JitterJob.
struct JitterDesc {
  JitterJob job;
  uint32_t threshold = 0;   // below(): numbers with a lower product part under it are skipped
  int64_t scan = 0;         // stream positions the first launch examines
  uint64_t* skips = nullptr;  // device: up to max_skips positions, in any order
  unsigned* count = nullptr;  // device: how many positions were found
  int max_skips = 0;
};

__device__ __forceinline__ uint32_t stream_number(const JitterJob& j, uint64_t pos) {
  uint32_t x[4];
  philox_block(j.key, j.iteration, j.sample, static_cast<uint32_t>(pos >> 2), x);
  return x[pos & 3];
}

// Launch 1: four stream positions per thread.
__global__ void jitter_skips_kernel(const JitterDesc* descs, const int* block_start, int n) {
  const int s = sample_of_block(block_start, n, blockIdx.x);
  const JitterDesc& d = descs[s];
  const int64_t b = int64_t(blockIdx.x - block_start[s]) * kThreads + threadIdx.x;
  if (b * 4 >= d.scan || d.threshold == 0) return;
  uint32_t x[4];
  philox_block(d.job.key, d.job.iteration, d.job.sample, static_cast<uint32_t>(b), x);
  const uint32_t deg = static_cast<uint32_t>(d.job.degree);
  for (int w = 0; w < 4; ++w) {
    const int64_t pos = b * 4 + w;
    if (pos >= d.scan) break;
    if (x[w] * deg < d.threshold) {  // the product's lower 32 bits
      const unsigned k = atomicAdd(d.count, 1u);
      if (k < static_cast<unsigned>(d.max_skips)) d.skips[k] = static_cast<uint64_t>(pos);
    }
  }
}

// The stream position of draw `draw`: the smallest p with p = draw + (skipped positions <= p).
__device__ __forceinline__ uint64_t draw_position(const JitterDesc& d, uint64_t draw) {
  const unsigned found = *d.count;
  const unsigned m = found < static_cast<unsigned>(d.max_skips) ? found : static_cast<unsigned>(d.max_skips);
  uint64_t p = draw;
  for (;;) {
    uint64_t c = 0;
    for (unsigned k = 0; k < m; ++k) c += d.skips[k] <= p;
    if (draw + c == p) return p;
    p = draw + c;
  }
}

// Launch 2: one output pixel (all its channels) per thread.
template <typename T>
__global__ void jitter_kernel(const JitterDesc* descs, const int* block_start, int n) {
  const int s = sample_of_block(block_start, n, blockIdx.x);
  const JitterDesc& d = descs[s];
  const JitterJob& j = d.job;
  const int64_t p = int64_t(blockIdx.x - block_start[s]) * kThreads + threadIdx.x;
  const int64_t frame_px = j.h * j.w;
  if (p >= j.frames * frame_px) return;
  const int64_t f = p / frame_px, rem = p - f * frame_px, y = rem / j.w, x = rem - y * j.w;
  const T* in = static_cast<const T*>(j.in);
  T* out = static_cast<T*>(j.out) + p * j.channels;
  if (!j.apply || j.degree <= 1) {
    for (int64_t c = 0; c < j.channels; ++c) out[c] = in[p * j.channels + c];
    return;
  }
  const uint32_t deg = static_cast<uint32_t>(j.degree);
  const int64_t half = j.degree / 2;
  auto below = [&](uint64_t draw) {
    const uint32_t v = stream_number(j, draw_position(d, draw));
    return static_cast<int64_t>((static_cast<uint64_t>(v) * deg) >> 32);
  };
  const int64_t sx = x + below(2 * static_cast<uint64_t>(p)) - half;
  const int64_t sy = y + below(2 * static_cast<uint64_t>(p) + 1) - half;
  if (sx < 0 || sx >= j.w || sy < 0 || sy >= j.h) {
    const T fill = round_away_sat_dev<T>(j.fill);
    for (int64_t c = 0; c < j.channels; ++c) out[c] = fill;
  } else {
    const T* src = in + ((f * j.h + sy) * j.w + sx) * j.channels;
    for (int64_t c = 0; c < j.channels; ++c) out[c] = src[c];
  }
}

template <typename F>
void visit_noise_type(DType t, F&& f) {
  switch (t) {
    case DType::kUInt8: return f(Tag<uint8_t>{});
    case DType::kInt8: return f(Tag<int8_t>{});
    case DType::kUInt16: return f(Tag<uint16_t>{});
    case DType::kInt16: return f(Tag<int16_t>{});
    case DType::kUInt32: return f(Tag<uint32_t>{});
    case DType::kInt32: return f(Tag<int32_t>{});
    case DType::kUInt64: return f(Tag<uint64_t>{});
    case DType::kInt64: return f(Tag<int64_t>{});
    case DType::kFloat32: return f(Tag<float>{});
    case DType::kFloat64: return f(Tag<double>{});
    default: STOKER_ASSERT(false, "noise on the GPU: unsupported type");
  }
}

// One launch of `kernel<T>` over jobs of `work(job)` threads each.
template <typename Job, typename Work, typename Launch>
void launch_jobs(Workspace& ws, const std::vector<Job>& jobs, Work work, Launch launch) {
  LaunchPlan plan(kThreads);
  for (const Job& j : jobs) plan.add(work(j));
  if (plan.blocks() == 0) return;
  DeviceParams p(ws);
  const size_t starts = p.add(plan.block_start());
  const size_t dd = p.add(jobs);
  p.upload();
  launch(static_cast<unsigned>(plan.blocks()), p.device<Job>(dd), p.device<int>(starts), plan.jobs(),
         static_cast<cudaStream_t>(ws.gpu->stream()));
}

template <typename F>
void visit_rank_type(DType t, F&& f) {
  switch (t) {
    case DType::kUInt8: return f(Tag<uint8_t>{});
    case DType::kUInt16: return f(Tag<uint16_t>{});
    case DType::kInt16: return f(Tag<int16_t>{});
    case DType::kFloat32: return f(Tag<float>{});
    default: STOKER_ASSERT(false, "rank filters on the GPU: unsupported type");
  }
}

}  // namespace

void morphology_gpu(Workspace& ws, DType type, MorphOp op, FilterBorder border, int64_t iterations,
                    const std::vector<RankJob>& jobs) {
  if (jobs.empty() || iterations <= 0) return;
  const size_t es = dtype_size(type);
  // Scratch: each plane's row-pass result.
  std::vector<size_t> at(jobs.size());
  size_t bytes = 0;
  LaunchPlan plan(kThreads);
  for (size_t i = 0; i < jobs.size(); ++i) {
    const int64_t vol = jobs[i].h * jobs[i].w * jobs[i].channels;
    at[i] = bytes;
    bytes += (static_cast<size_t>(vol) * es + 255) & ~size_t(255);
    plan.add(vol);
  }
  if (plan.blocks() == 0) return;
  std::shared_ptr<void> scratch = ws.gpu->allocate_device(bytes);
  char* base = static_cast<char*>(scratch.get());
  // Descriptors: row pass from the input (first iteration) or the output (later ones) into the
  // scratch, then the column pass from the scratch into the output.
  std::vector<RankDesc> rows_first(jobs.size()), rows_next(jobs.size()), cols(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    const RankJob& j = jobs[i];
    RankDesc r;
    r.h = j.h;
    r.w = j.w;
    r.c = j.channels;
    r.size = j.window.width;
    r.anchor = j.window.anchor_x;
    r.dst = base + at[i];
    r.src = j.in;
    rows_first[i] = r;
    r.src = j.out;
    rows_next[i] = r;
    r.size = j.window.height;
    r.anchor = j.window.anchor_y;
    r.src = base + at[i];
    r.dst = j.out;
    cols[i] = r;
  }
  DeviceParams p(ws);
  const size_t starts = p.add(plan.block_start());
  const size_t d_first = p.add(rows_first), d_next = p.add(rows_next), d_cols = p.add(cols);
  p.upload();
  auto stream = static_cast<cudaStream_t>(ws.gpu->stream());
  const unsigned blocks = static_cast<unsigned>(plan.blocks());
  visit_rank_type(type, [&](auto tt) {
    using T = typename decltype(tt)::type;
    auto run = [&](auto is_max) {
      constexpr bool kMax = decltype(is_max)::value;
      for (int64_t it = 0; it < iterations; ++it) {
        extreme_pass_kernel<T, kMax, true><<<blocks, kThreads, 0, stream>>>(
            p.device<RankDesc>(it == 0 ? d_first : d_next), p.device<int>(starts), plan.jobs(), border);
        extreme_pass_kernel<T, kMax, false><<<blocks, kThreads, 0, stream>>>(
            p.device<RankDesc>(d_cols), p.device<int>(starts), plan.jobs(), border);
      }
    };
    if (op == MorphOp::kDilate) run(std::true_type{});
    else run(std::false_type{});
  });
  check_launch("morphology_gpu");
}

void median_blur_gpu(Workspace& ws, DType type, const std::vector<RankJob>& jobs) {
  LaunchPlan plan(kThreads);
  std::vector<MedianDesc> descs(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    const RankJob& j = jobs[i];
    MedianDesc& d = descs[i];
    d.src = j.in;
    d.dst = j.out;
    d.h = j.h;
    d.w = j.w;
    d.c = j.channels;
    d.kw = j.window.width;
    d.kh = j.window.height;
    plan.add(j.h * j.w * j.channels);
  }
  if (plan.blocks() == 0) return;
  DeviceParams p(ws);
  const size_t starts = p.add(plan.block_start());
  const size_t dd = p.add(descs);
  p.upload();
  auto stream = static_cast<cudaStream_t>(ws.gpu->stream());
  visit_rank_type(type, [&](auto tt) {
    using T = typename decltype(tt)::type;
    median_kernel<T><<<static_cast<unsigned>(plan.blocks()), kThreads, 0, stream>>>(
        p.device<MedianDesc>(dd), p.device<int>(starts), plan.jobs());
  });
  check_launch("median_blur_gpu");
}

void gaussian_noise_gpu(Workspace& ws, DType type, const std::vector<NoiseJob>& jobs) {
  launch_jobs(ws, jobs, [](const NoiseJob& j) { return j.n; },
              [&](unsigned blocks, const NoiseJob* d, const int* starts, int n, cudaStream_t stream) {
                visit_noise_type(type, [&](auto tt) {
                  using T = typename decltype(tt)::type;
                  gaussian_noise_kernel<T><<<blocks, kThreads, 0, stream>>>(d, starts, n);
                });
              });
  check_launch("gaussian_noise_gpu");
}

void shot_noise_gpu(Workspace& ws, DType type, const std::vector<NoiseJob>& jobs) {
  launch_jobs(ws, jobs, [](const NoiseJob& j) { return j.n; },
              [&](unsigned blocks, const NoiseJob* d, const int* starts, int n, cudaStream_t stream) {
                visit_noise_type(type, [&](auto tt) {
                  using T = typename decltype(tt)::type;
                  shot_noise_kernel<T><<<blocks, kThreads, 0, stream>>>(d, starts, n);
                });
              });
  check_launch("shot_noise_gpu");
}

void salt_and_pepper_gpu(Workspace& ws, DType type, const std::vector<NoiseJob>& jobs) {
  launch_jobs(ws, jobs, [](const NoiseJob& j) { return j.n; },
              [&](unsigned blocks, const NoiseJob* d, const int* starts, int n, cudaStream_t stream) {
                visit_noise_type(type, [&](auto tt) {
                  using T = typename decltype(tt)::type;
                  salt_and_pepper_kernel<T><<<blocks, kThreads, 0, stream>>>(d, starts, n);
                });
              });
  check_launch("salt_and_pepper_gpu");
}

void grid_mask_gpu(Workspace& ws, DType type, const std::vector<GridMaskJob>& jobs) {
  launch_jobs(ws, jobs, [](const GridMaskJob& j) { return j.h * j.w; },
              [&](unsigned blocks, const GridMaskJob* d, const int* starts, int n, cudaStream_t stream) {
                visit_noise_type(type, [&](auto tt) {
                  using T = typename decltype(tt)::type;
                  grid_mask_kernel<T><<<blocks, kThreads, 0, stream>>>(d, starts, n);
                });
              });
  check_launch("grid_mask_gpu");
}

void jitter_gpu(Workspace& ws, DType type, const std::vector<JitterJob>& jobs) {
  if (jobs.empty()) return;
  std::vector<JitterDesc> descs(jobs.size());
  LaunchPlan scan_plan(kThreads), pixel_plan(kThreads);
  size_t skips_total = 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    JitterDesc& d = descs[i];
    d.job = jobs[i];
    const JitterJob& j = jobs[i];
    const int64_t pixels = j.frames * j.h * j.w;
    const bool draws = j.apply && j.degree > 1 && pixels > 0 && j.channels > 0;
    if (draws) {
      const uint32_t deg = static_cast<uint32_t>(j.degree);
      d.threshold = (0u - deg) % deg;
      // Skips are independent, each with probability threshold / 2^32: room for the expected
      // count plus 12 standard deviations plus 64.
      const double expected = 2.0 * static_cast<double>(pixels) * d.threshold / 4294967296.0;
      d.max_skips = d.threshold == 0 ? 0 : static_cast<int>(std::ceil(expected + 12.0 * std::sqrt(expected) + 64.0));
      d.scan = 2 * pixels + d.max_skips;
      skips_total += static_cast<size_t>(d.max_skips);
    }
    scan_plan.add(d.threshold == 0 ? 0 : (d.scan + 3) / 4);
    pixel_plan.add(j.channels > 0 ? pixels : 0);
  }
  if (pixel_plan.blocks() == 0) return;
  DeviceParams p(ws);
  // Scratch in the same block, uploaded as zeros: the counts, then the lists.
  const size_t counts = p.add(std::vector<unsigned>(jobs.size()));
  const size_t lists = p.add(std::vector<uint64_t>(std::max<size_t>(skips_total, 1)));
  const size_t scan_starts = p.add(scan_plan.block_start());
  const size_t pixel_starts = p.add(pixel_plan.block_start());
  // The descriptors point into this block: its device address is known only after upload(), so
  // they go in a second one.
  p.upload();
  size_t at = 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    descs[i].count = p.device<unsigned>(counts) + i;
    descs[i].skips = p.device<uint64_t>(lists) + at;
    at += static_cast<size_t>(descs[i].max_skips);
  }
  DeviceParams q(ws);
  const size_t dd = q.add(descs);
  q.upload();
  auto stream = static_cast<cudaStream_t>(ws.gpu->stream());
  if (scan_plan.blocks() > 0)
    jitter_skips_kernel<<<static_cast<unsigned>(scan_plan.blocks()), kThreads, 0, stream>>>(
        q.device<JitterDesc>(dd), p.device<int>(scan_starts), scan_plan.jobs());
  visit_noise_type(type, [&](auto tt) {
    using T = typename decltype(tt)::type;
    jitter_kernel<T><<<static_cast<unsigned>(pixel_plan.blocks()), kThreads, 0, stream>>>(
        q.device<JitterDesc>(dd), p.device<int>(pixel_starts), pixel_plan.jobs());
  });
  check_launch("jitter_gpu");
}

}  // namespace stoker::kernels::cuda
