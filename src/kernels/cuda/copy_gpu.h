// Batched strided copies on the GPU: what the GPU twins of the operators that move elements
// without arithmetic (subscripts, cat, stack, copy, element_extract, sequence_rearrange, the
// merge after an `if`) queue, every piece of a batch in one launch.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/shape.h"

namespace stoker {
class Workspace;
namespace kernels::cuda {

inline constexpr int kMaxCopyDims = 6;

// out[sum_k o_k * out_stride_k] = in[sum_k o_k * in_stride_k] for o_k in [0, count_k); strides
// in elements, in_stride may be negative (a subscript with a negative step). Made with
// make_copy_job, which merges dimensions that are contiguous in both and drops extents of 1.
struct CopyJob {
  const void* in = nullptr;  // device memory
  void* out = nullptr;       // device memory
  int ndim = 0;
  int64_t count[kMaxCopyDims] = {};
  int64_t in_stride[kMaxCopyDims] = {};
  int64_t out_stride[kMaxCopyDims] = {};
};

// A job over `count` (any number of dimensions); false when, after merging, it still has more
// than kMaxCopyDims dimensions (the caller says so and names the operator).
bool make_copy_job(CopyJob* job, const void* in, void* out, const Shape& count,
                   const std::vector<int64_t>& in_stride, const std::vector<int64_t>& out_stride);
// A dense copy of `n` elements.
CopyJob dense_copy_job(const void* in, void* out, int64_t n);
// Dense row-major strides of `shape`, in elements.
std::vector<int64_t> dense_strides(const Shape& shape);

// All jobs in one launch on the pipeline's stream; elements of `elem_size` bytes (1 to 16).
void strided_copy_gpu(Workspace& ws, size_t elem_size, const std::vector<CopyJob>& jobs);

// Sets `bytes` bytes at `data` (device memory) to zero, queued on the pipeline's stream.
void zero_gpu(Workspace& ws, void* data, size_t bytes);

}  // namespace kernels::cuda
}  // namespace stoker
