// What the random operators share: the `shape` / `dtype` / `seed` arguments and the output shape
// of a sample (from a shape_like input, the `shape` argument or its per-sample tensor, or one
// value).
#pragma once
#include <cmath>
#include <string>

#include "pipeline/operator.h"

namespace stoker {

inline void random_common_args(OpSchema& s, bool with_dtype = true) {
  s.arg({.name = "shape", .type = ArgType::kIntList, .optional = true,
         .doc = "Shape of each sample. Without it (and without a shape_like input), each sample is "
                "one value.",
         .tensor = true});
  if (with_dtype)
    s.arg({.name = "dtype", .type = ArgType::kDType, .optional = true,
           .doc = "Output data type; values are rounded and clamped to it."});
  s.arg({.name = "seed", .type = ArgType::kInt, .default_value = int64_t{-1},
         .doc = "Random seed; -1 takes it from the pipeline's seed and this operator's place in the graph."});
}

// The shape of sample i: that of the shape_like input (input `like`, where there is one), else
// the `shape` argument (a constant or a per-sample tensor), else () -- one value.
inline Shape random_sample_shape(const Workspace& ws, const OpSpec& spec, int64_t i, int like) {
  if (static_cast<int>(ws.inputs.size()) > like) return ws.input(like).shape(i);
  Shape s;
  for (double d : ws.list_arg("shape", i, {})) {
    if (!(d >= 0) || d != std::floor(d))
      spec.arg_error("shape", "must be non-negative integers, got " + std::to_string(d) +
                                  " in the shape of sample " + std::to_string(i) + ".");
    // Past 2^62 the conversion to an integer is undefined (2^63 became -2^63); no memory
    // holds such a sample. Smaller extents whose product is too big fail at allocation.
    if (d > 4611686018427387904.0)
      spec.arg_error("shape", "must be at most 2^62 per axis, got " + std::to_string(d) +
                                  " in the shape of sample " + std::to_string(i) + ".");
    s.push_back(static_cast<int64_t>(d));
  }
  return s;
}

// The output of an operator that draws values of `dtype` into samples shaped like its
// shape_like input 0 (one per sample of that input) or by `shape` (one per sample of the batch).
inline OutputDesc random_output_desc(const Workspace& ws, const OpSpec& spec, DType dtype) {
  int64_t n = ws.inputs.empty() ? ws.batch_size : static_cast<int64_t>(ws.input(0).size());
  OutputDesc d;
  d.dtype = dtype;
  if (ws.inputs.empty() && ws.has_arg("shape")) d.size_arg = "shape";
  for (int64_t i = 0; i < n; ++i) d.shapes.push_back(random_sample_shape(ws, spec, i, 0));
  return d;
}

}  // namespace stoker
