#include "kernels/cuda/resample_gpu.h"

#include "core/error.h"
#include "kernels/cuda/cuda_common.cuh"
#include "pipeline/gpu_batch.h"
#include "pipeline/gpu_context.h"
#include "core/thread_pool.h"

namespace stoker::kernels::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kItems = 4;
constexpr int64_t kChunk = int64_t(kThreads) * kItems;

// Calls f(Out{}, In{}) for a pair of the resampling types (uint8, int16, uint16, float32).
template <typename F>
void visit_types(DType out_type, DType in_type, F&& f) {
  auto with_in = [&](auto out_tag) {
    switch (in_type) {
      case DType::kUInt8: return f(out_tag, uint8_t{});
      case DType::kInt16: return f(out_tag, int16_t{});
      case DType::kUInt16: return f(out_tag, uint16_t{});
      default: return f(out_tag, float{});
    }
  };
  switch (out_type) {
    case DType::kUInt8: with_in(uint8_t{}); break;
    case DType::kInt16: with_in(int16_t{}); break;
    case DType::kUInt16: with_in(uint16_t{}); break;
    default: with_in(float{}); break;
  }
}

struct ResampleDesc {
  const void* in;
  void* out;
  int64_t in_row_stride, in_pixel_stride;
  int64_t pixels;  // out_h * out_w
  FastDiv out_w;
  int32_t channels;
  int32_t ytaps, xtaps;
  uint32_t ystart, yw, xstart, xw;  // offsets into the parameter block
  int32_t vertical_first, pil_rounding;
};

// Up to four channels of one output pixel at a time, in resample.cc's order of operations:
// horizontal sums k = 0.. in order; the vertical sum w0*r0, then pairs, then an odd last tap.
template <typename Out, typename In>
__device__ __forceinline__ void resample_pixel(const ResampleDesc& d, const In* src,
                                               const float* wy, const float* wx, int nc,
                                               float* acc) {
  const int64_t rs = d.in_row_stride, ps = d.in_pixel_stride;
  if (d.vertical_first) {
#pragma unroll
    for (int c = 0; c < 4; ++c) acc[c] = 0.0f;
    for (int kx = 0; kx < d.xtaps; ++kx) {
      const In* col = src + kx * ps;
      float v[4];
#pragma unroll
      for (int c = 0; c < 4; ++c) v[c] = c < nc ? __fmul_rn(wy[0], to_float(col[c])) : 0.0f;
      int k = 1;
      for (; k + 1 < d.ytaps; k += 2) {
        const In* ra = col + k * rs;
        const In* rb = ra + rs;
#pragma unroll
        for (int c = 0; c < 4; ++c)
          if (c < nc)
            v[c] = __fadd_rn(v[c], __fadd_rn(__fmul_rn(wy[k], to_float(ra[c])),
                                             __fmul_rn(wy[k + 1], to_float(rb[c]))));
      }
      if (k < d.ytaps) {
        const In* ra = col + k * rs;
#pragma unroll
        for (int c = 0; c < 4; ++c)
          if (c < nc) v[c] = __fadd_rn(v[c], __fmul_rn(wy[k], to_float(ra[c])));
      }
#pragma unroll
      for (int c = 0; c < 4; ++c) acc[c] = __fadd_rn(acc[c], __fmul_rn(wx[kx], v[c]));
    }
    return;
  }
  const bool pil = d.pil_rounding;
  auto hrow = [&](int k, float* h) {
    const In* row = src + k * rs;
#pragma unroll
    for (int c = 0; c < 4; ++c) h[c] = 0.0f;
    for (int kx = 0; kx < d.xtaps; ++kx) {
      const float w = wx[kx];
#pragma unroll
      for (int c = 0; c < 4; ++c)
        if (c < nc) h[c] = __fadd_rn(h[c], __fmul_rn(w, to_float(row[kx * ps + c])));
    }
    if constexpr (!std::is_same_v<Out, float>) {
      if (pil) {
#pragma unroll
        for (int c = 0; c < 4; ++c) h[c] = static_cast<float>(round_half_up_sat<Out>(h[c]));
      }
    }
  };
  float h[4], h2[4];
  hrow(0, h);
#pragma unroll
  for (int c = 0; c < 4; ++c) acc[c] = __fmul_rn(wy[0], h[c]);
  int k = 1;
  for (; k + 1 < d.ytaps; k += 2) {
    hrow(k, h);
    hrow(k + 1, h2);
#pragma unroll
    for (int c = 0; c < 4; ++c)
      acc[c] = __fadd_rn(acc[c], __fadd_rn(__fmul_rn(wy[k], h[c]), __fmul_rn(wy[k + 1], h2[c])));
  }
  if (k < d.ytaps) {
    hrow(k, h);
#pragma unroll
    for (int c = 0; c < 4; ++c) acc[c] = __fadd_rn(acc[c], __fmul_rn(wy[k], h[c]));
  }
}

