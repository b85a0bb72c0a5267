#include "kernels/cuda/slice_gpu.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "core/convert.h"
#include "core/error.h"
#include "kernels/cuda/cuda_common.cuh"
#include "pipeline/gpu_batch.h"
#include "pipeline/gpu_context.h"

namespace stoker::kernels::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kItems = 8;
constexpr int64_t kChunk = int64_t(kThreads) * kItems;  // output elements per block

// One sample, in output-axis order. Output axis k shows input coordinate
// origin[k] + sign[k] * i for i in [0, out_shape[k]); outside [0, extent[k]) it is filled.
struct SliceDesc {
  const void* in;
  void* out;
  int64_t volume;
  FastDiv out_shape[kMaxSliceDims];  // 32-bit index arithmetic: volumes are checked < 2^31
  int32_t origin[kMaxSliceDims];
  int32_t extent[kMaxSliceDims];
  int32_t in_stride[kMaxSliceDims];
  int32_t sign[kMaxSliceDims];
  int ndim;
  int channel_axis;  // output axis whose index picks fill and affine values; -1: channel 0
  int nch;           // entries in the tables below
  // Offsets into the launch's parameter block: per channel, the fill value already converted
  // to Out (in the low bytes), and the affine map.
  uint32_t fill, mul, add;
};

template <typename Out, typename In, bool kNorm>
__global__ void slice_kernel(const char* params, const SliceDesc* descs, const int* block_start,
                             int n) {
  __shared__ SliceDesc d;
  const int s = sample_of_block(block_start, n, blockIdx.x);
  if (threadIdx.x == 0) d = descs[s];
  __syncthreads();
  const In* in = static_cast<const In*>(d.in);
  Out* out = static_cast<Out*>(d.out);
  const int64_t base = int64_t(blockIdx.x - block_start[s]) * kChunk;
  const uint64_t* fill = reinterpret_cast<const uint64_t*>(params + d.fill);
  const float* mul = reinterpret_cast<const float*>(params + d.mul);
  const float* add = reinterpret_cast<const float*>(params + d.add);
#pragma unroll
  for (int it = 0; it < kItems; ++it) {
    const int64_t idx = base + it * kThreads + threadIdx.x;
    if (idx >= d.volume) return;
    uint32_t rem = static_cast<uint32_t>(idx);
    int64_t off = 0;
    bool inside = true;
    int ch = 0;
    for (int k = d.ndim - 1; k >= 0; --k) {
      const uint32_t q = d.out_shape[k].div(rem);
      const int32_t i = static_cast<int32_t>(rem - q * d.out_shape[k].d);
      rem = q;
      const int32_t coord = d.origin[k] + d.sign[k] * i;
      inside = inside && coord >= 0 && coord < d.extent[k];
      off += int64_t(coord) * d.in_stride[k];
      if (k == d.channel_axis) ch = i < d.nch ? i : d.nch - 1;
    }
    Out v;
    if (inside) {
      if constexpr (kNorm) {
        // Separate multiply and add (no FMA): the CPU kernel's float32 arithmetic exactly.
        v = from_float<Out>(__fadd_rn(__fmul_rn(to_float(in[off]), mul[ch]), add[ch]));
      } else if constexpr (std::is_same_v<Out, In>) {
        v = in[off];
      } else {
        v = from_float<Out>(to_float(in[off]));
      }
    } else {
      uint64_t bits = fill[ch];
      memcpy(&v, &bits, sizeof(Out));
    }
    out[idx] = v;
  }
}

template <typename T> struct Tag { using type = T; };

// Calls f(Tag<DeviceType>) for a stoker dtype.
template <typename F>
void visit_device_type(DType t, F&& f) {
  visit_dtype(t, [&](auto v) {
    using H = decltype(v);
    if constexpr (std::is_same_v<H, bool>) f(Tag<uint8_t>{});
    else f(Tag<typename DevType<H>::type>{});
  });
}

}  // namespace

bool slice_gpu_supports(DType out, DType in, int ndim) {
  if (ndim < 1 || ndim > kMaxSliceDims) return false;
  return out == in || out == DType::kFloat32 || out == DType::kFloat16 || out == DType::kUInt8 ||
         out == DType::kInt8;
}

