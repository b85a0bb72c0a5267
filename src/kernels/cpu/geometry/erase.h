// Erase: the input with boxes filled by a constant (per channel where the channel axis is whole).
#pragma once
#include <cstdint>
#include <vector>

#include "core/shape.h"

namespace stoker {
namespace kernels {

// [lo, hi) per axis, inside the sample (callers clip).
struct EraseBox {
  std::vector<int64_t> lo, hi;
};

// Copies `in` to `out`, then fills each box with fill[c] (c: the index along channel_dim; one
// value or channel_dim < 0: fill[0] everywhere). Boxes may overlap.
template <typename T>
void erase(T* out, const T* in, const Shape& shape, const std::vector<EraseBox>& boxes,
           int channel_dim, const std::vector<T>& fill);

}  // namespace kernels
}  // namespace stoker
