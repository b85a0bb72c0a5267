#include "kernels/cuda/color_gpu.h"

#include <algorithm>
#include <cfloat>

#include "core/error.h"
#include "kernels/cpu/color/debayer.h"
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

namespace {

template <typename T, bool kGray>
__global__ void debayer_kernel(const DebayerJob* jobs, const int* block_start, int n) {
  const int s = sample_of_block(block_start, n, blockIdx.x);
  const DebayerJob& d = jobs[s];
  const int64_t p = int64_t(blockIdx.x - block_start[s]) * kThreads + threadIdx.x;
  const int64_t hw = d.h * d.w;
  if (p >= d.frames * hw) return;
  constexpr int dc = kGray ? 1 : 3;
  T* o = static_cast<T*>(d.out) + p * dc;
  if (d.h < 3 || d.w < 3) {
    for (int k = 0; k < dc; ++k) o[k] = T(0);
    return;
  }
  const int64_t f = p / hw, r = p % hw;
  const int64_t y = min(max(r / d.w, int64_t{1}), d.h - 2);
  const int64_t x = min(max(r % d.w, int64_t{1}), d.w - 2);
  const T* in = static_cast<const T*>(d.in) + f * hw;
  const T* up = in + (y - 1) * d.w;
  debayer_pixel(o, up, up + d.w, up + 2 * d.w, y, x, d.blue_y, d.blue_x, kGray);
}

template <typename T>
void launch_debayer(bool gray, unsigned blocks, const DebayerJob* d, const int* starts, int n,
                    cudaStream_t stream) {
  if (gray) debayer_kernel<T, true><<<blocks, kThreads, 0, stream>>>(d, starts, n);
  else debayer_kernel<T, false><<<blocks, kThreads, 0, stream>>>(d, starts, n);
}

}  // namespace

void debayer_gpu(Workspace& ws, DType type, bool gray, const std::vector<DebayerJob>& jobs) {
  STOKER_ASSERT(type == DType::kUInt8 || type == DType::kUInt16, "debayer_gpu: bad type");
  LaunchPlan plan(kThreads);
  for (const DebayerJob& j : jobs) plan.add(j.frames * j.h * j.w);
  if (plan.blocks() == 0) return;
  DeviceParams params(ws);
  const size_t starts = params.add(plan.block_start());
  const size_t dd = params.add(jobs);
  params.upload();
  const auto blocks = static_cast<unsigned>(plan.blocks());
  auto stream = static_cast<cudaStream_t>(ws.gpu->stream());
  if (type == DType::kUInt8)
    launch_debayer<uint8_t>(gray, blocks, params.device<DebayerJob>(dd), params.device<int>(starts),
                            plan.jobs(), stream);
  else
    launch_debayer<uint16_t>(gray, blocks, params.device<DebayerJob>(dd), params.device<int>(starts),
                             plan.jobs(), stream);
  check_launch("debayer_gpu");
}

