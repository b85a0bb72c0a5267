#include "kernels/cuda/lz4_gpu.h"

#include <cstring>

#include "core/cuda/cuda_util.h"
#include "kernels/cuda/cuda_common.cuh"
#include "pipeline/gpu_batch.h"
#include "pipeline/gpu_context.h"

namespace stoker::kernels::cuda {
namespace {

constexpr int kWarpsPerBlock = 4;
constexpr unsigned kAll = 0xffffffffu;

// One sequence of an LZ4 block, as lane 0 reads it.
struct Sequence {
  int64_t literals = 0, literal_at = 0, match = 0, distance = 0;
  int64_t next = 0;  // input offset after the sequence
  int state = 0;     // 0: a match follows the literals; 1: the last sequence; 2: damaged
};

__device__ Sequence read_sequence(const uint8_t* in, int64_t size, int64_t ip, int64_t op,
                                  int64_t room) {
  Sequence s;
  s.state = 2;
  s.next = ip;
  if (ip >= size) return s;
  const unsigned token = in[ip++];
  int64_t lit = token >> 4;
  if (lit == 15) {
    unsigned b;
    do {
      if (ip >= size) return s;
      b = in[ip++];
      lit += b;
    } while (b == 255);
  }
  if (lit > size - ip || lit > room - op) return s;
  s.literals = lit;
  s.literal_at = ip;
  ip += lit;
  if (ip == size) {  // the block ends with literals
    s.state = 1;
    s.next = ip;
    return s;
  }
  if (size - ip < 2) return s;
  const int64_t dist = in[ip] | (int64_t(in[ip + 1]) << 8);
  ip += 2;
  int64_t len = (token & 15) + 4;
  if ((token & 15) == 15) {
    unsigned b;
    do {
      if (ip >= size) return s;
      b = in[ip++];
      len += b;
    } while (b == 255);
  }
  if (dist == 0 || dist > op + lit || len > room - op - lit) return s;
  s.match = len;
  s.distance = dist;
  s.state = 0;
  s.next = ip;
  return s;
}

__device__ int64_t shfl(int64_t v) { return __shfl_sync(kAll, v, 0); }

__global__ void lz4_kernel(const Lz4Chunk* chunks, int n, int64_t* status) {
  const int warp = blockIdx.x * kWarpsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x & 31;
  if (warp >= n) return;  // the whole warp leaves together
  const Lz4Chunk c = chunks[warp];
  int64_t ip = 0, op = 0;
  for (;;) {
    Sequence s;
    if (lane == 0) s = read_sequence(c.in, c.in_size, ip, op, c.out_size);
    s.literals = shfl(s.literals);
    s.literal_at = shfl(s.literal_at);
    s.match = shfl(s.match);
    s.distance = shfl(s.distance);
    s.next = shfl(s.next);
    s.state = __shfl_sync(kAll, s.state, 0);
    if (s.state == 2) {
      if (lane == 0) status[warp] = -1 - s.next;
      return;
    }
    for (int64_t k = lane; k < s.literals; k += 32) c.out[op + k] = c.in[s.literal_at + k];
    op += s.literals;
    ip = s.next;
    if (s.state == 1) break;
    __syncwarp();
    // A match reads what is `distance` back: in rounds of at most `distance` bytes, each round
    // reading only bytes written before it.
    const int64_t step = s.distance < 32 ? s.distance : 32;
    for (int64_t base = 0; base < s.match; base += step) {
      const int64_t k = base + lane;
      if (lane < step && k < s.match) c.out[op + k] = c.out[op + k - s.distance];
      __syncwarp();
    }
    op += s.match;
  }
  if (lane == 0) status[warp] = op;
}

}  // namespace

std::vector<int64_t> lz4_inflate_gpu(Workspace& ws, const std::vector<Lz4Chunk>& chunks) {
  std::vector<int64_t> result(chunks.size(), 0);
  if (chunks.empty()) return result;
  const int n = static_cast<int>(chunks.size());
  DeviceParams params(ws);
  const size_t chunks_off = params.add(chunks);
  const size_t status_off = params.add(result);  // room for the statuses, written by the kernel
  params.upload();
  auto stream = static_cast<cudaStream_t>(ws.gpu->stream());
  const unsigned blocks = static_cast<unsigned>((n + kWarpsPerBlock - 1) / kWarpsPerBlock);
  int64_t* status = params.device<int64_t>(status_off);
  lz4_kernel<<<blocks, kWarpsPerBlock * 32, 0, stream>>>(params.device<Lz4Chunk>(chunks_off), n,
                                                         status);
  check_launch("lz4_inflate_gpu");
  std::shared_ptr<void> host = ws.gpu->allocate_pinned(sizeof(int64_t) * chunks.size());
  STOKER_CUDA_CHECK(cudaMemcpyAsync(host.get(), status, sizeof(int64_t) * chunks.size(),
                                    cudaMemcpyDeviceToHost, stream));
  STOKER_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::memcpy(result.data(), host.get(), sizeof(int64_t) * chunks.size());
  return result;
}

}  // namespace stoker::kernels::cuda
