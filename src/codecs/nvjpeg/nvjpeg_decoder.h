// nvJPEG decoding as the mixed decoders use it: the hardware JPEG engines for a batch at a time,
// and nvJPEG on CUDA cores for one image at a time from worker threads, each on its own stream
// (Huffman decoding on that thread, or on the GPU for large images). Both can decode just a
// window of the image. No CUDA or nvJPEG header here (streams are StreamHandle).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "codecs/nvjpeg/nvjpeg_loader.h"
#include "core/cuda/cuda_util.h"

namespace stoker::nvjpeg {

// A window of an image in stored pixels; w < 0 means the whole image.
struct Window {
  int64_t y = 0, x = 0, h = -1, w = -1;
  bool whole() const { return w < 0; }
};

// One image (or a window of it) to decode into device memory: interleaved (RGBI, BGRI) or one
// plane (Y).
struct DecodeTarget {
  const uint8_t* data = nullptr;
  size_t size = 0;
  uint8_t* dst = nullptr;
  size_t pitch = 0;  // bytes between rows of dst
  Window window;     // what to decode: window.h rows of window.w pixels land in dst
};

// What a header says, as far as choosing a decoder goes.
struct StreamInfo {
  int64_t height = 0, width = 0;
  int components = 0;
  int precision = 8;
  JpegEncoding encoding = JpegEncoding::kUnknown;
  bool hardware = false;         // the engines take the whole image (and this GPU has them)
  bool hardware_window = false;  // the engines take the window parse() was given
};

class BatchDecoder {
 public:
  // `threads`: how many worker threads (0 .. threads-1) may call parse() and decode_cuda() at
  // once. `fancy_upsampling`: interpolate chroma as libjpeg-turbo does (where nvJPEG can).
  // `gpu_huffman_pixels`: on CUDA cores, images with more pixels than this have their Huffman
  // decoding done on the GPU rather than on the worker thread (DALI's hybrid_huffman_threshold).
  BatchDecoder(int device, int threads, bool fancy_upsampling, int64_t gpu_huffman_pixels);
  ~BatchDecoder();
  BatchDecoder(const BatchDecoder&) = delete;
  BatchDecoder& operator=(const BatchDecoder&) = delete;

  bool has_hardware() const { return hw_handle_ != nullptr; }
  int device() const { return device_; }
  // Waits for the work queued on the decoder's own streams (engines and workers).
  void synchronize_streams() noexcept;
  unsigned hardware_engines() const { return hw_engines_; }

  // Parses the header from worker `thread`, and asks whether the engines take the image, whole
  // and as `window` (the engines' window decoding is newer and narrower). Throws Error(kDecode)
  // for a header nvJPEG rejects.
  StreamInfo parse(const uint8_t* data, size_t size, int thread, const Window& window);

  // Decodes `targets` (memory `stream` handed out) on the engines, each of which must have
  // parsed with hardware (or hardware_window when it has a window), on the engines' own stream;
  // `stream` then waits for the result. The engines write as soon as the call is made, whatever
  // is queued on the streams, so the host first waits for the work queued on `stream`. Returns
  // only once the engines' work is done (polled: no engine work may outlive the call). Throws
  // on failure; then no output can be trusted.
  void decode_hardware(const std::vector<DecodeTarget>& targets, OutputFormat format,
                       StreamHandle stream);

  // Before the workers decode into memory that `stream` just handed out: their streams wait
  // for everything queued on `stream` so far.
  void fork(StreamHandle stream);
  // Decodes one image (or its window) on CUDA cores from worker `thread`, queued on that
  // thread's stream: nvJPEG's decoupled phases, the host phase (Huffman decoding, unless the
  // image is large) on this thread. Throws Error (kDecode for bad data, kUnsupported for what
  // nvJPEG cannot decode).
  void decode_cuda(const DecodeTarget& target, OutputFormat format, int thread);
  // After the workers: `stream` waits for everything they queued since fork().
  void join(StreamHandle stream);

 private:
  struct Worker;
  void create(int threads, bool fancy_upsampling);
  void release() noexcept;  // frees what create() made, also when it failed half-way
  int device_;
  int64_t gpu_huffman_pixels_;
  Handle handle_ = nullptr;     // CUDA cores (default backend)
  JpegDecoder hybrid_ = nullptr;      // CUDA cores, Huffman decoding on the CPU
  JpegDecoder gpu_hybrid_ = nullptr;  // CUDA cores, Huffman decoding on the GPU (may be null)
  Handle hw_handle_ = nullptr;  // the hardware engines, when this GPU has them
  JpegState hw_state_ = nullptr;
  std::vector<DecodeParams> hw_params_;  // one per image of a hardware batch with windows
  unsigned hw_engines_ = 0;
  CudaStream hw_stream_;
  CudaEvent hw_before_, hw_done_;
  std::vector<std::unique_ptr<Worker>> workers_;
  CudaEvent fork_event_;
};

}  // namespace stoker::nvjpeg
