// Video decoding on the CPU through FFmpeg: libavformat demuxes (from a file path or from bytes in
// memory), libavcodec decodes in software with one thread per decoder (the pipeline's threads are
// the parallelism), libswscale converts each frame to interleaved RGB or YCbCr.
//
// A VideoFile indexes its stream once when opened: every packet's pts and key flag, sorted into
// presentation order, so frame k is the k-th displayed frame. Decoding frames [k, ...] seeks to
// the last keyframe at or before frame k and decodes forward, keeping the frames whose pts are
// wanted. Errors are Error(kDecode / kUnsupported, reason); the caller adds the file name.
// Without FFmpeg (STOKER_WITH_FFMPEG undefined) open() throws kUnsupported.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace stoker::codecs::video {

bool built_with_ffmpeg();

enum class ColorFormat { kRGB, kYCbCr };

struct FrameEntry {
  int64_t pts = 0;   // in the stream's time base
  bool key = false;  // a packet decoding can start from
};

struct VideoInfo {
  int width = 0, height = 0;
  std::string codec;                     // FFmpeg's codec name ("h264", "vp9", ...)
  int64_t time_base_num = 1, time_base_den = 1;
  int64_t start_pts = 0;                 // the stream's start time (pts of its first frame)
  double fps = 0;                        // average frame rate (0 when the container gives none)
  bool variable_frame_rate = false;      // packet durations disagree with the average rate
  std::vector<FrameEntry> frames;        // presentation order
  int64_t num_frames() const { return static_cast<int64_t>(frames.size()); }
  // Seconds from the stream's start to frame k.
  double timestamp(int64_t k) const {
    return static_cast<double>(frames[k].pts - start_pts) * time_base_num / time_base_den;
  }
};

class VideoFile {
 public:
  // Opens and indexes a file, or bytes that stay owned by the caller while the VideoFile lives.
  // `index`: the info() of an earlier open of the same file, so that it is not scanned again.
  static std::unique_ptr<VideoFile> open_path(const std::string& path,
                                              const VideoInfo* index = nullptr);
  static std::unique_ptr<VideoFile> open_memory(const uint8_t* data, size_t size);
  virtual ~VideoFile() = default;

  virtual const VideoInfo& info() const = 0;
  // Decodes frames first, first + stride, ... (count of them, all < num_frames()) into `out`,
  // count * height * width * 3 bytes, HWC per frame.
  virtual void decode(int64_t first, int64_t count, int64_t stride, ColorFormat color,
                      uint8_t* out) = 0;
};

// The message of an operator built without FFmpeg.
std::string without_ffmpeg_message(const std::string& op);

}  // namespace stoker::codecs::video
