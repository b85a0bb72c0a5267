#include "cuda/test_kernels.h"

#include <cuda_runtime.h>

namespace stoker::testing {

namespace {

__global__ void iota_kernel(uint32_t* dst, size_t n, uint32_t base) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    dst[i] = base + static_cast<uint32_t>(i);
}

__global__ void increment_kernel(uint32_t* dst, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    dst[i] += 1;
}

// %globaltimer counts nanoseconds, independent of the SM clock rate.
__device__ uint64_t global_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void spin_kernel(uint64_t ns) {
  uint64_t start = global_ns();
  while (global_ns() - start < ns) __nanosleep(1000);
}

int blocks_for(size_t n) {
  size_t b = (n + 255) / 256;
  return static_cast<int>(b < 1024 ? (b ? b : 1) : 1024);
}

}  // namespace

void launch_iota(uint32_t* dst, size_t n, uint32_t base, StreamHandle stream) {
  iota_kernel<<<blocks_for(n), 256, 0, static_cast<cudaStream_t>(stream)>>>(dst, n, base);
  STOKER_CUDA_CHECK(cudaGetLastError());
}

void launch_increment(uint32_t* dst, size_t n, StreamHandle stream) {
  increment_kernel<<<blocks_for(n), 256, 0, static_cast<cudaStream_t>(stream)>>>(dst, n);
  STOKER_CUDA_CHECK(cudaGetLastError());
}

void launch_spin(double ms, StreamHandle stream) {
  spin_kernel<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(static_cast<uint64_t>(ms * 1e6));
  STOKER_CUDA_CHECK(cudaGetLastError());
}

}  // namespace stoker::testing
