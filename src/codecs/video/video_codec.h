// Video decoding on the CPU through FFmpeg: libavformat demuxes (from a file path or from bytes in
// memory), libavcodec decodes in software with one thread per decoder (the pipeline's threads are
// the parallelism), libswscale converts each frame to interleaved RGB or YCbCr.
//
// A VideoFile indexes its stream once when opened: every packet's pts and key flag, sorted into
// presentation order, so frame k is the k-th displayed frame. Decoding frames [k, ...] seeks to
// the last keyframe at or before frame k and decodes forward, keeping the frames whose pts are
// wanted. Errors are Error(kDecode / kUnsupported, reason); the caller adds the file name.
// Without FFmpeg (STOKER_WITH_FFMPEG undefined) open() throws kUnsupported.
//
// On the GPU (a GpuDecoding given to open), libavcodec decodes on NVDEC through FFmpeg's CUDA
// hardware acceleration where the GPU takes the codec and profile (FFmpeg asks it), and the
// frames, in device memory, are converted by our kernels (kernels/cuda/video_gpu.h); a stream
// NVDEC does not take (H.264 4:4:4, AV1 through libdav1d, ...) decodes on the CPU and each
// frame is copied.
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
  double fps = 0;                        // average frame rate (0 when the container gives none)
  bool variable_frame_rate = false;      // packet durations disagree with the average rate
  std::vector<FrameEntry> frames;        // presentation order
  int64_t num_frames() const { return static_cast<int64_t>(frames.size()); }
  // Frame k's presentation time in seconds (its pts in the time base).
  double timestamp(int64_t k) const {
    return static_cast<double>(frames[k].pts) * time_base_num / time_base_den;
  }
};

// FFmpeg's CUDA device on a GPU, the decoders' copies queued on a stream; shared by the
// VideoFiles of one operator.
class GpuDecoding;
// Where NVDEC cannot be used (an FFmpeg without CUDA, no driver library), `why` says so and the
// files decode on the CPU, each frame copied to the GPU. nullptr in a build without CUDA.
std::shared_ptr<GpuDecoding> make_gpu_decoding(int device, void* stream, std::string* why);

// Where decode_device() puts the frames: count * height * width * 3 values, uint8 or, with
// `f32`, float (each uint8 value times `scale`), in device memory.
struct DeviceFrames {
  void* data = nullptr;
  bool f32 = false;
  float scale = 1.0f;
};

// Frames this process decoded for decode_device() on NVDEC, and on the CPU (then copied).
struct GpuDecodeCounts {
  int64_t nvdec = 0, cpu = 0;
};
GpuDecodeCounts gpu_decode_counts();

class VideoFile {
 public:
  // Opens and indexes a file, or bytes that stay owned by the caller while the VideoFile lives.
  // `index`: the info() of an earlier open of the same file, so that it is not scanned again.
  // `gpu`: decode for decode_device().
  static std::unique_ptr<VideoFile> open_path(const std::string& path,
                                              const VideoInfo* index = nullptr,
                                              std::shared_ptr<GpuDecoding> gpu = nullptr);
  static std::unique_ptr<VideoFile> open_memory(const uint8_t* data, size_t size,
                                                std::shared_ptr<GpuDecoding> gpu = nullptr);
  virtual ~VideoFile() = default;

  virtual const VideoInfo& info() const = 0;
  // Decodes frames first, first + stride, ... (count of them, all < num_frames()) into `out`,
  // count * height * width * 3 bytes, HWC per frame.
  virtual void decode(int64_t first, int64_t count, int64_t stride, ColorFormat color,
                      uint8_t* out) = 0;
  // The same frames to device memory, queued on the GpuDecoding's stream (a file opened with
  // one; kInvalidArgument otherwise).
  virtual void decode_device(int64_t first, int64_t count, int64_t stride, ColorFormat color,
                             const DeviceFrames& out) = 0;
};

// The message of an operator built without FFmpeg.
std::string without_ffmpeg_message(const std::string& op);

}  // namespace stoker::codecs::video
