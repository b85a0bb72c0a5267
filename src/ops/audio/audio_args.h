// What decoders.audio, audio_resample and readers.nemo_asr share: the checks of their dtype and
// quality arguments and the "built without" errors, worded once.
#pragma once
#include <cctype>
#include <string>

#include "codecs/audio/audio_decoder.h"
#include "pipeline/operator.h"

namespace stoker::audio_args {

// DALI's name of a type: "UINT8", "FLOAT", "FLOAT64".
inline std::string dali_type_name(DType t) {
  if (t == DType::kFloat32) return "FLOAT";
  std::string n = dtype_name(t);
  for (char& c : n) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return n;
}

// The decoders' `dtype`: INT16, INT32 or FLOAT, as DALI.
inline DType decoded_dtype(const OpSpec& spec) {
  const auto t = static_cast<DType>(spec.get<int64_t>("dtype"));
  if (t != DType::kInt16 && t != DType::kInt32 && t != DType::kFloat32)
    spec.arg_error("dtype", "must be INT16, INT32 or FLOAT (as DALI), got " + dali_type_name(t) +
                                "; decode to one of them and use fn.cast for another type.");
  return t;
}

inline void require_sndfile(const OpSpec& spec) {
  if (!codecs::audio::sndfile_built_in())
    fail(ErrorKind::kUnsupported, spec.display_name() + ": stoker was built without libsndfile, "
                                  "so it cannot decode audio; install libsndfile1-dev and rebuild");
}

inline void require_soxr(const OpSpec& spec) {
  if (!codecs::audio::soxr_built_in())
    fail(ErrorKind::kUnsupported, spec.display_name() + ": stoker was built without libsoxr, so "
                                  "it cannot resample audio; install libsoxr-dev and rebuild");
}

inline const char* quality_doc() {
  return "Resampling quality, 0 (lowest) to 100 (highest). stoker resamples with libsoxr: below "
         "25 its LQ recipe, below 45 MQ, below 75 HQ (the default 50, librosa's soxr_hq), from "
         "75 VHQ. (DALI: 3 to 64 lobes of a windowed sinc.)";
}

}  // namespace stoker::audio_args
