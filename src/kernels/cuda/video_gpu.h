// Video frames decoded on the GPU (NVDEC, through FFmpeg's CUDA hardware decoding) to the
// readers' output: the decoder's YUV planes in device memory to interleaved RGB or YCbCr, uint8
// or float, in one launch per frame on the caller's stream.
#pragma once
#include <cstdint>

namespace stoker::kernels::cuda {

// How NVDEC's surfaces are laid out (FFmpeg's software formats for them).
enum class YuvLayout {
  kNV12,      // 8-bit 4:2:0: a Y plane, then one plane of interleaved Cb, Cr
  kP016,      // 10- to 16-bit 4:2:0 as NV12, each sample in the high bits of 16 (P010, P016)
  kYUV444,    // 8-bit 4:4:4: three planes
  kYUV444_16  // 10- to 16-bit 4:4:4: three planes of 16-bit samples, in the high bits
};

struct YuvFrame {
  const void* plane[3] = {nullptr, nullptr, nullptr};  // device memory
  int pitch[3] = {0, 0, 0};                            // bytes per row
  int width = 0, height = 0;
  YuvLayout layout = YuvLayout::kNV12;
  float kr = 0.299f, kb = 0.114f;  // the matrix's luma weights (BT.601's by default)
  bool full_range = false;         // JPEG range instead of studio range (16-235, 16-240)
};

// Where a frame goes: width * height * 3 interleaved values, uint8 or, with `f32`, float
// (the uint8 value times `scale`).
struct FrameOut {
  void* data = nullptr;  // device memory
  bool f32 = false;
  float scale = 1.0f;
};

// RGB: BT.601/709/2020 conversion of the frame's own matrix and range, chroma taken from the
// co-sited sample (as libswscale's unscaled conversion does on the CPU), rounded down to 0..255
// (libswscale rounds down too; its frames stay within a mean of 1 of these).
// YCbCr (`ycbcr`): the stream's own values, 8-bit, the chroma planes upsampled bilinearly.
void yuv_frame_gpu(const YuvFrame& frame, bool ycbcr, const FrameOut& out, void* stream);

// A frame the CPU decoded (width * height * 3 uint8 values) to `out`. `host` may be reused when
// this returns.
void host_frame_gpu(const uint8_t* host, int64_t values, const FrameOut& out, void* stream);

}  // namespace stoker::kernels::cuda
