// The GPU twin of kernels/cpu/geometry/normalize.h: out = convert((float(in) - mean) * factor +
// shift) with mean and factor broadcast over the reduced axes, for a whole batch in one launch;
// and, where mean or stddev are not given, their computation on the device (two passes with
// double accumulators, per sample or over the whole batch), so that no host code reads the data.
//
// The apply step is the CPU's float32 arithmetic exactly. Computed statistics sum in a different
// order than the CPU (atomics), so they may differ from the CPU's in the last bits of a double:
// the outputs then agree within rounding.
#pragma once
#include <cstdint>
#include <vector>

#include "core/dtype.h"
#include "core/shape.h"

namespace stoker {
class Workspace;
namespace kernels::cuda {

inline constexpr int kMaxNormalizeDims = 8;  // after merging neighbouring axes alike

struct NormalizeSample {
  const void* in = nullptr;  // device memory
  void* out = nullptr;       // device memory
  Shape shape;
};

struct NormalizeArgs {
  std::vector<bool> reduce;  // per axis of the input
  bool batch = false;        // computed statistics are the whole batch's
  // Given statistics, per sample, in the shape of the statistics (shape with 1 on reduced axes)
  // flattened; empty: computed.
  std::vector<std::vector<double>> mean, stddev;
  // Both given: the CPU's finished tables per sample (then mean and stddev are not read).
  std::vector<std::vector<float>> mean_f, factor;
  int64_t ddof = 0;
  double epsilon = 0, scale = 1;
  float shift = 0;
};

// Whether the kernels handle these types (any but bool) and this many dimensions after merging.
bool normalize_gpu_supports(DType out, DType in, const Shape& shape, const std::vector<bool>& reduce);

// Queues everything on the pipeline's stream. The caller has checked that each divisor of the
// variance (count - ddof) is positive where stddev is computed.
void normalize_gpu(Workspace& ws, DType out_type, DType in_type,
                   const std::vector<NormalizeSample>& samples, const NormalizeArgs& args);

}  // namespace kernels::cuda
}  // namespace stoker
