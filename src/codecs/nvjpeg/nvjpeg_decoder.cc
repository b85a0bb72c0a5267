#include "codecs/nvjpeg/nvjpeg_decoder.h"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "core/cuda/cuda_memory.h"
#include "core/error.h"

namespace stoker::nvjpeg {

struct BatchDecoder::Worker {
  CudaStream stream;
  CudaEvent done;
  JpegState state = nullptr;    // for nvjpegDecode on handle_
  JpegStream parser = nullptr;  // for parse()
  bool used = false;            // decoded something since fork()
};

namespace {

// nvJPEG's own buffers come from stoker's memory resources, through the V2 allocator callbacks
// (CUDA 12.1 and later), not from cudaMalloc/cudaFree and cudaHostAlloc/cudaFreeHost: those
// frees wait for the whole GPU, and one made while the engines have work queued (another
// pipeline's, or this one's prefetching) never returns on the H100 (core/cuda/cuda_memory.cc).
// A free nvJPEG orders on a stream waits for that stream's work; one it makes without a stream
// (state and handle teardown) first waits for this decoder's streams.
// nvJPEG reports a failed allocation only as NVJPEG_STATUS_ALLOCATOR_FAILURE; the reason goes
// to stderr.
int allocation_failed(const char* what, size_t size) {
  std::string why = "unknown error";
  try {
    throw;
  } catch (const std::exception& e) {
    why = e.what();
  } catch (...) {
  }
  std::fprintf(stderr, "stoker: nvJPEG asked for %zu bytes of %s memory, which failed: %s\n",
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
int pinned_malloc(void*, void** p, size_t size, CUstream_st*) {
  try {
    *p = pinned_allocate(size);
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

BatchDecoder::BatchDecoder(int device, int threads, bool fancy_upsampling) : device_(device) {
  const Api& a = nvjpeg_api();
  DeviceGuard g(device);
  Status s;
  handle_ = create_handle(a, Backend::kDefault, fancy_upsampling, this, &s);
  STOKER_NVJPEG_CHECK(s);
  // The engines exist on A100, H100 and later; elsewhere this fails and everything goes to
  // the CUDA cores. STOKER_NVJPEG_HARDWARE=0 keeps them out (for telling their faults apart).
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
  for (int t = 0; t < std::max(threads, 1); ++t) {
    auto w = std::make_unique<Worker>();
    w->stream = CudaStream(device);
    w->done = CudaEvent(device);
    STOKER_NVJPEG_CHECK(a.nvjpegJpegStateCreate(handle_, &w->state));
    STOKER_NVJPEG_CHECK(a.nvjpegJpegStreamCreate(hw_handle_ ? hw_handle_ : handle_, &w->parser));
    workers_.push_back(std::move(w));
  }
}

BatchDecoder::~BatchDecoder() {
  const Api& a = nvjpeg_api();
  DeviceGuard g(device_);
  try {
    if (hw_stream_) hw_stream_.synchronize();
  } catch (...) {
  }
  for (auto& w : workers_) {
    try {
      w->stream.synchronize();
    } catch (...) {
    }
    if (w->parser) a.nvjpegJpegStreamDestroy(w->parser);
    if (w->state) a.nvjpegJpegStateDestroy(w->state);
  }
  workers_.clear();
  if (hw_state_) a.nvjpegJpegStateDestroy(hw_state_);
  if (hw_handle_) a.nvjpegDestroy(hw_handle_);
  if (handle_) a.nvjpegDestroy(handle_);
}

void BatchDecoder::synchronize_streams() noexcept {
  try {
    if (hw_stream_) hw_stream_.synchronize();
    for (auto& w : workers_) w->stream.synchronize();
  } catch (...) {
  }
}

StreamInfo BatchDecoder::parse(const uint8_t* data, size_t size, int thread) {
  const Api& a = nvjpeg_api();
  Worker& w = *workers_.at(thread);
  Handle h = hw_handle_ ? hw_handle_ : handle_;
  STOKER_NVJPEG_CHECK(a.nvjpegJpegStreamParseHeader(h, data, size, w.parser));
  StreamInfo info;
  unsigned width = 0, height = 0, comps = 0;
  STOKER_NVJPEG_CHECK(a.nvjpegJpegStreamGetFrameDimensions(w.parser, &width, &height));
  STOKER_NVJPEG_CHECK(a.nvjpegJpegStreamGetComponentsNum(w.parser, &comps));
  STOKER_NVJPEG_CHECK(a.nvjpegJpegStreamGetJpegEncoding(w.parser, &info.encoding));
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
  }
  return info;
}

void BatchDecoder::decode_hardware(const std::vector<DecodeTarget>& targets, OutputFormat format,
                                   StreamHandle stream, bool after_stream) {
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
  if (after_stream) {
    // The engines write when the call is made, not in the order of hw_stream_: a
    // cudaStreamWaitEvent does not hold them back (torchcodec measured it on the H100, nvJPEG
    // 12.3 to 13.2). Memory that `stream` handed out may still be read by work queued there
    // (the pool reuses a block on the same stream at once), so the host waits for that work.
    hw_before_.record(stream);
    hw_before_.poll_until_done();
  }
  STOKER_NVJPEG_CHECK(a.nvjpegDecodeBatchedInitialize(hw_handle_, hw_state_, n, 1, format));
  STOKER_NVJPEG_CHECK(a.nvjpegDecodeBatched(hw_handle_, hw_state_, data.data(), lengths.data(),
                                            images.data(), static_cast<Stream>(hw_stream_.get())));
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
  Image img{};
  img.channel[0] = t.dst;
  img.pitch[0] = t.pitch;
  w.used = true;
  STOKER_NVJPEG_CHECK(a.nvjpegDecode(handle_, w.state, t.data, t.size, format, &img,
                                     static_cast<Stream>(w.stream.get())));
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
