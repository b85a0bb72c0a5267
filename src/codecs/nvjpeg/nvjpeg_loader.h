// nvJPEG, loaded at run time.
//
// stoker builds and imports on machines without nvJPEG (CI, CPU-only users), so the library is
// never linked: the first call to nvjpeg_api() dlopens it and resolves every function below.
// Nothing here needs nvjpeg.h or a CUDA header. The types and enums are written out from
// nvJPEG's documented C ABI (stable within a soname); tests/cpp/cuda/nvjpeg_abi_test.cc checks
// them against the real nvjpeg.h, member by member and signature by signature, wherever that
// header exists (the CUDA toolkit, or the nvidia-nvjpeg wheel via scripts/fetch_nvjpeg_headers.sh).
//
// Where it is looked for, in order:
//   1. $STOKER_NVJPEG_LIBRARY, when set (a path or a file name);
//   2. libnvjpeg.so.13, libnvjpeg.so.12, libnvjpeg.so through the dynamic loader's search
//      (LD_LIBRARY_PATH, the ld.so cache, RUNPATH).
// The library is never unloaded.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

// What cudaStream_t points to; the same incomplete type as in CUDA's own headers.
struct CUstream_st;
// nvJPEG's opaque handles, under the same global names as in nvjpeg.h, so the handle types here
// are nvjpeg.h's own and code that includes both sees one type.
struct nvjpegHandle;
struct nvjpegJpegState;
struct nvjpegBufferPinned;
struct nvjpegBufferDevice;
struct nvjpegJpegStream;
struct nvjpegDecodeParams;
struct nvjpegJpegDecoder;

