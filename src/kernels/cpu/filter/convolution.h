// Convolution kernels behind fn.filter and fn.laplacian, on dense arrays of 1 to 3 spatial axes
// (outermost first) with interleaved channels (HW, HWC, DHWC, ...; the operator loops over frames
// and planar channels).
//
// - correlate(): an arbitrary kernel, applied as a correlation (not flipped), with an anchor, five
//   border rules or "valid" output extents. The rows the kernel reads are first widened along the
//   innermost axis into float lines with their border already applied, so the inner loop is one
//   contiguous multiply-add per non-zero tap over a whole output row. Integer outputs round half
//   to even and saturate (OpenCV's saturate_cast, which DALI's CPU filter goes through).
// - separable_sum(): a sum of separable terms, each a 1-D window per axis and a scale, with a
//   reflect-101 border: the Laplacian's partial derivatives. The innermost axis goes first, each
//   pass through float; size-1 windows are folded into the scale; the last pass of each term adds
//   into one float accumulator. Integer outputs round half away from zero and saturate (DALI's
//   ConvertSat).
#pragma once
#include <cstdint>
#include <vector>

namespace stoker {
namespace kernels {

enum class FilterBorder {
  kReflect101,   // dcb|abcdefghi|hgf
  kReflect1001,  // cba|abcdefghi|ihg
  kWrap,         // ghi|abcdefghi|abc
  kClamp,        // aaa|abcdefghi|iii
  kConstant,     // a fill value
};

// Index i (any integer, any number of bounces) mapped into [0, n) by the border rule; -1 where
// kConstant reads the fill value. n >= 1.
int64_t filter_border_index(int64_t i, int64_t n, FilterBorder border);

struct CorrelateArgs {
  std::vector<int64_t> kernel_shape;  // per spatial axis, outermost first, each >= 1
  std::vector<int64_t> anchor;        // per spatial axis, in [0, kernel extent); unused when valid
  bool valid = false;                 // output extents n - K + 1 (every tap inside the input)
  FilterBorder border = FilterBorder::kReflect101;
  float fill = 0;                     // kConstant's value
};

// The output's spatial extents: the input's ("same") or n - K + 1 ("valid", may be < 1: the caller
// refuses that).
std::vector<int64_t> correlate_output_extents(const std::vector<int64_t>& spatial,
                                              const CorrelateArgs& args);

// out[o] = sum_k kernel[k] * in[o - anchor + k] (same) or sum_k kernel[k] * in[o + k] (valid), per
// channel. `kernel` is row-major with args.kernel_shape; `in` has extents `spatial` + (channels),
// `out` the extents correlate_output_extents() gives + (channels). `scratch` is reused between calls.
// Instantiated for In in {uint8, int8, uint16, int16, float16, float} and Out in {In, float}.
template <typename Out, typename In>
void correlate(Out* out, const In* in, const std::vector<int64_t>& spatial, int64_t channels,
               const float* kernel, const CorrelateArgs& args, std::vector<float>* scratch);

// One term of separable_sum(): windows[a] for spatial axis a (outermost first), each of odd size
// and centred; the term is scale * (in correlated with every window in turn).
struct SeparableTerm {
  std::vector<std::vector<float>> windows;
  float scale = 1;
};

// out = sum of the terms, reflect-101 border, float intermediate. Shapes as correlate()'s "same".
// Instantiated for In in {uint8, int8, uint16, int16, uint32, int32, int64, float16, float} and Out
// in {In, float}.
template <typename Out, typename In>
void separable_sum(Out* out, const In* in, const std::vector<int64_t>& spatial, int64_t channels,
                   const std::vector<SeparableTerm>& terms, std::vector<float>* scratch);

// OpenCV's getDerivKernels windows (which DALI's laplacian uses): the smoothing window of size n
// is the binomial row C(n-1, k) ([1] for n = 1); the second-derivative window of size n >= 3 is
// the binomial row of size n - 2 convolved with [1, -2, 1].
std::vector<float> binomial_window(int size);
std::vector<float> second_derivative_window(int size);

}  // namespace kernels
}  // namespace stoker
