#include "kernels/cuda/warp_gpu.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/error.h"
#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/elementwise.cuh"
#include "kernels/cuda/launch_plan.h"
#include "pipeline/gpu_batch.h"
#include "pipeline/gpu_context.h"

namespace stoker::kernels::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kItems = 2;
constexpr int64_t kChunk = int64_t(kThreads) * kItems;  // output pixels per block

struct WarpDesc {
  const void* in;
  void* out;
  int64_t pixels;  // frames * out_h * out_w
  int64_t in_h, in_w, out_h, out_w, channels;
  double m[6];                       // affine
  double pm[9];                      // perspective, m[0], m[3], m[6] rounded to float
  float mid_x, mid_y, sphere_d;      // sphere
  uint32_t dx, dy;                   // water: offsets of the per-row / per-column tables
  uint32_t fills;                    // offset of one fill value per channel; 0: `fill` for all
  float fill;
  float period_x, period_y;          // folds: the period along each axis
  const float* mapx;                 // remap
  const float* mapy;
  int64_t map_frame;
  float remap_shift;
  int remap_round;
  int kind, interp, clamp, fold;
};

// Calls f(Tag<Out>, Tag<In>) for the pairs the warps take: the same type, to float, or from
// float (no bool).
template <typename F>
void visit_warp_types(DType out_type, DType in_type, F&& f) {
  if (out_type == in_type) {
    visit_dev_type(in_type, [&](auto t) {
      if constexpr (!std::is_same_v<typename decltype(t)::type, BoolByte>) f(t, t);
    });
  } else if (out_type == DType::kFloat32) {
    visit_dev_type(in_type, [&](auto t) {
      if constexpr (!std::is_same_v<typename decltype(t)::type, BoolByte>) f(Tag<float>{}, t);
    });
  } else {
    visit_dev_type(out_type, [&](auto t) {
      if constexpr (!std::is_same_v<typename decltype(t)::type, BoolByte>) f(t, Tag<float>{});
    });
  }
}

// ---- warp.h's detail:: helpers, operation for operation

// Brings a coordinate into [lo, hi] (NaN to lo), as RowSampler's tame_x / tame_y.
__device__ __forceinline__ float tame(float v, float lo, float hi) {
  if (!(v >= lo)) return lo;
  return v > hi ? hi : v;
}

__device__ __forceinline__ int64_t fold_index(int64_t i, int64_t n, int f) {
  if (n <= 1) return 0;
  const int64_t p = f == static_cast<int>(WarpFold::kWrap) ? n
                    : f == static_cast<int>(WarpFold::kReflect) ? 2 * n : 2 * n - 2;
  i %= p;
  if (i < 0) i += p;
  if (i < n) return i;
  return f == static_cast<int>(WarpFold::kReflect) ? p - 1 - i : p - i;
}

__device__ __forceinline__ int64_t floor_i(float v) {
  const int64_t i = static_cast<int64_t>(v);
  return i - (v < static_cast<float>(i));
}

__device__ __forceinline__ void cubic_weights(float t, float w[4]) {
  constexpr float a = -0.75f;
  const float t1 = __fadd_rn(t, 1.0f), t2 = __fsub_rn(1.0f, t);
  // ((a t1 - 5a) t1 + 8a) t1 - 4a
  w[0] = __fsub_rn(__fmul_rn(__fadd_rn(__fmul_rn(__fsub_rn(__fmul_rn(a, t1), 5 * a), t1), 8 * a), t1), 4 * a);
  // ((a + 2) t - (a + 3)) t t + 1
  w[1] = __fadd_rn(__fmul_rn(__fmul_rn(__fsub_rn(__fmul_rn(a + 2, t), a + 3), t), t), 1.0f);
  w[2] = __fadd_rn(__fmul_rn(__fmul_rn(__fsub_rn(__fmul_rn(a + 2, t2), a + 3), t2), t2), 1.0f);
  w[3] = __fsub_rn(__fsub_rn(__fsub_rn(1.0f, w[0]), w[1]), w[2]);
}

