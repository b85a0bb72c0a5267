// The resampling arguments DALI's resizing operators share (interp_type, min_filter, mag_filter,
// antialias) and how they become kernels::ResampleParams, for resize, random_resized_crop and
// the decoders' fused resize.
#pragma once
#include <algorithm>
#include <string>

#include "kernels/cpu/imgproc/resample.h"
#include "ops/image/image_types.h"
#include "ops/image/resize_attr.h"
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

// The size arguments of sample i (resize_x / y / z, resize_shorter / longer, size, roi_start /
// roi_end) over `base`, for resize and resize_crop_mirror: from the workspace; or, with
// ws == nullptr, the constants, with placeholders (1) for per-sample tensors, to check which
// arguments were given together before the first batch.
inline ResizeArgs resize_args_for_sample(const OpSpec& spec, const ResizeArgs& base,
                                         const Workspace* ws, int64_t i) {
  ResizeArgs a = base;
  auto opt = [&](const char* n) -> std::optional<float> {
    if (ws) return ws->has_arg(n) ? std::optional<float>(static_cast<float>(ws->scalar_arg(n, i, 0)))
                                  : std::nullopt;
    if (spec.has(n)) return static_cast<float>(spec.get<double>(n));
    if (spec.is_tensor_arg(n)) return 1.0f;
    return std::nullopt;
  };
  auto optl = [&](const char* n) -> std::optional<std::vector<float>> {
    if (ws) {
      if (!ws->has_arg(n)) return std::nullopt;
      std::vector<double> v = ws->list_arg(n, i);
      return std::vector<float>(v.begin(), v.end());
    }
    if (spec.has(n)) return spec.get<std::vector<float>>(n);
    if (spec.is_tensor_arg(n)) return std::vector<float>{1.0f};
    return std::nullopt;
  };
  a.resize_x = opt("resize_x");
  a.resize_y = opt("resize_y");
  a.resize_z = opt("resize_z");
  a.resize_shorter = opt("resize_shorter");
  a.resize_longer = opt("resize_longer");
  a.size = optl("size");
  a.roi_start = optl("roi_start");
  a.roi_end = optl("roi_end");
  return a;
}

// Calls f(Out{}, In{}) for a pair of the types the resampling kernels take (uint8, int16,
// uint16, float32 on either side); `op` names the operator in the internal error for another.
template <typename F>
void visit_resample_types(DType out, DType in, const char* op, F&& f) {
  visit_dtype(in, [&](auto ti) {
    using In = decltype(ti);
    visit_dtype(out, [&](auto to) {
      using Out = decltype(to);
      constexpr auto ok = [](auto t) {
        using T = decltype(t);
        return std::is_same_v<T, uint8_t> || std::is_same_v<T, int16_t> ||
               std::is_same_v<T, uint16_t> || std::is_same_v<T, float>;
      };
      if constexpr (ok(In{}) && ok(Out{})) f(Out{}, In{});
      else fail(ErrorKind::kInternal, std::string(op) + ": unsupported type pair");
    });
  });
}

// Resamples the `frames` HWC frames (ih x iw x c) of sample i of `in` into those (oh x ow x c) of
// sample i of `out` with `p`.
inline void resample_frames(const Batch& in, Batch& out, int64_t i, int64_t frames, int64_t ih,
                            int64_t iw, int64_t oh, int64_t ow, int64_t c,
                            const kernels::ResampleParams& p, const char* op) {
  visit_resample_types(out.dtype(), in.dtype(), op, [&](auto to, auto ti) {
    using Out = decltype(to);
    using In = decltype(ti);
    for (int64_t f = 0; f < frames; ++f) {
      ImageView<const In> src(in.data<In>(i) + f * ih * iw * c, ih, iw, c);
      ImageView<Out> dst(out.data<Out>(i) + f * oh * ow * c, oh, ow, c);
      kernels::resample(dst, src, p);
    }
  });
}

// The same for `frames` DHWC volumes (id x ih x iw x c into od x oh x ow x c) over the depth
// window [z0, z1).
inline void resample_volumes(const Batch& in, Batch& out, int64_t i, int64_t frames, int64_t id,
                             int64_t ih, int64_t iw, int64_t od, int64_t oh, int64_t ow, int64_t c,
                             const kernels::ResampleParams& p, double z0, double z1,
                             const char* op) {
  visit_resample_types(out.dtype(), in.dtype(), op, [&](auto to, auto ti) {
    using Out = decltype(to);
    using In = decltype(ti);
    for (int64_t f = 0; f < frames; ++f)
      kernels::resample_volume(out.data<Out>(i) + f * od * oh * ow * c, od, oh, ow,
                               in.data<In>(i) + f * id * ih * iw * c, id, ih, iw, c, p, z0, z1);
  });
}

// The sizing arguments resize and tensor_resize share; `axes` says which axes their lists
// follow ("(H, W), or (D, H, W) for volumes", "per axis").
inline void add_resize_sizing_args(OpSchema& s, const std::string& axes) {
  s.arg({.name = "max_size", .type = ArgType::kFloatList, .optional = true,
         .doc = "Upper limit of the output extents (one value, or one per axis)."})
      .arg({.name = "mode", .type = ArgType::kString, .optional = true,
            .doc = "How the size is applied: 'default', 'stretch', 'not_smaller' or 'not_larger'.",
            .choices = {"default", "stretch", "not_smaller", "not_larger"}})
      .arg({.name = "subpixel_scale", .type = ArgType::kBool, .default_value = true,
            .doc = "Keep the exact (unrounded) scale, adjusting the source window, rather than "
                   "stretching to whole output pixels."})
      .arg({.name = "roi_start", .type = ArgType::kFloatList, .optional = true,
            .doc = "Start of the source region " + axes + "; absolute, or relative with "
                   "roi_relative.", .tensor = true})
      .arg({.name = "roi_end", .type = ArgType::kFloatList, .optional = true,
            .doc = "End of the source region; a start above the end flips that axis.", .tensor = true})
      .arg({.name = "roi_relative", .type = ArgType::kBool, .default_value = false,
            .doc = "roi_start and roi_end are fractions of the input size."});
}

// DALI's GPU hints that resize and tensor_resize accept.
inline void add_resize_hint_args(OpSchema& s) {
  s.arg({.name = "minibatch_size", .type = ArgType::kInt, .default_value = int64_t{32},
         .doc = "Accepted for DALI compatibility (a GPU batching hint).", .min = 1})
      .arg({.name = "temp_buffer_hint", .type = ArgType::kInt, .default_value = int64_t{0},
            .doc = "Accepted for DALI compatibility; scratch memory is sized by use.", .min = 0});
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
