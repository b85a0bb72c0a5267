// Audio decoding (libsndfile) and resampling (libsoxr): the one interface the audio operators
// (decoders.audio, audio_resample, readers.nemo_asr) use.
//
// Like the image codecs: peek() reads the header and checks it against AudioLimits before any
// allocation, the caller allocates the output from the shape, and decode() writes into it.
// Errors are Error(kDecode) for bad or unsupported data; the caller adds the operator and the
// file. Without libsndfile / libsoxr the functions exist and throw Error(kUnsupported) saying
// so (`sndfile_built_in()` / `soxr_built_in()` tell beforehand).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/dtype.h"

namespace stoker::codecs::audio {

struct AudioInfo {
  int64_t frames = 0;       // samples per channel
  int channels = 0;
  int sample_rate = 0;      // Hz
  std::string format;       // "WAV (PCM_16)", "FLAC (PCM_16)", "OGG (VORBIS)", ...
};

// Headers that claim more than these are refused before anything is allocated.
struct AudioLimits {
  int max_channels = 1024;           // libsndfile's own limit
  int max_sample_rate = 1 << 24;     // 16.7 MHz: far above any real recording
  // A header that claims more decoded values than this many per encoded byte (plus a margin)
  // is corrupt: no codec compresses that well, and believing it would allocate gigabytes.
  int64_t max_values_per_byte = 16384;
};

bool sndfile_built_in();
bool soxr_built_in();

// A sample's decoder left open from peek() to decode(), so that libsndfile parses the header
// once, not twice (for Ogg Vorbis that is a page chain and the codebooks: half the cost of
// decoding a short utterance). It reads the sample's bytes, which must outlive it.
class OpenAudio;
struct OpenAudioDeleter {
  void operator()(OpenAudio* a) const;
};
using OpenAudioPtr = std::unique_ptr<OpenAudio, OpenAudioDeleter>;

// With `keep`, the open decoder is handed over there for decode().
AudioInfo peek(const uint8_t* data, size_t size, const AudioLimits& limits = {},
               OpenAudioPtr* keep = nullptr);

// How to decode: to `dtype` (kInt16, kInt32 or kFloat32), mixed down to one channel, and
// resampled to `sample_rate` (<= 0 or equal to the file's: kept).
struct DecodeParams {
  DType dtype = DType::kFloat32;
  bool downmix = false;
  double sample_rate = 0;
  double quality = 50;  // DALI's 0..100, mapped to a libsoxr recipe (resampler_recipe)
  int64_t offset = 0;   // frames to skip first (readers.nemo_asr's `offset`)
};

// Frames of the output: the file's, or ceil(frames * out_rate / in_rate) when resampled (DALI's
// length).
int64_t decoded_frames(const AudioInfo& info, const DecodeParams& params);

// Decodes info.frames frames from params.offset on into `out`: decoded_frames() x (downmix ? 1 :
// channels) values of params.dtype, interleaved. `info` is peek()'s, with `frames` lowered to
// decode a part. Data that ends before the frames asked for is an error.
//  - No downmix, no resampling: libsndfile's own conversion to the type (sf_readf_short / _int
//    / _float), as DALI does; float data read as integers saturates (DALI wraps around).
//  - Downmix or resampling: decoded as float, mixed as the mean of the channels (in float),
//    resampled (libsoxr), then converted as DALI converts: round(v * max) saturated.
// `opened`: peek()'s open decoder of these bytes, not read from yet (else they are opened again).
void decode(const uint8_t* data, size_t size, const AudioInfo& info, const DecodeParams& params,
            void* out, OpenAudioPtr opened = nullptr);

// ---- resampling (libsoxr)

// DALI's output length: ceil(in_length * out_rate / in_rate).
int64_t resampled_length(int64_t in_length, double in_rate, double out_rate);

// DALI's quality (0..100) as one of libsoxr's four recipes: low below 25, medium below 45, high
// below 75 (the default 50: librosa's soxr_hq), very high from 75. The GPU's resampler designs
// its filter from the same recipe.
enum class ResamplerQuality { kLow, kMedium, kHigh, kVeryHigh };
ResamplerQuality resampler_quality(double quality);
unsigned long resampler_recipe(double quality);  // NOLINT(runtime/int): libsoxr's constant

// Resamples `channels` interleaved float channels of `in_frames` frames by out_rate / in_rate
// into exactly `out_frames` frames (the resampler's delay removed; frames past the end of the
// signal are zeros). Throws Error(kInvalidArgument) for rates that are not positive and finite.
void resample(float* out, int64_t out_frames, const float* in, int64_t in_frames, int channels,
              double in_rate, double out_rate, double quality);

}  // namespace stoker::codecs::audio