namespace stoker::nvjpeg {

// nvjpegStatus_t
enum class Status : int {
  kSuccess = 0,
  kNotInitialized = 1,
  kInvalidParameter = 2,
  kBadJpeg = 3,
  kJpegNotSupported = 4,
  kAllocatorFailure = 5,
  kExecutionFailed = 6,
  kArchMismatch = 7,  // e.g. the hardware backend on a GPU without JPEG engines
  kInternalError = 8,
  kImplementationNotSupported = 9,
  kIncompleteBitstream = 10,
};

// nvjpegBackend_t
enum class Backend : int {
  kDefault = 0,
  kHybrid = 1,      // Huffman decoding on the CPU
  kGpuHybrid = 2,   // Huffman decoding on the GPU
  kHardware = 3,    // the JPEG engines of A100/H100/...: baseline, single scan, no 4:1:0/4:1:1
  kGpuHybridDevice = 4,
  kHardwareDevice = 5,
  kLosslessJpeg = 6,
};

// nvjpegOutputFormat_t. "I" formats are interleaved into channel[0].
enum class OutputFormat : int {
  kUnchanged = 0,
  kYUV = 1,
  kY = 2,
  kRGB = 3,
  kBGR = 4,
  kRGBI = 5,
  kBGRI = 6,
  kUnchangedIU16 = 7,
  kNV12 = 8,
  kYUY2 = 9,
  kUnchangedI = 10,
};

// nvjpegChromaSubsampling_t
enum class ChromaSubsampling : int {
  k444 = 0,
  k422 = 1,
  k420 = 2,
  k440 = 3,
  k411 = 4,
  k410 = 5,
  kGray = 6,
  k410V = 7,
  kUnknown = -1,
};

// nvjpegExifOrientation_t (the EXIF values 1..8; 0 when unknown)
enum class ExifOrientation : int {
  kUnknown = 0,
  kNormal = 1,
  kFlipHorizontal = 2,
  kRotate180 = 3,
  kFlipVertical = 4,
  kTranspose = 5,
  kRotate90 = 6,
  kTransverse = 7,
  kRotate270 = 8,
};

// nvjpegJpegEncoding_t: the SOF marker
enum class JpegEncoding : int {
  kUnknown = 0x0,
  kBaselineDct = 0xc0,
  kExtendedSequentialDctHuffman = 0xc1,
  kProgressiveDctHuffman = 0xc2,
  kLosslessHuffman = 0xc3,
};

// nvjpegScaleFactor_t (hardware backend only)
enum class ScaleFactor : int { kNone = 0, k1By2 = 1, k1By4 = 2, k1By8 = 3 };

// Flags of nvjpegCreateEx / nvjpegCreateExV2 (NVJPEG_FLAGS_*).
inline constexpr unsigned kFlagsDefault = 0;
inline constexpr unsigned kFlagHwDecodeNoPipeline = 1u << 0;
inline constexpr unsigned kFlagEnableMemoryPools = 1u << 1;
inline constexpr unsigned kFlagBitstreamStrict = 1u << 2;
inline constexpr unsigned kFlagReducedMemoryDecode = 1u << 3;
inline constexpr unsigned kFlagReducedMemoryDecodeZeroCopy = 1u << 4;
inline constexpr unsigned kFlagUpsamplingWithInterpolation = 1u << 5;

// libraryPropertyType values for nvjpegGetProperty.
inline constexpr int kMajorVersion = 0, kMinorVersion = 1, kPatchLevel = 2;

inline constexpr int kMaxComponent = 4;  // NVJPEG_MAX_COMPONENT

// nvjpegImage_t: one pointer and pitch (bytes) per plane; interleaved output uses plane 0.
struct Image {
  unsigned char* channel[kMaxComponent];
  size_t pitch[kMaxComponent];
};

// Allocators. The V1 ones follow cudaMalloc/cudaHostAlloc; the V2 ones get a context and the
// stream the memory is for, which lets a stream-ordered pool serve nvJPEG's scratch memory.
// All return 0 on success.
struct DevAllocator {
  int (*dev_malloc)(void** ptr, size_t size);
  int (*dev_free)(void* ptr);
};
struct PinnedAllocator {
  int (*pinned_malloc)(void** ptr, size_t size, unsigned int flags);
  int (*pinned_free)(void* ptr);
};
struct DevAllocatorV2 {
  int (*dev_malloc)(void* ctx, void** ptr, size_t size, CUstream_st* stream);
  int (*dev_free)(void* ctx, void* ptr, size_t size, CUstream_st* stream);
  void* dev_ctx;
};
struct PinnedAllocatorV2 {
  int (*pinned_malloc)(void* ctx, void** ptr, size_t size, CUstream_st* stream);
  int (*pinned_free)(void* ctx, void* ptr, size_t size, CUstream_st* stream);
  void* pinned_ctx;
};

using Handle = nvjpegHandle*;
using JpegState = nvjpegJpegState*;
using BufferPinned = nvjpegBufferPinned*;
using BufferDevice = nvjpegBufferDevice*;
using JpegStream = nvjpegJpegStream*;
using DecodeParams = nvjpegDecodeParams*;
using JpegDecoder = nvjpegJpegDecoder*;
using Stream = CUstream_st*;  // a cudaStream_t

// Every function stoker resolves: REQ(name, parameters) must exist or nvJPEG counts as
// unavailable; OPT(name, parameters) may be missing in older releases (the member is then
// null and callers take another path). All return Status. Names and parameter lists are those
// of nvjpeg.h; the ABI test compares each one with the real declaration.
//
// Note nvJPEG's own inverted convention in the *Supported functions: *is_supported == 0 means
// the decoder CAN take the stream.
#define STOKER_NVJPEG_FUNCTIONS(REQ, OPT)                                                          \
  /* library and handles */                                                                        \
  REQ(nvjpegGetProperty, (int type, int* value))                                                   \
  OPT(nvjpegGetCudartProperty, (int type, int* value))                                             \
  REQ(nvjpegCreateSimple, (Handle* handle))                                                        \
  REQ(nvjpegCreateEx, (Backend backend, DevAllocator* dev_allocator,                               \
                       PinnedAllocator* pinned_allocator, unsigned int flags, Handle* handle))     \
  OPT(nvjpegCreateExV2, (Backend backend, DevAllocatorV2* dev_allocator,                           \
                         PinnedAllocatorV2* pinned_allocator, unsigned int flags,                  \
                         Handle* handle))                                                          \
  REQ(nvjpegDestroy, (Handle handle))                                                              \
  REQ(nvjpegSetDeviceMemoryPadding, (size_t padding, Handle handle))                               \
  REQ(nvjpegSetPinnedMemoryPadding, (size_t padding, Handle handle))                               \
  REQ(nvjpegGetHardwareDecoderInfo, (Handle handle, unsigned int* num_engines,                     \
                                     unsigned int* num_cores_per_engine))                          \
  REQ(nvjpegJpegStateCreate, (Handle handle, JpegState* state))                                    \
  REQ(nvjpegJpegStateDestroy, (JpegState state))                                                   \
  REQ(nvjpegGetImageInfo, (Handle handle, const unsigned char* data, size_t length,                \
                           int* num_components, ChromaSubsampling* subsampling, int* widths,       \
                           int* heights))                                                          \
  /* single image and batched decoding */                                                          \
  REQ(nvjpegDecode, (Handle handle, JpegState state, const unsigned char* data, size_t length,     \
                     OutputFormat output_format, Image* destination, Stream stream))               \
  REQ(nvjpegDecodeBatchedInitialize, (Handle handle, JpegState state, int batch_size,              \
                                      int max_cpu_threads, OutputFormat output_format))            \
  REQ(nvjpegDecodeBatched, (Handle handle, JpegState state, const unsigned char* const* data,      \
                            const size_t* lengths, Image* destinations, Stream stream))            \
  REQ(nvjpegDecodeBatchedEx, (Handle handle, JpegState state, const unsigned char* const* data,    \
                              const size_t* lengths, Image* destinations,                          \
                              DecodeParams* decode_params, Stream stream))                         \
  REQ(nvjpegDecodeBatchedPreAllocate, (Handle handle, JpegState state, int batch_size,             \
                                       int width, int height,                                      \
                                       ChromaSubsampling chroma_subsampling,                       \
                                       OutputFormat output_format))                                \
  OPT(nvjpegDecodeBatchedParseJpegTables, (Handle handle, JpegState state,                         \
                                           const unsigned char* data, const size_t length))        \
  REQ(nvjpegDecodeBatchedSupported, (Handle handle, JpegStream jpeg_stream, int* is_supported))    \
  REQ(nvjpegDecodeBatchedSupportedEx, (Handle handle, JpegStream jpeg_stream,                      \
                                       DecodeParams decode_params, int* is_supported))             \
  /* buffers */                                                                                    \
  REQ(nvjpegBufferPinnedCreate, (Handle handle, PinnedAllocator* pinned_allocator,                 \
                                 BufferPinned* buffer))                                            \
  OPT(nvjpegBufferPinnedCreateV2, (Handle handle, PinnedAllocatorV2* pinned_allocator,             \
                                   BufferPinned* buffer))                                          \
  REQ(nvjpegBufferPinnedDestroy, (BufferPinned buffer))                                            \
  REQ(nvjpegBufferDeviceCreate, (Handle handle, DevAllocator* device_allocator,                    \
                                 BufferDevice* buffer))                                            \
  OPT(nvjpegBufferDeviceCreateV2, (Handle handle, DevAllocatorV2* device_allocator,                \
                                   BufferDevice* buffer))                                          \
  REQ(nvjpegBufferDeviceDestroy, (BufferDevice buffer))                                            \
  REQ(nvjpegStateAttachPinnedBuffer, (JpegState state, BufferPinned pinned_buffer))                \
  REQ(nvjpegStateAttachDeviceBuffer, (JpegState state, BufferDevice device_buffer))                \
  /* parsed streams */                                                                             \
  REQ(nvjpegJpegStreamCreate, (Handle handle, JpegStream* jpeg_stream))                            \
  REQ(nvjpegJpegStreamDestroy, (JpegStream jpeg_stream))                                           \
  REQ(nvjpegJpegStreamParse, (Handle handle, const unsigned char* data, size_t length,             \
                              int save_metadata, int save_stream, JpegStream jpeg_stream))         \
  REQ(nvjpegJpegStreamParseHeader, (Handle handle, const unsigned char* data, size_t length,       \
                                    JpegStream jpeg_stream))                                       \
  REQ(nvjpegJpegStreamGetJpegEncoding, (JpegStream jpeg_stream, JpegEncoding* encoding))           \
  REQ(nvjpegJpegStreamGetFrameDimensions, (JpegStream jpeg_stream, unsigned int* width,            \
                                           unsigned int* height))                                  \
  REQ(nvjpegJpegStreamGetComponentsNum, (JpegStream jpeg_stream, unsigned int* components_num))    \
  REQ(nvjpegJpegStreamGetComponentDimensions, (JpegStream jpeg_stream, unsigned int component,     \
                                               unsigned int* width, unsigned int* height))         \
  REQ(nvjpegJpegStreamGetChromaSubsampling, (JpegStream jpeg_stream,                               \
                                             ChromaSubsampling* chroma_subsampling))               \
  REQ(nvjpegJpegStreamGetExifOrientation, (JpegStream jpeg_stream,                                 \
                                           ExifOrientation* orientation_flag))                     \
  OPT(nvjpegJpegStreamGetSamplePrecision, (JpegStream jpeg_stream, unsigned int* precision))       \
  /* decode parameters */                                                                          \
  REQ(nvjpegDecodeParamsCreate, (Handle handle, DecodeParams* decode_params))                      \
  REQ(nvjpegDecodeParamsDestroy, (DecodeParams decode_params))                                     \
  REQ(nvjpegDecodeParamsSetOutputFormat, (DecodeParams decode_params,                              \
                                          OutputFormat output_format))                             \
  REQ(nvjpegDecodeParamsSetROI, (DecodeParams decode_params, int offset_x, int offset_y,           \
                                 int roi_width, int roi_height))                                   \
  REQ(nvjpegDecodeParamsSetAllowCMYK, (DecodeParams decode_params, int allow_cmyk))                \
  REQ(nvjpegDecodeParamsSetExifOrientation, (DecodeParams decode_params,                           \
                                             ExifOrientation orientation))                         \
  OPT(nvjpegDecodeParamsSetScaleFactor, (DecodeParams decode_params, ScaleFactor scale_factor))    \
  /* decoupled decoding: host (Huffman) stage, transfer, device stage */                           \
  REQ(nvjpegDecoderCreate, (Handle handle, Backend implementation, JpegDecoder* decoder))          \
  REQ(nvjpegDecoderDestroy, (JpegDecoder decoder))                                                 \
  REQ(nvjpegDecoderJpegSupported, (JpegDecoder decoder, JpegStream jpeg_stream,                    \
                                   DecodeParams decode_params, int* is_supported))                 \
  REQ(nvjpegDecoderStateCreate, (Handle handle, JpegDecoder decoder, JpegState* state))            \
  REQ(nvjpegDecodeJpeg, (Handle handle, JpegDecoder decoder, JpegState state,                      \
                         JpegStream jpeg_stream, Image* destination,                               \
                         DecodeParams decode_params, Stream stream))                               \
  REQ(nvjpegDecodeJpegHost, (Handle handle, JpegDecoder decoder, JpegState state,                  \
                             DecodeParams decode_params, JpegStream jpeg_stream))                  \
  REQ(nvjpegDecodeJpegTransferToDevice, (Handle handle, JpegDecoder decoder, JpegState state,      \
                                         JpegStream jpeg_stream, Stream stream))                   \
  REQ(nvjpegDecodeJpegDevice, (Handle handle, JpegDecoder decoder, JpegState state,                \
                               Image* destination, Stream stream))

// The resolved functions, one member per entry above, named as in nvjpeg.h.
struct Api {
#define STOKER_NVJPEG_MEMBER(name, params) Status(*name) params = nullptr;
  STOKER_NVJPEG_FUNCTIONS(STOKER_NVJPEG_MEMBER, STOKER_NVJPEG_MEMBER)
#undef STOKER_NVJPEG_MEMBER

