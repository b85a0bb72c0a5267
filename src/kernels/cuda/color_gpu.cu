#include "kernels/cuda/color_gpu.h"

#include <cfloat>

#include "core/error.h"
#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/elementwise.cuh"
#include "kernels/cuda/launch_plan.h"
#include "pipeline/gpu_batch.h"
#include "pipeline/gpu_context.h"

namespace stoker::kernels::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kItems = 4;
constexpr int64_t kChunk = int64_t(kThreads) * kItems;  // pixels per block

struct AffineDesc {
  const void* in;
  void* out;
  int64_t pixels;
  float m[3][3];
  float offset[3];
};

// color_affine_impl.inc's round_half_away.
__device__ __forceinline__ float round_half_away(float v) {
  const float t = truncf(v);
  return fabsf(v - t) >= 0.5f ? t + copysignf(1.0f, v) : t;
}

// color_affine_impl.inc's store<Out>: saturate, round half away from zero, NaN to 0; int32
// saturates at the largest float below 2^31 (and that value itself goes to INT32_MAX), as the
// CPU does.
template <typename Out>
__device__ __forceinline__ Out store_color(float v) {
  if constexpr (std::is_same_v<Out, float>) {
    return v;
  } else if constexpr (std::is_same_v<Out, __half>) {
    return __float2half_rn(v);
  } else if constexpr (std::is_same_v<Out, int32_t>) {
    if (v != v) return 0;
    v = v >= -2147483648.0f ? v : -2147483648.0f;
    v = v <= 2147483520.0f ? v : 2147483520.0f;
    if (v >= 2147483520.0f) return INT32_MAX;
    return static_cast<int32_t>(round_half_away(v));
  } else {
    // <= 16-bit integers: NaN 0, saturate (the value is integral: rint changes nothing)
    return v != v ? Out(0) : convert_sat_dev<Out>(round_half_away(v));
  }
}

// out[c] = offset[c] + m[c][0] in[0] + m[c][1] in[1] + ...: the CPU loop's order, each product
// and sum rounded on its own.
template <int CI, int CO>
__device__ __forceinline__ void affine_px(const float (&m)[3][3], const float (&off)[3],
                                          const float* px, float* res) {
#pragma unroll
  for (int c = 0; c < CO; ++c) {
    float v = off[c];
#pragma unroll
    for (int k = 0; k < CI; ++k) v = __fadd_rn(v, __fmul_rn(m[c][k], px[k]));
    res[c] = v;
  }
}

template <int CI, int CO, typename Out, typename In>
__global__ void affine_kernel(const AffineDesc* descs, const int* block_start, int n) {
  __shared__ AffineDesc d;
  const int s = sample_of_block(block_start, n, blockIdx.x);
  if (threadIdx.x == 0) d = descs[s];
  __syncthreads();
  const In* in = static_cast<const In*>(d.in);
  Out* out = static_cast<Out*>(d.out);
  const int64_t base = int64_t(blockIdx.x - block_start[s]) * kChunk;
#pragma unroll
  for (int it = 0; it < kItems; ++it) {
    const int64_t p = base + it * kThreads + threadIdx.x;
    if (p >= d.pixels) return;
    float px[CI], res[CO];
#pragma unroll
    for (int k = 0; k < CI; ++k) px[k] = to_float(in[p * CI + k]);
    affine_px<CI, CO>(d.m, d.offset, px, res);
#pragma unroll
    for (int c = 0; c < CO; ++c) out[p * CO + c] = store_color<Out>(res[c]);
  }
}

// ---- HSV (kernels/cpu/color/hsv_convert.cc)

struct HsvDesc {
  const void* in;
  void* out;
  int64_t pixels;
};

struct HsvLeg {
  int present, in_channels, out_channels;
  float m[3][3];
  float offset[3];
};

__device__ __forceinline__ float max_std(float a, float b) { return a < b ? b : a; }  // std::max
__device__ __forceinline__ float min_std(float a, float b) { return b < a ? b : a; }  // std::min

// hsv_convert.cc's store: uint8 saturates, then rounds half up (`half_up`) or half to even.
template <typename T>
__device__ __forceinline__ T store_hsv(float v, bool half_up) {
  if constexpr (std::is_same_v<T, float>) {
    return v;
  } else if constexpr (std::is_same_v<T, __half>) {
    return __float2half_rn(v);
  } else {
    if (!(v >= 0.0f)) return 0;
    if (v >= 255.0f) return 255;
    return static_cast<uint8_t>(half_up ? floorf(__fadd_rn(v, 0.5f)) : rintf(v));
  }
}

