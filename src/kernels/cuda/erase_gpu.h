// The GPU twin of kernels::erase (cpu/geometry/erase.h): each sample copied with its boxes
// filled, a whole batch in one launch. Pure data movement: the element type matters only by size.
#pragma once
#include <cstdint>
#include <vector>

#include "core/shape.h"
#include "kernels/cpu/geometry/erase.h"

namespace stoker {
class Workspace;
namespace kernels::cuda {

inline constexpr int kMaxEraseDims = 8;

struct EraseJob {
  const void* in = nullptr;  // device memory
  void* out = nullptr;       // device memory
  Shape shape;               // at most kMaxEraseDims dimensions
  int channel_dim = -1;
  std::vector<EraseBox> boxes;  // clipped to the sample, as for the CPU kernel
  // The fill values as elements of the sample's type (their bytes in the low bytes): one value,
  // or one per channel (indexed along channel_dim).
  std::vector<uint64_t> fill;
};

// elem_size: 1, 2, 4 or 8.
void erase_gpu(Workspace& ws, size_t elem_size, const std::vector<EraseJob>& jobs);

}  // namespace kernels::cuda
}  // namespace stoker
