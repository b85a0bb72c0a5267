// LZ4 block decompression on the GPU, for decoders.inflate: one warp per chunk, the sequence
// headers parsed by one lane, literals and matches copied by the whole warp (a match closer than
// 32 bytes in rounds of its distance, so that every byte read was written before). Bounds are
// checked against both buffers: damaged data stops the chunk, it never reads or writes outside.
#pragma once
#include <cstdint>
#include <vector>

namespace stoker {
class Workspace;
namespace kernels::cuda {

struct Lz4Chunk {
  const uint8_t* in = nullptr;  // device memory: one LZ4 block (no frame header)
  int64_t in_size = 0;
  uint8_t* out = nullptr;       // device memory
  int64_t out_size = 0;         // room for the output
};

// Inflates every chunk on the pipeline's stream and waits for it: per chunk, the bytes written,
// or -1 - the input offset at which the block is damaged (or would overflow out_size).
std::vector<int64_t> lz4_inflate_gpu(Workspace& ws, const std::vector<Lz4Chunk>& chunks);

}  // namespace kernels::cuda
}  // namespace stoker