template <typename T>
__device__ __forceinline__ void rgb_to_hsv_px(float r, float g, float b, T* q) {
  constexpr bool kEight = std::is_same_v<T, uint8_t>;
  const float v = max_std(r, max_std(g, b));
  const float vmin = min_std(r, min_std(g, b));
  const float diff = __fsub_rn(v, vmin);
  float h, s;
  if constexpr (kEight) {
    if (diff <= 0.0f) h = 0.0f;
    else if (v == r) h = __fdiv_rn(__fmul_rn(__fsub_rn(g, b), 30.0f), diff);
    else if (v == g) h = __fadd_rn(__fdiv_rn(__fmul_rn(__fsub_rn(b, r), 30.0f), diff), 60.0f);
    else h = __fadd_rn(__fdiv_rn(__fmul_rn(__fsub_rn(r, g), 30.0f), diff), 120.0f);
    h = floorf(__fadd_rn(h, 0.5f));
    if (h < 0.0f) h = __fadd_rn(h, 180.0f);
    if (h >= 180.0f) h = __fsub_rn(h, 180.0f);
    s = v > 0.0f ? __fdiv_rn(__fmul_rn(diff, 255.0f), v) : 0.0f;
    q[0] = store_hsv<T>(h, true);
    q[1] = store_hsv<T>(s, true);
    q[2] = store_hsv<T>(v, false);
  } else {
    s = __fdiv_rn(diff, __fadd_rn(fabsf(v), FLT_EPSILON));
    const float k = __fdiv_rn(60.0f, __fadd_rn(diff, FLT_EPSILON));
    if (v == r) h = __fmul_rn(__fsub_rn(g, b), k);
    else if (v == g) h = __fadd_rn(__fmul_rn(__fsub_rn(b, r), k), 120.0f);
    else h = __fadd_rn(__fmul_rn(__fsub_rn(r, g), k), 240.0f);
    if (h < 0.0f) h = __fadd_rn(h, 360.0f);
    q[0] = store_hsv<T>(h, false);
    q[1] = store_hsv<T>(s, false);
    q[2] = store_hsv<T>(v, false);
  }
}

template <typename T>
__device__ __forceinline__ void hsv_to_rgb_px(const T* p, float* rgb_out) {
  constexpr bool kEight = std::is_same_v<T, uint8_t>;
  // OpenCV's sector table: which of {v, p, q, t} goes to B, G, R in each 60-degree sector.
  constexpr int kSector[6][3] = {{1, 3, 0}, {1, 0, 2}, {3, 0, 1}, {0, 2, 1}, {0, 1, 3}, {2, 1, 0}};
  constexpr float hscale = kEight ? 6.0f / 180.0f : 6.0f / 360.0f;
  constexpr float in_scale = kEight ? 1.0f / 255.0f : 1.0f;
  float h = to_float(p[0]);
  const float s = __fmul_rn(to_float(p[1]), in_scale), v = __fmul_rn(to_float(p[2]), in_scale);
  float r, g, b;
  if (s == 0.0f || !isfinite(h)) {
    r = g = b = v;
  } else {
    h = __fmul_rn(h, hscale);
    h = fmodf(h, 6.0f);
    if (h < 0.0f) h = __fadd_rn(h, 6.0f);
    const float sector = floorf(h);
    h = __fsub_rn(h, sector);
    int sec = static_cast<int>(sector);
    if (sec < 0 || sec >= 6) {
      sec = 0;
      h = 0.0f;
    }
    const float tab[4] = {v, __fmul_rn(v, __fsub_rn(1.0f, s)),
                          __fmul_rn(v, __fsub_rn(1.0f, __fmul_rn(s, h))),
                          __fmul_rn(v, __fsub_rn(1.0f, __fmul_rn(s, __fsub_rn(1.0f, h))))};
    b = tab[kSector[sec][0]];
    g = tab[kSector[sec][1]];
    r = tab[kSector[sec][2]];
  }
  rgb_out[0] = r;
  rgb_out[1] = g;
  rgb_out[2] = b;
}

