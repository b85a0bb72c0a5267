// The arithmetic of fn.normalize: statistics over a set of reduced axes (two passes, double
// accumulators) and out = (in - mean) * factor + shift with mean and factor broadcast over the
// reduced axes. Statistics of a whole batch are the same sums added over its samples.
#pragma once
#include <cstdint>
#include <vector>

#include "core/shape.h"

namespace stoker {
namespace kernels {

// `shape` with the reduced axes set to 1: the shape of the mean and of the factor.
Shape reduced_shape(const Shape& shape, const std::vector<bool>& reduce);

// Adds the sums of `in` over the reduced axes to `sum` (volume(reduced_shape(...)) values).
template <typename In>
void add_sums(double* sum, const In* in, const Shape& shape, const std::vector<bool>& reduce);

// Adds the sums of (in - mean)^2 over the reduced axes to `sq`.
template <typename In>
void add_squared_deviations(double* sq, const In* in, const Shape& shape,
                            const std::vector<bool>& reduce, const double* mean);

// out = convert((float(in) - mean) * factor + shift), float32 math; integer outputs round half
// to even and saturate.
template <typename Out, typename In>
void normalize_apply(Out* out, const In* in, const Shape& shape, const std::vector<bool>& reduce,
                     const float* mean, const float* factor, float shift);

}  // namespace kernels
}  // namespace stoker