  std::string path;     // what was loaded, as the dynamic loader found it
  int version[3] = {};  // nvJPEG's major, minor, patch
};

// True when nvJPEG loaded with every required function; otherwise `why` says what is missing
// and what to do. Thread-safe; the library is looked for once per process.
bool nvjpeg_available(std::string* why = nullptr);

// The loaded library. Throws Error(kUnsupported) with nvjpeg_available()'s reason when absent.
const Api& nvjpeg_api();

// "NVJPEG_STATUS_BAD_JPEG" for a status.
const char* status_name(Status s);

// Throws Error for a status other than kSuccess: bad or truncated data -> kDecode, an
// unsupported JPEG or a backend this GPU lacks -> kUnsupported, allocator failure ->
// kOutOfMemory, anything else -> kInternal. The message names the call and the status.
[[noreturn]] void throw_status(Status s, const char* call, const char* file, int line);

#define STOKER_NVJPEG_CHECK(expr)                                                      \
  do {                                                                                 \
    const ::stoker::nvjpeg::Status stoker_nvjpeg_status_ = (expr);                     \
    if (stoker_nvjpeg_status_ != ::stoker::nvjpeg::Status::kSuccess)                   \
      ::stoker::nvjpeg::throw_status(stoker_nvjpeg_status_, #expr, __FILE__, __LINE__); \
  } while (0)

namespace detail {
// Loads the first of `candidates` that dlopen accepts and resolves the functions into *api.
// Returns false, with the reason in *why, when none loads or a required function is missing.
// Used once by nvjpeg_api() with the standard candidates; the tests call it with others.
bool load(const std::vector<std::string>& candidates, Api* api, std::string* why);
// The standard candidates: $STOKER_NVJPEG_LIBRARY (when set), then the sonames.
std::vector<std::string> default_candidates();
}  // namespace detail

}  // namespace stoker::nvjpeg
