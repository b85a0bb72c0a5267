#include "kernels/cuda/detection_gpu.h"

#include "kernels/cuda/elementwise.cuh"
#include "kernels/cuda/launch_plan.h"
#include "pipeline/gpu_batch.h"
#include "pipeline/gpu_context.h"

// The float arithmetic below goes through __fadd_rn / __fmul_rn where a multiply meets an add,
// so nvcc cannot fuse them into one rounding: the CPU kernels round every operation.
namespace stoker::kernels::cuda {
namespace {

constexpr int kThreads = 256;

template <typename Job>
__device__ __forceinline__ const Job* job_of_block(const Job* jobs, const int* block_start, int n,
                                                   int64_t* k) {
  const int s = sample_of_block(block_start, n, blockIdx.x);
  *k = int64_t(blockIdx.x - block_start[s]) * kThreads + threadIdx.x;
  return jobs + s;
}

__global__ void flip_boxes_kernel(const BoxFlipJob* jobs, const int* block_start, int n, bool ltrb) {
  int64_t k;
  const BoxFlipJob& j = *job_of_block(jobs, block_start, n, &k);
  if (k >= j.n) return;
  const float4 b = reinterpret_cast<const float4*>(j.in)[k];
  float lo_x = b.x, lo_y = b.y, hi_x = b.z, hi_y = b.w;
  if (!ltrb) {
    hi_x = __fadd_rn(lo_x, hi_x);
    hi_y = __fadd_rn(lo_y, hi_y);
  }
  if (j.horizontal) {
    const float l = 1.0f - hi_x, r = 1.0f - lo_x;
    lo_x = l;
    hi_x = r;
  }
  if (j.vertical) {
    const float t = 1.0f - hi_y, btm = 1.0f - lo_y;
    lo_y = t;
    hi_y = btm;
  }
  if (!ltrb) {
    hi_x = hi_x - lo_x;
    hi_y = hi_y - lo_y;
  }
  reinterpret_cast<float4*>(j.out)[k] = make_float4(lo_x, lo_y, hi_x, hi_y);
}

__global__ void flip_coords_kernel(const CoordFlipJob* jobs, const int* block_start, int n) {
  int64_t k;
  const CoordFlipJob& j = *job_of_block(jobs, block_start, n, &k);
  if (k >= j.npoints) return;
  const float* in = j.in + k * j.ndim;
  float* out = j.out + k * j.ndim;
  for (int d = 0; d < j.ndim; ++d)
    out[d] = j.flip[d] ? 2.0f * j.center[d] - in[d] : in[d];
}

template <typename In, typename Out>
__global__ void transform_points_kernel(const PointsJob* jobs, const int* block_start, int n,
                                        const float* matrices) {
  int64_t k;
  const PointsJob& j = *job_of_block(jobs, block_start, n, &k);
  if (k >= j.npoints) return;
  const In* in = static_cast<const In*>(j.in) + k * j.din;
  Out* out = static_cast<Out*>(j.out) + k * j.dout;
  const float* mt = matrices + j.mt;
  for (int r = 0; r < j.dout; ++r) {
    const float* row = mt + r * (j.din + 1);
    float acc = 0.0f;
    for (int c = 0; c < j.din; ++c) acc = __fadd_rn(acc, __fmul_rn(row[c], load_f(in[c])));
    acc = __fadd_rn(acc, row[j.din]);
    if constexpr (kIsDevFloat<Out>) out[r] = static_cast<Out>(acc);
    else out[r] = convert_sat_dev<Out>(roundf(acc));
  }
}

// ---- box_encoder ----

__device__ __forceinline__ float box_area(float4 b) { return __fmul_rn(b.z - b.x, b.w - b.y); }

// kernels/cpu/detection/boxes.cc's iou_with_areas, operation for operation.
__device__ __forceinline__ float iou(float4 a, float area_a, float4 b, float area_b) {
  const float l = fmaxf(a.x, b.x), t = fmaxf(a.y, b.y);
  const float r = fminf(a.z, b.z), btm = fminf(a.w, b.w);
  if (!(r > l && btm > t)) return 0.0f;
  const float inter = __fmul_rn(r - l, btm - t);
  if (inter == 0.0f) return 0.0f;
  return inter / (__fadd_rn(area_a, area_b) - inter);
}

struct EncodeParams {
  const float4* anchors;
  int64_t nanchors;
  float criteria;
  BoxEncoding enc;
  int label_size;
};

// One block per box: the anchor it overlaps most, the last of equals. The IoU (>= 0, so its bits
// order as unsigned integers) and the anchor index, packed in one 64-bit key, find both at once.
__global__ void best_anchor_kernel(const BoxEncodeJob* jobs, const int* block_start, int n,
                                   const int64_t* first_box, EncodeParams p, int32_t* best_anchor) {
  const int s = sample_of_block(block_start, n, blockIdx.x);
  const int64_t b = blockIdx.x - block_start[s];
  const float4 box = reinterpret_cast<const float4*>(jobs[s].boxes)[b];
  const float area_b = box_area(box);
  unsigned long long best = 0;
  for (int64_t a = threadIdx.x; a < p.nanchors; a += blockDim.x) {
    const float4 an = p.anchors[a];
    const float v = iou(box, area_b, an, box_area(an));
    const unsigned bits = v >= 0.0f ? __float_as_uint(v) : 0u;  // NaN: as 0
    const unsigned long long key = (static_cast<unsigned long long>(bits) << 32) | static_cast<unsigned>(a);
    best = key > best ? key : best;
  }
  for (int off = 16; off > 0; off >>= 1) {
    const unsigned long long other = __shfl_down_sync(0xffffffffu, best, off);
    best = other > best ? other : best;
  }
  __shared__ unsigned long long warp_best[kThreads / 32];
  if ((threadIdx.x & 31) == 0) warp_best[threadIdx.x >> 5] = best;
  __syncthreads();
  if (threadIdx.x == 0) {
    for (int w = 1; w < kThreads / 32; ++w) best = warp_best[w] > best ? warp_best[w] : best;
    best_anchor[first_box[s] + b] = static_cast<int32_t>(best & 0xffffffffu);
  }
}

template <typename L>
__device__ __forceinline__ void copy_label(void* out, int64_t a, const void* in, int64_t b) {
  static_cast<L*>(out)[a] = b >= 0 ? static_cast<const L*>(in)[b] : L(0);
}

// One thread per anchor: its best box above the criteria, overridden by the boxes that chose it
// (the last of them), then its encoding and label.
__global__ void encode_kernel(const BoxEncodeJob* jobs, const int* block_start, int n,
                              const int64_t* first_box, EncodeParams p, const int32_t* best_anchor) {
  const int s = sample_of_block(block_start, n, blockIdx.x);
  const BoxEncodeJob& j = jobs[s];
  const int64_t a = int64_t(blockIdx.x - block_start[s]) * kThreads + threadIdx.x;
  if (a >= p.nanchors) return;
  const float4 an = p.anchors[a];
  const float area_a = box_area(an);
  const float4* boxes = reinterpret_cast<const float4*>(j.boxes);
  float best_iou = -INFINITY;
  int64_t m = -1;
  for (int64_t b = 0; b < j.nboxes; ++b) {
    const float4 box = boxes[b];
    const float v = iou(box, box_area(box), an, area_a);
    if (v >= best_iou) best_iou = v, m = b;
  }
  if (!(best_iou > p.criteria)) m = -1;
  const int32_t* chosen = best_anchor + first_box[s];
  for (int64_t b = 0; b < j.nboxes; ++b)
    if (chosen[b] == a) m = b;

  float* out = j.out_boxes + 4 * a;
  const BoxEncoding& e = p.enc;
  const float acx = 0.5f * __fadd_rn(an.z, an.x), acy = 0.5f * __fadd_rn(an.w, an.y);
  const float aw = an.z - an.x, ah = an.w - an.y;
  if (m < 0) {
    if (e.offset) {
      out[0] = out[1] = out[2] = out[3] = 0.0f;
    } else {
      out[0] = acx, out[1] = acy, out[2] = aw, out[3] = ah;
    }
  } else {
    const float4 box = boxes[m];
    float bc[2] = {0.5f * __fadd_rn(box.z, box.x), 0.5f * __fadd_rn(box.w, box.y)};
    float bs[2] = {box.z - box.x, box.w - box.y};
    if (!e.offset) {
      out[0] = bc[0], out[1] = bc[1], out[2] = bs[0], out[3] = bs[1];
    } else {
      float ac[2] = {acx, acy}, as[2] = {aw, ah};
      for (int d = 0; d < 2; ++d) {
        bc[d] = __fmul_rn(bc[d], e.scale);
        bs[d] = __fmul_rn(bs[d], e.scale);
        ac[d] = __fmul_rn(ac[d], e.scale);
        as[d] = __fmul_rn(as[d], e.scale);
      }
      for (int d = 0; d < 2; ++d) {
        out[d] = ((bc[d] - ac[d]) / as[d] - e.means[d]) / e.stds[d];
        // The logarithm in double, rounded once: the correctly rounded float the CPU's gives.
        const float lg = static_cast<float>(log(static_cast<double>(bs[d] / as[d])));
        out[2 + d] = (lg - e.means[2 + d]) / e.stds[2 + d];
      }
    }
  }
  switch (p.label_size) {
    case 1: copy_label<uint8_t>(j.out_labels, a, j.labels, m); break;
    case 2: copy_label<uint16_t>(j.out_labels, a, j.labels, m); break;
    case 4: copy_label<uint32_t>(j.out_labels, a, j.labels, m); break;
    default: copy_label<uint64_t>(j.out_labels, a, j.labels, m); break;
  }
}

// One launch of `kernel` over jobs of `work(job)` items, a thread each.
template <typename Job, typename Work, typename Launch>
void launch_jobs(Workspace& ws, const std::vector<Job>& jobs, Work work, Launch launch) {
  LaunchPlan plan(kThreads);
  for (const Job& j : jobs) plan.add(work(j));
  if (plan.blocks() == 0) return;
  DeviceParams params(ws);
  const size_t starts = params.add(plan.block_start());
  const size_t descs = params.add(jobs);
  launch(params, starts, descs, plan);
}

}  // namespace

void flip_boxes_gpu(Workspace& ws, bool ltrb, const std::vector<BoxFlipJob>& jobs) {
  launch_jobs(ws, jobs, [](const BoxFlipJob& j) { return j.n; },
              [&](DeviceParams& p, size_t starts, size_t descs, const LaunchPlan& plan) {
                p.upload();
                flip_boxes_kernel<<<static_cast<unsigned>(plan.blocks()), kThreads, 0,
                                    static_cast<cudaStream_t>(ws.gpu->stream())>>>(
                    p.device<BoxFlipJob>(descs), p.device<int>(starts), plan.jobs(), ltrb);
              });
  check_launch("flip_boxes_gpu");
}

void flip_coords_gpu(Workspace& ws, const std::vector<CoordFlipJob>& jobs) {
  launch_jobs(ws, jobs, [](const CoordFlipJob& j) { return j.npoints; },
              [&](DeviceParams& p, size_t starts, size_t descs, const LaunchPlan& plan) {
                p.upload();
                flip_coords_kernel<<<static_cast<unsigned>(plan.blocks()), kThreads, 0,
                                     static_cast<cudaStream_t>(ws.gpu->stream())>>>(
                    p.device<CoordFlipJob>(descs), p.device<int>(starts), plan.jobs());
              });
  check_launch("flip_coords_gpu");
}

void transform_points_gpu(Workspace& ws, DType in_type, DType out_type,
                          const std::vector<PointsJob>& jobs, const std::vector<float>& matrices) {
  launch_jobs(ws, jobs, [](const PointsJob& j) { return j.npoints; },
              [&](DeviceParams& p, size_t starts, size_t descs, const LaunchPlan& plan) {
                const size_t mats = p.add(matrices);
                p.upload();
                auto stream = static_cast<cudaStream_t>(ws.gpu->stream());
                visit_dev_type(in_type, [&](auto ti) {
                  using In = typename decltype(ti)::type;
                  auto go = [&](auto to) {
                    using Out = typename decltype(to)::type;
                    transform_points_kernel<In, Out>
                        <<<static_cast<unsigned>(plan.blocks()), kThreads, 0, stream>>>(
                            p.device<PointsJob>(descs), p.device<int>(starts), plan.jobs(),
                            p.device<float>(mats));
                  };
                  if (out_type == DType::kFloat32) {
                    go(Tag<float>{});
                  } else if constexpr (!std::is_same_v<In, __half> && !std::is_same_v<In, BoolByte>) {
                    go(Tag<In>{});
                  } else {
                    STOKER_ASSERT(false, "transform_points_gpu: no float16 or bool output");
                  }
                });
              });
  check_launch("transform_points_gpu");
}

void box_encoder_gpu(Workspace& ws, const std::vector<float>& anchors, float criteria,
                     const BoxEncoding& enc, size_t label_size,
                     const std::vector<BoxEncodeJob>& jobs) {
  const int64_t nanchors = static_cast<int64_t>(anchors.size() / 4);
  if (jobs.empty() || nanchors == 0) return;
  LaunchPlan per_box(1), per_anchor(kThreads);
  std::vector<int64_t> first_box;
  int64_t total_boxes = 0;
  for (const BoxEncodeJob& j : jobs) {
    per_box.add(j.nboxes);
    per_anchor.add(nanchors);
    first_box.push_back(total_boxes);
    total_boxes += j.nboxes;
  }
  DeviceParams p(ws);
  const size_t box_starts = p.add(per_box.block_start());
  const size_t anchor_starts = p.add(per_anchor.block_start());
  const size_t descs = p.add(jobs);
  const size_t firsts = p.add(first_box);
  const size_t anchor_data = p.add(anchors);
  // Scratch in the same block: each box's best anchor, written by the first kernel.
  const size_t chosen = p.add(std::vector<int32_t>(static_cast<size_t>(total_boxes)));
  p.upload();
  EncodeParams ep{p.device<float4>(anchor_data), nanchors, criteria, enc,
                  static_cast<int>(label_size)};
  auto stream = static_cast<cudaStream_t>(ws.gpu->stream());
  if (per_box.blocks() > 0)
    best_anchor_kernel<<<static_cast<unsigned>(per_box.blocks()), kThreads, 0, stream>>>(
        p.device<BoxEncodeJob>(descs), p.device<int>(box_starts), per_box.jobs(),
        p.device<int64_t>(firsts), ep, p.device<int32_t>(chosen));
  encode_kernel<<<static_cast<unsigned>(per_anchor.blocks()), kThreads, 0, stream>>>(
      p.device<BoxEncodeJob>(descs), p.device<int>(anchor_starts), per_anchor.jobs(),
      p.device<int64_t>(firsts), ep, p.device<int32_t>(chosen));
  check_launch("box_encoder_gpu");
}

}  // namespace stoker::kernels::cuda
