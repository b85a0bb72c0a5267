#include "kernels/cuda/cufft_loader.h"

#include <dlfcn.h>

#include <cstdlib>

#include "core/error.h"
#include "core/run_time_library.h"

namespace stoker::cufft {

namespace detail {

std::vector<std::string> default_candidates() {
  // An explicit choice is not second-guessed: when it fails, the error says so.
  if (const char* env = std::getenv("STOKER_CUFFT_LIBRARY"); env && *env) return {env};
  return {"libcufft.so.12", "libcufft.so.11", "libcufft.so"};
}

namespace {

const RunTimeLibrary kCufft{
    "cuFFT", "libcufft",
    "install the CUDA toolkit's cuFFT (or `pip install nvidia-cufft`) or run the operator on the "
    "CPU (device='cpu'). A library outside the loader's search path is found through "
    "LD_LIBRARY_PATH or STOKER_CUFFT_LIBRARY=/path/to/libcufft.so.12.",
    "Install the cuFFT of CUDA 12 or later"};

}  // namespace

bool load(const std::vector<std::string>& candidates, Api* api, std::string* why) {
  Api a;
  std::string path;
  // Function pointers come from dlsym as void*, which POSIX guarantees converts.
  auto fill = [&](void* lib, std::vector<std::string>* missing) {
    a = Api{};
#define STOKER_CUFFT_RESOLVE(name, params)                         \
  a.name = reinterpret_cast<decltype(a.name)>(dlsym(lib, #name)); \
  if (!a.name) missing->push_back(#name);
    STOKER_CUFFT_FUNCTIONS(STOKER_CUFFT_RESOLVE)
#undef STOKER_CUFFT_RESOLVE
  };
  if (!open_run_time_library(kCufft, candidates, fill, &path, why)) return false;
  a.path = path;
  if (a.cufftGetVersion(&a.version) != Result::kSuccess) a.version = -1;
  *api = std::move(a);
  return true;
}

}  // namespace detail

namespace {

const LoadedLibrary<Api>& loaded() {
  return load_once<Api>(&detail::load, &detail::default_candidates);
}

}  // namespace

bool cufft_available(std::string* why) {
  const auto& l = loaded();
  if (why) *why = l.why;
  return l.ok;
}

const Api& cufft_api(const std::string& op) {
  const auto& l = loaded();
  if (!l.ok) fail(ErrorKind::kUnsupported, op + ": device='gpu' needs cuFFT. " + l.why + ".");
  return l.api;
}

const char* result_name(Result r) {
  switch (r) {
    case Result::kSuccess: return "CUFFT_SUCCESS";
    case Result::kInvalidPlan: return "CUFFT_INVALID_PLAN";
    case Result::kAllocFailed: return "CUFFT_ALLOC_FAILED";
    case Result::kInvalidType: return "CUFFT_INVALID_TYPE";
    case Result::kInvalidValue: return "CUFFT_INVALID_VALUE";
    case Result::kInternalError: return "CUFFT_INTERNAL_ERROR";
    case Result::kExecFailed: return "CUFFT_EXEC_FAILED";
    case Result::kSetupFailed: return "CUFFT_SETUP_FAILED";
    case Result::kInvalidSize: return "CUFFT_INVALID_SIZE";
    case Result::kUnalignedData: return "CUFFT_UNALIGNED_DATA";
    case Result::kInvalidDevice: return "CUFFT_INVALID_DEVICE";
    case Result::kNoWorkspace: return "CUFFT_NO_WORKSPACE";
    case Result::kNotImplemented: return "CUFFT_NOT_IMPLEMENTED";
    case Result::kNotSupported: return "CUFFT_NOT_SUPPORTED";
  }
  return "CUFFT_(unknown)";
}

}  // namespace stoker::cufft
