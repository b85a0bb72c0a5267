#include "kernels/cuda/cast_gpu.h"

#include "kernels/cuda/elementwise.cuh"
#include "kernels/cuda/launch_plan.h"
#include "pipeline/gpu_batch.h"
#include "pipeline/gpu_context.h"

namespace stoker::kernels::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kItems = 8;
constexpr int64_t kChunk = int64_t(kThreads) * kItems;

struct CastDesc {
  const void* in;
  void* out;
  int64_t n;
};

template <typename Out, typename In>
__device__ __forceinline__ Out cast_one(In v) {
  if constexpr (std::is_same_v<Out, In>) {
    return v;
  } else if constexpr (std::is_same_v<Out, BoolByte>) {
    // core/cast_value.h: floats are rounded half away from zero before the test, NaN is
    // true; integers are tested as they are.
    if constexpr (std::is_same_v<In, __half> || std::is_floating_point_v<In>) {
      double d;
      if constexpr (std::is_same_v<In, __half>) d = static_cast<double>(__half2float(v));
      else d = static_cast<double>(v);
      return BoolByte{static_cast<uint8_t>((d != d || round(d) != 0.0) ? 1 : 0)};
    } else {
      return BoolByte{static_cast<uint8_t>(v != 0 ? 1 : 0)};
    }
  } else if constexpr (std::is_same_v<In, BoolByte>) {
    const int b = v.v != 0 ? 1 : 0;
    if constexpr (std::is_same_v<Out, __half>) return __float2half_rn(static_cast<float>(b));
    else return static_cast<Out>(b);
  } else if constexpr (std::is_integral_v<Out> &&
                       (std::is_same_v<In, __half> || std::is_floating_point_v<In>)) {
    // As cast_value.h: round half away from zero in double (exact), then saturate; NaN -> 0.
    double d;
    if constexpr (std::is_same_v<In, __half>) d = static_cast<double>(__half2float(v));
    else d = static_cast<double>(v);
    return convert_sat_dev<Out>(round(d));
  } else {
    return convert_sat_dev<Out>(v);
  }
}

template <typename Out, typename In>
__global__ void cast_kernel(const CastDesc* descs, const int* block_start, int n) {
  const int s = sample_of_block(block_start, n, blockIdx.x);
  const CastDesc d = descs[s];
  const In* in = static_cast<const In*>(d.in);
  Out* out = static_cast<Out*>(d.out);
  const int64_t base = int64_t(blockIdx.x - block_start[s]) * kChunk;
#pragma unroll
  for (int it = 0; it < kItems; ++it) {
    const int64_t k = base + it * kThreads + threadIdx.x;
    if (k >= d.n) return;
    out[k] = cast_one<Out>(in[k]);
  }
}

}  // namespace

void cast_gpu(Workspace& ws, DType out_type, DType in_type, const std::vector<CastJob>& jobs) {
  LaunchPlan plan(kChunk);
  std::vector<CastDesc> descs(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    descs[i] = CastDesc{jobs[i].in, jobs[i].out, jobs[i].n};
    plan.add(jobs[i].n);
  }
  if (plan.blocks() == 0) return;
  DeviceParams params(ws);
  const size_t starts_off = params.add(plan.block_start());
  const size_t descs_off = params.add(descs);
  params.upload();
  const int* starts = params.device<int>(starts_off);
  const CastDesc* dd = params.device<CastDesc>(descs_off);
  const int n = plan.jobs();
  auto stream = static_cast<cudaStream_t>(ws.gpu->stream());
  const unsigned blocks = static_cast<unsigned>(plan.blocks());
  visit_dev_type(in_type, [&](auto ti) {
    using In = typename decltype(ti)::type;
    visit_dev_type(out_type, [&](auto to) {
      using Out = typename decltype(to)::type;
      cast_kernel<Out, In><<<blocks, kThreads, 0, stream>>>(dd, starts, n);
    });
  });
  check_launch("cast_gpu");
}

}  // namespace stoker::kernels::cuda
