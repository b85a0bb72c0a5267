// The resampling arguments DALI's resizing operators share (interp_type, min_filter, mag_filter,
// antialias) and how they become kernels::ResampleParams, for resize, random_resized_crop and
// the decoders' fused resize.
#pragma once
#include <algorithm>
#include <string>

#include "kernels/cpu/imgproc/resample.h"
#include "ops/image/image_types.h"
#include "pipeline/operator.h"

namespace stoker {

inline kernels::ResampleFilter to_resample_filter(int64_t interp, const OpSpec& spec, const char* arg) {
  switch (static_cast<InterpType>(interp)) {
    case InterpType::kNN: return kernels::ResampleFilter::kNearest;
    case InterpType::kLinear: return kernels::ResampleFilter::kLinear;
    case InterpType::kCubic: return kernels::ResampleFilter::kCubic;
    case InterpType::kLanczos3: return kernels::ResampleFilter::kLanczos3;
    case InterpType::kTriangular: return kernels::ResampleFilter::kTriangular;
    case InterpType::kGaussian: return kernels::ResampleFilter::kGaussian;
  }
  spec.arg_error(arg, "is not a known interpolation type: " + std::to_string(interp) + ".");
}

// `what` completes "Interpolation ..." in the docs: "of the resize" / "of the fused resize".
inline void add_resample_args(OpSchema& s, const std::string& what) {
  s.arg({.name = "interp_type", .type = ArgType::kInterpType, .default_value = int64_t{1},
         .doc = "Interpolation " + what + ": INTERP_NN, INTERP_LINEAR, INTERP_CUBIC, "
                "INTERP_LANCZOS3, INTERP_TRIANGULAR or INTERP_GAUSSIAN."})
      .arg({.name = "min_filter", .type = ArgType::kInterpType, .optional = true,
            .doc = "Filter when shrinking (default: interp_type)."})
      .arg({.name = "mag_filter", .type = ArgType::kInterpType, .optional = true,
            .doc = "Filter when enlarging (default: interp_type)."})
      .arg({.name = "antialias", .type = ArgType::kBool, .default_value = true,
            .doc = "Widen the filter when shrinking, so that the result does not alias."});
}

// DALI's filters; at the borders, taps outside the image read the edge pixel, as DALI's do
// (checked on a ramp shrunk 2.5x: DALI's values exactly; Pillow's renormalised borders are
// parity='pil').
inline kernels::ResampleParams resample_params(const OpSpec& spec) {
  kernels::ResampleParams p;
  p.min_filter = p.mag_filter = to_resample_filter(spec.get<int64_t>("interp_type"), spec, "interp_type");
  if (spec.has("min_filter")) p.min_filter = to_resample_filter(spec.get<int64_t>("min_filter"), spec, "min_filter");
  if (spec.has("mag_filter")) p.mag_filter = to_resample_filter(spec.get<int64_t>("mag_filter"), spec, "mag_filter");
  p.border = kernels::ResampleBorder::kClamp;
  p.antialias = spec.get<bool>("antialias");
  return p;
}

// The reach of a filter beyond the sample point, in source pixels, when an axis is scaled by
// `scale` source pixels per output pixel: what a window must be widened by so that resampling
// it alone equals resampling it inside the whole image.
inline double resample_reach(const kernels::ResampleParams& p, double scale) {
  auto support = [](kernels::ResampleFilter f) {
    switch (f) {
      case kernels::ResampleFilter::kNearest: return 1.0;
      case kernels::ResampleFilter::kCubic: return 2.0;
      case kernels::ResampleFilter::kLanczos3: return 3.0;
      default: return 1.0;
    }
  };
  double r = std::max(support(p.min_filter), support(p.mag_filter));
  return r * std::max(1.0, scale) + 1.0;
}

}  // namespace stoker