// One thread per output pixel (all its channels: the taps' positions and weights are shared).
template <typename Out, typename In>
__global__ void resample_kernel(const char* params, const ResampleDesc* descs,
                                const int* block_start, int n) {
  __shared__ ResampleDesc d;
  const int s = sample_of_block(block_start, n, blockIdx.x);
  if (threadIdx.x == 0) d = descs[s];
  __syncthreads();
  const In* in = static_cast<const In*>(d.in);
  Out* out = static_cast<Out*>(d.out);
  const int32_t* ys = reinterpret_cast<const int32_t*>(params + d.ystart);
  const float* yw = reinterpret_cast<const float*>(params + d.yw);
  const int32_t* xs = reinterpret_cast<const int32_t*>(params + d.xstart);
  const float* xw = reinterpret_cast<const float*>(params + d.xw);
  const int64_t base = int64_t(blockIdx.x - block_start[s]) * kChunk;
#pragma unroll 1
  for (int it = 0; it < kItems; ++it) {
    const int64_t px = base + it * kThreads + threadIdx.x;
    if (px >= d.pixels) return;
    const uint32_t y = d.out_w.div(static_cast<uint32_t>(px));
    const uint32_t x = static_cast<uint32_t>(px) - y * d.out_w.d;
    const float* wy = yw + int64_t(y) * d.ytaps;
    const float* wx = xw + int64_t(x) * d.xtaps;
    const In* src = in + int64_t(ys[y]) * d.in_row_stride + int64_t(xs[x]) * d.in_pixel_stride;
    Out* o = out + px * d.channels;
    for (int c0 = 0; c0 < d.channels; c0 += 4) {
      const int nc = min(4, d.channels - c0);
      float acc[4];
      resample_pixel<Out, In>(d, src + c0, wy, wx, nc, acc);
#pragma unroll
      for (int c = 0; c < 4; ++c)
        if (c < nc) o[c0 + c] = round_half_up_sat<Out>(acc[c]);
    }
  }
}

// One depth pass: output slice z's element e is the weighted sum of element e of source slices
// start[z], start[z] + 1, ... (taps of them), in v_row's order: w0*r0, then pairs, then an odd
// last tap.
struct DepthDesc {
  const void* in;  // source slice `first`
  void* out;
  int64_t first;
  int64_t slice;   // elements per slice
  int64_t total;   // out_d * slice
  int32_t taps;
  uint32_t start, w;  // offsets into the parameter block
};

template <typename Out, typename In>
__global__ void depth_kernel(const char* params, const DepthDesc* descs, const int* block_start,
                             int n) {
  const int s = sample_of_block(block_start, n, blockIdx.x);
  const DepthDesc d = descs[s];
  const int32_t* start = reinterpret_cast<const int32_t*>(params + d.start);
  const float* w = reinterpret_cast<const float*>(params + d.w);
  const In* in = static_cast<const In*>(d.in);
  Out* out = static_cast<Out*>(d.out);
  const int64_t base = int64_t(blockIdx.x - block_start[s]) * kChunk;
#pragma unroll 1
  for (int it = 0; it < kItems; ++it) {
    const int64_t i = base + it * kThreads + threadIdx.x;
    if (i >= d.total) return;
    const int64_t z = i / d.slice, e = i - z * d.slice;
    const float* wz = w + z * d.taps;
    const In* src = in + (int64_t(start[z]) - d.first) * d.slice + e;
    float acc = __fmul_rn(wz[0], to_float(src[0]));
    int k = 1;
    for (; k + 1 < d.taps; k += 2)
      acc = __fadd_rn(acc, __fadd_rn(__fmul_rn(wz[k], to_float(src[k * d.slice])),
                                     __fmul_rn(wz[k + 1], to_float(src[(k + 1) * d.slice]))));
    if (k < d.taps) acc = __fadd_rn(acc, __fmul_rn(wz[k], to_float(src[k * d.slice])));
    out[i] = round_half_up_sat<Out>(acc);
  }
}

struct DepthJob {
  const void* in;  // source slice `first`
  void* out;
  int64_t first, slice, out_d;
  const VolumePlan* plan;
};