template <typename T>
__global__ void hsv_kernel(const HsvDesc* descs, const int* block_start, int n, HsvLeg leg,
                           int to_hsv, int bgr) {
  __shared__ HsvDesc d;
  const int s = sample_of_block(block_start, n, blockIdx.x);
  if (threadIdx.x == 0) d = descs[s];
  __syncthreads();
  constexpr float out_scale = std::is_same_v<T, uint8_t> ? 255.0f : 1.0f;
  const T* in = static_cast<const T*>(d.in);
  T* out = static_cast<T*>(d.out);
  const int ri = bgr ? 2 : 0, bi = bgr ? 0 : 2;
  const int cin = to_hsv ? (leg.present ? leg.in_channels : 3) : 3;
  const int cout = to_hsv ? 3 : (leg.present ? leg.out_channels : 3);
  const int64_t base = int64_t(blockIdx.x - block_start[s]) * kChunk;
#pragma unroll
  for (int it = 0; it < kItems; ++it) {
    const int64_t p = base + it * kThreads + threadIdx.x;
    if (p >= d.pixels) return;
    const T* src = in + p * cin;
    T* dst = out + p * cout;
    if (to_hsv) {
      float r, g, b;
      if (leg.present) {
        // The affine leg into an RGB image of type T, as the CPU's temporary holds it.
        float px[3] = {0.0f, 0.0f, 0.0f}, res[3];
        for (int k = 0; k < cin; ++k) px[k] = to_float(src[k]);
        if (cin == 1) affine_px<1, 3>(leg.m, leg.offset, px, res);
        else affine_px<3, 3>(leg.m, leg.offset, px, res);
        r = to_float(store_color<T>(res[0]));
        g = to_float(store_color<T>(res[1]));
        b = to_float(store_color<T>(res[2]));
      } else {
        r = to_float(src[ri]);
        g = to_float(src[1]);
        b = to_float(src[bi]);
      }
      rgb_to_hsv_px<T>(r, g, b, dst);
    } else {
      float rgb[3];
      hsv_to_rgb_px<T>(src, rgb);
      if (leg.present) {
        float px[3], res[3];
        for (int k = 0; k < 3; ++k) px[k] = to_float(store_hsv<T>(__fmul_rn(rgb[k], out_scale), false));
        if (cout == 1) {
          affine_px<3, 1>(leg.m, leg.offset, px, res);
          dst[0] = store_color<T>(res[0]);
        } else {
          affine_px<3, 3>(leg.m, leg.offset, px, res);
          for (int c = 0; c < 3; ++c) dst[c] = store_color<T>(res[c]);
        }
      } else {
        dst[ri] = store_hsv<T>(__fmul_rn(rgb[0], out_scale), false);
        dst[1] = store_hsv<T>(__fmul_rn(rgb[1], out_scale), false);
        dst[bi] = store_hsv<T>(__fmul_rn(rgb[2], out_scale), false);
      }
    }
  }
}

template <typename F>
void visit_color_type(DType t, F&& f) {
  switch (t) {
    case DType::kUInt8: return f(Tag<uint8_t>{});
    case DType::kUInt16: return f(Tag<uint16_t>{});
    case DType::kInt16: return f(Tag<int16_t>{});
    case DType::kInt32: return f(Tag<int32_t>{});
    case DType::kFloat16: return f(Tag<__half>{});
    case DType::kFloat32: return f(Tag<float>{});
    default: STOKER_ASSERT(false, "colour GPU kernels: unsupported type");
  }
}

}  // namespace

bool color_gpu_type(DType t) {
  switch (t) {
    case DType::kUInt8: case DType::kUInt16: case DType::kInt16: case DType::kInt32:
    case DType::kFloat16: case DType::kFloat32:
      return true;
    default:
      return false;
  }
}