template <typename In>
struct Source {
  const In* data;  // one frame
  int64_t h, w, c;
  bool clamp;
  int fold;            // WarpFold; when set, overrides clamp and fill
  float fill;
  const float* fills;  // one per channel, or null
  float lx, ly, hx, hy;  // where points are tamed to (RowSampler's bounds)
  __device__ __forceinline__ bool inside(int64_t x, int64_t y) const {
    return x >= 0 && y >= 0 && x < w && y < h;
  }
  __device__ __forceinline__ static int64_t clampi(int64_t v, int64_t n) {
    return v < 0 ? 0 : v >= n ? n - 1 : v;
  }
  __device__ __forceinline__ const In* at(int64_t y, int64_t x) const { return data + (y * w + x) * c; }
  __device__ __forceinline__ float fill_of(int64_t ch) const { return fills ? fills[ch] : fill; }
  // The pixel read for (x, y) outside the image, or null for the fill value.
  __device__ __forceinline__ const In* outside(int64_t x, int64_t y) const {
    if (fold != static_cast<int>(WarpFold::kNone)) return at(fold_index(y, h, fold), fold_index(x, w, fold));
    if (clamp) return at(clampi(y, h), clampi(x, w));
    return nullptr;
  }
  __device__ __forceinline__ float tap(int64_t x, int64_t y, int64_t ch) const {
    if (inside(x, y)) return to_float(at(y, x)[ch]);
    const In* p = outside(x, y);
    return p ? to_float(p[ch]) : fill_of(ch);
  }
};

template <typename Out, typename In>
__device__ void sample_nearest(const Source<In>& s, float sx, float sy, Out* out) {
  const int64_t ix = floor_i(tame(sx, s.lx, s.hx)), iy = floor_i(tame(sy, s.ly, s.hy));
  const In* p = s.inside(ix, iy) ? s.at(iy, ix) : s.outside(ix, iy);
  if (p) {
    for (int64_t c = 0; c < s.c; ++c) out[c] = convert_sat_dev<Out>(p[c]);
  } else {
    for (int64_t c = 0; c < s.c; ++c) out[c] = convert_sat_dev<Out>(s.fill_of(c));
  }
}

template <typename Out, typename In>
__device__ void sample_linear(const Source<In>& s, float sx, float sy, Out* out) {
  float fx = tame(sx, s.lx, s.hx), fy = tame(sy, s.ly, s.hy);
  fx = __fsub_rn(fx, 0.5f);
  fy = __fsub_rn(fy, 0.5f);
  int32_t i = static_cast<int32_t>(fx), j = static_cast<int32_t>(fy);
  i -= fx < static_cast<float>(i);
  j -= fy < static_cast<float>(j);
  const float qx = __fsub_rn(fx, static_cast<float>(i)), qy = __fsub_rn(fy, static_cast<float>(j));
  const float px = __fsub_rn(1.0f, qx), py = __fsub_rn(1.0f, qy);
  const int64_t x0 = i, y0 = j;
  for (int64_t c = 0; c < s.c; ++c) {
    const float top = __fadd_rn(__fmul_rn(s.tap(x0, y0, c), px), __fmul_rn(s.tap(x0 + 1, y0, c), qx));
    const float bot = __fadd_rn(__fmul_rn(s.tap(x0, y0 + 1, c), px), __fmul_rn(s.tap(x0 + 1, y0 + 1, c), qx));
    out[c] = round_sat_dev<Out>(__fadd_rn(__fmul_rn(top, py), __fmul_rn(bot, qy)));
  }
}

