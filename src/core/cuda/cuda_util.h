// CUDA basics every GPU part of stoker shares: error checking, device queries, the current
// device, streams and events.
//
// No CUDA header is included here (STYLE.md 5): streams and events travel as opaque handles
// (a StreamHandle is a cudaStream_t, an EventHandle a cudaEvent_t), so this header may reach the
// Python bindings and the public API. Files that call the CUDA runtime themselves include
// <cuda_runtime_api.h> next to this one and check every call with STOKER_CUDA_CHECK.
#pragma once
#include <cstddef>
#include <string>

namespace stoker {

using StreamHandle = void*;  // a cudaStream_t; nullptr is the legacy default stream
using EventHandle = void*;   // a cudaEvent_t

// Throws Error for a failed CUDA call unless `code` is cudaSuccess (0). The error kind:
//   cudaErrorMemoryAllocation                                   -> kOutOfMemory
//   no device, no or too old a driver, device unavailable,
//   no kernel image for this GPU                                -> kUnsupported
//   invalid device ordinal                                      -> kInvalidArgument
//   anything else                                               -> kInternal
// The message names the call, where it was made, and the CUDA error's name and description.
// A non-sticky error is also cleared from the runtime's "last error" so it cannot resurface
// in an unrelated check later.
#define STOKER_CUDA_CHECK(expr)                                                               \
  do {                                                                                        \
    const int stoker_cuda_status_ = static_cast<int>(expr);                                   \
    if (stoker_cuda_status_ != 0)                                                             \
      ::stoker::detail::throw_cuda_error(stoker_cuda_status_, #expr, __FILE__, __LINE__);     \
  } while (0)

namespace detail {
[[noreturn]] void throw_cuda_error(int code, const char* call, const char* file, int line);
}  // namespace detail

// "cudaErrorMemoryAllocation (out of memory)" for a cudaError_t value.
std::string cuda_error_string(int code);

// Number of CUDA devices this process can use. 0, never an exception, when there is no driver,
// no GPU, or CUDA_VISIBLE_DEVICES hides them all. The answer is computed once per process.
int cuda_device_count();

// True when at least one device is usable; otherwise `why` (if given) says what is missing,
// e.g. "no CUDA driver was found (cudaErrorInsufficientDriver: ...)".
bool cuda_available(std::string* why = nullptr);

// Throws Error(kUnsupported) when there is no usable GPU and Error(kInvalidArgument) when
// `device` is not one of them. The message says how many GPUs there are and how to run
// without one.
void check_device(int device);

// Makes `device` current for this thread for the guard's lifetime and then restores the
// device that was current before. A negative device leaves the current device alone.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

int current_device();
// The major compute capability of `device` (8: Ampere, 9: Hopper, ...).
int cuda_device_major(int device);

// An owned non-blocking stream: it never synchronises with the legacy default stream, so work
// queued on it runs alongside other libraries' default-stream work (DESIGN.md: never the
// default stream, never a hidden device synchronisation).
class CudaStream {
 public:
  CudaStream() = default;  // empty: get() == nullptr
  // Creates a stream on `device`; a lower `priority` number is a higher priority (CUDA's rule).
  explicit CudaStream(int device, int priority = 0);
  ~CudaStream();
  CudaStream(CudaStream&& other) noexcept;
  CudaStream& operator=(CudaStream&& other) noexcept;
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;

  StreamHandle get() const { return stream_; }
  int device() const { return device_; }
  explicit operator bool() const { return stream_ != nullptr; }

  void synchronize() const;
  bool query() const;  // true when all work queued so far has finished
  void wait(EventHandle event) const;  // later work on this stream waits for `event`

 private:
  void reset() noexcept;
  StreamHandle stream_ = nullptr;
  int device_ = -1;
};

// An owned event. Timing is off by default: such events are cheaper to record and query, and
// stoker uses events for ordering far more often than for measuring.
class CudaEvent {
 public:
  CudaEvent() = default;  // empty: get() == nullptr
  explicit CudaEvent(int device, bool enable_timing = false);
  ~CudaEvent();
  CudaEvent(CudaEvent&& other) noexcept;
  CudaEvent& operator=(CudaEvent&& other) noexcept;
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;

  EventHandle get() const { return event_; }
  int device() const { return device_; }
  explicit operator bool() const { return event_ != nullptr; }

  void record(StreamHandle stream);  // the stream must be on this event's device
  bool query() const;  // true when the recorded work has finished (or nothing was recorded)
  void synchronize() const;
  // Waits like synchronize(), but by asking (cudaEventQuery) and sleeping in between, so that
  // no CUDA call is in progress on this thread while the work runs (see nvjpeg_decoder.cc).
  void poll_until_done() const;
  // Milliseconds from `start` to this event; both need enable_timing and must have completed.
  float elapsed_ms_since(const CudaEvent& start) const;

 private:
  void reset() noexcept;
  EventHandle event_ = nullptr;
  int device_ = -1;
};

// Plain copies between any two of host, pinned and device memory (unified addressing tells
// the direction). The async one is ordered on `stream`; from pageable host memory it may
// return only after the source was read, as cudaMemcpyAsync does.
void cuda_memcpy_async(void* dst, const void* src, size_t bytes, StreamHandle stream);
void cuda_memset_async(void* dst, int value, size_t bytes, StreamHandle stream);
// Later work on `stream` waits for `event` (no host wait).
void cuda_stream_wait_event(StreamHandle stream, EventHandle event);
void cuda_event_synchronize(EventHandle event);
void cuda_stream_synchronize(StreamHandle stream);
void cuda_device_synchronize();  // the current device

}  // namespace stoker
