#include "kernels/cuda/filter_gpu.h"

#include "kernels/cuda/elementwise.cuh"
#include "kernels/cuda/launch_plan.h"
#include "pipeline/gpu_batch.h"
#include "pipeline/gpu_context.h"

namespace stoker::kernels::cuda {
namespace {

constexpr int kThreads = 256;

// kernels::filter_border_index, for device code.
__device__ __forceinline__ int64_t border_index(int64_t i, int64_t n, int border) {
  if (i >= 0 && i < n) return i;
  switch (static_cast<FilterBorder>(border)) {
    case FilterBorder::kConstant:
      return -1;
    case FilterBorder::kClamp:
      return i < 0 ? 0 : n - 1;
    case FilterBorder::kWrap: {
      const int64_t r = i % n;
      return r < 0 ? r + n : r;
    }
    case FilterBorder::kReflect1001: {
      const int64_t p = 2 * n, r0 = i % p, r = r0 < 0 ? r0 + p : r0;
      return r < n ? r : p - 1 - r;
    }
    case FilterBorder::kReflect101:
    default: {
      if (n == 1) return 0;
      const int64_t p = 2 * (n - 1), r0 = i % p, r = r0 < 0 ? r0 + p : r0;
      return r < n ? r : p - r;
    }
  }
}

template <typename Out, typename In>
__global__ void correlate_kernel(const CorrelateJob* jobs, const int* block_start, int n, int border) {
  const int s = sample_of_block(block_start, n, blockIdx.x);
  const CorrelateJob& j = jobs[s];
  const int64_t C = j.channels;
  const int64_t k = int64_t(blockIdx.x - block_start[s]) * kThreads + threadIdx.x;
  if (k >= j.m[0] * j.m[1] * j.m[2] * C) return;
  const int64_t c = k % C, px = k / C;
  const int64_t ox = px % j.m[2], oy = (px / j.m[2]) % j.m[1], oz = px / (j.m[2] * j.m[1]);
  const In* in = static_cast<const In*>(j.in);
  const float fill = j.fill ? load_f(*static_cast<const In*>(j.fill)) : 0.0f;
  float acc = 0.0f;
  for (int64_t kz = 0; kz < j.K[0]; ++kz) {
    const int64_t iz = border_index(oz + kz + j.s[0], j.n[0], border);
    for (int64_t ky = 0; ky < j.K[1]; ++ky) {
      const int64_t iy = border_index(oy + ky + j.s[1], j.n[1], border);
      const float* kr = j.kernel + (kz * j.K[1] + ky) * j.K[2];
      const In* row = iz < 0 || iy < 0 ? nullptr : in + (iz * j.n[1] + iy) * j.n[2] * C;
      // The row's non-zero taps, four at a time, then the rest one by one, as the CPU adds them.
      float w[4], x[4];
      int g = 0;
      for (int64_t kx = 0; kx < j.K[2]; ++kx) {
        const float wk = kr[kx];
        if (wk == 0.0f) continue;
        const int64_t ix = row ? border_index(ox + kx + j.s[2], j.n[2], border) : -1;
        w[g] = wk;
        x[g] = ix < 0 ? fill : load_f(row[ix * C + c]);
        if (++g == 4) {
          acc = __fadd_rn(acc, __fadd_rn(__fadd_rn(__fmul_rn(w[0], x[0]), __fmul_rn(w[1], x[1])),
                                         __fadd_rn(__fmul_rn(w[2], x[2]), __fmul_rn(w[3], x[3]))));
          g = 0;
        }
      }
      for (int t = 0; t < g; ++t) acc = __fadd_rn(acc, __fmul_rn(w[t], x[t]));
    }
  }
  Out* out = static_cast<Out*>(j.out);
  if constexpr (std::is_same_v<Out, float>) out[k] = acc;
  else out[k] = round_sat_dev<Out>(acc);
}

// ---- equalize

__global__ void histogram_kernel(const EqualizeJob* jobs, const int* block_start, int n,
                                 unsigned* hist) {
  __shared__ unsigned h[256];
  for (int b = threadIdx.x; b < 256; b += blockDim.x) h[b] = 0;
  __syncthreads();
  const int s = sample_of_block(block_start, n, blockIdx.x);
  const EqualizeJob& j = jobs[s];
  const int64_t base = int64_t(blockIdx.x - block_start[s]) * kThreads * 16;
  for (int it = 0; it < 16; ++it) {
    const int64_t p = base + it * kThreads + threadIdx.x;
    if (p < j.pixels) atomicAdd(&h[j.in[p * j.stride]], 1u);
  }
  __syncthreads();
  for (int b = threadIdx.x; b < 256; b += blockDim.x)
    if (h[b]) atomicAdd(&hist[s * 256 + b], h[b]);
}

// One block per plane: histogram_kernel's counts to kernels::equalize_hist's lookup table.
__global__ void lut_kernel(const EqualizeJob* jobs, const unsigned* hist, uint8_t* luts) {
  if (threadIdx.x != 0) return;
  const int s = blockIdx.x;
  const unsigned* h = hist + s * 256;
  uint8_t* lut = luts + s * 256;
  const int64_t pixels = jobs[s].pixels;
  int first = 0;
  while (first < 255 && h[first] == 0) ++first;
  if (pixels == 0 || h[first] == pixels) {  // one level only: left as it is
    for (int i = 0; i < 256; ++i) lut[i] = static_cast<uint8_t>(i);
    return;
  }
  const float scale = __fdiv_rn(255.0f, static_cast<float>(pixels - h[first]));
  int64_t sum = 0;
  for (int i = 0; i <= first; ++i) lut[i] = 0;
  for (int i = first + 1; i < 256; ++i) {
    sum += h[i];
    const float r = rintf(__fmul_rn(static_cast<float>(sum), scale));
    lut[i] = static_cast<uint8_t>(r <= 0.0f ? 0.0f : r >= 255.0f ? 255.0f : r);
  }
}

__global__ void apply_lut_kernel(const EqualizeJob* jobs, const int* block_start, int n,
                                 const uint8_t* luts) {
  const int s = sample_of_block(block_start, n, blockIdx.x);
  const EqualizeJob& j = jobs[s];
  const int64_t base = int64_t(blockIdx.x - block_start[s]) * kThreads * 16;
  const uint8_t* lut = luts + s * 256;
  for (int it = 0; it < 16; ++it) {
    const int64_t p = base + it * kThreads + threadIdx.x;
    if (p < j.pixels) j.out[p * j.stride] = lut[j.in[p * j.stride]];
  }
}

}  // namespace

void correlate_gpu(Workspace& ws, DType out_type, DType in_type, FilterBorder border,
                   const std::vector<CorrelateJob>& jobs) {
  LaunchPlan plan(kThreads);
  for (const CorrelateJob& j : jobs) plan.add(j.m[0] * j.m[1] * j.m[2] * j.channels);
  if (plan.blocks() == 0) return;
  DeviceParams p(ws);
  const size_t starts = p.add(plan.block_start());
  const size_t descs = p.add(jobs);
  p.upload();
  auto stream = static_cast<cudaStream_t>(ws.gpu->stream());
  visit_dev_type(in_type, [&](auto ti) {
    using In = typename decltype(ti)::type;
    if constexpr (std::is_same_v<In, uint8_t> || std::is_same_v<In, int8_t> ||
                  std::is_same_v<In, uint16_t> || std::is_same_v<In, int16_t> ||
                  std::is_same_v<In, __half> || std::is_same_v<In, float>) {
      auto go = [&](auto to) {
        using Out = typename decltype(to)::type;
        correlate_kernel<Out, In><<<static_cast<unsigned>(plan.blocks()), kThreads, 0, stream>>>(
            p.device<CorrelateJob>(descs), p.device<int>(starts), plan.jobs(), static_cast<int>(border));
      };
      if (out_type == in_type) go(Tag<In>{});
      else go(Tag<float>{});
    } else {
      STOKER_ASSERT(false, "correlate_gpu: unsupported input type");
    }
  });
  check_launch("correlate_gpu");
}

void equalize_gpu(Workspace& ws, const std::vector<EqualizeJob>& jobs) {
  if (jobs.empty()) return;
  LaunchPlan plan(int64_t(kThreads) * 16);
  for (const EqualizeJob& j : jobs) plan.add(j.pixels);
  DeviceParams p(ws);
  const size_t starts = p.add(plan.block_start());
  const size_t descs = p.add(jobs);
  // Scratch in the same block, uploaded as zeros: the histograms, then the lookup tables.
  const size_t hist = p.add(std::vector<unsigned>(jobs.size() * 256));
  const size_t luts = p.add(std::vector<uint8_t>(jobs.size() * 256));
  p.upload();
  auto stream = static_cast<cudaStream_t>(ws.gpu->stream());
  const unsigned blocks = static_cast<unsigned>(plan.blocks());
  if (blocks)
    histogram_kernel<<<blocks, kThreads, 0, stream>>>(p.device<EqualizeJob>(descs), p.device<int>(starts),
                                                      plan.jobs(), p.device<unsigned>(hist));
  lut_kernel<<<static_cast<unsigned>(jobs.size()), 32, 0, stream>>>(
      p.device<EqualizeJob>(descs), p.device<unsigned>(hist), p.device<uint8_t>(luts));
  if (blocks)
    apply_lut_kernel<<<blocks, kThreads, 0, stream>>>(p.device<EqualizeJob>(descs), p.device<int>(starts),
                                                      plan.jobs(), p.device<uint8_t>(luts));
  check_launch("equalize_gpu");
}

}  // namespace stoker::kernels::cuda