template <typename Out, typename In>
__device__ void sample_cubic(const Source<In>& s, float sx, float sy, Out* out) {
  const float fx = __fsub_rn(tame(sx, s.lx, s.hx), 0.5f), fy = __fsub_rn(tame(sy, s.ly, s.hy), 0.5f);
  const int64_t x0 = floor_i(fx) - 1, y0 = floor_i(fy) - 1;
  float wx[4], wy[4];
  cubic_weights(__fsub_rn(fx, static_cast<float>(x0 + 1)), wx);
  cubic_weights(__fsub_rn(fy, static_cast<float>(y0 + 1)), wy);
  for (int64_t c = 0; c < s.c; ++c) {
    float acc = 0.0f;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      float row = 0.0f;
#pragma unroll
      for (int i = 0; i < 4; ++i) row = __fadd_rn(row, __fmul_rn(wx[i], s.tap(x0 + i, y0 + j, c)));
      acc = __fadd_rn(acc, __fmul_rn(wy[j], row));
    }
    out[c] = round_sat_dev<Out>(acc);
  }
}

template <typename Out, typename In>
__global__ void warp_kernel(const char* params, const WarpDesc* descs, const int* block_start, int n) {
  __shared__ WarpDesc d;
  const int s = sample_of_block(block_start, n, blockIdx.x);
  if (threadIdx.x == 0) d = descs[s];
  __syncthreads();
  const int64_t base = int64_t(blockIdx.x - block_start[s]) * kChunk;
  const int64_t frame_px = d.out_h * d.out_w;
  for (int it = 0; it < kItems; ++it) {
    const int64_t p = base + it * kThreads + threadIdx.x;
    if (p >= d.pixels) return;
    const int64_t f = p / frame_px, rem = p - f * frame_px;
    const int64_t y = rem / d.out_w, x = rem - y * d.out_w;
    Out* out = static_cast<Out*>(d.out) + p * d.channels;
    Source<In> src{static_cast<const In*>(d.in) + f * d.in_h * d.in_w * d.channels, d.in_h, d.in_w,
                   d.channels, d.clamp != 0, d.fold, d.fill,
                   d.fills ? reinterpret_cast<const float*>(params + d.fills) : nullptr,
                   -4.0f, -4.0f, static_cast<float>(d.in_w + 4), static_cast<float>(d.in_h + 4)};
    if (d.fold != static_cast<int>(WarpFold::kNone)) {  // folded points: within a period of 0
      src.hx = __fadd_rn(d.period_x, 4.0f);
      src.hy = __fadd_rn(d.period_y, 4.0f);
      src.lx = -src.hx;
      src.ly = -src.hy;
    }
    if (d.kind == static_cast<int>(WarpMapKind::kCopy)) {  // the sample passes through
      const In* q = src.at(y, x);
      for (int64_t c = 0; c < d.channels; ++c) out[c] = convert_sat_dev<Out>(q[c]);
      continue;
    }
    if (d.in_h <= 0 || d.in_w <= 0) {  // nothing to sample: the fill value (0 when clamping)
      const bool fills = !d.clamp && d.fold == static_cast<int>(WarpFold::kNone);
      for (int64_t c = 0; c < d.channels; ++c) out[c] = convert_sat_dev<Out>(fills ? src.fill_of(c) : 0.0f);
      continue;
    }
    float sx, sy;
    if (d.kind == static_cast<int>(WarpMapKind::kAffine)) {
      // affine_row_map: in double, then rounded to float
      const double yc = static_cast<double>(y) + 0.5, xc = static_cast<double>(x) + 0.5;
      const double bx = __dadd_rn(__dmul_rn(d.m[1], yc), d.m[2]);
      const double by = __dadd_rn(__dmul_rn(d.m[4], yc), d.m[5]);
      sx = static_cast<float>(__dadd_rn(__dmul_rn(d.m[0], xc), bx));
      sy = static_cast<float>(__dadd_rn(__dmul_rn(d.m[3], xc), by));
    } else if (d.kind == static_cast<int>(WarpMapKind::kWater)) {
      const float* dx = reinterpret_cast<const float*>(params + d.dx);
      const float* dy = reinterpret_cast<const float*>(params + d.dy);
      sx = __fadd_rn(static_cast<float>(x), dx[y]);
      sy = __fadd_rn(static_cast<float>(y), dy[x]);
    } else if (d.kind == static_cast<int>(WarpMapKind::kPerspective)) {
      // perspective_row_map: the row's terms rounded to float once, then per pixel a float
      // multiply-add (exact product in double, one rounding) and a float division.
      const double yd = static_cast<double>(y), xd = static_cast<double>(static_cast<float>(x));
      const double bx = __double2float_rn(__dadd_rn(__dmul_rn(yd, d.pm[1]), d.pm[2]));
      const double by = __double2float_rn(__dadd_rn(__dmul_rn(yd, d.pm[4]), d.pm[5]));
      const double bw = __double2float_rn(__dadd_rn(__dmul_rn(yd, d.pm[7]), d.pm[8]));
      const float w = __double2float_rn(__dadd_rn(__dmul_rn(d.pm[6], xd), bw));
      float u = __fdiv_rn(__double2float_rn(__dadd_rn(__dmul_rn(d.pm[0], xd), bx)), w);
      float v = __fdiv_rn(__double2float_rn(__dadd_rn(__dmul_rn(d.pm[3], xd), by)), w);
      if (d.interp == static_cast<int>(WarpInterp::kNearest)) {
        u = rintf(u);  // half to even
        v = rintf(v);
      }
      sx = __fadd_rn(u, 0.5f);
      sy = __fadd_rn(v, 0.5f);
    } else if (d.kind == static_cast<int>(WarpMapKind::kRemap)) {
      // Remap's row map: the map's values (rounded half to even for OpenCV's nearest pixel),
      // shifted to the sampler's corner coordinates.
      const int64_t m = f * d.map_frame + y * d.out_w + x;
      float u = d.mapx[m], v = d.mapy[m];
      if (d.remap_round) {
        u = rintf(u);
        v = rintf(v);
      }
      sx = __fadd_rn(u, d.remap_shift);
      sy = __fadd_rn(v, d.remap_shift);
    } else {  // sphere
      const float ty = __fsub_rn(__fadd_rn(static_cast<float>(y), 0.5f), d.mid_y);
      const float tx = __fsub_rn(__fadd_rn(static_cast<float>(x), 0.5f), d.mid_x);
      const float rad = __fdiv_rn(__fsqrt_rn(__fadd_rn(__fmul_rn(tx, tx), __fmul_rn(ty, ty))), d.sphere_d);
      sx = __fadd_rn(d.mid_x, __fmul_rn(rad, tx));
      sy = __fadd_rn(d.mid_y, __fmul_rn(rad, ty));
    }
    if (d.fold != static_cast<int>(WarpFold::kNone)) {  // whole periods off, as warp() does
      sx = fmodf(sx, d.period_x);
      sy = fmodf(sy, d.period_y);
    }
    switch (d.interp) {
      case static_cast<int>(WarpInterp::kNearest): sample_nearest<Out, In>(src, sx, sy, out); break;
      case static_cast<int>(WarpInterp::kCubic): sample_cubic<Out, In>(src, sx, sy, out); break;
      default: sample_linear<Out, In>(src, sx, sy, out); break;
    }
  }
}

