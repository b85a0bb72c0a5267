// The mixed decoders' YCbCr output: decoded RGB uint8 pixels to ITU-R BT.601 studio-range
// YCbCr, with the CPU decoder's float32 arithmetic operation for operation
// (ImageDecoderBase::convert_decoded), so that the values are the CPU's.
#pragma once
#include <cstdint>
#include <vector>

namespace stoker {
class Workspace;
namespace kernels::cuda {

struct YCbCrParams {
  float y[3], cb[3], cr[3];  // the products' factors for R, G, B (cb[0], cr[1], cr[2] subtracted)
  float y0, c0;              // offsets
  bool to_float;             // float output of the 0..1-scaled values, else rounded uint8
};

struct YCbCrJob {
  const uint8_t* in = nullptr;  // RGB
  void* out = nullptr;          // YCbCr, uint8 or float
  int64_t pixels = 0;
};

void ycbcr_gpu(Workspace& ws, const YCbCrParams& p, const std::vector<YCbCrJob>& jobs);

}  // namespace kernels::cuda
}  // namespace stoker