void depth_gpu(Workspace& ws, DType out_type, DType in_type, const std::vector<DepthJob>& jobs) {
  if (jobs.empty()) return;
  DeviceParams params(ws);
  std::vector<DepthDesc> descs;
  std::vector<int> block_start;
  int64_t blocks = 0;
  for (const DepthJob& j : jobs) {
    DepthDesc d{};
    d.in = j.in;
    d.out = j.out;
    d.first = j.first;
    d.slice = j.slice;
    d.total = j.slice * j.out_d;
    d.taps = j.plan->z.taps;
    d.start = static_cast<uint32_t>(params.add(j.plan->z.start));
    d.w = static_cast<uint32_t>(params.add(j.plan->z.w));
    if (d.total == 0) continue;
    descs.push_back(d);
    block_start.push_back(static_cast<int>(blocks));
    blocks += (d.total + kChunk - 1) / kChunk;
  }
  if (blocks == 0) return;
  STOKER_ASSERT(blocks < (int64_t(1) << 31), "resample_volume_gpu: batch too large for one launch");
  const size_t starts_off = params.add(block_start);
  const size_t descs_off = params.add(descs);
  params.upload();
  const int n = static_cast<int>(descs.size());
  auto stream = static_cast<cudaStream_t>(ws.gpu->stream());
  visit_types(out_type, in_type, [&](auto out_tag, auto in_tag) {
    using Out = decltype(out_tag);
    using In = decltype(in_tag);
    depth_kernel<Out, In><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
        params.device<char>(0), params.device<DepthDesc>(descs_off),
        params.device<int>(starts_off), n);
  });
  check_launch("resample_volume_gpu");
}

}  // namespace

void resample_volume_gpu(Workspace& ws, DType out_type, DType in_type,
                         const std::vector<VolumeJob>& jobs) {
  STOKER_ASSERT(resample_gpu_supports(out_type, in_type), "resample_volume_gpu: unsupported types");
  const size_t in_elem = dtype_size(in_type), out_elem = dtype_size(out_type);
  std::vector<VolumePlan> plans(jobs.size());
  // Float scratch: depth first, out_d source-sized slices; depth last, the used slices at the
  // output's size.
  std::vector<size_t> scratch_at(jobs.size(), 0);
  size_t scratch_floats = 0;
  for (size_t k = 0; k < jobs.size(); ++k) {
    const VolumeJob& j = jobs[k];
    if (j.out_d <= 0 || j.out_h <= 0 || j.out_w <= 0 || j.channels <= 0) continue;
    if (j.in_d <= 0 || j.in_h <= 0 || j.in_w <= 0)
      fail(ErrorKind::kInvalidArgument, "resample: cannot resize an empty volume");
    plans[k] = plan_volume(j.out_d, j.out_h, j.out_w, j.in_d, j.in_h, j.in_w, j.channels,
                           j.params, j.z0, j.z1);
    const VolumePlan& p = plans[k];
    if (p.identity) continue;
    scratch_at[k] = scratch_floats;
    scratch_floats += static_cast<size_t>(p.depth_first ? j.out_d * j.in_h * j.in_w
                                                        : (p.used_hi - p.used_lo) * j.out_h * j.out_w) *
                      static_cast<size_t>(j.channels);
  }
  std::shared_ptr<void> scratch;
  if (scratch_floats) scratch = ws.gpu->allocate_device(scratch_floats * sizeof(float));
  auto mid = [&](size_t k) { return static_cast<float*>(scratch.get()) + scratch_at[k]; };
  auto slice_job = [](const void* in, int64_t ih, int64_t iw, void* out, int64_t oh, int64_t ow,
                      int64_t c, const ResampleParams& p) {
    ResampleJob r;
    r.in = in;
    r.in_h = ih;
    r.in_w = iw;
    r.in_row_stride = iw * c;
    r.in_pixel_stride = c;
    r.out = out;
    r.out_h = oh;
    r.out_w = ow;
    r.channels = c;
    r.params = p;
    return r;
  };
  // In order on the stream: the slices resampled as they are (identity depth) and the depth-last
  // volumes' source slices (to float); the depth passes; the depth-first volumes' slices.
  std::vector<ResampleJob> direct, to_mid, from_mid;
  std::vector<DepthJob> depth_in, depth_mid;
  for (size_t k = 0; k < jobs.size(); ++k) {
    const VolumeJob& j = jobs[k];
    if (j.out_d <= 0 || j.out_h <= 0 || j.out_w <= 0 || j.channels <= 0) continue;
    const VolumePlan& p = plans[k];
    const int64_t C = j.channels, in_slice = j.in_h * j.in_w * C, out_slice = j.out_h * j.out_w * C;
    const char* in = static_cast<const char*>(j.in);
    char* out = static_cast<char*>(j.out);
    if (p.identity) {
      for (int64_t z = 0; z < j.out_d; ++z)
        direct.push_back(slice_job(in + z * in_slice * in_elem, j.in_h, j.in_w,
                                   out + z * out_slice * out_elem, j.out_h, j.out_w, C, j.params));
    } else if (p.depth_first) {
      depth_in.push_back({j.in, mid(k), 0, in_slice, j.out_d, &p});
      for (int64_t z = 0; z < j.out_d; ++z)
        from_mid.push_back(slice_job(mid(k) + z * in_slice, j.in_h, j.in_w,
                                     out + z * out_slice * out_elem, j.out_h, j.out_w, C, j.params));
    } else {
      for (int64_t s = p.used_lo; s < p.used_hi; ++s)
        to_mid.push_back(slice_job(in + s * in_slice * in_elem, j.in_h, j.in_w,
                                   mid(k) + (s - p.used_lo) * out_slice, j.out_h, j.out_w, C, j.params));
      depth_mid.push_back({mid(k), j.out, p.used_lo, out_slice, j.out_d, &p});
    }
  }
  resample_gpu(ws, out_type, in_type, direct);
  resample_gpu(ws, DType::kFloat32, in_type, to_mid);
  depth_gpu(ws, DType::kFloat32, in_type, depth_in);
  depth_gpu(ws, out_type, DType::kFloat32, depth_mid);
  resample_gpu(ws, out_type, DType::kFloat32, from_mid);
}

