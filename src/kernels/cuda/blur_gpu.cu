#include "kernels/cuda/blur_gpu.h"

#include <algorithm>
#include <cstring>
#include <memory>

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
constexpr int64_t kChunk = int64_t(kThreads) * kItems;

// One sample's pass along one axis: the data as outer x n x inner, convolved along n.
struct PassDesc {
  const void* src;
  void* dst;
  int64_t volume, n, inner;
  uint32_t window;  // offset of the window in the parameter block
  int taps;
};

__device__ __forceinline__ int64_t reflect101(int64_t i, int64_t n) {
  if (i >= 0 && i < n) return i;  // inside: most taps
  if (n <= 1) return 0;
  const int64_t p = 2 * (n - 1);
  i %= p;
  if (i < 0) i += p;
  return i < n ? i : p - i;
}

template <typename Dst, typename Src>
__global__ void blur_pass(const char* params, const PassDesc* descs, const int* block_start, int n) {
  __shared__ PassDesc d;
  const int s = sample_of_block(block_start, n, blockIdx.x);
  if (threadIdx.x == 0) d = descs[s];
  __syncthreads();
  const Src* src = static_cast<const Src*>(d.src);
  Dst* dst = static_cast<Dst*>(d.dst);
  const float* w = reinterpret_cast<const float*>(params + d.window);
  const int r = d.taps / 2;
  const int64_t line = d.n * d.inner;
  const int64_t base = int64_t(blockIdx.x - block_start[s]) * kChunk;
  for (int it = 0; it < kItems; ++it) {
    const int64_t e = base + it * kThreads + threadIdx.x;
    if (e >= d.volume) return;
    const int64_t o = e / line, rem = e - o * line;
    const int64_t y = rem / d.inner, k = rem - y * d.inner;
    const Src* col = src + o * line + k;
    float acc = 0.0f;
    for (int j = 0; j < d.taps; ++j)
      acc = __fadd_rn(acc, __fmul_rn(w[j], to_float(col[reflect101(y + j - r, d.n) * d.inner])));
    dst[e] = round_sat_dev<Dst>(acc);
  }
}

size_t align16(size_t v) { return (v + 15) & ~size_t(15); }

}  // namespace

bool blur_gpu_supports(DType out, DType in) {
  return in != DType::kBool && (out == in || out == DType::kFloat32);
}