struct Warp3DDesc {
  const void* in;
  void* out;
  int64_t voxels;  // frames * out d * h * w
  int64_t D, H, W, od, oh, ow, channels;
  double m[12];
  float fill;
  int interp, clamp;
};

// warp_affine_3d (cpu/warp/warp.h), operation for operation: the map in double without fused
// multiply-adds, the point tamed in float, nearest's voxel or linear's eight taps interpolated
// along x, then y, then z, rounded half to even and saturated.
template <typename Out, typename In>
__global__ void warp3d_kernel(const Warp3DDesc* descs, const int* block_start, int n) {
  const int s = sample_of_block(block_start, n, blockIdx.x);
  const Warp3DDesc& d = descs[s];
  const int64_t base = int64_t(blockIdx.x - block_start[s]) * kChunk;
  const int64_t C = d.channels, D = d.D, H = d.H, W = d.W;
  const int64_t rs = W * C, ss = H * W * C;
  for (int it = 0; it < kItems; ++it) {
    const int64_t v = base + it * kThreads + threadIdx.x;
    if (v >= d.voxels) return;
    const int64_t per_frame = d.od * d.oh * d.ow;
    const int64_t f = v / per_frame, r = v - f * per_frame;
    const int64_t z = r / (d.oh * d.ow), y = (r / d.ow) % d.oh, x = r % d.ow;
    const In* in = static_cast<const In*>(d.in) + f * D * ss;
    Out* o = static_cast<Out*>(d.out) + v * C;
    if (D <= 0 || H <= 0 || W <= 0) {  // nothing to sample: zeros (clamp) or the fill
      for (int64_t c = 0; c < C; ++c) o[c] = convert_sat_dev<Out>(d.clamp ? 0.0f : d.fill);
      continue;
    }
    const double* m = d.m;
    const double xc = x + 0.5, yc = y + 0.5, zc = z + 0.5;
    const double bx = __dadd_rn(__dadd_rn(__dmul_rn(m[1], yc), __dmul_rn(m[2], zc)), m[3]);
    const double by = __dadd_rn(__dadd_rn(__dmul_rn(m[5], yc), __dmul_rn(m[6], zc)), m[7]);
    const double bz = __dadd_rn(__dadd_rn(__dmul_rn(m[9], yc), __dmul_rn(m[10], zc)), m[11]);
    auto tame3 = [](float t, int64_t lim) { return tame(t, -4.0f, static_cast<float>(lim + 4)); };
    const float sx = tame3(static_cast<float>(__dadd_rn(__dmul_rn(m[0], xc), bx)), W);
    const float sy = tame3(static_cast<float>(__dadd_rn(__dmul_rn(m[4], xc), by)), H);
    const float sz = tame3(static_cast<float>(__dadd_rn(__dmul_rn(m[8], xc), bz)), D);
    auto clampi = [](int64_t t, int64_t lim) { return t < 0 ? 0 : t >= lim ? lim - 1 : t; };
    auto tap = [&](int64_t tx, int64_t ty, int64_t tz, int64_t c) -> float {
      if (tx >= 0 && ty >= 0 && tz >= 0 && tx < W && ty < H && tz < D)
        return to_float(in[tz * ss + ty * rs + tx * C + c]);
      if (d.clamp) return to_float(in[clampi(tz, D) * ss + clampi(ty, H) * rs + clampi(tx, W) * C + c]);
      return d.fill;
    };
    if (d.interp == static_cast<int>(WarpInterp::kNearest)) {
      const int64_t ix = floor_i(sx), iy = floor_i(sy), iz = floor_i(sz);
      for (int64_t c = 0; c < C; ++c) o[c] = convert_sat_dev<Out>(tap(ix, iy, iz, c));
      continue;
    }
    const float fx = __fsub_rn(sx, 0.5f), fy = __fsub_rn(sy, 0.5f), fz = __fsub_rn(sz, 0.5f);
    const int64_t x0 = floor_i(fx), y0 = floor_i(fy), z0 = floor_i(fz);
    const float qx = __fsub_rn(fx, static_cast<float>(x0)), qy = __fsub_rn(fy, static_cast<float>(y0)),
                qz = __fsub_rn(fz, static_cast<float>(z0));
    const float px = __fsub_rn(1.0f, qx), py = __fsub_rn(1.0f, qy), pz = __fsub_rn(1.0f, qz);
    auto lerp = [](float a, float wa, float b, float wb) {
      return __fadd_rn(__fmul_rn(a, wa), __fmul_rn(b, wb));
    };
    for (int64_t c = 0; c < C; ++c) {
      float t[8];
      for (int k = 0; k < 8; ++k) t[k] = tap(x0 + (k & 1), y0 + ((k >> 1) & 1), z0 + (k >> 2), c);
      const float r00 = lerp(t[0], px, t[1], qx), r01 = lerp(t[2], px, t[3], qx);
      const float r10 = lerp(t[4], px, t[5], qx), r11 = lerp(t[6], px, t[7], qx);
      const float s0 = lerp(r00, py, r01, qy), s1 = lerp(r10, py, r11, qy);
      o[c] = convert_sat_dev<Out>(lerp(s0, pz, s1, qz));
    }
  }
}

}  // namespace

