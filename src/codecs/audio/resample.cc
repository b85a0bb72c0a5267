// Resampling through libsoxr (the library behind librosa's 'soxr_hq' and SoX's 'rate').
//
// DALI resamples with its own Hann-windowed sinc whose cutoff stays at the input's Nyquist
// frequency, so when it lowers the rate it keeps what lies above the new Nyquist frequency,
// folded back (16 kHz to 8 kHz keeps every other input sample as it is). libsoxr low-passes
// first. So results equal DALI's up to the filters' differences when the rate goes up, and differ
// by the aliased band when it goes down; the output length is DALI's in both cases.
#include "codecs/audio/audio_decoder.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "core/error.h"

#ifdef STOKER_WITH_SOXR
#include <soxr.h>
#endif

namespace stoker::codecs::audio {

int64_t resampled_length(int64_t in_length, double in_rate, double out_rate) {
  return static_cast<int64_t>(std::ceil(static_cast<double>(in_length) * out_rate / in_rate));
}

ResamplerQuality resampler_quality(double quality) {
  if (quality < 25) return ResamplerQuality::kLow;
  if (quality < 45) return ResamplerQuality::kMedium;
  if (quality < 75) return ResamplerQuality::kHigh;
  return ResamplerQuality::kVeryHigh;
}

#ifndef STOKER_WITH_SOXR

bool soxr_built_in() { return false; }
unsigned long resampler_recipe(double) { return 0; }  // NOLINT(runtime/int)
void resample(float*, int64_t, const float*, int64_t, int, double, double, double) {
  fail(ErrorKind::kUnsupported,
       "stoker was built without libsoxr, so it cannot resample audio; install libsoxr-dev and "
       "rebuild");
}

#else  // STOKER_WITH_SOXR

bool soxr_built_in() { return true; }

unsigned long resampler_recipe(double quality) {  // NOLINT(runtime/int)
  switch (resampler_quality(quality)) {
    case ResamplerQuality::kLow: return SOXR_LQ;
    case ResamplerQuality::kMedium: return SOXR_MQ;
    case ResamplerQuality::kHigh: return SOXR_HQ;
    default: return SOXR_VHQ;
  }
}

void resample(float* out, int64_t out_frames, const float* in, int64_t in_frames, int channels,
              double in_rate, double out_rate, double quality) {
  if (!(in_rate > 0) || !(out_rate > 0) || !std::isfinite(in_rate) || !std::isfinite(out_rate))
    fail(ErrorKind::kInvalidArgument, "sample rates must be positive and finite, got " +
                                          std::to_string(in_rate) + " -> " + std::to_string(out_rate));
  const size_t ch = static_cast<size_t>(channels);
  if (out_frames <= 0) return;
  if (in_frames <= 0) {
    std::fill_n(out, static_cast<size_t>(out_frames) * ch, 0.0f);
    return;
  }
  if (in_rate == out_rate) {
    const int64_t n = std::min(in_frames, out_frames);
    std::memcpy(out, in, static_cast<size_t>(n) * ch * sizeof(float));
    std::fill(out + n * ch, out + out_frames * ch, 0.0f);
    return;
  }
  const soxr_io_spec_t io = soxr_io_spec(SOXR_FLOAT32_I, SOXR_FLOAT32_I);
  const soxr_quality_spec_t q = soxr_quality_spec(resampler_recipe(quality), 0);
  const soxr_runtime_spec_t rt = soxr_runtime_spec(1);  // the pipeline's threads, not OpenMP's
  soxr_error_t err = nullptr;
  soxr_t s = soxr_create(in_rate, out_rate, static_cast<unsigned>(channels), &err, &io, &q, &rt);
  if (!s || err)
    fail(ErrorKind::kInvalidArgument, std::string("libsoxr cannot resample from ") +
                                          std::to_string(in_rate) + " to " + std::to_string(out_rate) +
                                          ": " + (err ? err : "unknown error"));
  // Feed the whole input, then flush (null input) until the output is full or soxr has nothing
  // more; soxr removes its own delay, so output frame k is at time k / out_rate.
  size_t done = 0;
  const size_t want = static_cast<size_t>(out_frames);
  size_t in_used = 0;
  const size_t in_total = static_cast<size_t>(in_frames);
  while (done < want) {
    size_t idone = 0, odone = 0;
    const bool feeding = in_used < in_total;
    err = soxr_process(s, feeding ? in + in_used * ch : nullptr, feeding ? in_total - in_used : 0,
                       &idone, out + done * ch, want - done, &odone);
    if (err) break;
    in_used += idone;
    done += odone;
    if (!feeding && odone == 0) break;
  }
  soxr_delete(s);
  if (err) fail(ErrorKind::kInternal, std::string("libsoxr failed: ") + err);
  std::fill(out + done * ch, out + want * ch, 0.0f);
}

#endif  // STOKER_WITH_SOXR

}  // namespace stoker::codecs::audio
