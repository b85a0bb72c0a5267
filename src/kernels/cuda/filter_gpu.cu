#include "kernels/cuda/filter_gpu.h"

#include <memory>
#include <utility>

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

// ---- laplacian: the passes of kernels::separable_sum

// One pass of one plane: dst (+)= sum_j fw[j] * src[.. p + j - r along `axis` ..], reflect-101.
struct PassDesc {
  const void* src = nullptr;  // the input type on a term's first pass, else float
  float* dst = nullptr;
  int64_t n[3] = {1, 1, 1};
  int64_t channels = 1;
  const float* fw = nullptr;  // device: scale * window, as the CPU multiplies them (float)
  int axis = 2;               // of the three
  int taps = 1;
  int accumulate = 0;         // add to dst (the sum of the terms so far) or start from 0
};

__device__ __forceinline__ int64_t reflect101(int64_t i, int64_t n) {
  return border_index(i, n, static_cast<int>(FilterBorder::kReflect101));
}

template <typename Src>
__global__ void separable_pass_kernel(const PassDesc* descs, const int* block_start, int n) {
  const int s = sample_of_block(block_start, n, blockIdx.x);
  const PassDesc& d = descs[s];
  const int64_t C = d.channels;
  const int64_t k = int64_t(blockIdx.x - block_start[s]) * kThreads + threadIdx.x;
  if (k >= d.n[0] * d.n[1] * d.n[2] * C) return;
  int64_t stride = C;
  for (int a = 2; a > d.axis; --a) stride *= d.n[a];
  const int64_t len = d.n[d.axis];
  const int64_t p = (k / stride) % len;
  const int64_t base = k - p * stride;
  const int64_t r = d.taps / 2;
  const Src* src = static_cast<const Src*>(d.src);
  float v = d.accumulate ? d.dst[k] : 0.0f;
  for (int j = 0; j < d.taps; ++j)
    v = __fadd_rn(v, __fmul_rn(d.fw[j], load_f(src[base + reflect101(p + j - r, len) * stride])));
  d.dst[k] = v;
}