void warp3d_gpu(Workspace& ws, DType out_type, DType in_type, const std::vector<Warp3DJob>& jobs) {
  STOKER_ASSERT(warp_gpu_supports(out_type, in_type), "warp3d_gpu: unsupported types");
  LaunchPlan plan(kChunk);
  DeviceParams params(ws);
  std::vector<Warp3DDesc> descs(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    const Warp3DJob& j = jobs[i];
    STOKER_ASSERT(j.interp != WarpInterp::kCubic, "warp3d_gpu: nearest or linear only");
    Warp3DDesc& d = descs[i];
    std::memset(&d, 0, sizeof d);
    d.in = j.in;
    d.out = j.out;
    d.D = j.in_dims.depth;
    d.H = j.in_dims.height;
    d.W = j.in_dims.width;
    d.od = j.out_dims.depth;
    d.oh = j.out_dims.height;
    d.ow = j.out_dims.width;
    d.channels = j.out_dims.channels;
    for (int k = 0; k < 12; ++k) d.m[k] = j.map.m[k];
    d.fill = j.fill;
    d.interp = static_cast<int>(j.interp);
    d.clamp = j.clamp ? 1 : 0;
    d.voxels = d.channels <= 0 ? 0 : j.frames * d.od * d.oh * d.ow;
    plan.add(d.voxels);
  }
  if (plan.blocks() == 0) return;
  const size_t starts_off = params.add(plan.block_start());
  const size_t descs_off = params.add(descs);
  params.upload();
  const int* starts = params.device<int>(starts_off);
  const Warp3DDesc* dd = params.device<Warp3DDesc>(descs_off);
  const int n = plan.jobs();
  auto stream = static_cast<cudaStream_t>(ws.gpu->stream());
  const unsigned blocks = static_cast<unsigned>(plan.blocks());
  visit_warp_types(out_type, in_type, [&](auto to, auto ti) {
    using Out = typename decltype(to)::type;
    using In = typename decltype(ti)::type;
    warp3d_kernel<Out, In><<<blocks, kThreads, 0, stream>>>(dd, starts, n);
  });
  check_launch("warp3d_gpu");
}

