// One kernel behind crop, slice, flip, transpose, pad, paste and crop_mirror_normalize: it reads
// a window of an N-d sample (possibly reaching outside it), optionally reversed along some axes,
// writes it with the axes permuted, fills what lies outside the input, and converts the element
// type, optionally through a per-channel affine map. Everything happens in one pass over the
// output, so a fused crop + mirror + normalise + HWC->CHW + cast costs one read of the window.
#pragma once
#include <cstdint>
#include <vector>

#include "core/shape.h"

namespace stoker {
namespace kernels {

struct SliceArgs {
  Shape in_shape;                 // the input's extents
  std::vector<int64_t> anchor;    // per input axis: where the window starts (may be < 0)
  std::vector<int64_t> shape;     // per input axis: the window's extent (>= 0)
  std::vector<bool> flip;         // per input axis: read the window backwards (empty: none)
  std::vector<int> perm;          // output axis k shows input axis perm[k] (empty: identity)
  // The input axis whose index picks the fill value and the affine coefficients (-1: none).
  // Window positions past the input's channels (pad_output) are filled like any outside point.
  int channel_dim = -1;
  std::vector<double> fill;       // per channel, or one value for all; empty: 0
  // out = float(in) * mul[c] + add[c], in float32 (one value: all channels). Empty: out = in,
  // converted. Integer outputs round half to even and saturate (stoker::convert_sat).
  std::vector<float> mul, add;
};

// The output's shape: the window's extents in output axis order. Throws on inconsistent args.
Shape slice_output_shape(const SliceArgs& args);

// Out and In: any element type when Out == In; otherwise Out in {float, float16, uint8_t,
// int8_t} (the conversions the operators offer). `out` holds volume(slice_output_shape(args)).
template <typename Out, typename In>
void slice_flip_normalize(Out* out, const In* in, const SliceArgs& args);

// For tests and benchmarks: whether the SIMD row path (AVX2 + F16C) is in use on this CPU.
bool slice_simd_available();

}  // namespace kernels
}  // namespace stoker
