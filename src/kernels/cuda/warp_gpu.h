// The GPU twin of kernels/cpu/warp/warp.h: warp_affine / rotate (an affine output-to-input map
// per sample), water and sphere (per-pixel displacement maps), experimental.remap (per-pixel
// maps given as data), each sample with its own sizes,
// map, interpolation and border, a whole batch in one launch. The source points and the
// sampling are the CPU's float32 (and, for affine maps, float64) operations in their order,
// without fused multiply-adds, so results equal the CPU's bit for bit; water's sines and
// cosines are taken on the host (one per row and one per column, as the CPU does) for the same
// reason.
#pragma once
#include <cstdint>
#include <vector>

#include "core/dtype.h"
#include "kernels/cpu/warp/warp.h"

namespace stoker {
class Workspace;
namespace kernels::cuda {

enum class WarpMapKind : int { kAffine, kWater, kSphere, kCopy, kPerspective, kRemap };

struct WarpJob {
  const void* in = nullptr;  // device memory, frames of in_h x in_w x channels
  void* out = nullptr;       // device memory, frames of out_h x out_w x channels
  int64_t frames = 1, in_h = 0, in_w = 0, out_h = 0, out_w = 0, channels = 0;
  WarpMapKind kind = WarpMapKind::kAffine;
  AffineMap2D affine;             // kAffine
  PerspectiveMap2D perspective;   // kPerspective (NN points snapped as perspective_row_map does)
  WaterParams water;              // kWater (out_h, out_w equal in_h, in_w)
  // kRemap (experimental.remap): the source point of output pixel (x, y) of frame f is
  // (mapx[m], mapy[m]) + remap_shift, m = f * map_frame + y * out_w + x (map_frame 0: one map
  // for every frame); with remap_round, each map value is first rounded half to even.
  const float* mapx = nullptr;    // device memory
  const float* mapy = nullptr;
  int64_t map_frame = 0;
  float remap_shift = 0.0f;
  bool remap_round = false;
  WarpInterp interp = WarpInterp::kLinear;
  WarpBorder border;              // fill (and channel_fill: `channels` host values) as the CPU
                                  // operator passes it, already in the output type
};

// The pairs the warp operators allow: the same type, to float, or from float (no bool).
bool warp_gpu_supports(DType out, DType in);

void warp_gpu(Workspace& ws, DType out_type, DType in_type, const std::vector<WarpJob>& jobs);

// Volumes (packed DHWC frames): warp_affine_3d's sampler (warp.h) voxel for voxel, nearest or
// linear, clamp or a fill value (in the output type).
struct Warp3DJob {
  const void* in = nullptr;  // device memory, frames of in
  void* out = nullptr;       // device memory, frames of out
  int64_t frames = 1;
  VolumeDims in_dims, out_dims;
  AffineMap3D map;
  WarpInterp interp = WarpInterp::kLinear;
  bool clamp = true;
  float fill = 0.0f;
};
void warp3d_gpu(Workspace& ws, DType out_type, DType in_type, const std::vector<Warp3DJob>& jobs);

}  // namespace kernels::cuda
}  // namespace stoker