bool warp_gpu_supports(DType out, DType in) {
  if (out == DType::kBool || in == DType::kBool) return false;
  return out == in || out == DType::kFloat32 || in == DType::kFloat32;
}

void warp_gpu(Workspace& ws, DType out_type, DType in_type, const std::vector<WarpJob>& jobs) {
  STOKER_ASSERT(warp_gpu_supports(out_type, in_type), "warp_gpu: unsupported types");
  LaunchPlan plan(kChunk);
  DeviceParams params(ws);
  std::vector<WarpDesc> descs(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    const WarpJob& j = jobs[i];
    WarpDesc& d = descs[i];
    std::memset(&d, 0, sizeof d);
    d.in = j.in;
    d.out = j.out;
    d.in_h = j.in_h;
    d.in_w = j.in_w;
    d.out_h = j.out_h;
    d.out_w = j.out_w;
    d.channels = j.channels;
    d.kind = static_cast<int>(j.kind);
    d.interp = static_cast<int>(j.interp);
    d.clamp = j.border.clamp ? 1 : 0;
    d.fill = j.border.fill;
    d.fold = static_cast<int>(j.border.fold);
    d.period_x = static_cast<float>(kernels::detail::fold_period(j.in_w, j.border.fold));
    d.period_y = static_cast<float>(kernels::detail::fold_period(j.in_h, j.border.fold));
    for (int k = 0; k < 9; ++k) d.pm[k] = j.perspective.m[k];
    for (int k : {0, 3, 6}) d.pm[k] = static_cast<float>(j.perspective.m[k]);
    const bool empty = j.out_h <= 0 || j.out_w <= 0 || j.channels <= 0 || j.frames <= 0;
    d.pixels = empty ? 0 : j.frames * j.out_h * j.out_w;
    if (j.kind == WarpMapKind::kCopy || j.kind == WarpMapKind::kWater || j.kind == WarpMapKind::kSphere)
      STOKER_ASSERT(j.in_h == j.out_h && j.in_w == j.out_w, "warp_gpu: a displacement keeps the size");
    for (int k = 0; k < 6; ++k) d.m[k] = j.affine.m[k];
    d.mapx = j.mapx;
    d.mapy = j.mapy;
    d.map_frame = j.map_frame;
    d.remap_shift = j.remap_shift;
    d.remap_round = j.remap_round ? 1 : 0;
    if (j.kind == WarpMapKind::kSphere) {  // sphere_row_map's constants
      const float mid_x = j.in_w * 0.5f, mid_y = j.in_h * 0.5f;
      d.mid_x = mid_x;
      d.mid_y = mid_y;
      d.sphere_d = static_cast<float>(std::max(static_cast<int>(std::max(mid_x, mid_y)), 1));
    }
    if (j.kind == WarpMapKind::kWater && !empty) {
      // water_row_map's sines (one per row) and cosine terms (one per column), as it takes them.
      const WaterParams& p = j.water;
      std::vector<float> dx(j.out_h), dy(j.out_w);
      for (int64_t y = 0; y < j.out_h; ++y) {
        float fy = static_cast<float>(y);
        dx[y] = p.ampl_x * std::sin(p.freq_x * fy + p.phase_x);
      }
      for (int64_t x = 0; x < j.out_w; ++x) {
        float fx = static_cast<float>(x);
        dy[x] = p.ampl_y * std::cos(p.freq_y * fx + p.phase_y);
      }
      d.dx = static_cast<uint32_t>(params.add(dx));
      d.dy = static_cast<uint32_t>(params.add(dy));
    }
    if (j.border.channel_fill && j.channels > 0) {
      // Offset 0 is never a table's: the first add() of a DeviceParams lands at 0, so pad first.
      if (params.add(std::vector<float>(1)) == 0) params.add(std::vector<float>(1));
      d.fills = static_cast<uint32_t>(params.add(j.border.channel_fill, static_cast<size_t>(j.channels)));
    }
    plan.add(d.pixels);
  }
  if (plan.blocks() == 0) return;
  const size_t starts_off = params.add(plan.block_start());
  const size_t descs_off = params.add(descs);
  params.upload();
  const char* base = params.device<char>(0);
  const int* starts = params.device<int>(starts_off);
  const WarpDesc* dd = params.device<WarpDesc>(descs_off);
  const int n = plan.jobs();
  auto stream = static_cast<cudaStream_t>(ws.gpu->stream());
  const unsigned blocks = static_cast<unsigned>(plan.blocks());
  visit_warp_types(out_type, in_type, [&](auto to, auto ti) {
    using Out = typename decltype(to)::type;
    using In = typename decltype(ti)::type;
    warp_kernel<Out, In><<<blocks, kThreads, 0, stream>>>(base, dd, starts, n);
  });
  check_launch("warp_gpu");
}

}  // namespace stoker::kernels::cuda