namespace {

constexpr int kLevels = 256;

// One plane CLAHE equalizes: pixel (y, x) at (y * w + x) * stride; its tiles' tables at luts.
struct ClahePlane {
  const uint8_t* in;
  uint8_t* out;
  int64_t in_stride, out_stride, h, w;
  int64_t tw, th, limit;   // tile size (of the extended image), the clip limit (0: none)
  float lut_scale, inv_tw, inv_th;
  uint8_t* luts;           // tiles_y x tiles_x x 256
};

// One luma_only RGB image: its L, a, b planes (and the equalized L) in scratch.
struct LabImage {
  const uint8_t* in;
  uint8_t* out;
  int64_t pixels;
  uint8_t *l, *a, *b, *l_eq;
};

__device__ __forceinline__ uint8_t round_u8_dev(float v) {
  const float r = nearbyintf(v);
  return static_cast<uint8_t>(r <= 0.0f ? 0.0f : r >= 255.0f ? 255.0f : r);
}
__device__ __forceinline__ uint8_t round_u8_dev(double v) {
  const double r = nearbyint(v);
  return static_cast<uint8_t>(r <= 0.0 ? 0.0 : r >= 255.0 ? 255.0 : r);
}
__device__ __forceinline__ int64_t reflect101_dev(int64_t p, int64_t len) {
  if (len == 1) return 0;
  while (p < 0 || p >= len) p = p < 0 ? -p : 2 * len - 2 - p;
  return p;
}

// The CPU's formulas (histogram.cc: clahe_luma), in double, products and sums rounded one at a
// time as the host computes them.
__device__ __forceinline__ double dm(double a, double b) { return __dmul_rn(a, b); }
__device__ __forceinline__ double da(double a, double b) { return __dadd_rn(a, b); }
__device__ __forceinline__ double lab_f_dev(double t) {
  return t > 0.008856 ? cbrt(t) : da(dm(7.787, t), 16.0 / 116.0);
}
__device__ __forceinline__ double linear_dev(int v) {
  const double c = v / 255.0;
  return c <= 0.04045 ? c / 12.92 : pow(da(c, 0.055) / 1.055, 2.4);
}

__global__ void rgb_to_lab_kernel(const LabImage* imgs, const int* block_start, int n) {
  const int s = sample_of_block(block_start, n, blockIdx.x);
  const LabImage& m = imgs[s];
  const int64_t k = int64_t(blockIdx.x - block_start[s]) * kThreads + threadIdx.x;
  if (k >= m.pixels) return;
  const uint8_t* px = m.in + k * 3;
  const double r = linear_dev(px[0]), g = linear_dev(px[1]), bl = linear_dev(px[2]);
  const double x = da(da(dm(0.412453, r), dm(0.357580, g)), dm(0.180423, bl)) / 0.950456;
  const double y = da(da(dm(0.212671, r), dm(0.715160, g)), dm(0.072169, bl));
  const double z = da(da(dm(0.019334, r), dm(0.119193, g)), dm(0.950227, bl)) / 1.088754;
  const double fx = lab_f_dev(x), fy = lab_f_dev(y), fz = lab_f_dev(z);
  m.l[k] = round_u8_dev(da(dm(296.0, fy), -40.8));
  m.a[k] = round_u8_dev(da(dm(500.0, da(fx, -fy)), 128.0));
  m.b[k] = round_u8_dev(da(dm(200.0, da(fy, -fz)), 128.0));
}

__global__ void lab_to_rgb_kernel(const LabImage* imgs, const int* block_start, int n) {
  const int s = sample_of_block(block_start, n, blockIdx.x);
  const LabImage& m = imgs[s];
  const int64_t k = int64_t(blockIdx.x - block_start[s]) * kThreads + threadIdx.x;
  if (k >= m.pixels) return;
  const double lv = dm(double(m.l_eq[k]), 100.0) / 255.0, av = m.a[k] - 128.0, bv = m.b[k] - 128.0;
  double y, fy;
  if (lv <= dm(0.008856, 903.3)) {
    y = lv / 903.3;
    fy = da(dm(7.787, y), 16.0 / 116.0);
  } else {
    fy = da(lv, 16.0) / 116.0;
    y = dm(dm(fy, fy), fy);
  }
  double f[2] = {da(fy, av / 500.0), da(fy, -(bv / 200.0))};
  for (double& v : f)
    v = v <= da(dm(7.787, 0.008856), 16.0 / 116.0) ? da(v, -(16.0 / 116.0)) / 7.787 : dm(dm(v, v), v);
  const double x = dm(f[0], 0.950456), z = dm(f[1], 1.088754);
  constexpr double m_[9] = {3.240479, -1.53715, -0.498535, -0.969256, 1.875991,
                            0.041556, 0.055648, -0.204043, 1.057311};
  uint8_t* px = m.out + k * 3;
  for (int c = 0; c < 3; ++c) {
    double v = da(da(dm(m_[3 * c], x), dm(m_[3 * c + 1], y)), dm(m_[3 * c + 2], z));
    v = fmin(fmax(v, 0.0), 1.0);
    const double g = v <= 0.0031308 ? dm(12.92, v) : da(dm(1.055, pow(v, 1.0 / 2.4)), -0.055);
    px[c] = round_u8_dev(dm(g, 255.0));
  }
}

// One block per tile of a plane: its histogram, clipped, its excess spread as the CPU spreads
// it, and its cumulative counts scaled into the tile's table.
__global__ void clahe_lut_kernel(const ClahePlane* planes, const int* block_start, int n,
                                 int64_t tiles_x) {
  const int s = sample_of_block(block_start, n, blockIdx.x);
  const ClahePlane& p = planes[s];
  const int64_t tile = blockIdx.x - block_start[s];
  const int64_t ty = tile / tiles_x, tx = tile % tiles_x;
  __shared__ int hist[kLevels];
  __shared__ long long clipped;
  for (int i = threadIdx.x; i < kLevels; i += blockDim.x) hist[i] = 0;
  if (threadIdx.x == 0) clipped = 0;
  __syncthreads();
  const int64_t count = p.tw * p.th;
  for (int64_t q = threadIdx.x; q < count; q += blockDim.x) {
    const int64_t y = reflect101_dev(ty * p.th + q / p.tw, p.h);
    const int64_t x = reflect101_dev(tx * p.tw + q % p.tw, p.w);
    atomicAdd(&hist[p.in[(y * p.w + x) * p.in_stride]], 1);
  }
  __syncthreads();
  if (p.limit > 0) {
    for (int i = threadIdx.x; i < kLevels; i += blockDim.x)
      if (hist[i] > p.limit) {
        atomicAdd(reinterpret_cast<unsigned long long*>(&clipped),
                  static_cast<unsigned long long>(hist[i] - p.limit));
        hist[i] = static_cast<int>(p.limit);
      }
    __syncthreads();
    const int64_t batch = clipped / kLevels;
    const int64_t residual = clipped - batch * kLevels;
    const int64_t step = residual != 0 ? max(int64_t{kLevels} / residual, int64_t{1}) : 1;
    for (int i = threadIdx.x; i < kLevels; i += blockDim.x)
      hist[i] += static_cast<int>(batch + (residual != 0 && i % step == 0 && i / step < residual));
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    uint8_t* lut = p.luts + tile * kLevels;
    int64_t sum = 0;
    for (int i = 0; i < kLevels; ++i) {
      sum += hist[i];
      lut[i] = round_u8_dev(__fmul_rn(static_cast<float>(sum), p.lut_scale));
    }
  }
}

// One thread per pixel: the bilinear blend of the four nearest tiles' tables.
__global__ void clahe_blend_kernel(const ClahePlane* planes, const int* block_start, int n,
                                   int64_t tiles_x, int64_t tiles_y) {
  const int s = sample_of_block(block_start, n, blockIdx.x);
  const ClahePlane& p = planes[s];
  const int64_t k = int64_t(blockIdx.x - block_start[s]) * kThreads + threadIdx.x;
  if (k >= p.h * p.w) return;
  const int64_t y = k / p.w, x = k % p.w;
  const float txf = __fadd_rn(__fmul_rn(static_cast<float>(x), p.inv_tw), -0.5f);
  const int64_t tx1 = static_cast<int64_t>(floorf(txf));
  const float xa = __fadd_rn(txf, -static_cast<float>(tx1)), xa1 = __fadd_rn(1.0f, -xa);
  const int64_t x1 = max(tx1, int64_t{0}) * kLevels, x2 = min(tx1 + 1, tiles_x - 1) * kLevels;
  const float tyf = __fadd_rn(__fmul_rn(static_cast<float>(y), p.inv_th), -0.5f);
  const int64_t ty1 = static_cast<int64_t>(floorf(tyf));
  const float ya = __fadd_rn(tyf, -static_cast<float>(ty1)), ya1 = __fadd_rn(1.0f, -ya);
  const uint8_t* lut1 = p.luts + max(ty1, int64_t{0}) * tiles_x * kLevels;
  const uint8_t* lut2 = p.luts + min(ty1 + 1, tiles_y - 1) * tiles_x * kLevels;
  const int v = p.in[k * p.in_stride];
  const float top = __fadd_rn(__fmul_rn(static_cast<float>(lut1[x1 + v]), xa1),
                              __fmul_rn(static_cast<float>(lut1[x2 + v]), xa));
  const float bottom = __fadd_rn(__fmul_rn(static_cast<float>(lut2[x1 + v]), xa1),
                                 __fmul_rn(static_cast<float>(lut2[x2 + v]), xa));
  p.out[k * p.out_stride] = round_u8_dev(__fadd_rn(__fmul_rn(top, ya1), __fmul_rn(bottom, ya)));
}

}  // namespace

