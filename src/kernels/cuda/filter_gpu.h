// The GPU twins of fn.filter's correlation and fn.laplacian's separable sum
// (kernels/cpu/filter/convolution.h) and of equalize (kernels/cpu/color/histogram.h), a whole
// batch per launch. The correlation adds the taps in the CPU kernel's order and grouping (per
// kernel row, its non-zero taps four at a time as (w0 x0 + w1 x1) + (w2 x2 + w3 x3), then one at
// a time), without fused multiply-adds, so the two agree bit for bit; equalize's histograms,
// lookup tables and rounding are the CPU's.
#pragma once
#include <cstdint>
#include <vector>

#include "core/dtype.h"
#include "kernels/cpu/filter/convolution.h"

namespace stoker {
class Workspace;
namespace kernels::cuda {

// One plane (a frame, or a planar channel) of a sample, as 3-D: missing outer axes have extent 1
// and a kernel extent of 1.
struct CorrelateJob {
  const void* in = nullptr;  // device memory: n[0] x n[1] x n[2] x channels
  void* out = nullptr;       // device memory: m[0] x m[1] x m[2] x channels
  int64_t n[3] = {1, 1, 1};  // input extents
  int64_t m[3] = {1, 1, 1};  // output extents
  int64_t K[3] = {1, 1, 1};  // kernel extents
  int64_t s[3] = {0, 0, 0};  // input position of output 0's first tap: -anchor ("same") or 0
  int64_t channels = 1;
  const float* kernel = nullptr;  // device memory, row-major K[0] x K[1] x K[2]
  const void* fill = nullptr;     // device memory: one element of the input type, or null (0)
};
// Input types uint8, int8, uint16, int16, float16, float32; out_type the input's or float32.
void correlate_gpu(Workspace& ws, DType out_type, DType in_type, FilterBorder border,
                   const std::vector<CorrelateJob>& jobs);

// The GPU twin of kernels::separable_sum() (fn.laplacian): one plane as 3-D (missing outer axes
// have extent 1). Each term's passes go innermost axis first through float scratch from the
// pipeline's pool, one batched launch per pass; every output element adds its taps in the CPU's
// order (the running sum of the terms so far, plus (scale * w[j]) * x[j], j = 0, 1, ...), with
// no fused multiply-adds, so the two agree bit for bit. Integer outputs round half away from zero
// and saturate, as on the CPU.
struct SeparableSumJob {
  const void* in = nullptr;  // device memory: n[0] x n[1] x n[2] x channels
  void* out = nullptr;       // device memory, same extents
  int64_t n[3] = {1, 1, 1};
  int64_t channels = 1;
  // Host memory: the sample's terms, each with one window per axis of `n` that the data has
  // (the last terms[t].windows.size() axes of the three).
  const std::vector<SeparableTerm>* terms = nullptr;
};
// Input types uint8, int8, uint16, int16, uint32, int32, int64, float16, float32; out_type the
// input's or float32. Every job has the same number of terms.
void separable_sum_gpu(Workspace& ws, DType out_type, DType in_type,
                       const std::vector<SeparableSumJob>& jobs);

// One channel of one frame: `pixels` uint8 values at in + p * stride (out alike).
struct EqualizeJob {
  const uint8_t* in = nullptr;
  uint8_t* out = nullptr;
  int64_t pixels = 0, stride = 1;
};
void equalize_gpu(Workspace& ws, const std::vector<EqualizeJob>& jobs);

}  // namespace kernels::cuda
}  // namespace stoker