bool resample_gpu_supports(DType out, DType in) {
  auto ok = [](DType t) {
    return t == DType::kUInt8 || t == DType::kInt16 || t == DType::kUInt16 || t == DType::kFloat32;
  };
  return ok(out) && ok(in);
}

void resample_gpu(Workspace& ws, DType out_type, DType in_type, const std::vector<ResampleJob>& jobs) {
  STOKER_ASSERT(resample_gpu_supports(out_type, in_type), "resample_gpu: unsupported types");
  std::vector<ResampleDesc> descs;
  std::vector<int> block_start;
  DeviceParams params(ws);
  int64_t blocks = 0;
  // The weight tables, built on the worker threads (a few microseconds per image, which adds
  // up over a batch on the thread that queues the GPU work).
  std::vector<ResampleWeights> weights(jobs.size());
  ws.thread_pool->parallel_for(static_cast<int64_t>(jobs.size()), [&](int64_t k, int) {
    const ResampleJob& j = jobs[k];
    if (j.out_h <= 0 || j.out_w <= 0 || j.channels <= 0) return;
    if (j.in_h <= 0 || j.in_w <= 0)
      fail(ErrorKind::kInvalidArgument, "resample: cannot resize an empty image to " +
                                            std::to_string(j.out_h) + "x" + std::to_string(j.out_w));
    weights[k] = resample_weights(j.out_h, j.out_w, j.in_h, j.in_w, j.channels, j.params);
  });
  for (size_t k = 0; k < jobs.size(); ++k) {
    const ResampleJob& j = jobs[k];
    if (j.out_h <= 0 || j.out_w <= 0 || j.channels <= 0) continue;
    const ResampleWeights& w = weights[k];
    ResampleDesc d{};
    d.in = j.in;
    d.out = j.out;
    d.in_row_stride = j.in_row_stride;
    d.in_pixel_stride = j.in_pixel_stride;
    d.pixels = j.out_h * j.out_w;
    d.out_w = FastDiv(static_cast<uint32_t>(j.out_w));
    if (d.pixels >= (int64_t(1) << 31))
      fail(ErrorKind::kUnsupported, "the GPU resize takes outputs of fewer than 2^31 pixels; "
                                    "run the operator with device='cpu'");
    d.channels = static_cast<int32_t>(j.channels);
    d.ytaps = w.y.taps;
    d.xtaps = w.x.taps;
    d.ystart = static_cast<uint32_t>(params.add(w.y.start));
    d.yw = static_cast<uint32_t>(params.add(w.y.w));
    d.xstart = static_cast<uint32_t>(params.add(w.x.start));
    d.xw = static_cast<uint32_t>(params.add(w.x.w));
    d.vertical_first = w.vertical_first;
    d.pil_rounding = j.params.pil_rounding;
    descs.push_back(d);
    block_start.push_back(static_cast<int>(blocks));
    blocks += (d.pixels + kChunk - 1) / kChunk;
  }
  if (blocks == 0) return;
  STOKER_ASSERT(blocks < (int64_t(1) << 31), "resample_gpu: batch too large for one launch");
  const size_t starts_off = params.add(block_start);
  const size_t descs_off = params.add(descs);
  params.upload();
  const int n = static_cast<int>(descs.size());
  auto stream = static_cast<cudaStream_t>(ws.gpu->stream());
  visit_types(out_type, in_type, [&](auto out_tag, auto in_tag) {
    using Out = decltype(out_tag);
    using In = decltype(in_tag);
    resample_kernel<Out, In><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
        params.device<char>(0), params.device<ResampleDesc>(descs_off),
        params.device<int>(starts_off), n);
  });
  check_launch("resample_gpu");
}

}  // namespace stoker::kernels::cuda