void clahe_gpu(Workspace& ws, const std::vector<ClaheJob>& jobs, int64_t tiles_x, int64_t tiles_y,
               double clip_limit, bool luma_only) {
  // Scratch: each plane's tables, and for luma images their L, a, b and equalized L.
  std::vector<ClahePlane> planes;
  std::vector<LabImage> labs;
  std::vector<size_t> lut_at, lab_at;
  size_t bytes = 0;
  auto reserve = [&](size_t n) {
    const size_t at = bytes;
    bytes += (n + 255) & ~size_t(255);
    return at;
  };
  for (const ClaheJob& j : jobs) {
    if (j.h == 0 || j.w == 0) continue;
    const bool luma = j.c == 3 && luma_only;
    const int64_t count = luma ? 1 : j.c;
    if (luma) {
      LabImage m{j.in, j.out, j.h * j.w, nullptr, nullptr, nullptr, nullptr};
      labs.push_back(m);
      lab_at.push_back(reserve(static_cast<size_t>(4 * j.h * j.w)));
    }
    // As the CPU: the image extended to a multiple of the grid once either side needs it.
    const bool fits = j.w % tiles_x == 0 && j.h % tiles_y == 0;
    const int64_t ew = fits ? j.w : j.w + tiles_x - j.w % tiles_x;
    const int64_t eh = fits ? j.h : j.h + tiles_y - j.h % tiles_y;
    for (int64_t c = 0; c < count; ++c) {
      ClahePlane p{};
      p.in = luma ? nullptr : j.in + c;  // (luma: set below, to the L plane)
      p.out = luma ? nullptr : j.out + c;
      p.in_stride = p.out_stride = luma ? 1 : j.c;
      p.h = j.h;
      p.w = j.w;
      p.tw = ew / tiles_x;
      p.th = eh / tiles_y;
      const int64_t area = p.tw * p.th;
      p.limit = clip_limit > 0.0 ? std::max<int64_t>(static_cast<int64_t>(clip_limit * area / kLevels), 1) : 0;
      p.lut_scale = static_cast<float>(kLevels - 1) / static_cast<float>(area);
      p.inv_tw = 1.0f / static_cast<float>(p.tw);
      p.inv_th = 1.0f / static_cast<float>(p.th);
      planes.push_back(p);
      lut_at.push_back(reserve(static_cast<size_t>(tiles_x * tiles_y * kLevels)));
    }
  }
  if (planes.empty()) return;
  std::shared_ptr<void> scratch = ws.gpu->allocate_device(bytes);
  uint8_t* base = static_cast<uint8_t*>(scratch.get());
  for (size_t k = 0, m = 0; k < planes.size(); ++k) {
    planes[k].luts = base + lut_at[k];
    if (!planes[k].in) {  // a luma image's L plane
      LabImage& lab = labs[m];
      uint8_t* at = base + lab_at[m];
      lab.l = at;
      lab.a = at + lab.pixels;
      lab.b = at + 2 * lab.pixels;
      lab.l_eq = at + 3 * lab.pixels;
      planes[k].in = lab.l;
      planes[k].out = lab.l_eq;
      ++m;
    }
  }
  LaunchPlan tiles(1), pixels(kThreads), lab_pixels(kThreads);
  for (const ClahePlane& p : planes) {
    tiles.add(tiles_x * tiles_y);
    pixels.add(p.h * p.w);
  }
  for (const LabImage& m : labs) lab_pixels.add(m.pixels);
  DeviceParams params(ws);
  const size_t d_planes = params.add(planes), d_labs = params.add(labs);
  const size_t s_tiles = params.add(tiles.block_start()), s_pixels = params.add(pixels.block_start());
  const size_t s_lab = params.add(lab_pixels.block_start());
  params.upload();
  auto stream = static_cast<cudaStream_t>(ws.gpu->stream());
  if (!labs.empty())
    rgb_to_lab_kernel<<<static_cast<unsigned>(lab_pixels.blocks()), kThreads, 0, stream>>>(
        params.device<LabImage>(d_labs), params.device<int>(s_lab), lab_pixels.jobs());
  clahe_lut_kernel<<<static_cast<unsigned>(tiles.blocks()), kThreads, 0, stream>>>(
      params.device<ClahePlane>(d_planes), params.device<int>(s_tiles), tiles.jobs(), tiles_x);
  clahe_blend_kernel<<<static_cast<unsigned>(pixels.blocks()), kThreads, 0, stream>>>(
      params.device<ClahePlane>(d_planes), params.device<int>(s_pixels), pixels.jobs(), tiles_x,
      tiles_y);
  if (!labs.empty())
    lab_to_rgb_kernel<<<static_cast<unsigned>(lab_pixels.blocks()), kThreads, 0, stream>>>(
        params.device<LabImage>(d_labs), params.device<int>(s_lab), lab_pixels.jobs());
  check_launch("clahe_gpu");
}

}  // namespace stoker::kernels::cuda
