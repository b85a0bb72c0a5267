// The GPU twins of the spectral audio kernels (kernels/cpu/audio/spectral.h), a whole batch per
// launch: preemphasis, spectrogram (framing and windowing, cuFFT's batched real FFT, |X|^power
// in either layout), the mel filter bank and the DCT of mfcc (small matrix products), decibels
// (a per-sample max, then the logarithm) and the non-silent region (windowed power, per-sample
// max, first and last crossing), all on the pipeline's stream without synchronisation.
//
// The products and sums add their terms in the CPU kernels' order with no fused multiply-adds,
// so the filter bank, the DCT, preemphasis and the power moving sums give the CPU's values bit
// for bit (given the same inputs); the FFT (cuFFT against pocketfft) and the logarithm (CUDA's
// log2f, 1 ulp) differ by float rounding.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "kernels/cpu/audio/spectral.h"

namespace stoker {
class Workspace;
namespace kernels::cuda {

// ---- preemphasis: one flat signal per sample.
struct PreemphasisJob {
  const void* in = nullptr;  // device memory, n elements of the input type
  void* out = nullptr;       // device memory, n elements of the output type
  int64_t n = 0;
  float coeff = 0.97f;
};
// Types: any numeric type but float16 and bool, on either side (as the CPU kernel).
void preemphasis_gpu(Workspace& ws, DType out_type, DType in_type,
                     audio::PreemphasisBorder border, const std::vector<PreemphasisJob>& jobs);

// ---- resampling (audio_resample): a Kaiser-windowed sinc with libsoxr's passband, stopband and
// rejection for the same quality (see resample_gpu in audio_gpu.cu), interleaved channels.
struct ResampleJob {
  const void* in = nullptr;  // device memory, in_frames x channels of the input type
  void* out = nullptr;       // device memory, out_frames x channels of the output type
  int64_t in_frames = 0, out_frames = 0;
  int channels = 1;
  double in_rate = 1, out_rate = 1;  // output frame j is at input frame j * in_rate / out_rate
};
// Types: int8, uint8, int16, uint16, int32, uint32 and float32 on either side, integers standing
// for -1..1 as codecs/audio/pcm.h converts them. `quality` (0..100) picks the filter as
// codecs::audio::resampler_recipe picks libsoxr's recipe.
void resample_gpu(Workspace& ws, DType out_type, DType in_type, double quality,
                  const std::vector<ResampleJob>& jobs);

// ---- spectrogram
struct SpectrogramJob {
  const float* in = nullptr;  // device memory, n samples
  float* out = nullptr;       // device memory, [nb, frames] ("ft") or [frames, nb] ("tf")
  int64_t n = 0;
  int64_t frames = 0;
};
// The FFT plans of one operator (cuFFT plans per (nfft, frames per transform), bound to the
// pipeline's stream); an opaque handle the operator keeps, created on first use, destroyed with
// it. `op` names the operator in errors (cuFFT missing, cuFFT failing).
void spectrogram_gpu(Workspace& ws, std::shared_ptr<void>& plans, const std::string& op,
                     const audio::SpectrogramParams& p, const std::vector<float>& window,
                     const std::vector<SpectrogramJob>& jobs);

// ---- products with a small matrix along one axis: out[o, k, t] = sum_j m[k, j] in[o, j, t]
// over j in the row's range [first[k], first[k] + count[k]), added in order of j. The mel filter
// bank (a band of bins per filter) and the DCT of mfcc (every j) are both such products.
struct BandMatrix {
  std::vector<int64_t> first, count;  // per row (output index k)
  std::vector<int64_t> offset;        // per row: where its count weights start in `weights`
  std::vector<float> weights;
  int64_t n = 0;                      // the input extent of the axis
};
struct MatrixJob {
  const float* in = nullptr;  // device memory, [outer, n, inner]
  float* out = nullptr;       // device memory, [outer, rows, inner]
  int64_t outer = 0, inner = 0;
  int matrix = 0;             // index into the launch's matrices
};
void band_matrix_gpu(Workspace& ws, const std::vector<const BandMatrix*>& matrices,
                     const std::vector<MatrixJob>& jobs);

// ---- decibels: out = multiplier * log10(max(min_ratio, in / reference)), reference <= 0
// meaning each sample's largest value (at least 0; NaNs passed over), as audio::to_decibels.
struct DecibelsJob {
  const float* in = nullptr;
  float* out = nullptr;
  int64_t n = 0;
};
void to_decibels_gpu(Workspace& ws, float multiplier, double reference, float min_ratio,
                     const std::vector<DecibelsJob>& jobs);

// ---- non-silent region of 1-D signals; begin and length are int32 scalars in device memory.
struct NonsilentJob {
  const void* in = nullptr;  // device memory, n elements of the input type
  int64_t n = 0;
  int32_t* begin = nullptr;
  int32_t* length = nullptr;
};
// Any numeric type but float16 and bool. Every sample must have n < 2^31.
void nonsilent_region_gpu(Workspace& ws, DType type, const audio::NonsilentParams& p,
                          const std::vector<NonsilentJob>& jobs);

}  // namespace kernels::cuda
}  // namespace stoker
