// fn.reductions' arithmetic: min, max, sum and the moments (mean, mean square, variance) of one
// tensor over a set of its axes. The output holds the kept axes in row-major order (the volume of
// kernels::reduced_shape); outputs are written, not added to.
#pragma once
#include <cstdint>
#include <vector>

#include "core/shape.h"

namespace stoker {
namespace kernels {

// min (max) of the elements that map to each output. An empty reduction gives the type's
// largest (lowest) value, as DALI does; NaNs are skipped, as DALI's comparisons skip them.
template <typename T>
void reduce_min(T* out, const T* in, const Shape& shape, const std::vector<bool>& reduced);
template <typename T>
void reduce_max(T* out, const T* in, const Shape& shape, const std::vector<bool>& reduced);

// Sums accumulated in Acc: int64_t for signed integers, uint64_t for unsigned ones (wrapping
// modulo 2^64 as integer sums do), double for floating point. (bool: reduce its bytes as uint8.)
template <typename Acc, typename T>
void reduce_sum(Acc* out, const T* in, const Shape& shape, const std::vector<bool>& reduced);

enum class Moment {
  kMean,        // sum(x) / n
  kMeanSquare,  // sum(x^2) / n
  kVariance,    // sum((x - mean)^2) / max(n - ddof, 0), the mean given per output
};

// A moment in double precision (not for bool: reduce its bytes as uint8); `mean` (kVariance only) has one value per output. An empty
// reduction gives NaN; a divisor of 0 gives inf (or NaN), as NumPy does.
template <typename T>
void reduce_moment(double* out, const T* in, const Shape& shape, const std::vector<bool>& reduced,
                   Moment moment, const double* mean = nullptr, int64_t ddof = 0);

}  // namespace kernels
}  // namespace stoker
