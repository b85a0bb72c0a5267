// The GPU twins of the detection operators on boxes and points: bb_flip, coord_flip,
// coord_transform and box_encoder, a whole batch per launch. The float operations are the CPU
// kernels' (kernels/cpu/detection), in the same order and without fused multiply-adds, so the
// twins give the CPU's bits (box_encoder's logarithm aside: CUDA's logf is within 1 ulp).
#pragma once
#include <cstdint>
#include <vector>

#include "core/dtype.h"
#include "kernels/cpu/detection/boxes.h"

namespace stoker {
class Workspace;
namespace kernels::cuda {

struct BoxFlipJob {
  const float* in = nullptr;
  float* out = nullptr;
  int64_t n = 0;  // boxes
  bool horizontal = false, vertical = false;
};
// kernels::flip_boxes per job.
void flip_boxes_gpu(Workspace& ws, bool ltrb, const std::vector<BoxFlipJob>& jobs);

struct CoordFlipJob {
  const float* in = nullptr;
  float* out = nullptr;
  int64_t npoints = 0;
  int ndim = 0;
  bool flip[3] = {false, false, false};
  float center[3] = {0.5f, 0.5f, 0.5f};
};
// kernels::flip_coords per job.
void flip_coords_gpu(Workspace& ws, const std::vector<CoordFlipJob>& jobs);

struct PointsJob {
  const void* in = nullptr;
  void* out = nullptr;
  int64_t npoints = 0;
  int din = 0, dout = 0;
  int64_t mt = 0;  // where the job's dout x (din + 1) matrix starts in `matrices`
};
// kernels::transform_points per job: out_type is float32 or in_type (an integer output is
// rounded half away from zero and saturated). Not float16 or bool out.
void transform_points_gpu(Workspace& ws, DType in_type, DType out_type,
                          const std::vector<PointsJob>& jobs, const std::vector<float>& matrices);

struct BoxEncodeJob {
  const float* boxes = nullptr;  // nboxes x 4, ltrb
  const void* labels = nullptr;  // nboxes integers of label_size bytes
  float* out_boxes = nullptr;    // nanchors x 4
  void* out_labels = nullptr;    // nanchors integers
  int64_t nboxes = 0;
};
// kernels::match_boxes then kernels::encode_boxes per job, with the labels of the matched boxes
// (0 where none). anchors: nanchors x 4, ltrb.
void box_encoder_gpu(Workspace& ws, const std::vector<float>& anchors, float criteria,
                     const BoxEncoding& enc, size_t label_size,
                     const std::vector<BoxEncodeJob>& jobs);

}  // namespace kernels::cuda
}  // namespace stoker
