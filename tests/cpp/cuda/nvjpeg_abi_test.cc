// Checks the nvJPEG declarations of codecs/nvjpeg/nvjpeg_loader.h against the real nvjpeg.h:
// every enum value, every struct layout and every resolved function's full signature. All
// checks are static_asserts, so a mismatch fails the build. Built only where nvjpeg.h is
// found (see src/codecs/nvjpeg/sources.cmake).
#include <nvjpeg.h>

#include <gtest/gtest.h>

#include <cstddef>
#include <type_traits>

#include "codecs/nvjpeg/nvjpeg_loader.h"

namespace stoker::nvjpeg {
namespace {

// Map<T>: a type of nvjpeg.h rewritten with the loader's own types, so that a real function
// type can be compared with the loader's as a whole.
template <class T> struct Map { using type = T; };
template <class T> struct Map<T*> { using type = typename Map<T>::type*; };
template <class T> struct Map<const T> { using type = const typename Map<T>::type; };
template <class R, class... A> struct Map<R(A...)> {
  using type = typename Map<R>::type(typename Map<A>::type...);
};
template <> struct Map<nvjpegStatus_t> { using type = Status; };
template <> struct Map<nvjpegBackend_t> { using type = Backend; };
template <> struct Map<nvjpegOutputFormat_t> { using type = OutputFormat; };
template <> struct Map<nvjpegChromaSubsampling_t> { using type = ChromaSubsampling; };
template <> struct Map<nvjpegExifOrientation_t> { using type = ExifOrientation; };
template <> struct Map<nvjpegJpegEncoding_t> { using type = JpegEncoding; };
template <> struct Map<nvjpegScaleFactor_t> { using type = ScaleFactor; };
template <> struct Map<libraryPropertyType> { using type = int; };
template <> struct Map<nvjpegImage_t> { using type = Image; };
template <> struct Map<nvjpegDevAllocator_t> { using type = DevAllocator; };
template <> struct Map<nvjpegPinnedAllocator_t> { using type = PinnedAllocator; };
template <> struct Map<nvjpegDevAllocatorV2_t> { using type = DevAllocatorV2; };
template <> struct Map<nvjpegPinnedAllocatorV2_t> { using type = PinnedAllocatorV2; };

#define STOKER_SAME_SIGNATURE(name, params)                                            \
  static_assert(std::is_same_v<Map<decltype(::name)>::type, Status params>,            \
                "codecs/nvjpeg/nvjpeg_loader.h declares " #name " unlike nvjpeg.h");
STOKER_NVJPEG_FUNCTIONS(STOKER_SAME_SIGNATURE, STOKER_SAME_SIGNATURE)
#undef STOKER_SAME_SIGNATURE

// Handles and streams are the very same types.
static_assert(std::is_same_v<Handle, nvjpegHandle_t>);
static_assert(std::is_same_v<JpegState, nvjpegJpegState_t>);
static_assert(std::is_same_v<BufferPinned, nvjpegBufferPinned_t>);
static_assert(std::is_same_v<BufferDevice, nvjpegBufferDevice_t>);
static_assert(std::is_same_v<JpegStream, nvjpegJpegStream_t>);
static_assert(std::is_same_v<DecodeParams, nvjpegDecodeParams_t>);
static_assert(std::is_same_v<JpegDecoder, nvjpegJpegDecoder_t>);
static_assert(std::is_same_v<Stream, cudaStream_t>);

#define STOKER_SAME_LAYOUT(mine, theirs)                          \
  static_assert(sizeof(mine) == sizeof(theirs), #mine " size");   \
  static_assert(alignof(mine) == alignof(theirs), #mine " alignment");
STOKER_SAME_LAYOUT(Status, nvjpegStatus_t)
STOKER_SAME_LAYOUT(Backend, nvjpegBackend_t)
STOKER_SAME_LAYOUT(OutputFormat, nvjpegOutputFormat_t)
STOKER_SAME_LAYOUT(ChromaSubsampling, nvjpegChromaSubsampling_t)
STOKER_SAME_LAYOUT(ExifOrientation, nvjpegExifOrientation_t)
STOKER_SAME_LAYOUT(JpegEncoding, nvjpegJpegEncoding_t)
STOKER_SAME_LAYOUT(ScaleFactor, nvjpegScaleFactor_t)
STOKER_SAME_LAYOUT(int, libraryPropertyType)
STOKER_SAME_LAYOUT(Image, nvjpegImage_t)
STOKER_SAME_LAYOUT(DevAllocator, nvjpegDevAllocator_t)
STOKER_SAME_LAYOUT(PinnedAllocator, nvjpegPinnedAllocator_t)
STOKER_SAME_LAYOUT(DevAllocatorV2, nvjpegDevAllocatorV2_t)
STOKER_SAME_LAYOUT(PinnedAllocatorV2, nvjpegPinnedAllocatorV2_t)
#undef STOKER_SAME_LAYOUT

#define STOKER_SAME_MEMBER(mine, theirs, member)                                                \
  static_assert(offsetof(mine, member) == offsetof(theirs, member), #mine "::" #member);       \
  static_assert(std::is_same_v<Map<decltype(theirs::member)>::type, decltype(mine::member)>, \
                #mine "::" #member " type");
STOKER_SAME_MEMBER(Image, nvjpegImage_t, channel)
STOKER_SAME_MEMBER(Image, nvjpegImage_t, pitch)
STOKER_SAME_MEMBER(DevAllocator, nvjpegDevAllocator_t, dev_malloc)
STOKER_SAME_MEMBER(DevAllocator, nvjpegDevAllocator_t, dev_free)
STOKER_SAME_MEMBER(PinnedAllocator, nvjpegPinnedAllocator_t, pinned_malloc)
STOKER_SAME_MEMBER(PinnedAllocator, nvjpegPinnedAllocator_t, pinned_free)
STOKER_SAME_MEMBER(DevAllocatorV2, nvjpegDevAllocatorV2_t, dev_malloc)
STOKER_SAME_MEMBER(DevAllocatorV2, nvjpegDevAllocatorV2_t, dev_free)
STOKER_SAME_MEMBER(DevAllocatorV2, nvjpegDevAllocatorV2_t, dev_ctx)
STOKER_SAME_MEMBER(PinnedAllocatorV2, nvjpegPinnedAllocatorV2_t, pinned_malloc)
STOKER_SAME_MEMBER(PinnedAllocatorV2, nvjpegPinnedAllocatorV2_t, pinned_free)
STOKER_SAME_MEMBER(PinnedAllocatorV2, nvjpegPinnedAllocatorV2_t, pinned_ctx)
#undef STOKER_SAME_MEMBER

#define STOKER_SAME_VALUE(mine, theirs) static_assert(static_cast<int>(mine) == (theirs), #theirs);
STOKER_SAME_VALUE(Status::kSuccess, NVJPEG_STATUS_SUCCESS)
STOKER_SAME_VALUE(Status::kNotInitialized, NVJPEG_STATUS_NOT_INITIALIZED)
STOKER_SAME_VALUE(Status::kInvalidParameter, NVJPEG_STATUS_INVALID_PARAMETER)
STOKER_SAME_VALUE(Status::kBadJpeg, NVJPEG_STATUS_BAD_JPEG)
STOKER_SAME_VALUE(Status::kJpegNotSupported, NVJPEG_STATUS_JPEG_NOT_SUPPORTED)
STOKER_SAME_VALUE(Status::kAllocatorFailure, NVJPEG_STATUS_ALLOCATOR_FAILURE)
STOKER_SAME_VALUE(Status::kExecutionFailed, NVJPEG_STATUS_EXECUTION_FAILED)
STOKER_SAME_VALUE(Status::kArchMismatch, NVJPEG_STATUS_ARCH_MISMATCH)
STOKER_SAME_VALUE(Status::kInternalError, NVJPEG_STATUS_INTERNAL_ERROR)
STOKER_SAME_VALUE(Status::kImplementationNotSupported, NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED)
STOKER_SAME_VALUE(Status::kIncompleteBitstream, NVJPEG_STATUS_INCOMPLETE_BITSTREAM)

STOKER_SAME_VALUE(Backend::kDefault, NVJPEG_BACKEND_DEFAULT)
STOKER_SAME_VALUE(Backend::kHybrid, NVJPEG_BACKEND_HYBRID)
STOKER_SAME_VALUE(Backend::kGpuHybrid, NVJPEG_BACKEND_GPU_HYBRID)
STOKER_SAME_VALUE(Backend::kHardware, NVJPEG_BACKEND_HARDWARE)
STOKER_SAME_VALUE(Backend::kGpuHybridDevice, NVJPEG_BACKEND_GPU_HYBRID_DEVICE)
STOKER_SAME_VALUE(Backend::kHardwareDevice, NVJPEG_BACKEND_HARDWARE_DEVICE)
STOKER_SAME_VALUE(Backend::kLosslessJpeg, NVJPEG_BACKEND_LOSSLESS_JPEG)

STOKER_SAME_VALUE(OutputFormat::kUnchanged, NVJPEG_OUTPUT_UNCHANGED)
STOKER_SAME_VALUE(OutputFormat::kYUV, NVJPEG_OUTPUT_YUV)
STOKER_SAME_VALUE(OutputFormat::kY, NVJPEG_OUTPUT_Y)
STOKER_SAME_VALUE(OutputFormat::kRGB, NVJPEG_OUTPUT_RGB)
STOKER_SAME_VALUE(OutputFormat::kBGR, NVJPEG_OUTPUT_BGR)
STOKER_SAME_VALUE(OutputFormat::kRGBI, NVJPEG_OUTPUT_RGBI)
STOKER_SAME_VALUE(OutputFormat::kBGRI, NVJPEG_OUTPUT_BGRI)
STOKER_SAME_VALUE(OutputFormat::kUnchangedIU16, NVJPEG_OUTPUT_UNCHANGEDI_U16)
STOKER_SAME_VALUE(OutputFormat::kNV12, NVJPEG_OUTPUT_NV12)
STOKER_SAME_VALUE(OutputFormat::kYUY2, NVJPEG_OUTPUT_YUY2)

STOKER_SAME_VALUE(ChromaSubsampling::k444, NVJPEG_CSS_444)
STOKER_SAME_VALUE(ChromaSubsampling::k422, NVJPEG_CSS_422)
STOKER_SAME_VALUE(ChromaSubsampling::k420, NVJPEG_CSS_420)
STOKER_SAME_VALUE(ChromaSubsampling::k440, NVJPEG_CSS_440)
STOKER_SAME_VALUE(ChromaSubsampling::k411, NVJPEG_CSS_411)
STOKER_SAME_VALUE(ChromaSubsampling::k410, NVJPEG_CSS_410)
STOKER_SAME_VALUE(ChromaSubsampling::kGray, NVJPEG_CSS_GRAY)
STOKER_SAME_VALUE(ChromaSubsampling::k410V, NVJPEG_CSS_410V)
STOKER_SAME_VALUE(ChromaSubsampling::kUnknown, NVJPEG_CSS_UNKNOWN)

STOKER_SAME_VALUE(ExifOrientation::kUnknown, NVJPEG_ORIENTATION_UNKNOWN)
STOKER_SAME_VALUE(ExifOrientation::kNormal, NVJPEG_ORIENTATION_NORMAL)
STOKER_SAME_VALUE(ExifOrientation::kFlipHorizontal, NVJPEG_ORIENTATION_FLIP_HORIZONTAL)
STOKER_SAME_VALUE(ExifOrientation::kRotate180, NVJPEG_ORIENTATION_ROTATE_180)
STOKER_SAME_VALUE(ExifOrientation::kFlipVertical, NVJPEG_ORIENTATION_FLIP_VERTICAL)
STOKER_SAME_VALUE(ExifOrientation::kTranspose, NVJPEG_ORIENTATION_TRANSPOSE)
STOKER_SAME_VALUE(ExifOrientation::kRotate90, NVJPEG_ORIENTATION_ROTATE_90)
STOKER_SAME_VALUE(ExifOrientation::kTransverse, NVJPEG_ORIENTATION_TRANSVERSE)
STOKER_SAME_VALUE(ExifOrientation::kRotate270, NVJPEG_ORIENTATION_ROTATE_270)

STOKER_SAME_VALUE(JpegEncoding::kUnknown, NVJPEG_ENCODING_UNKNOWN)
STOKER_SAME_VALUE(JpegEncoding::kBaselineDct, NVJPEG_ENCODING_BASELINE_DCT)
STOKER_SAME_VALUE(JpegEncoding::kExtendedSequentialDctHuffman,
                  NVJPEG_ENCODING_EXTENDED_SEQUENTIAL_DCT_HUFFMAN)
STOKER_SAME_VALUE(JpegEncoding::kProgressiveDctHuffman, NVJPEG_ENCODING_PROGRESSIVE_DCT_HUFFMAN)
STOKER_SAME_VALUE(JpegEncoding::kLosslessHuffman, NVJPEG_ENCODING_LOSSLESS_HUFFMAN)

STOKER_SAME_VALUE(ScaleFactor::kNone, NVJPEG_SCALE_NONE)
STOKER_SAME_VALUE(ScaleFactor::k1By2, NVJPEG_SCALE_1_BY_2)
STOKER_SAME_VALUE(ScaleFactor::k1By4, NVJPEG_SCALE_1_BY_4)
STOKER_SAME_VALUE(ScaleFactor::k1By8, NVJPEG_SCALE_1_BY_8)

STOKER_SAME_VALUE(kFlagsDefault, NVJPEG_FLAGS_DEFAULT)
STOKER_SAME_VALUE(kFlagHwDecodeNoPipeline, NVJPEG_FLAGS_HW_DECODE_NO_PIPELINE)
STOKER_SAME_VALUE(kFlagEnableMemoryPools, NVJPEG_FLAGS_ENABLE_MEMORY_POOLS)
STOKER_SAME_VALUE(kFlagBitstreamStrict, NVJPEG_FLAGS_BITSTREAM_STRICT)
STOKER_SAME_VALUE(kFlagReducedMemoryDecode, NVJPEG_FLAGS_REDUCED_MEMORY_DECODE)
STOKER_SAME_VALUE(kFlagReducedMemoryDecodeZeroCopy, NVJPEG_FLAGS_REDUCED_MEMORY_DECODE_ZERO_COPY)
STOKER_SAME_VALUE(kFlagUpsamplingWithInterpolation, NVJPEG_FLAGS_UPSAMPLING_WITH_INTERPOLATION)

STOKER_SAME_VALUE(kMajorVersion, MAJOR_VERSION)
STOKER_SAME_VALUE(kMinorVersion, MINOR_VERSION)
STOKER_SAME_VALUE(kPatchLevel, PATCH_LEVEL)
STOKER_SAME_VALUE(kMaxComponent, NVJPEG_MAX_COMPONENT)
#undef STOKER_SAME_VALUE

TEST(NvjpegAbi, LoaderDeclarationsMatchNvjpegHeader) {
  // Everything above is checked at compile time; this records which header was compared.
  RecordProperty("nvjpeg_header_version", std::to_string(NVJPEG_VER_MAJOR) + "." +
                                              std::to_string(NVJPEG_VER_MINOR) + "." +
                                              std::to_string(NVJPEG_VER_PATCH));
  SUCCEED();
}

}  // namespace
}  // namespace stoker::nvjpeg
