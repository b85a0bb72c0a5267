// Copies a strided window of an N-d array, any element type: what tensor subscripts
// (`x[1:-1, ::2, 0]`) read. Steps may be any nonzero number, negative ones reading backwards,
// which the slice kernel (steps of +-1 only) does not cover.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/shape.h"

namespace stoker {
namespace kernels {

// out[o_0, ..., o_{n-1}] = in[start_0 + o_0 * step_0, ..., start_{n-1} + o_{n-1} * step_{n-1}]
// for o_k in [0, count_k), elements of `elem_size` bytes, `out` dense in row-major order.
// Every position read must lie inside `in_shape` (the caller checks; this does not).
void strided_copy(void* out, const void* in, const Shape& in_shape,
                  const std::vector<int64_t>& start, const std::vector<int64_t>& step,
                  const Shape& count, size_t elem_size);

}  // namespace kernels
}  // namespace stoker
