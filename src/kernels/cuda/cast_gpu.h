// The GPU twin of fn.cast: every element converted as core/convert.h's convert_sat does (round
// half to even, saturate, NaN to 0), a whole batch in one launch.
#pragma once
#include <cstdint>
#include <vector>

#include "core/dtype.h"

namespace stoker {
class Workspace;
namespace kernels::cuda {

struct CastJob {
  const void* in = nullptr;  // device memory
  void* out = nullptr;       // device memory
  int64_t n = 0;             // elements
};

// Any pair of stoker's element types.
void cast_gpu(Workspace& ws, DType out_type, DType in_type, const std::vector<CastJob>& jobs);

}  // namespace kernels::cuda
}  // namespace stoker
