#include "kernels/cuda/erase_gpu.h"

#include <cstring>

#include "core/error.h"
#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/launch_plan.h"
#include "pipeline/gpu_batch.h"
#include "pipeline/gpu_context.h"

namespace stoker::kernels::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kItems = 8;
constexpr int64_t kChunk = int64_t(kThreads) * kItems;

struct EraseDesc {
  const void* in;
  void* out;
  int64_t volume;
  int64_t shape[kMaxEraseDims];
  int ndim, channel_dim, nfill, nboxes;
  uint32_t fill, boxes;  // offsets into the parameter block; a box is lo[ndim] then hi[ndim]
};

template <typename U>
__global__ void erase_kernel(const char* params, const EraseDesc* descs, const int* block_start,
                             int n) {
  __shared__ EraseDesc d;
  const int s = sample_of_block(block_start, n, blockIdx.x);
  if (threadIdx.x == 0) d = descs[s];
  __syncthreads();
  const U* in = static_cast<const U*>(d.in);
  U* out = static_cast<U*>(d.out);
  const uint64_t* fill = reinterpret_cast<const uint64_t*>(params + d.fill);
  const int64_t* boxes = reinterpret_cast<const int64_t*>(params + d.boxes);
  const int64_t base = int64_t(blockIdx.x - block_start[s]) * kChunk;
#pragma unroll 1
  for (int it = 0; it < kItems; ++it) {
    const int64_t idx = base + it * kThreads + threadIdx.x;
    if (idx >= d.volume) return;
    U v = in[idx];
    if (d.nboxes > 0) {
      int64_t coord[kMaxEraseDims];
      int64_t rem = idx;
      for (int k = d.ndim - 1; k >= 0; --k) {
        coord[k] = rem % d.shape[k];
        rem /= d.shape[k];
      }
      bool hit = false;
      for (int b = 0; b < d.nboxes && !hit; ++b) {
        const int64_t* lo = boxes + int64_t(b) * 2 * d.ndim;
        const int64_t* hi = lo + d.ndim;
        bool inside = true;
        for (int k = 0; k < d.ndim; ++k) inside = inside && coord[k] >= lo[k] && coord[k] < hi[k];
        hit = inside;
      }
      if (hit) {
        int64_t c = 0;
        if (d.nfill > 1 && d.channel_dim >= 0) {
          c = coord[d.channel_dim];
          c = c < d.nfill ? c : d.nfill - 1;
        }
        const uint64_t bits = fill[c];
        memcpy(&v, &bits, sizeof(U));
      }
    }
    out[idx] = v;
  }
}

}  // namespace

void erase_gpu(Workspace& ws, size_t elem_size, const std::vector<EraseJob>& jobs) {
  STOKER_ASSERT(elem_size == 1 || elem_size == 2 || elem_size == 4 || elem_size == 8,
                "erase_gpu: bad element size");
  LaunchPlan plan(kChunk);
  DeviceParams params(ws);
  std::vector<EraseDesc> descs(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) {
    const EraseJob& j = jobs[i];
    const int nd = static_cast<int>(j.shape.size());
    STOKER_ASSERT(nd <= kMaxEraseDims, "erase_gpu: too many dimensions");
    STOKER_ASSERT(!j.fill.empty(), "erase_gpu: no fill value");
    STOKER_ASSERT(j.channel_dim < nd, "erase_gpu: bad channel axis");
    EraseDesc& d = descs[i];
    std::memset(&d, 0, sizeof d);
    d.in = j.in;
    d.out = j.out;
    d.ndim = nd;
    d.channel_dim = j.channel_dim;
    d.volume = volume(j.shape);
    for (int k = 0; k < nd; ++k) d.shape[k] = j.shape[k];
    d.nfill = static_cast<int>(j.fill.size());
    d.fill = static_cast<uint32_t>(params.add(j.fill));
    // Only the boxes that cover something (as the CPU kernel skips empty ones).
    std::vector<int64_t> table;
    for (const EraseBox& b : j.boxes) {
      STOKER_ASSERT(static_cast<int>(b.lo.size()) == nd && static_cast<int>(b.hi.size()) == nd,
                    "erase_gpu: box of the wrong rank");
      bool empty = false;
      for (int k = 0; k < nd; ++k) empty = empty || b.hi[k] <= b.lo[k];
      if (empty) continue;
      table.insert(table.end(), b.lo.begin(), b.lo.end());
      table.insert(table.end(), b.hi.begin(), b.hi.end());
      ++d.nboxes;
    }
    if (nd == 0) d.nboxes = 0;
    d.boxes = static_cast<uint32_t>(params.add(table));
    plan.add(d.volume);
  }
  if (plan.blocks() == 0) return;
  const size_t starts_off = params.add(plan.block_start());
  const size_t descs_off = params.add(descs);
  params.upload();
  const char* base = params.device<char>(0);
  const int* starts = params.device<int>(starts_off);
  const EraseDesc* dd = params.device<EraseDesc>(descs_off);
  const int n = plan.jobs();
  auto stream = static_cast<cudaStream_t>(ws.gpu->stream());
  const unsigned blocks = static_cast<unsigned>(plan.blocks());
  switch (elem_size) {
    case 1: erase_kernel<uint8_t><<<blocks, kThreads, 0, stream>>>(base, dd, starts, n); break;
    case 2: erase_kernel<uint16_t><<<blocks, kThreads, 0, stream>>>(base, dd, starts, n); break;
    case 4: erase_kernel<uint32_t><<<blocks, kThreads, 0, stream>>>(base, dd, starts, n); break;
    default: erase_kernel<uint64_t><<<blocks, kThreads, 0, stream>>>(base, dd, starts, n); break;
  }
  check_launch("erase_gpu");
}

}  // namespace stoker::kernels::cuda
