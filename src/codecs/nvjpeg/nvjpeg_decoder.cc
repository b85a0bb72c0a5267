#include "codecs/nvjpeg/nvjpeg_decoder.h"

#include <cstdio>
#include <algorithm>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>

#include <cuda_runtime_api.h>

#include "core/cuda/cuda_memory.h"
#include "core/error.h"
#include "core/log.h"

namespace stoker::nvjpeg {

struct BatchDecoder::Worker {
  CudaStream stream;
  CudaEvent done;
  bool used = false;  // decoded something since fork()
  // parse(): headers, and the window the engines are asked about.
  JpegStream parser = nullptr;
  DecodeParams window_params = nullptr;
  // decode_cuda(): nvJPEG's decoupled phases. Two pinned buffers take turns, so that the host
  // phase of one image can run while the copy of the one before is still queued.
  JpegStream jpeg = nullptr;
  DecodeParams params = nullptr;
  JpegState hybrid_state = nullptr;
  JpegState gpu_state = nullptr;
  BufferPinned pinned[2] = {nullptr, nullptr};
  CudaEvent pinned_copied[2];  // the copy out of pinned[k] has run
  BufferDevice device_buffer = nullptr;
  int next_pinned = 0;
};

namespace {

// nvJPEG's own buffers come from stoker's memory resources, through the V2 allocator callbacks
// (CUDA 12.1 and later), not from cudaMalloc/cudaFree and cudaHostAlloc/cudaFreeHost: those
// frees wait for the whole GPU, and one made while the engines have work queued (another
// pipeline's, or this one's prefetching) never returns on the H100 (core/cuda/cuda_memory.cc).
// A free nvJPEG orders on a stream waits for that stream's work; one it makes without a stream
// (state and handle teardown) first waits for this decoder's streams.
// nvJPEG reports a failed allocation only as NVJPEG_STATUS_ALLOCATOR_FAILURE; the reason is
// logged (Python: logger "stoker").
int allocation_failed(const char* what, size_t size) {
  std::string why = "unknown error";
  try {
    throw;
  } catch (const std::exception& e) {
    why = e.what();
  } catch (...) {
  }
  log_message(LogLevel::kWarning, "stoker: nvJPEG asked for %zu bytes of %s memory, which failed: %s",
              size, what, why.c_str());
  return 1;
}

int dev_malloc(void* ctx, void** p, size_t size, CUstream_st* stream) {
  try {
    *p = device_allocate_on(static_cast<BatchDecoder*>(ctx)->device(), size, stream);
    return 0;
  } catch (...) {
    return allocation_failed("device", size);
  }
}
int dev_free(void* ctx, void* p, size_t, CUstream_st* stream) {
  if (!stream) static_cast<BatchDecoder*>(ctx)->synchronize_streams();
  device_free_on(p, stream);
  return 0;
}
// nvJPEG grows its pinned buffers a little at a time as larger images come, and stoker's pinned
// resource keeps every block given back (cuda_memory.cc). Rounded up to a power of two, the
// blocks nvJPEG gives back fit its later requests: on CUDA cores (3 workers, 24 photos) the
// pinned memory kept crept 21 -> 53 MB over 10,000 batches with exact sizes.
size_t pinned_block(size_t size) {
  size_t b = size_t{1} << 20;
  while (b < size) b <<= 1;
  return b;
}

int pinned_malloc(void*, void** p, size_t size, CUstream_st*) {
  try {
    *p = pinned_allocate(pinned_block(size));
    return 0;
  } catch (...) {
    return allocation_failed("pinned", size);
  }
}
int pinned_free(void* ctx, void* p, size_t, CUstream_st* stream) {
  if (!stream) static_cast<BatchDecoder*>(ctx)->synchronize_streams();
  pinned_free_after(p, stream);
  return 0;
}

// STOKER_NVJPEG_CHECK, plus what CUDA last reported when nvJPEG says ALLOCATOR_FAILURE: nvJPEG
// reports every failed allocation that way, its own (cudaMalloc, cudaHostAlloc) included.
void check(Status s, const char* call, const char* file, int line) {
  if (s == Status::kSuccess) return;
  const cudaError_t e = s == Status::kAllocatorFailure ? cudaGetLastError() : cudaSuccess;
  try {
    throw_status(s, call, file, line);
  } catch (const Error& err) {
    if (e == cudaSuccess) throw;
    throw err.with_context(std::string("CUDA's last error: ") + cudaGetErrorName(e) + ", " +
                           cudaGetErrorString(e));
  }
}
#define CHECK_NVJPEG(expr) check((expr), #expr, __FILE__, __LINE__)

Handle create_handle(const Api& a, Backend backend, bool fancy, BatchDecoder* owner,
                     Status* status) {
  Handle h = nullptr;
  Status s = Status::kImplementationNotSupported;
  // Fancy upsampling first when asked for, then the default flags (without fancy, the same
  // default is simply tried twice).
  const unsigned flags[2] = {fancy ? kFlagUpsamplingWithInterpolation : kFlagsDefault, kFlagsDefault};
  for (unsigned f : flags) {
    if (a.nvjpegCreateExV2) {
      DevAllocatorV2 dev{&dev_malloc, &dev_free, owner};
      PinnedAllocatorV2 pinned{&pinned_malloc, &pinned_free, owner};
      s = a.nvjpegCreateExV2(backend, &dev, &pinned, f, &h);
    } else {
      s = a.nvjpegCreateEx(backend, nullptr, nullptr, f, &h);
    }
    if (s == Status::kSuccess) break;
  }
  *status = s;
  return s == Status::kSuccess ? h : nullptr;
}

}  // namespace

BatchDecoder::BatchDecoder(int device, int threads, bool fancy_upsampling,
                           int64_t gpu_huffman_pixels)
    : device_(device), gpu_huffman_pixels_(gpu_huffman_pixels) {
  try {
    create(threads, fancy_upsampling);
  } catch (...) {
    release();
    throw;
  }
}

void BatchDecoder::create(int threads, bool fancy_upsampling) {
  const Api& a = nvjpeg_api();
  const int device = device_;
  DeviceGuard g(device);
  Status s;
  handle_ = create_handle(a, Backend::kDefault, fancy_upsampling, this, &s);
  CHECK_NVJPEG(s);
  CHECK_NVJPEG(a.nvjpegDecoderCreate(handle_, Backend::kHybrid, &hybrid_));
  if (a.nvjpegDecoderCreate(handle_, Backend::kGpuHybrid, &gpu_hybrid_) != Status::kSuccess)
    gpu_hybrid_ = nullptr;  // then the CPU does every image's Huffman decoding
  // The engines exist on A100, H100 and later; elsewhere this fails and everything goes to
  // the CUDA cores. STOKER_NVJPEG_HARDWARE=0 keeps them out (as on a GPU without them).
  const char* hw_env = std::getenv("STOKER_NVJPEG_HARDWARE");
  if (!hw_env || std::string(hw_env) != "0")
    hw_handle_ = create_handle(a, Backend::kHardware, fancy_upsampling, this, &s);
  if (hw_handle_) {
    unsigned cores = 0;
    if (a.nvjpegGetHardwareDecoderInfo(hw_handle_, &hw_engines_, &cores) != Status::kSuccess ||
        a.nvjpegJpegStateCreate(hw_handle_, &hw_state_) != Status::kSuccess) {
      a.nvjpegDestroy(hw_handle_);
      hw_handle_ = nullptr;
      hw_engines_ = 0;
    }
  }
  fork_event_ = CudaEvent(device);
  if (hw_handle_) {
    hw_stream_ = CudaStream(device);
    hw_before_ = CudaEvent(device);
    hw_done_ = CudaEvent(device);
  }
  DevAllocatorV2 dev{&dev_malloc, &dev_free, this};
  PinnedAllocatorV2 pinned{&pinned_malloc, &pinned_free, this};
  for (int t = 0; t < std::max(threads, 1); ++t) {
    auto w = std::make_unique<Worker>();
    Worker& k = *w;
    workers_.push_back(std::move(w));  // owned from here: release() frees what follows
    k.stream = CudaStream(device);
    k.done = CudaEvent(device);
    CHECK_NVJPEG(a.nvjpegJpegStreamCreate(hw_handle_ ? hw_handle_ : handle_, &k.parser));
    CHECK_NVJPEG(a.nvjpegDecodeParamsCreate(hw_handle_ ? hw_handle_ : handle_, &k.window_params));
    CHECK_NVJPEG(a.nvjpegJpegStreamCreate(handle_, &k.jpeg));
    CHECK_NVJPEG(a.nvjpegDecodeParamsCreate(handle_, &k.params));
    CHECK_NVJPEG(a.nvjpegDecoderStateCreate(handle_, hybrid_, &k.hybrid_state));
    if (gpu_hybrid_) CHECK_NVJPEG(a.nvjpegDecoderStateCreate(handle_, gpu_hybrid_, &k.gpu_state));
    for (int b = 0; b < 2; ++b) {
      CHECK_NVJPEG(a.nvjpegBufferPinnedCreateV2
                       ? a.nvjpegBufferPinnedCreateV2(handle_, &pinned, &k.pinned[b])
                       : a.nvjpegBufferPinnedCreate(handle_, nullptr, &k.pinned[b]));
      k.pinned_copied[b] = CudaEvent(device);
    }
    CHECK_NVJPEG(a.nvjpegBufferDeviceCreateV2
                     ? a.nvjpegBufferDeviceCreateV2(handle_, &dev, &k.device_buffer)
                     : a.nvjpegBufferDeviceCreate(handle_, nullptr, &k.device_buffer));
  }
}

BatchDecoder::~BatchDecoder() { release(); }

void BatchDecoder::release() noexcept {
  if (!nvjpeg_available()) return;  // then create() made nothing
  const Api& a = nvjpeg_api();
  std::optional<DeviceGuard> g;
  try {
    g.emplace(device_);
  } catch (...) {
  }
  synchronize_streams();
  // States before the buffers attached to them; every stream is still alive (a free without a
  // stream waits for them).
  for (auto& w : workers_) {
    if (w->hybrid_state) a.nvjpegJpegStateDestroy(w->hybrid_state);
    if (w->gpu_state) a.nvjpegJpegStateDestroy(w->gpu_state);
    for (BufferPinned b : w->pinned)
      if (b) a.nvjpegBufferPinnedDestroy(b);
    if (w->device_buffer) a.nvjpegBufferDeviceDestroy(w->device_buffer);
    if (w->params) a.nvjpegDecodeParamsDestroy(w->params);
    if (w->window_params) a.nvjpegDecodeParamsDestroy(w->window_params);
    if (w->jpeg) a.nvjpegJpegStreamDestroy(w->jpeg);
    if (w->parser) a.nvjpegJpegStreamDestroy(w->parser);
  }
  for (DecodeParams p : hw_params_) a.nvjpegDecodeParamsDestroy(p);
  if (hw_state_) a.nvjpegJpegStateDestroy(hw_state_);
  if (gpu_hybrid_) a.nvjpegDecoderDestroy(gpu_hybrid_);
  if (hybrid_) a.nvjpegDecoderDestroy(hybrid_);
  if (hw_handle_) a.nvjpegDestroy(hw_handle_);
  if (handle_) a.nvjpegDestroy(handle_);
  workers_.clear();
}

void BatchDecoder::synchronize_streams() noexcept {
  try {
    if (hw_stream_) hw_stream_.synchronize();
    for (auto& w : workers_) w->stream.synchronize();
  } catch (...) {
  }
}

StreamInfo BatchDecoder::parse(const uint8_t* data, size_t size, int thread,
                               const Window& window) {
  const Api& a = nvjpeg_api();
  Worker& w = *workers_.at(thread);
  Handle h = hw_handle_ ? hw_handle_ : handle_;
  CHECK_NVJPEG(a.nvjpegJpegStreamParseHeader(h, data, size, w.parser));
  StreamInfo info;
  unsigned width = 0, height = 0, comps = 0;
  CHECK_NVJPEG(a.nvjpegJpegStreamGetFrameDimensions(w.parser, &width, &height));
  CHECK_NVJPEG(a.nvjpegJpegStreamGetComponentsNum(w.parser, &comps));
  CHECK_NVJPEG(a.nvjpegJpegStreamGetJpegEncoding(w.parser, &info.encoding));
  info.width = width;
  info.height = height;
  info.components = static_cast<int>(comps);
  if (a.nvjpegJpegStreamGetSamplePrecision) {
    unsigned precision = 8;
    if (a.nvjpegJpegStreamGetSamplePrecision(w.parser, &precision) == Status::kSuccess)
      info.precision = static_cast<int>(precision);
  }
  if (hw_handle_) {
    int unsupported = 1;
    info.hardware = a.nvjpegDecodeBatchedSupported(hw_handle_, w.parser, &unsupported) ==
                        Status::kSuccess && unsupported == 0;
    info.hardware_window = info.hardware && window.whole();
    if (info.hardware && !window.whole()) {
      unsupported = 1;
      info.hardware_window =
          a.nvjpegDecodeParamsSetROI(w.window_params, static_cast<int>(window.x),
                                     static_cast<int>(window.y), static_cast<int>(window.w),
                                     static_cast<int>(window.h)) == Status::kSuccess &&
          a.nvjpegDecodeBatchedSupportedEx(hw_handle_, w.parser, w.window_params, &unsupported) ==
              Status::kSuccess &&
          unsupported == 0;
    }
  }
  return info;
}

void BatchDecoder::decode_hardware(const std::vector<DecodeTarget>& targets, OutputFormat format,
                                   StreamHandle stream) {
  if (targets.empty()) return;
  STOKER_ASSERT(hw_handle_, "decode_hardware on a GPU without JPEG engines");
  const Api& a = nvjpeg_api();
  DeviceGuard g(device_);
  const int n = static_cast<int>(targets.size());
  std::vector<const unsigned char*> data(n);
  std::vector<size_t> lengths(n);
  std::vector<Image> images(n);
  for (int i = 0; i < n; ++i) {
    data[i] = targets[i].data;
    lengths[i] = targets[i].size;
    images[i] = Image{};
    images[i].channel[0] = targets[i].dst;
    images[i].pitch[0] = targets[i].pitch;
  }
  // The engines write when the call is made, not in the order of hw_stream_: a
  // cudaStreamWaitEvent does not hold them back (torchcodec measured it on the H100, nvJPEG 12.3
  // to 13.2). Memory that `stream` handed out may still be read by work queued there (the pool
  // reuses a block on the same stream at once), so the host waits for that work. (Targets
  // allocated for hw_stream_ instead would need no wait, but blocks freed after use on several
  // streams were then not reused: on the H100 an unstaged pipeline's pool grew to 55 GB.)
  hw_before_.record(stream);
  hw_before_.poll_until_done();
  const bool windows = std::any_of(targets.begin(), targets.end(),
                                   [](const DecodeTarget& t) { return !t.window.whole(); });
  if (windows) {
    // nvjpegDecodeBatchedEx takes one parameter set per image; whole images get an empty window.
    while (hw_params_.size() < targets.size()) {
      DecodeParams p = nullptr;
      CHECK_NVJPEG(a.nvjpegDecodeParamsCreate(hw_handle_, &p));
      hw_params_.push_back(p);
    }
    for (int i = 0; i < n; ++i) {
      const Window& wi = targets[i].window;
      CHECK_NVJPEG(a.nvjpegDecodeParamsSetOutputFormat(hw_params_[i], format));
      CHECK_NVJPEG(wi.whole() ? a.nvjpegDecodeParamsSetROI(hw_params_[i], 0, 0, -1, -1)
                              : a.nvjpegDecodeParamsSetROI(hw_params_[i], static_cast<int>(wi.x),
                                                           static_cast<int>(wi.y), static_cast<int>(wi.w),
                                                           static_cast<int>(wi.h)));
    }
  }
  CHECK_NVJPEG(a.nvjpegDecodeBatchedInitialize(hw_handle_, hw_state_, n, 1, format));
  const Stream hs = static_cast<Stream>(hw_stream_.get());
  CHECK_NVJPEG(windows ? a.nvjpegDecodeBatchedEx(hw_handle_, hw_state_, data.data(), lengths.data(),
                                                 images.data(), hw_params_.data(), hs)
                       : a.nvjpegDecodeBatched(hw_handle_, hw_state_, data.data(), lengths.data(),
                                               images.data(), hs));
  // No engine work may outlive the call. When the next batch's call began with the last one's
  // work still queued on hw_stream_, the H100 hung for good (scripts/debug/hang_hunt.sh, 3 of 3
  // hangs): nvJPEG waited inside the driver (a copy from pageable memory, or nvcuvid freeing a
  // buffer, which waits for the whole GPU) for that work, whose completion in turn waited for a
  // driver lock that another thread (run()'s copy to the host, an event's destruction) had
  // asked for. Waiting here by polling holds no lock while the engines finish.
  hw_done_.record(hw_stream_.get());
  hw_done_.poll_until_done();
  cuda_stream_wait_event(stream, hw_done_.get());
}

void BatchDecoder::fork(StreamHandle stream) {
  DeviceGuard g(device_);
  fork_event_.record(stream);
  for (auto& w : workers_) {
    w->stream.wait(fork_event_.get());
    w->used = false;
  }
}

void BatchDecoder::decode_cuda(const DecodeTarget& t, OutputFormat format, int thread) {
  const Api& a = nvjpeg_api();
  Worker& w = *workers_.at(thread);
  DeviceGuard g(device_);
  w.used = true;
  CHECK_NVJPEG(a.nvjpegJpegStreamParse(handle_, t.data, t.size, 0, 0, w.jpeg));
  CHECK_NVJPEG(a.nvjpegDecodeParamsSetOutputFormat(w.params, format));
  const Window& win = t.window;
  CHECK_NVJPEG(win.whole() ? a.nvjpegDecodeParamsSetROI(w.params, 0, 0, -1, -1)
                           : a.nvjpegDecodeParamsSetROI(w.params, static_cast<int>(win.x),
                                                        static_cast<int>(win.y), static_cast<int>(win.w),
                                                        static_cast<int>(win.h)));
  // Large images have their Huffman decoding done on the GPU, when nvJPEG can.
  JpegDecoder decoder = hybrid_;
  JpegState state = w.hybrid_state;
  unsigned width = 0, height = 0;
  CHECK_NVJPEG(a.nvjpegJpegStreamGetFrameDimensions(w.jpeg, &width, &height));
  if (gpu_hybrid_ && int64_t{width} * height > gpu_huffman_pixels_) {
    int unsupported = 1;
    if (a.nvjpegDecoderJpegSupported(gpu_hybrid_, w.jpeg, w.params, &unsupported) ==
            Status::kSuccess && unsupported == 0) {
      decoder = gpu_hybrid_;
      state = w.gpu_state;
    }
  }
  // The host phase writes into a pinned buffer that the copy of the image before last may
  // still read.
  const int k = w.next_pinned;
  w.next_pinned ^= 1;
  w.pinned_copied[k].poll_until_done();
  CHECK_NVJPEG(a.nvjpegStateAttachPinnedBuffer(state, w.pinned[k]));
  CHECK_NVJPEG(a.nvjpegStateAttachDeviceBuffer(state, w.device_buffer));
  CHECK_NVJPEG(a.nvjpegDecodeJpegHost(handle_, decoder, state, w.params, w.jpeg));
  const Stream s = static_cast<Stream>(w.stream.get());
  CHECK_NVJPEG(a.nvjpegDecodeJpegTransferToDevice(handle_, decoder, state, w.jpeg, s));
  w.pinned_copied[k].record(w.stream.get());
  Image img{};
  img.channel[0] = t.dst;
  img.pitch[0] = t.pitch;
  CHECK_NVJPEG(a.nvjpegDecodeJpegDevice(handle_, decoder, state, &img, s));
}

void BatchDecoder::join(StreamHandle stream) {
  DeviceGuard g(device_);
  for (auto& w : workers_) {
    if (!w->used) continue;
    w->done.record(w->stream.get());
    cuda_stream_wait_event(stream, w->done.get());
    w->used = false;
  }
}

}  // namespace stoker::nvjpeg
