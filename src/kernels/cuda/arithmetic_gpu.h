// The GPU twin of arithmetic_generic (ops/math/arithmetic.cc): one to three operands, each a
// device tensor (broadcast NumPy-style) or a scalar constant, converted to the promoted compute
// type and combined element by element as the CPU loop does, a whole batch in one launch.
#pragma once
#include <cstdint>
#include <vector>

#include "core/dtype.h"
#include "kernels/arith_op.h"

namespace stoker {
class Workspace;
namespace kernels::cuda {

inline constexpr int kMaxArithDims = 6;

struct ArithOperand {
  const void* data = nullptr;  // device memory; null for a constant
  DType dtype = DType::kNone;  // of `data`
  uint64_t constant = 0;       // a constant's bits as the compute type
  // Element strides per output dimension (0 where the operand is broadcast); `dense`: the
  // operand has the output's shape, `scalar`: one element for all.
  int64_t stride[kMaxArithDims] = {};
  bool dense = false, scalar = false;
};

struct ArithJob {
  void* out = nullptr;  // device memory
  int ndim = 0;
  int64_t count[kMaxArithDims] = {};
  ArithOperand ops[3];
};

// Builds a job for one sample: `shapes[k]` is operand k's shape (ignored for constants), out
// has `out_shape`. False when the broadcast still needs more than kMaxArithDims dimensions
// after merging those all operands step through alike.
bool make_arith_job(ArithJob* job, void* out, const std::vector<int64_t>& out_shape,
                    const ArithOperand* ops, const std::vector<std::vector<int64_t>>& shapes, int arity);

// Queues the batch. With `check_zero` (integer // or % by a tensor) it waits for the kernel and
// returns the first (sample, flat index) whose divisor is 0, or sample -1 when none is; the
// result there is 0.
struct ZeroDivisor { int64_t sample = -1, index = -1; };
ZeroDivisor arithmetic_gpu(Workspace& ws, ArithOp op, int arity, DType compute,
                           const std::vector<ArithJob>& jobs, bool check_zero);

}  // namespace kernels::cuda
}  // namespace stoker
