// cuFFT, loaded at run time (the FFTs of the GPU spectrogram).
//
// stoker links the CUDA runtime statically so that `import stoker` works without a GPU driver,
// and it never links cuFFT: the first call to cufft_api() dlopens it and resolves the few
// functions below. Nothing here needs cufft.h: the types, the enum values and the prototypes are
// written out from cuFFT's documented C ABI (unchanged from cuFFT 10 to 12).
//
// Where it is looked for, in order:
//   1. $STOKER_CUFFT_LIBRARY, when set (a path or a file name);
//   2. libcufft.so.12 (CUDA 13), libcufft.so.11 (CUDA 12), libcufft.so through the dynamic
//      loader's search (LD_LIBRARY_PATH, the ld.so cache, RUNPATH).
// The library is never unloaded.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

struct CUstream_st;  // what cudaStream_t points to

namespace stoker::cufft {

using Handle = int;  // cufftHandle
using Stream = CUstream_st*;

// cufftResult
enum class Result : int {
  kSuccess = 0x0,
  kInvalidPlan = 0x1,
  kAllocFailed = 0x2,
  kInvalidType = 0x3,
  kInvalidValue = 0x4,
  kInternalError = 0x5,
  kExecFailed = 0x6,
  kSetupFailed = 0x7,
  kInvalidSize = 0x8,
  kUnalignedData = 0x9,
  kInvalidDevice = 0xB,
  kNoWorkspace = 0xD,
  kNotImplemented = 0xE,
  kNotSupported = 0x10,
};

// cufftType: real to complex, single precision.
inline constexpr int kR2C = 0x2a;

// Every function stoker resolves (all required), with cufft.h's names and parameter lists.
#define STOKER_CUFFT_FUNCTIONS(X)                                                                \
  X(cufftGetVersion, (int* version))                                                             \
  X(cufftCreate, (Handle* plan))                                                                 \
  X(cufftDestroy, (Handle plan))                                                                 \
  X(cufftSetAutoAllocation, (Handle plan, int auto_allocate))                                    \
  X(cufftMakePlanMany, (Handle plan, int rank, int* n, int* inembed, int istride, int idist,     \
                        int* onembed, int ostride, int odist, int type, int batch,               \
                        size_t* work_size))                                                      \
  X(cufftSetWorkArea, (Handle plan, void* work_area))                                            \
  X(cufftSetStream, (Handle plan, Stream stream))                                                \
  X(cufftExecR2C, (Handle plan, float* idata, void* odata))

struct Api {
#define STOKER_CUFFT_MEMBER(name, params) Result(*name) params = nullptr;
  STOKER_CUFFT_FUNCTIONS(STOKER_CUFFT_MEMBER)
#undef STOKER_CUFFT_MEMBER
  std::string path;  // what was loaded, as the dynamic loader found it
  int version = 0;   // cufftGetVersion: e.g. 12000 for cuFFT 12.0
};

// True when cuFFT loaded with every function; otherwise `why` says what is missing and what to
// do. Thread-safe; the library is looked for once per process.
bool cufft_available(std::string* why = nullptr);

// The loaded library. Throws Error(kUnsupported) naming `op` (the operator that needs it) with
// cufft_available()'s reason when absent.
const Api& cufft_api(const std::string& op);

// "CUFFT_INVALID_SIZE" for a result.
const char* result_name(Result r);

namespace detail {
// Loads the first of `candidates` that dlopen accepts and resolves the functions into *api.
bool load(const std::vector<std::string>& candidates, Api* api, std::string* why);
// The standard candidates: $STOKER_CUFFT_LIBRARY (when set), then the sonames.
std::vector<std::string> default_candidates();
}  // namespace detail

}  // namespace stoker::cufft
