#include "kernels/cuda/video_gpu.h"

#include <vector>

#include "core/cuda/cuda_util.h"
#include "kernels/cuda/cuda_common.cuh"

namespace stoker::kernels::cuda {
namespace {

struct Matrix {
  float cr_r, cb_g, cr_g, cb_b;  // R = Y + cr_r Cr, G = Y - cb_g Cb - cr_g Cr, B = Y + cb_b Cb
  float y_scale, c_scale, y_off; // studio range: (Y - 16) * 255/219, (C - 128) * 255/224
};

template <bool kWide>
__device__ __forceinline__ float sample(const void* plane, int pitch, int x, int y) {
  const char* row = static_cast<const char*>(plane) + static_cast<int64_t>(y) * pitch;
  if (kWide) return reinterpret_cast<const uint16_t*>(row)[x] * (1.0f / 256.0f);
  return reinterpret_cast<const uint8_t*>(row)[x];
}

// Chroma of 4:2:0 or 4:4:4 at chroma position (cx, cy): Cb and Cr.
template <bool kWide, bool k420>
__device__ __forceinline__ float2 chroma(const YuvFrame& f, int cx, int cy) {
  if (k420) {
    const char* row = static_cast<const char*>(f.plane[1]) + static_cast<int64_t>(cy) * f.pitch[1];
    if (kWide) {
      const uint16_t* p = reinterpret_cast<const uint16_t*>(row) + 2 * cx;
      return make_float2(p[0] * (1.0f / 256.0f), p[1] * (1.0f / 256.0f));
    }
    const uint8_t* p = reinterpret_cast<const uint8_t*>(row) + 2 * cx;
    return make_float2(p[0], p[1]);
  }
  return make_float2(sample<kWide>(f.plane[1], f.pitch[1], cx, cy),
                     sample<kWide>(f.plane[2], f.pitch[2], cx, cy));
}

__device__ __forceinline__ uint8_t to_u8(float v) {
  return static_cast<uint8_t>(fminf(fmaxf(rintf(v), 0.0f), 255.0f));
}

// RGB values are rounded down, as libswscale's tables round its fixed-point products (the CPU
// operators' conversion); rounded to nearest they would stand about a level above the CPU's.
__device__ __forceinline__ uint8_t floor_u8(float v) {
  return static_cast<uint8_t>(fminf(fmaxf(floorf(v), 0.0f), 255.0f));
}

template <bool kWide, bool k420, bool kYCbCr>
__global__ void yuv_kernel(YuvFrame f, Matrix m, FrameOut out) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= f.width || y >= f.height) return;
  const float luma = sample<kWide>(f.plane[0], f.pitch[0], x, y);
  float2 c;
  if (kYCbCr && k420) {
    // Chroma samples sit between the luma samples of their 2x2 block: bilinear weights.
    const int cw = (f.width + 1) / 2, ch = (f.height + 1) / 2;
    const float fx = fmaxf(x * 0.5f - 0.25f, 0.0f), fy = fmaxf(y * 0.5f - 0.25f, 0.0f);
    const int x0 = min(static_cast<int>(fx), cw - 1), y0 = min(static_cast<int>(fy), ch - 1);
    const int x1 = min(x0 + 1, cw - 1), y1 = min(y0 + 1, ch - 1);
    const float ax = fx - x0, ay = fy - y0;
    const float2 c00 = chroma<kWide, true>(f, x0, y0), c01 = chroma<kWide, true>(f, x1, y0);
    const float2 c10 = chroma<kWide, true>(f, x0, y1), c11 = chroma<kWide, true>(f, x1, y1);
    c.x = (c00.x * (1 - ax) + c01.x * ax) * (1 - ay) + (c10.x * (1 - ax) + c11.x * ax) * ay;
    c.y = (c00.y * (1 - ax) + c01.y * ax) * (1 - ay) + (c10.y * (1 - ax) + c11.y * ax) * ay;
  } else {
    c = k420 ? chroma<kWide, true>(f, x >> 1, y >> 1) : chroma<kWide, false>(f, x, y);
  }
  uint8_t v[3];
  if (kYCbCr) {
    v[0] = to_u8(luma), v[1] = to_u8(c.x), v[2] = to_u8(c.y);
  } else {
    const float yy = (luma - m.y_off) * m.y_scale;
    const float cb = (c.x - 128.0f) * m.c_scale, cr = (c.y - 128.0f) * m.c_scale;
    v[0] = floor_u8(yy + m.cr_r * cr);
    v[1] = floor_u8(yy - m.cb_g * cb - m.cr_g * cr);
    v[2] = floor_u8(yy + m.cb_b * cb);
  }
  const int64_t at = (static_cast<int64_t>(y) * f.width + x) * 3;
  if (out.f32) {
    float* o = static_cast<float*>(out.data) + at;
    o[0] = v[0] * out.scale, o[1] = v[1] * out.scale, o[2] = v[2] * out.scale;
  } else {
    uint8_t* o = static_cast<uint8_t*>(out.data) + at;
    o[0] = v[0], o[1] = v[1], o[2] = v[2];
  }
}

template <bool kWide, bool k420>
void launch(const YuvFrame& f, bool ycbcr, const Matrix& m, const FrameOut& out, cudaStream_t s) {
  const dim3 block(32, 8);
  const dim3 grid((f.width + 31) / 32, (f.height + 7) / 8);
  if (ycbcr) yuv_kernel<kWide, k420, true><<<grid, block, 0, s>>>(f, m, out);
  else yuv_kernel<kWide, k420, false><<<grid, block, 0, s>>>(f, m, out);
}

}  // namespace

void yuv_frame_gpu(const YuvFrame& f, bool ycbcr, const FrameOut& out, void* stream) {
  if (f.width <= 0 || f.height <= 0) return;
  const float kr = f.kr, kb = f.kb, kg = 1.0f - kr - kb;
  Matrix m;
  m.cr_r = 2.0f * (1.0f - kr);
  m.cb_b = 2.0f * (1.0f - kb);
  m.cb_g = 2.0f * kb * (1.0f - kb) / kg;
  m.cr_g = 2.0f * kr * (1.0f - kr) / kg;
  m.y_scale = f.full_range ? 1.0f : 255.0f / 219.0f;
  m.c_scale = f.full_range ? 1.0f : 255.0f / 224.0f;
  m.y_off = f.full_range ? 0.0f : 16.0f;
  auto s = static_cast<cudaStream_t>(stream);
  switch (f.layout) {
    case YuvLayout::kNV12: launch<false, true>(f, ycbcr, m, out, s); break;
    case YuvLayout::kP016: launch<true, true>(f, ycbcr, m, out, s); break;
    case YuvLayout::kYUV444: launch<false, false>(f, ycbcr, m, out, s); break;
    case YuvLayout::kYUV444_16: launch<true, false>(f, ycbcr, m, out, s); break;
  }
  check_launch("yuv_frame_gpu");
}

void host_frame_gpu(const uint8_t* host, int64_t values, const FrameOut& out, void* stream) {
  if (!out.f32) {
    cuda_memcpy_async(out.data, host, static_cast<size_t>(values), stream);
    return;
  }
  // From pageable memory: the copy has read `tmp` when it returns.
  std::vector<float> tmp(static_cast<size_t>(values));
  for (int64_t i = 0; i < values; ++i) tmp[i] = host[i] * out.scale;
  cuda_memcpy_async(out.data, tmp.data(), tmp.size() * sizeof(float), stream);
}

}  // namespace stoker::kernels::cuda
