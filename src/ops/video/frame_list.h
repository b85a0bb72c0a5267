// Frames asked of a video by index, shared by decoders.video and the video readers: which frame
// stands where a sequence runs past the usable frames (DALI's pad_mode), and the decoding of a
// list of frame indices (repeats, any order, -1 for a fill frame) into FHWC output, on the CPU
// or into device memory.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "codecs/video/video_codec.h"
#include "pipeline/operator.h"

namespace stoker::video_frames {

enum class PadMode { kNone, kConstant, kEdge, kReflect1001, kReflect101 };

// pad_mode's value, DALI's names and aliases; anything else is an argument error.
PadMode parse_pad_mode(const OpSpec& spec, const std::string& mode);

// fill_value, checked: 1 value or 3, each in [0, 255].
std::vector<int64_t> parse_fill_value(const OpSpec& spec);

// The frame that stands at index i of a sequence over the usable frames [lo, hi) of a video,
// as DALI's readers and decoders place it: i itself inside; outside, the nearest usable frame
// (kEdge), -1 (kConstant: a fill frame), or i reflected at hi about the video's frames
// [0, hi) (kReflect1001: ABC -> ABCCBA, kReflect101: ABC -> ABCBA). kNone: -1.
int64_t frame_at(PadMode mode, int64_t i, int64_t lo, int64_t hi);

// Decodes frames[k] of `video` into frame k of `out` (frames.size() * height * width * 3
// bytes), each distinct frame once and in order, the repeats copied; -1 gives a frame of
// `fill` (one value, or one per channel).
void decode(codecs::video::VideoFile& video, const std::vector<int64_t>& frames,
            codecs::video::ColorFormat color, const std::vector<int64_t>& fill, uint8_t* out);

// The same into device memory, queued on `stream` (a file opened for decode_device()).
void decode_device(codecs::video::VideoFile& video, const std::vector<int64_t>& frames,
                   codecs::video::ColorFormat color, const std::vector<int64_t>& fill,
                   const codecs::video::DeviceFrames& out, void* stream);

}  // namespace stoker::video_frames
