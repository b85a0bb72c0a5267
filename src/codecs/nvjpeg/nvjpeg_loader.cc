#include "codecs/nvjpeg/nvjpeg_loader.h"

#include <dlfcn.h>

#include <cstdlib>

#include "core/error.h"
#include "core/run_time_library.h"

namespace stoker::nvjpeg {

namespace detail {

std::vector<std::string> default_candidates() {
  // An explicit choice is not second-guessed: when it fails, the error says so.
  if (const char* env = std::getenv("STOKER_NVJPEG_LIBRARY"); env && *env) return {env};
  return {"libnvjpeg.so.13", "libnvjpeg.so.12", "libnvjpeg.so"};
}

namespace {

// Resolves every function from `lib` into *api; the names of missing required ones go to
// *missing. Function pointers come from dlsym as void*, which POSIX guarantees converts.
void resolve(void* lib, Api* api, std::vector<std::string>* missing) {
#define STOKER_NVJPEG_RESOLVE(name, params, required)                     \
  api->name = reinterpret_cast<decltype(api->name)>(dlsym(lib, #name)); \
  if (!api->name && required) missing->push_back(#name);
#define STOKER_NVJPEG_REQ(name, params) STOKER_NVJPEG_RESOLVE(name, params, true)
#define STOKER_NVJPEG_OPT(name, params) STOKER_NVJPEG_RESOLVE(name, params, false)
  STOKER_NVJPEG_FUNCTIONS(STOKER_NVJPEG_REQ, STOKER_NVJPEG_OPT)
#undef STOKER_NVJPEG_REQ
#undef STOKER_NVJPEG_OPT
#undef STOKER_NVJPEG_RESOLVE
}

const RunTimeLibrary kNvjpeg{
    "nvJPEG", "libnvjpeg",
    "install the CUDA toolkit's nvJPEG or run on the CPU (device='cpu'). A library outside the "
    "loader's search path is found through LD_LIBRARY_PATH or "
    "STOKER_NVJPEG_LIBRARY=/path/to/libnvjpeg.so.13.",
    "Install the nvJPEG of CUDA 12 or later, or run on the CPU (device='cpu')"};

}  // namespace

bool load(const std::vector<std::string>& candidates, Api* api, std::string* why) {
  Api a;
  std::string path;
  auto fill = [&](void* lib, std::vector<std::string>* missing) {
    a = Api{};
    resolve(lib, &a, missing);
  };
  if (!open_run_time_library(kNvjpeg, candidates, fill, &path, why)) return false;
  a.path = path;
  for (int i = 0; i < 3; ++i)
    if (a.nvjpegGetProperty(i, &a.version[i]) != Status::kSuccess) a.version[i] = -1;
  *api = std::move(a);
  return true;
}

}  // namespace detail

namespace {

const LoadedLibrary<Api>& loaded() {
  return load_once<Api>(&detail::load, &detail::default_candidates);
}

}  // namespace

bool nvjpeg_available(std::string* why) {
  const auto& l = loaded();
  if (why) *why = l.why;
  return l.ok;
}

const Api& nvjpeg_api() {
  const auto& l = loaded();
  if (!l.ok) fail(ErrorKind::kUnsupported, l.why);
  return l.api;
}

const char* status_name(Status s) {
  switch (s) {
    case Status::kSuccess: return "NVJPEG_STATUS_SUCCESS";
    case Status::kNotInitialized: return "NVJPEG_STATUS_NOT_INITIALIZED";
    case Status::kInvalidParameter: return "NVJPEG_STATUS_INVALID_PARAMETER";
    case Status::kBadJpeg: return "NVJPEG_STATUS_BAD_JPEG";
    case Status::kJpegNotSupported: return "NVJPEG_STATUS_JPEG_NOT_SUPPORTED";
    case Status::kAllocatorFailure: return "NVJPEG_STATUS_ALLOCATOR_FAILURE";
    case Status::kExecutionFailed: return "NVJPEG_STATUS_EXECUTION_FAILED";
    case Status::kArchMismatch: return "NVJPEG_STATUS_ARCH_MISMATCH";
    case Status::kInternalError: return "NVJPEG_STATUS_INTERNAL_ERROR";
    case Status::kImplementationNotSupported: return "NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED";
    case Status::kIncompleteBitstream: return "NVJPEG_STATUS_INCOMPLETE_BITSTREAM";
  }
  return "NVJPEG_STATUS_(unknown)";
}

namespace {

struct Meaning {
  ErrorKind kind;
  const char* text;
};

Meaning meaning_of(Status s) {
  switch (s) {
    case Status::kBadJpeg: return {ErrorKind::kDecode, "the data is not a valid JPEG"};
    case Status::kIncompleteBitstream: return {ErrorKind::kDecode, "the JPEG data is truncated"};
    case Status::kJpegNotSupported:
      return {ErrorKind::kUnsupported, "nvJPEG does not support this kind of JPEG"};
    case Status::kArchMismatch:
      return {ErrorKind::kUnsupported, "this GPU does not support the requested nvJPEG backend"};
    case Status::kImplementationNotSupported:
      return {ErrorKind::kUnsupported, "the nvJPEG backend does not implement this operation"};
    case Status::kAllocatorFailure:
      return {ErrorKind::kOutOfMemory, "nvJPEG could not allocate memory"};
    case Status::kExecutionFailed:
      return {ErrorKind::kInternal, "a GPU operation inside nvJPEG failed"};
    default:
      return {ErrorKind::kInternal, "nvJPEG was misused or failed internally"};
  }
}

}  // namespace

void throw_status(Status s, const char* call, const char* file, int line) {
  Meaning m = meaning_of(s);
  fail(m.kind, std::string("nvJPEG call ") + call + " failed at " + file + ":" +
                   std::to_string(line) + ": " + status_name(s) + " (" + m.text + ")");
}

}  // namespace stoker::nvjpeg