// The CPU's store: half away from zero, saturated, NaN -> 0 (core/cast_value.h).
template <typename Out>
__global__ void store_away_kernel(const PassDesc* descs, const int* block_start, int n) {
  const int s = sample_of_block(block_start, n, blockIdx.x);
  const PassDesc& d = descs[s];
  const int64_t k = int64_t(blockIdx.x - block_start[s]) * kThreads + threadIdx.x;
  if (k >= d.n[0] * d.n[1] * d.n[2] * d.channels) return;
  const float v = static_cast<const float*>(d.src)[k];
  Out* out = reinterpret_cast<Out*>(d.dst);
  if constexpr (std::is_same_v<Out, __half>) out[k] = __float2half_rn(v);
  else out[k] = convert_sat_dev<Out>(round(static_cast<double>(v)));
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

void separable_sum_gpu(Workspace& ws, DType out_type, DType in_type,
                       const std::vector<SeparableSumJob>& jobs) {
  if (jobs.empty()) return;
  const bool float_out = out_type == DType::kFloat32;
  // Scratch per job: two buffers for the inner passes, and the float sum unless the output is it.
  std::vector<int64_t> vol(jobs.size());
  std::vector<size_t> scratch_at(jobs.size());
  size_t scratch_bytes = 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    vol[i] = jobs[i].n[0] * jobs[i].n[1] * jobs[i].n[2] * jobs[i].channels;
    scratch_at[i] = scratch_bytes;
    scratch_bytes += ((float_out ? 2 : 3) * static_cast<size_t>(vol[i]) * sizeof(float) + 255) & ~size_t(255);
  }
  if (scratch_bytes == 0) return;
  std::shared_ptr<void> scratch = ws.gpu->allocate_device(scratch_bytes);
  char* base = static_cast<char*>(scratch.get());
  auto buffer = [&](size_t i, int b) {
    return reinterpret_cast<float*>(base + scratch_at[i]) + b * vol[i];
  };
  auto acc_of = [&](size_t i) { return float_out ? static_cast<float*>(jobs[i].out) : buffer(i, 2); };

  // Every pass of every term of every job, as the CPU runs them; launches by (term, pass).
  struct Planned {
    PassDesc desc;
    std::vector<float> fw;
  };
  const size_t terms = jobs[0].terms->size();
  std::vector<std::vector<std::vector<Planned>>> plan(terms);  // [term][pass][job's pass]
  for (size_t i = 0; i < jobs.size(); ++i) {
    const SeparableSumJob& j = jobs[i];
    STOKER_ASSERT(j.terms->size() == terms, "separable_sum_gpu: jobs with different numbers of terms");
    if (vol[i] == 0) continue;
    for (size_t t = 0; t < terms; ++t) {
      const SeparableTerm& term = (*j.terms)[t];
      const int nd = static_cast<int>(term.windows.size());
      float f = term.scale;
      std::vector<int> axes;  // data axes with a window wider than 1, innermost first
      for (int a = nd - 1; a >= 0; --a) {
        if (term.windows[a].size() == 1) f *= term.windows[a][0];
        else axes.push_back(a);
      }
      std::vector<std::pair<int, std::vector<float>>> passes;  // (axis of three, scaled window)
      if (axes.empty()) {
        passes.push_back({2, {f}});  // acc += f * src, as the CPU's axpy
      } else {
        for (size_t q = 0; q < axes.size(); ++q) {
          const bool last = q + 1 == axes.size();
          std::vector<float> fw = term.windows[axes[q]];
          const float g = last ? f : 1.0f;
          for (float& w : fw) w = g * w;
          passes.push_back({3 - nd + axes[q], std::move(fw)});
        }
      }
      if (plan[t].size() < passes.size()) plan[t].resize(passes.size());
      const void* cur = j.in;
      for (size_t q = 0; q < passes.size(); ++q) {
        const bool last = q + 1 == passes.size();
        Planned pl;
        pl.desc.src = cur;
        pl.desc.dst = last ? acc_of(i) : buffer(i, static_cast<int>(q % 2));
        for (int a = 0; a < 3; ++a) pl.desc.n[a] = j.n[a];
        pl.desc.channels = j.channels;
        pl.desc.axis = passes[q].first;
        pl.desc.taps = static_cast<int>(passes[q].second.size());
        pl.desc.accumulate = last && t > 0;
        pl.fw = std::move(passes[q].second);
        cur = pl.desc.dst;
        plan[t][q].push_back(std::move(pl));
      }
    }
  }
  // Every pass's weights in one upload.
  DeviceParams weights(ws);
  std::vector<std::vector<std::vector<size_t>>> fw_at(terms);
  for (size_t t = 0; t < terms; ++t) {
    fw_at[t].resize(plan[t].size());
    for (size_t q = 0; q < plan[t].size(); ++q)
      for (const Planned& pl : plan[t][q]) fw_at[t][q].push_back(weights.add(pl.fw));
  }
  weights.upload();
  auto stream = static_cast<cudaStream_t>(ws.gpu->stream());
  for (size_t t = 0; t < terms; ++t)
    for (size_t q = 0; q < plan[t].size(); ++q) {
      std::vector<Planned>& ps = plan[t][q];
      LaunchPlan lp(kThreads);
      for (const Planned& pl : ps) lp.add(pl.desc.n[0] * pl.desc.n[1] * pl.desc.n[2] * pl.desc.channels);
      if (lp.blocks() == 0) continue;
      std::vector<PassDesc> descs(ps.size());
      for (size_t k = 0; k < ps.size(); ++k) {
        descs[k] = ps[k].desc;
        descs[k].fw = weights.device<float>(fw_at[t][q][k]);
      }
      DeviceParams pd(ws);
      const size_t starts = pd.add(lp.block_start());
      const size_t dd = pd.add(descs);
      pd.upload();
      const unsigned blocks = static_cast<unsigned>(lp.blocks());
      if (q > 0) {
        separable_pass_kernel<float><<<blocks, kThreads, 0, stream>>>(pd.device<PassDesc>(dd),
                                                                     pd.device<int>(starts), lp.jobs());
      } else {
        visit_dev_type(in_type, [&](auto ti) {
          using In = typename decltype(ti)::type;
          if constexpr (std::is_same_v<In, uint8_t> || std::is_same_v<In, int8_t> ||
                        std::is_same_v<In, uint16_t> || std::is_same_v<In, int16_t> ||
                        std::is_same_v<In, uint32_t> || std::is_same_v<In, int32_t> ||
                        std::is_same_v<In, int64_t> || std::is_same_v<In, __half> ||
                        std::is_same_v<In, float>) {
            separable_pass_kernel<In><<<blocks, kThreads, 0, stream>>>(pd.device<PassDesc>(dd),
                                                                      pd.device<int>(starts), lp.jobs());
          } else {
            STOKER_ASSERT(false, "separable_sum_gpu: unsupported input type");
          }
        });
      }
      check_launch("separable_sum_gpu");
    }
  if (float_out) return;
  std::vector<PassDesc> stores;
  LaunchPlan lp(kThreads);
  for (size_t i = 0; i < jobs.size(); ++i) {
    PassDesc d;
    d.src = acc_of(i);
    d.dst = static_cast<float*>(jobs[i].out);
    for (int a = 0; a < 3; ++a) d.n[a] = jobs[i].n[a];
    d.channels = jobs[i].channels;
    stores.push_back(d);
    lp.add(vol[i]);
  }
  if (lp.blocks() == 0) return;
  DeviceParams p(ws);
  const size_t starts = p.add(lp.block_start());
  const size_t dd = p.add(stores);
  p.upload();
  visit_dev_type(out_type, [&](auto to) {
    using Out = typename decltype(to)::type;
    if constexpr (std::is_same_v<Out, uint8_t> || std::is_same_v<Out, int8_t> ||
                  std::is_same_v<Out, uint16_t> || std::is_same_v<Out, int16_t> ||
                  std::is_same_v<Out, uint32_t> || std::is_same_v<Out, int32_t> ||
                  std::is_same_v<Out, int64_t> || std::is_same_v<Out, __half>) {
      store_away_kernel<Out><<<static_cast<unsigned>(lp.blocks()), kThreads, 0, stream>>>(
          p.device<PassDesc>(dd), p.device<int>(starts), lp.jobs());
    } else {
      STOKER_ASSERT(false, "separable_sum_gpu: unsupported output type");
    }
  });
  check_launch("separable_sum_gpu");
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
