#include "kernels/cuda/copy_gpu.h"

#include <algorithm>

#include "core/cuda/cuda_util.h"
#include "core/error.h"
#include "kernels/cuda/cuda_common.cuh"
#include "kernels/cuda/launch_plan.h"
#include "pipeline/gpu_batch.h"
#include "pipeline/gpu_context.h"

namespace stoker::kernels::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kItems = 4;
constexpr int64_t kChunk = int64_t(kThreads) * kItems;

template <int kBytes> struct alignas(kBytes) Elem { unsigned char b[kBytes]; };

template <typename E>
__global__ void copy_kernel(const CopyJob* jobs, const int* block_start, int n) {
  const int s = sample_of_block(block_start, n, blockIdx.x);
  const CopyJob& j = jobs[s];
  int64_t total = 1;
  for (int k = 0; k < j.ndim; ++k) total *= j.count[k];
  const E* in = static_cast<const E*>(j.in);
  E* out = static_cast<E*>(j.out);
  const int64_t base = int64_t(blockIdx.x - block_start[s]) * kChunk;
  for (int it = 0; it < kItems; ++it) {
    int64_t flat = base + it * kThreads + threadIdx.x;
    if (flat >= total) return;
    int64_t src = 0, dst = 0;
    for (int k = j.ndim - 1; k >= 0; --k) {
      const int64_t c = j.count[k];
      const int64_t o = k == 0 ? flat : flat % c;
      flat = k == 0 ? 0 : flat / c;
      src += o * j.in_stride[k];
      dst += o * j.out_stride[k];
    }
    out[dst] = in[src];
  }
}

// Wider elements where the innermost dimension is contiguous in both and everything is aligned
// to them: 16-byte moves for uint8 rows.
size_t widen(CopyJob* j, size_t elem) {
  if (j->ndim == 0) return elem;
  const int last = j->ndim - 1;
  if (j->in_stride[last] != 1 || j->out_stride[last] != 1) return elem;
  for (size_t w = 16; w > elem; w /= 2) {
    const int64_t f = static_cast<int64_t>(w / elem);
    bool ok = j->count[last] % f == 0 && reinterpret_cast<uintptr_t>(j->in) % w == 0 &&
              reinterpret_cast<uintptr_t>(j->out) % w == 0;
    for (int k = 0; k < last && ok; ++k) ok = j->in_stride[k] % f == 0 && j->out_stride[k] % f == 0;
    if (!ok) continue;
    j->count[last] /= f;
    for (int k = 0; k < last; ++k) {
      j->in_stride[k] /= f;
      j->out_stride[k] /= f;
    }
    return w;
  }
  return elem;
}

}  // namespace

std::vector<int64_t> dense_strides(const Shape& shape) {
  std::vector<int64_t> st(shape.size(), 1);
  for (int k = static_cast<int>(shape.size()) - 2; k >= 0; --k) st[k] = st[k + 1] * shape[k + 1];
  return st;
}

bool make_copy_job(CopyJob* job, const void* in, void* out, const Shape& count,
                   const std::vector<int64_t>& in_stride, const std::vector<int64_t>& out_stride) {
  STOKER_ASSERT(in_stride.size() == count.size() && out_stride.size() == count.size(),
                "make_copy_job: strides and count differ in rank");
  *job = CopyJob{};
  job->in = in;
  job->out = out;
  std::vector<int64_t> c, si, so;
  for (size_t k = 0; k < count.size(); ++k) {
    if (count[k] == 0) {  // nothing to copy
      job->ndim = 1;
      job->count[0] = 0;
      return true;
    }
    if (count[k] == 1) continue;
    if (!c.empty() && si.back() == in_stride[k] * count[k] && so.back() == out_stride[k] * count[k]) {
      c.back() *= count[k];  // the previous dimension steps over exactly this one: merge
      si.back() = in_stride[k];
      so.back() = out_stride[k];
      continue;
    }
    c.push_back(count[k]);
    si.push_back(in_stride[k]);
    so.push_back(out_stride[k]);
  }
  if (c.size() > static_cast<size_t>(kMaxCopyDims)) return false;
  job->ndim = static_cast<int>(c.size());
  for (size_t k = 0; k < c.size(); ++k) {
    job->count[k] = c[k];
    job->in_stride[k] = si[k];
    job->out_stride[k] = so[k];
  }
  return true;
}

CopyJob dense_copy_job(const void* in, void* out, int64_t n) {
  CopyJob j;
  j.in = in;
  j.out = out;
  j.ndim = 1;
  j.count[0] = n;
  j.in_stride[0] = j.out_stride[0] = 1;
  return j;
}

void strided_copy_gpu(Workspace& ws, size_t elem_size, const std::vector<CopyJob>& jobs) {
  STOKER_ASSERT(elem_size >= 1 && elem_size <= 16 && (elem_size & (elem_size - 1)) == 0,
                "strided_copy_gpu: element size must be a power of two up to 16");
  // One launch per element width the jobs end up with (usually one).
  std::vector<CopyJob> by_width[5];
  for (CopyJob j : jobs) {
    size_t w = widen(&j, elem_size);
    int64_t total = 1;
    for (int k = 0; k < j.ndim; ++k) total *= j.count[k];
    if (total == 0) continue;
    int idx = 0;
    while ((size_t(1) << idx) < w) ++idx;
    by_width[idx].push_back(j);
  }
  auto stream = static_cast<cudaStream_t>(ws.gpu->stream());
  for (int idx = 0; idx < 5; ++idx) {
    const std::vector<CopyJob>& js = by_width[idx];
    if (js.empty()) continue;
    LaunchPlan plan(kChunk);
    for (const CopyJob& j : js) {
      int64_t total = 1;
      for (int k = 0; k < j.ndim; ++k) total *= j.count[k];
      plan.add(total);
    }
    DeviceParams params(ws);
    const size_t starts_off = params.add(plan.block_start());
    const size_t jobs_off = params.add(js);
    params.upload();
    const int* starts = params.device<int>(starts_off);
    const CopyJob* dj = params.device<CopyJob>(jobs_off);
    const unsigned blocks = static_cast<unsigned>(plan.blocks());
    const int n = plan.jobs();
    switch (idx) {
      case 0: copy_kernel<Elem<1>><<<blocks, kThreads, 0, stream>>>(dj, starts, n); break;
      case 1: copy_kernel<Elem<2>><<<blocks, kThreads, 0, stream>>>(dj, starts, n); break;
      case 2: copy_kernel<Elem<4>><<<blocks, kThreads, 0, stream>>>(dj, starts, n); break;
      case 3: copy_kernel<Elem<8>><<<blocks, kThreads, 0, stream>>>(dj, starts, n); break;
      default: copy_kernel<Elem<16>><<<blocks, kThreads, 0, stream>>>(dj, starts, n); break;
    }
    check_launch("strided_copy_gpu");
  }
}

void zero_gpu(Workspace& ws, void* data, size_t bytes) {
  if (bytes == 0) return;
  STOKER_CUDA_CHECK(cudaMemsetAsync(data, 0, bytes, static_cast<cudaStream_t>(ws.gpu->stream())));
}

}  // namespace stoker::kernels::cuda