void slice_flip_normalize_gpu(Workspace& ws, DType out_type, DType in_type,
                              const std::vector<void*>& out, const std::vector<const void*>& in,
                              const std::vector<SliceArgs>& args) {
  const int n = static_cast<int>(args.size());
  if (n == 0) return;
  const bool norm = !args[0].mul.empty();
  DeviceParams params(ws);
  std::vector<SliceDesc> descs(n);
  std::vector<int> block_start(n);
  int64_t blocks = 0;
  const size_t out_size = dtype_size(out_type);
  std::vector<char> tables;
  for (int s = 0; s < n; ++s) {
    const SliceArgs& a = args[s];
    STOKER_ASSERT(a.mul.empty() != norm, "slice_gpu: some samples normalise and others not");
    const int nd = static_cast<int>(a.in_shape.size());
    STOKER_ASSERT(slice_gpu_supports(out_type, in_type, nd), "slice_gpu: unsupported arguments");
    SliceDesc& d = descs[s];
    std::memset(&d, 0, sizeof d);
    d.in = in[s];
    d.out = out[s];
    d.ndim = nd;
    d.channel_axis = -1;
    std::vector<int64_t> stride(nd, 1);
    for (int k = nd - 2; k >= 0; --k) stride[k] = stride[k + 1] * a.in_shape[k + 1];
    const int64_t in_volume = nd ? stride[0] * a.in_shape[0] : 1;
    d.volume = 1;
    for (int k = 0; k < nd; ++k) {
      const int ax = a.perm.empty() ? k : a.perm[k];
      const bool flip = !a.flip.empty() && a.flip[ax];
      d.out_shape[k] = FastDiv(static_cast<uint32_t>(a.shape[ax]));
      d.origin[k] = static_cast<int32_t>(flip ? a.anchor[ax] + a.shape[ax] - 1 : a.anchor[ax]);
      d.sign[k] = flip ? -1 : 1;
      d.extent[k] = static_cast<int32_t>(a.in_shape[ax]);
      d.in_stride[k] = static_cast<int32_t>(stride[ax]);
      if (ax == a.channel_dim) d.channel_axis = k;
      d.volume *= a.shape[ax];
    }
    constexpr int64_t kLimit = int64_t(1) << 31;
    bool fits = d.volume < kLimit && in_volume < kLimit;
    for (int k = 0; k < nd; ++k) {
      const int ax = a.perm.empty() ? k : a.perm[k];
      fits = fits && std::abs(a.anchor[ax]) + a.shape[ax] < kLimit;
    }
    if (!fits)
      fail(ErrorKind::kUnsupported, "the GPU slice kernel takes samples of fewer than 2^31 "
                                    "elements (windows within 2^31 of the origin); this one is "
                                    "larger: run the operator with device='cpu'");
    // The per-channel tables, as the CPU kernel builds them.
    int64_t nch = 1;
    if (a.channel_dim >= 0) nch = std::max<int64_t>(a.shape[a.channel_dim], 1);
    nch = std::max<int64_t>({nch, static_cast<int64_t>(a.fill.size()),
                             static_cast<int64_t>(a.mul.size())});
    d.nch = static_cast<int>(nch);
    std::vector<uint64_t> fill(nch, 0);
    std::vector<float> mul(nch, 1.0f), add(nch, 0.0f);
    for (int64_t c = 0; c < nch; ++c) {
      double f = a.fill.empty() ? 0.0 : a.fill.size() == 1 ? a.fill[0]
                 : c < static_cast<int64_t>(a.fill.size()) ? a.fill[c] : 0.0;
      visit_dtype(out_type, [&](auto o) {
        using O = decltype(o);
        O v = convert_sat<O>(f);
        std::memcpy(&fill[c], &v, out_size);
      });
      if (!a.mul.empty()) {
        size_t k = a.mul.size() == 1 ? 0 : std::min<size_t>(c, a.mul.size() - 1);
        mul[c] = a.mul[k];
        add[c] = a.add[k];
      }
    }
    d.fill = static_cast<uint32_t>(params.add(fill));
    d.mul = static_cast<uint32_t>(params.add(mul));
    d.add = static_cast<uint32_t>(params.add(add));
    block_start[s] = static_cast<int>(blocks);
    blocks += (d.volume + kChunk - 1) / kChunk;
  }
  if (blocks == 0) return;
  STOKER_ASSERT(blocks < (int64_t(1) << 31), "slice_gpu: batch too large for one launch");
  const size_t starts_off = params.add(block_start);
  const size_t descs_off = params.add(descs);
  params.upload();
  const char* base = params.device<char>(0);
  const int* starts = params.device<int>(starts_off);
  const SliceDesc* dd = params.device<SliceDesc>(descs_off);
  auto stream = static_cast<cudaStream_t>(ws.gpu->stream());
  visit_device_type(in_type, [&](auto ti) {
    using In = typename decltype(ti)::type;
    visit_device_type(out_type, [&](auto to) {
      using Out = typename decltype(to)::type;
      if (norm) {
        if constexpr (std::is_same_v<Out, float> || std::is_same_v<Out, __half> ||
                      std::is_same_v<Out, uint8_t> || std::is_same_v<Out, int8_t>) {
          slice_kernel<Out, In, true><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(base, dd, starts, n);
        } else {
          STOKER_ASSERT(false, "slice_gpu: no such normalising conversion");
        }
      } else if constexpr (std::is_same_v<Out, In>) {
        slice_kernel<Out, In, false><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(base, dd, starts, n);
      } else if constexpr (std::is_same_v<Out, float> || std::is_same_v<Out, __half> ||
                           std::is_same_v<Out, uint8_t> || std::is_same_v<Out, int8_t>) {
        slice_kernel<Out, In, false><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(base, dd, starts, n);
      } else {
        STOKER_ASSERT(false, "slice_gpu: no such conversion");
      }
    });
  });
  check_launch("slice_flip_normalize_gpu");
}

}  // namespace stoker::kernels::cuda
