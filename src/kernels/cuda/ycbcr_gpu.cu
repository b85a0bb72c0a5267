#include "kernels/cuda/ycbcr_gpu.h"

#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/launch_plan.h"
#include "pipeline/gpu_batch.h"
#include "pipeline/gpu_context.h"

namespace stoker::kernels::cuda {
namespace {

constexpr int kThreads = 256;

// The CPU's round_sat: halves away from zero, then clamped to 0..255.
__device__ __forceinline__ uint8_t round_sat_u8(float v) {
  const float t = truncf(v);
  float r = __fadd_rn(t, truncf(__fmul_rn(2.0f, __fsub_rn(v, t))));
  r = fminf(fmaxf(r, 0.0f), 255.0f);
  return static_cast<uint8_t>(r);
}

__global__ void ycbcr_kernel(const YCbCrJob* jobs, const int* block_start, int n, YCbCrParams p) {
  const int s = sample_of_block(block_start, n, blockIdx.x);
  const YCbCrJob& j = jobs[s];
  const int64_t k = int64_t(blockIdx.x - block_start[s]) * kThreads + threadIdx.x;
  if (k >= j.pixels) return;
  const uint8_t* px = j.in + 3 * k;
  float r = px[0], g = px[1], b = px[2];
  if (p.to_float) {
    constexpr float kNorm = 1.0f / 255.0f;
    r = __fmul_rn(r, kNorm), g = __fmul_rn(g, kNorm), b = __fmul_rn(b, kNorm);
  }
  // y = r*yr + g*yg + b*yb + y0 and the others, left to right, each operation rounded.
  const float y = __fadd_rn(__fadd_rn(__fadd_rn(__fmul_rn(r, p.y[0]), __fmul_rn(g, p.y[1])),
                                      __fmul_rn(b, p.y[2])), p.y0);
  const float cb = __fadd_rn(__fadd_rn(__fsub_rn(__fmul_rn(-r, p.cb[0]), __fmul_rn(g, p.cb[1])),
                                       __fmul_rn(b, p.cb[2])), p.c0);
  const float cr = __fadd_rn(__fsub_rn(__fsub_rn(__fmul_rn(r, p.cr[0]), __fmul_rn(g, p.cr[1])),
                                       __fmul_rn(b, p.cr[2])), p.c0);
  if (p.to_float) {
    float* o = static_cast<float*>(j.out) + 3 * k;
    o[0] = y, o[1] = cb, o[2] = cr;
  } else {
    uint8_t* o = static_cast<uint8_t*>(j.out) + 3 * k;
    o[0] = round_sat_u8(y), o[1] = round_sat_u8(cb), o[2] = round_sat_u8(cr);
  }
}

}  // namespace

void ycbcr_gpu(Workspace& ws, const YCbCrParams& p, const std::vector<YCbCrJob>& jobs) {
  LaunchPlan plan(kThreads);
  for (const YCbCrJob& j : jobs) plan.add(j.pixels);
  if (plan.blocks() == 0) return;
  DeviceParams params(ws);
  const size_t starts_off = params.add(plan.block_start());
  const size_t jobs_off = params.add(jobs);
  params.upload();
  ycbcr_kernel<<<static_cast<unsigned>(plan.blocks()), kThreads, 0,
                 static_cast<cudaStream_t>(ws.gpu->stream())>>>(
      params.device<YCbCrJob>(jobs_off), params.device<int>(starts_off), plan.jobs(), p);
  check_launch("ycbcr_gpu");
}

}  // namespace stoker::kernels::cuda
