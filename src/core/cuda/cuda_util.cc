#include "core/cuda/cuda_util.h"

#include <cuda_runtime_api.h>

#include <chrono>
#include <mutex>
#include <thread>
#include <utility>

#include "core/error.h"

namespace stoker {

namespace {

ErrorKind kind_of(cudaError_t e) {
  switch (e) {
    case cudaErrorMemoryAllocation:
      return ErrorKind::kOutOfMemory;
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorStubLibrary:
    case cudaErrorCallRequiresNewerDriver:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorCompatNotSupportedOnDevice:
    case cudaErrorDevicesUnavailable:
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorUnsupportedPtxVersion:
    case cudaErrorInitializationError:
      return ErrorKind::kUnsupported;
    case cudaErrorInvalidDevice:
      return ErrorKind::kInvalidArgument;
    default:
      return ErrorKind::kInternal;
  }
}

// What a user should do about an error of this kind; empty when nothing helps but a bug report.
const char* hint_for(cudaError_t e) {
  switch (e) {
    case cudaErrorMemoryAllocation:
      return " Lower batch_size or prefetch_queue_depth, or free GPU memory held elsewhere.";
    case cudaErrorNoKernelImageForDevice:
    case cudaErrorUnsupportedPtxVersion:
      return " This build of stoker has no code for this GPU: rebuild with "
             "CMAKE_CUDA_ARCHITECTURES naming it, or run on the CPU (device='cpu').";
    case cudaErrorInvalidDevice:
      return "";
    default:
      return kind_of(e) == ErrorKind::kUnsupported
                 ? " Run on the CPU instead (device='cpu', device_id=None)."
                 : "";
  }
}

struct DeviceCount {
  int count = 0;
  std::string why;  // empty when count > 0
};

const DeviceCount& device_count_once() {
  static const DeviceCount dc = [] {
    DeviceCount r;
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
      cudaGetLastError();
      n = 0;
      switch (e) {
        case cudaErrorInsufficientDriver:
        case cudaErrorStubLibrary:
          r.why = "no CUDA driver was found, or it is older than this build's CUDA runtime";
          break;
        case cudaErrorNoDevice:
          r.why = "no CUDA-capable GPU was found";
          break;
        default:
          r.why = "CUDA could not be initialised";
      }
      r.why += " (" + cuda_error_string(e) + ")";
    } else if (n == 0) {
      r.why = "no CUDA-capable GPU was found (CUDA_VISIBLE_DEVICES may hide them)";
    }
    r.count = n;
    return r;
  }();
  return dc;
}

}  // namespace

namespace detail {

void throw_cuda_error(int code, const char* call, const char* file, int line) {
  auto e = static_cast<cudaError_t>(code);
  cudaGetLastError();  // clears a non-sticky error; a sticky one stays, as it must
  fail(kind_of(e), std::string("CUDA call ") + call + " failed at " + file + ":" +
                       std::to_string(line) + ": " + cuda_error_string(code) + "." + hint_for(e));
}

}  // namespace detail

std::string cuda_error_string(int code) {
  auto e = static_cast<cudaError_t>(code);
  const char* name = cudaGetErrorName(e);
  const char* text = cudaGetErrorString(e);
  return std::string(name ? name : "cudaError?") + " (" + (text ? text : "unknown error") + ")";
}

int cuda_device_count() { return device_count_once().count; }

bool cuda_available(std::string* why) {
  const DeviceCount& dc = device_count_once();
  if (why) *why = dc.why;
  return dc.count > 0;
}

void check_device(int device) {
  const DeviceCount& dc = device_count_once();
  if (dc.count == 0)
    fail(ErrorKind::kUnsupported, "no usable CUDA device: " + dc.why +
                                      ". Run on the CPU instead (device='cpu', device_id=None).");
  if (device < 0 || device >= dc.count)
    fail(ErrorKind::kInvalidArgument,
         "device_id " + std::to_string(device) + " is not a CUDA device of this machine: it has " +
             std::to_string(dc.count) + " (device_id 0.." + std::to_string(dc.count - 1) + ")");
}

int current_device() {
  int d = 0;
  STOKER_CUDA_CHECK(cudaGetDevice(&d));
  return d;
}

int cuda_device_major(int device) {
  int major = 0;
  STOKER_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  return major;
}

DeviceGuard::DeviceGuard(int device) {
  if (device < 0) return;
  check_device(device);
  int prev = 0;
  STOKER_CUDA_CHECK(cudaGetDevice(&prev));
  if (prev != device) {
    STOKER_CUDA_CHECK(cudaSetDevice(device));
    previous_ = prev;
  }
}

DeviceGuard::~DeviceGuard() {
  if (previous_ >= 0 && cudaSetDevice(previous_) != cudaSuccess) cudaGetLastError();
}

// ---- CudaStream

