// The GPU twin of fn.reductions.*: each output element reduced over the sample's reduced axes,
// with the CPU kernels' accumulators (kernels/cpu/math/reduce.h: integer sums wrap in 64 bits,
// float sums and moments in double, NaNs skipped by min and max) and the operator's conversion
// to the output type. A small reduction is one thread per output element, a large one a block.
#pragma once
#include <cstdint>
#include <vector>

#include "core/dtype.h"
#include "core/shape.h"

namespace stoker {
class Workspace;
namespace kernels::cuda {

inline constexpr int kMaxReduceDims = 6;

enum class ReduceKind { kMin, kMax, kSum, kMean, kMeanSquare, kVariance };

struct ReduceJob {
  const void* in = nullptr;
  void* out = nullptr;
  int64_t outputs = 0, n = 0;  // output elements; input elements per output
  int kept_ndim = 0, red_ndim = 0;
  int64_t kept_count[kMaxReduceDims] = {}, kept_stride[kMaxReduceDims] = {};
  int64_t red_count[kMaxReduceDims] = {}, red_stride[kMaxReduceDims] = {};
  const void* mean = nullptr;  // kVariance: one value, or one per output (`mean_n`)
  int64_t mean_n = 0;
};

// False when the kept or the reduced axes still need more than kMaxReduceDims dimensions after
// merging neighbours.
bool make_reduce_job(ReduceJob* job, const void* in, void* out, const Shape& shape,
                     const std::vector<bool>& reduced);

// `in_type`: the elements' type (bool sums and moments read as uint8); `sqrt_result`: rms and
// std_dev; `ddof`: kVariance's divisor is max(n - ddof, 0).
void reduce_gpu(Workspace& ws, ReduceKind kind, DType in_type, DType out_type, DType mean_type,
                int64_t ddof, bool sqrt_result, const std::vector<ReduceJob>& jobs);

}  // namespace kernels::cuda
}  // namespace stoker
