// nvJPEG decoding as the mixed decoders use it: the hardware JPEG engines for a batch at a time,
// and nvJPEG on CUDA cores (Huffman decoding on the CPU) for one image at a time from worker
// threads, each on its own stream. No CUDA or nvJPEG header here (streams are StreamHandle).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "codecs/nvjpeg/nvjpeg_loader.h"
#include "core/cuda/cuda_util.h"

namespace stoker::nvjpeg {

// One image to decode into device memory: interleaved (RGBI, BGRI) or one plane (Y).
struct DecodeTarget {
  const uint8_t* data = nullptr;
  size_t size = 0;
  uint8_t* dst = nullptr;
  size_t pitch = 0;  // bytes between rows of dst
};

// What a header says, as far as choosing a decoder goes.
struct StreamInfo {
  int64_t height = 0, width = 0;
  int components = 0;
  int precision = 8;
  JpegEncoding encoding = JpegEncoding::kUnknown;
  bool hardware = false;  // the engines take it (and this GPU has them)
};

class BatchDecoder {
 public:
  // `threads`: how many worker threads (0 .. threads-1) may call parse() and decode_cuda() at
  // once. `fancy_upsampling`: interpolate chroma as libjpeg-turbo does (where nvJPEG can).
  BatchDecoder(int device, int threads, bool fancy_upsampling);
  ~BatchDecoder();
  BatchDecoder(const BatchDecoder&) = delete;
  BatchDecoder& operator=(const BatchDecoder&) = delete;

  bool has_hardware() const { return hw_handle_ != nullptr; }
  int device() const { return device_; }
  // Waits for the work queued on the decoder's own streams (engines and workers).
  void synchronize_streams() noexcept;
  unsigned hardware_engines() const { return hw_engines_; }

  // Parses the header from worker `thread`. Throws Error(kDecode) for a header nvJPEG rejects.
  StreamInfo parse(const uint8_t* data, size_t size, int thread);

  // The hardware engines' own stream: memory that only the engines write first is best
  // allocated for it (then no wait on the pipeline's earlier work is needed).
  StreamHandle hardware_stream() const { return hw_stream_.get(); }
  // Decodes `targets` on the engines (every one must have parsed with hardware = true), on
  // hardware_stream(); `stream` then waits for the result. The engines write as soon as the
  // call is made, whatever is queued on the streams, so with `after_stream` (targets in memory
  // `stream` handed out) the host first waits for the work queued on `stream`. Returns only
  // once the engines' work is done (polled: no engine work may outlive the call). Throws on
  // failure; then no output can be trusted.
  void decode_hardware(const std::vector<DecodeTarget>& targets, OutputFormat format,
                       StreamHandle stream, bool after_stream);

  // Before the workers decode into memory that `stream` just handed out: their streams wait
  // for everything queued on `stream` so far.
  void fork(StreamHandle stream);
  // Decodes one image on CUDA cores from worker `thread`, queued on that thread's stream.
  // Throws Error (kDecode for bad data, kUnsupported for what nvJPEG cannot decode).
  void decode_cuda(const DecodeTarget& target, OutputFormat format, int thread);
  // After the workers: `stream` waits for everything they queued since fork().
  void join(StreamHandle stream);

 private:
  struct Worker;
  int device_;
  Handle handle_ = nullptr;     // CUDA cores (default backend)
  Handle hw_handle_ = nullptr;  // the hardware engines, when this GPU has them
  JpegState hw_state_ = nullptr;
  unsigned hw_engines_ = 0;
  CudaStream hw_stream_;
  CudaEvent hw_before_, hw_done_;
  std::vector<std::unique_ptr<Worker>> workers_;
  CudaEvent fork_event_;
};

}  // namespace stoker::nvjpeg