void color_affine_gpu(Workspace& ws, DType out_type, DType in_type,
                      const std::vector<ColorAffineJob>& jobs) {
  if (jobs.empty()) return;
  STOKER_ASSERT(color_gpu_type(out_type) && color_gpu_type(in_type), "color_affine_gpu: bad types");
  const int ci = jobs[0].t.in_channels, co = jobs[0].t.out_channels;
  STOKER_ASSERT((ci == 1 || ci == 3) && (co == 1 || co == 3), "color_affine_gpu: bad channel counts");
  LaunchPlan plan(kChunk);
  std::vector<AffineDesc> descs(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    const ColorAffineJob& j = jobs[i];
    STOKER_ASSERT(j.t.in_channels == ci && j.t.out_channels == co,
                  "color_affine_gpu: jobs with different channel counts");
    AffineDesc& d = descs[i];
    d.in = j.in;
    d.out = j.out;
    d.pixels = j.pixels;
    for (int r = 0; r < 3; ++r) {
      d.offset[r] = j.t.offset[r];
      for (int k = 0; k < 3; ++k) d.m[r][k] = j.t.m[r][k];
    }
    plan.add(j.pixels);
  }
  if (plan.blocks() == 0) return;
  DeviceParams params(ws);
  const size_t starts_off = params.add(plan.block_start());
  const size_t descs_off = params.add(descs);
  params.upload();
  const int* starts = params.device<int>(starts_off);
  const AffineDesc* dd = params.device<AffineDesc>(descs_off);
  const int n = plan.jobs();
  auto stream = static_cast<cudaStream_t>(ws.gpu->stream());
  const unsigned blocks = static_cast<unsigned>(plan.blocks());
  visit_color_type(in_type, [&](auto ti) {
    using In = typename decltype(ti)::type;
    visit_color_type(out_type, [&](auto to) {
      using Out = typename decltype(to)::type;
      switch (ci * 10 + co) {
        case 33: affine_kernel<3, 3, Out, In><<<blocks, kThreads, 0, stream>>>(dd, starts, n); break;
        case 31: affine_kernel<3, 1, Out, In><<<blocks, kThreads, 0, stream>>>(dd, starts, n); break;
        case 13: affine_kernel<1, 3, Out, In><<<blocks, kThreads, 0, stream>>>(dd, starts, n); break;
        default: affine_kernel<1, 1, Out, In><<<blocks, kThreads, 0, stream>>>(dd, starts, n); break;
      }
    });
  });
  check_launch("color_affine_gpu");
}

void hsv_gpu(Workspace& ws, DType type, const std::vector<HsvJob>& jobs, bool to_hsv, bool bgr,
             const ColorAffine* leg) {
  if (jobs.empty()) return;
  STOKER_ASSERT(type == DType::kUInt8 || type == DType::kFloat16 || type == DType::kFloat32,
                "hsv_gpu: bad type");
  HsvLeg l{};
  if (leg) {
    STOKER_ASSERT(!bgr, "hsv_gpu: a leg goes through RGB");
    STOKER_ASSERT(to_hsv ? (leg->out_channels == 3 && (leg->in_channels == 1 || leg->in_channels == 3))
                         : (leg->in_channels == 3 && (leg->out_channels == 1 || leg->out_channels == 3)),
                  "hsv_gpu: bad leg channel counts");
    l.present = 1;
    l.in_channels = leg->in_channels;
    l.out_channels = leg->out_channels;
    for (int r = 0; r < 3; ++r) {
      l.offset[r] = leg->offset[r];
      for (int k = 0; k < 3; ++k) l.m[r][k] = leg->m[r][k];
    }
  }
  LaunchPlan plan(kChunk);
  std::vector<HsvDesc> descs(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    descs[i] = HsvDesc{jobs[i].in, jobs[i].out, jobs[i].pixels};
    plan.add(jobs[i].pixels);
  }
  if (plan.blocks() == 0) return;
  DeviceParams params(ws);
  const size_t starts_off = params.add(plan.block_start());
  const size_t descs_off = params.add(descs);
  params.upload();
  const int* starts = params.device<int>(starts_off);
  const HsvDesc* dd = params.device<HsvDesc>(descs_off);
  const int n = plan.jobs();
  auto stream = static_cast<cudaStream_t>(ws.gpu->stream());
  const unsigned blocks = static_cast<unsigned>(plan.blocks());
  const int th = to_hsv ? 1 : 0, b = bgr ? 1 : 0;
  switch (type) {
    case DType::kUInt8: hsv_kernel<uint8_t><<<blocks, kThreads, 0, stream>>>(dd, starts, n, l, th, b); break;
    case DType::kFloat16: hsv_kernel<__half><<<blocks, kThreads, 0, stream>>>(dd, starts, n, l, th, b); break;
    default: hsv_kernel<float><<<blocks, kThreads, 0, stream>>>(dd, starts, n, l, th, b); break;
  }
  check_launch("hsv_gpu");
}

}  // namespace stoker::kernels::cuda