void gaussian_blur_gpu(Workspace& ws, DType out_type, DType in_type, const std::vector<BlurJob>& jobs) {
  STOKER_ASSERT(blur_gpu_supports(out_type, in_type), "gaussian_blur_gpu: unsupported types");
  if (jobs.empty()) return;
  const int nd = static_cast<int>(jobs[0].spatial.size());
  STOKER_ASSERT(nd >= 1 && nd <= 3, "gaussian_blur_gpu: 1 to 3 data axes");
  const int64_t nj = static_cast<int64_t>(jobs.size());
  DeviceParams params(ws);
  // Float intermediates: one buffer per job, two where a middle pass needs ping-pong (nd == 3).
  const int nbuf = nd > 2 ? 2 : nd > 1 ? 1 : 0;
  std::vector<int64_t> vol(nj);
  std::vector<size_t> scratch_off(nj);
  size_t scratch_bytes = 0;
  std::vector<std::vector<uint32_t>> win_off(nj);
  for (int64_t i = 0; i < nj; ++i) {
    const BlurJob& j = jobs[i];
    STOKER_ASSERT(static_cast<int>(j.spatial.size()) == nd && static_cast<int>(j.windows.size()) == nd,
                  "gaussian_blur_gpu: jobs with different numbers of data axes");
    int64_t v = j.planes * j.channels;
    for (int64_t e : j.spatial) v *= e;
    vol[i] = v;
    scratch_off[i] = scratch_bytes;
    scratch_bytes += align16(static_cast<size_t>(std::max<int64_t>(v, 0)) * sizeof(float) * nbuf);
    for (int a = 0; a < nd; ++a) {
      STOKER_ASSERT(j.windows[a].size() % 2 == 1, "gaussian_blur_gpu: even window");
      win_off[i].push_back(static_cast<uint32_t>(params.add(j.windows[a])));
    }
  }
  std::shared_ptr<void> scratch;  // back to the pool after the queued passes, when this returns
  if (nbuf > 0 && scratch_bytes > 0) scratch = ws.gpu->allocate_device(scratch_bytes);
  char* sbase = static_cast<char*>(scratch.get());
  // Per pass p (axis nd - 1 - p) the descriptors of all jobs; pass p reads stage p and writes
  // stage p + 1, where stage 0 is the input, stage nd the output, the rest float buffers.
  auto stage = [&](int64_t i, int st) -> void* {
    if (st == 0) return const_cast<void*>(jobs[i].in);
    if (st == nd) return jobs[i].out;
    // the CPU's ping-pong: stage 1 in buffer 0, stage 2 in buffer 1
    return sbase + scratch_off[i] + static_cast<size_t>(st - 1) * static_cast<size_t>(vol[i]) * sizeof(float);
  };
  std::vector<size_t> descs_off(nd), starts_off(nd);
  std::vector<int64_t> blocks(nd);
  std::vector<int> njobs(nd);
  for (int p = 0; p < nd; ++p) {
    const int a = nd - 1 - p;
    LaunchPlan plan(kChunk);
    std::vector<PassDesc> descs(nj);
    for (int64_t i = 0; i < nj; ++i) {
      const BlurJob& j = jobs[i];
      PassDesc& d = descs[i];
      std::memset(&d, 0, sizeof d);
      d.src = stage(i, p);
      d.dst = stage(i, p + 1);
      d.volume = vol[i] > 0 ? vol[i] : 0;
      d.n = j.spatial[a];
      int64_t inner = j.channels;
      for (int b = a + 1; b < nd; ++b) inner *= j.spatial[b];
      d.inner = inner;
      d.window = win_off[i][a];
      d.taps = static_cast<int>(j.windows[a].size());
      plan.add(d.volume);
    }
    descs_off[p] = params.add(descs);
    starts_off[p] = params.add(plan.block_start());
    blocks[p] = plan.blocks();
    njobs[p] = plan.jobs();
  }
  if (blocks[0] == 0) return;
  params.upload();
  const char* base = params.device<char>(0);
  auto stream = static_cast<cudaStream_t>(ws.gpu->stream());
  visit_dev_type(in_type, [&](auto ti) {
    using In = typename decltype(ti)::type;
    if constexpr (!std::is_same_v<In, BoolByte>) {
      for (int p = 0; p < nd; ++p) {
        const PassDesc* dd = params.device<PassDesc>(descs_off[p]);
        const int* starts = params.device<int>(starts_off[p]);
        const unsigned nb = static_cast<unsigned>(blocks[p]);
        const bool first = p == 0, last = p == nd - 1;
        const bool out_float = out_type == DType::kFloat32;
        if (first && last) {
          if (out_float) blur_pass<float, In><<<nb, kThreads, 0, stream>>>(base, dd, starts, njobs[p]);
          else blur_pass<In, In><<<nb, kThreads, 0, stream>>>(base, dd, starts, njobs[p]);
        } else if (first) {
          blur_pass<float, In><<<nb, kThreads, 0, stream>>>(base, dd, starts, njobs[p]);
        } else if (last) {
          if (out_float) blur_pass<float, float><<<nb, kThreads, 0, stream>>>(base, dd, starts, njobs[p]);
          else blur_pass<In, float><<<nb, kThreads, 0, stream>>>(base, dd, starts, njobs[p]);
        } else {
          blur_pass<float, float><<<nb, kThreads, 0, stream>>>(base, dd, starts, njobs[p]);
        }
        check_launch("gaussian_blur_gpu");
      }
    }
  });
}

}  // namespace stoker::kernels::cuda
