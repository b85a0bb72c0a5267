// NeMo ASR manifests as readers.nemo_asr reads them: one JSON object per line with
// audio_filepath (required), duration and offset (seconds, optional) and text (optional).
//
// As DALI 2.4 (nemo_asr_loader.cc): entries are kept in file order, manifest after manifest;
// with min_duration / max_duration > 0, an entry whose duration is below / above them is left
// out (an entry without a duration counts as -1, so min_duration drops it); `index` counts the
// entries kept, from 0 in each manifest; paths are used as written (relative ones from the
// working directory). Where stoker is stricter: a line that is not a JSON object, or an entry
// without a string audio_filepath, or with a duration / offset / text of the wrong type, is an
// error naming the manifest and the line (DALI skips it with a warning, or reads garbage); blank
// lines are skipped.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace stoker::readers::nemo {

struct Entry {
  std::string audio_filepath;
  double duration = -1;  // seconds; -1: not given (the whole file)
  double offset = 0;     // seconds
  std::string text;      // empty unless read_text
  int64_t index = 0;     // among the kept entries of its manifest
};

struct Options {
  std::vector<std::string> manifest_filepaths;
  double min_duration = 0, max_duration = 0;  // <= 0: no bound
  bool read_text = true;
};

// Raises Error(kNotFound) for a missing manifest, Error(kInvalidArgument) for a malformed line.
std::vector<Entry> parse_manifests(const Options& options);

// The frames to decode of a file of `frames` frames at `rate` Hz for an entry, as DALI:
// offset = int(offset * rate), length = int(duration * rate) (all when not given), cut at the
// end of the file. Raises Error(kInvalidArgument) when the offset is past the end.
struct Segment {
  int64_t offset = 0, length = 0;
};
Segment segment_of(const Entry& e, int64_t frames, int rate);

}  // namespace stoker::readers::nemo
