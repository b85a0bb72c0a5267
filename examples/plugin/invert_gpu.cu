// The GPU kernel of fn.custom.invert (invert.cc registers the operator).
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace {
__global__ void invert_kernel(const uint8_t* in, uint8_t* out, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = static_cast<uint8_t>(255 - in[i]);
}
}  // namespace

void custom_invert_u8_gpu(const uint8_t* in, uint8_t* out, int64_t n, void* stream) {
  if (n == 0) return;
  const int threads = 256;
  const int blocks = static_cast<int>(n / threads + 1 < 4096 ? n / threads + 1 : 4096);
  invert_kernel<<<blocks, threads, 0, static_cast<cudaStream_t>(stream)>>>(in, out, n);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) throw std::runtime_error(std::string("custom.invert: ") + cudaGetErrorString(e));
}