CudaStream::CudaStream(int device, int priority) : device_(device) {
  DeviceGuard g(device);
  cudaStream_t s = nullptr;
  STOKER_CUDA_CHECK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, priority));
  stream_ = s;
}

CudaStream::~CudaStream() { reset(); }

CudaStream::CudaStream(CudaStream&& other) noexcept
    : stream_(std::exchange(other.stream_, nullptr)), device_(std::exchange(other.device_, -1)) {}

CudaStream& CudaStream::operator=(CudaStream&& other) noexcept {
  if (this != &other) {
    reset();
    stream_ = std::exchange(other.stream_, nullptr);
    device_ = std::exchange(other.device_, -1);
  }
  return *this;
}

void CudaStream::reset() noexcept {
  // Work still queued on the stream completes; CUDA frees the stream afterwards. Errors are
  // ignored: at process exit the runtime may already be unloading.
  if (stream_ && cudaStreamDestroy(static_cast<cudaStream_t>(stream_)) != cudaSuccess)
    cudaGetLastError();
  stream_ = nullptr;
}

void CudaStream::synchronize() const {
  STOKER_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(stream_)));
}

bool CudaStream::query() const {
  cudaError_t e = cudaStreamQuery(static_cast<cudaStream_t>(stream_));
  if (e == cudaErrorNotReady) return false;
  STOKER_CUDA_CHECK(e);
  return true;
}

void CudaStream::wait(EventHandle event) const {
  STOKER_CUDA_CHECK(cudaStreamWaitEvent(static_cast<cudaStream_t>(stream_),
                                        static_cast<cudaEvent_t>(event), 0));
}

// ---- CudaEvent

CudaEvent::CudaEvent(int device, bool enable_timing) : device_(device) {
  DeviceGuard g(device);
  cudaEvent_t e = nullptr;
  STOKER_CUDA_CHECK(cudaEventCreateWithFlags(&e, enable_timing ? cudaEventDefault
                                                               : cudaEventDisableTiming));
  event_ = e;
}

CudaEvent::~CudaEvent() { reset(); }

CudaEvent::CudaEvent(CudaEvent&& other) noexcept
    : event_(std::exchange(other.event_, nullptr)), device_(std::exchange(other.device_, -1)) {}

CudaEvent& CudaEvent::operator=(CudaEvent&& other) noexcept {
  if (this != &other) {
    reset();
    event_ = std::exchange(other.event_, nullptr);
    device_ = std::exchange(other.device_, -1);
  }
  return *this;
}

void CudaEvent::reset() noexcept {
  if (event_ && cudaEventDestroy(static_cast<cudaEvent_t>(event_)) != cudaSuccess)
    cudaGetLastError();
  event_ = nullptr;
}

void CudaEvent::record(StreamHandle stream) {
  STOKER_CUDA_CHECK(
      cudaEventRecord(static_cast<cudaEvent_t>(event_), static_cast<cudaStream_t>(stream)));
}

bool CudaEvent::query() const {
  cudaError_t e = cudaEventQuery(static_cast<cudaEvent_t>(event_));
  if (e == cudaErrorNotReady) return false;
  STOKER_CUDA_CHECK(e);
  return true;
}

void CudaEvent::synchronize() const {
  STOKER_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(event_)));
}

void CudaEvent::poll_until_done() const {
  for (int spins = 0; !query(); ++spins)
    std::this_thread::sleep_for(std::chrono::microseconds(spins < 20 ? 10 : 100));
}

float CudaEvent::elapsed_ms_since(const CudaEvent& start) const {
  float ms = 0;
  STOKER_CUDA_CHECK(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(start.event_),
                                         static_cast<cudaEvent_t>(event_)));
  return ms;
}

// ---- copies

void cuda_memcpy_async(void* dst, const void* src, size_t bytes, StreamHandle stream) {
  if (bytes == 0) return;
  STOKER_CUDA_CHECK(
      cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, static_cast<cudaStream_t>(stream)));
}

void cuda_memset_async(void* dst, int value, size_t bytes, StreamHandle stream) {
  if (bytes == 0) return;
  STOKER_CUDA_CHECK(cudaMemsetAsync(dst, value, bytes, static_cast<cudaStream_t>(stream)));
}

void cuda_stream_synchronize(StreamHandle stream) {
  STOKER_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
}

void cuda_device_synchronize() { STOKER_CUDA_CHECK(cudaDeviceSynchronize()); }

}  // namespace stoker

namespace stoker {

void cuda_stream_wait_event(StreamHandle stream, EventHandle event) {
  STOKER_CUDA_CHECK(cudaStreamWaitEvent(static_cast<cudaStream_t>(stream),
                                        static_cast<cudaEvent_t>(event), 0));
}

void cuda_event_synchronize(EventHandle event) {
  STOKER_CUDA_CHECK(cudaEventSynchronize(static_cast<cudaEvent_t>(event)));
}

}  // namespace stoker
