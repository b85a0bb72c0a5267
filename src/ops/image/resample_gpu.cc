#include "ops/image/resample_gpu.h"

#include <cuda_runtime_api.h>

#include "core/cuda/cuda_util.h"
#include "kernels/cuda/resample_gpu.h"
#include "ops/image/resize_layout.h"
#include "pipeline/gpu_batch.h"
#include "pipeline/gpu_context.h"

namespace stoker {

void run_resample_gpu(Workspace& ws, const std::vector<OutputDesc>& descs,
                      const std::vector<std::optional<kernels::ResampleParams>>& params,
                      const std::vector<ResampleGeometry>& geometry) {
  const Batch& in = ws.input(0);
  const OutputDesc& d = descs.at(0);
  if (in.memory() != MemoryKind::kDevice)
    fail(ErrorKind::kInvalidArgument, ws.spec->display_name() +
                                          ": device='gpu' needs GPU input; move the input to the "
                                          "GPU with .gpu() or run the operator with device='cpu'.");
  STOKER_ASSERT(kernels::cuda::resample_gpu_supports(d.dtype, in.dtype()),
                "resample GPU: unsupported types");
  ws.outputs.assign(1, allocate_device_batch(ws, d.dtype, d.shapes, d.layout));
  Batch& out = ws.outputs[0];
  const size_t in_elem = dtype_size(in.dtype()), out_elem = dtype_size(d.dtype);
  std::vector<kernels::cuda::ResampleJob> jobs;
  std::vector<kernels::cuda::VolumeJob> volumes;
  auto stream = static_cast<cudaStream_t>(ws.gpu->stream());
  for (size_t i = 0; i < in.size(); ++i) {
    if (!params[i]) {
      if (out.sample_bytes(i))
        STOKER_CUDA_CHECK(cudaMemsetAsync(out[i].data, 0, out.sample_bytes(i), stream));
      continue;
    }
    const Shape& is = in.shape(i);
    const Shape& os = out.shape(i);
    ResampleGeometry g;
    if (!geometry.empty()) {
      g = geometry[i];
    } else {  // CHW / FCHW / CFHW run plane by plane (c = 1), as on the CPU (resize_layout.h)
      const ResizePlanes gi = resize_planes(in.layout(), is), go = resize_planes(in.layout(), os);
      g = {gi.planes, gi.h, gi.w, go.h, go.w, gi.c};
    }
    const int64_t nf = g.planes, ih = g.ih, iw = g.iw, c = g.c, oh = g.oh, ow = g.ow;
    if (oh == 0 || ow == 0 || c == 0 || g.od == 0) continue;
    if (ih == 0 || iw == 0 || g.id == 0) {  // nothing to sample: zeros
      STOKER_CUDA_CHECK(cudaMemsetAsync(out[i].data, 0, out.sample_bytes(i), stream));
      continue;
    }
    for (int64_t f = 0; f < nf; ++f) {
      const char* src = static_cast<const char*>(in[i].data) + f * g.id * ih * iw * c * in_elem;
      char* dst = static_cast<char*>(out[i].data) + f * g.od * oh * ow * c * out_elem;
      if (g.volume) {
        kernels::cuda::VolumeJob v;
        v.in = src;
        v.in_d = g.id;
        v.in_h = ih;
        v.in_w = iw;
        v.out = dst;
        v.out_d = g.od;
        v.out_h = oh;
        v.out_w = ow;
        v.channels = c;
        v.params = *params[i];
        v.z0 = g.z0;
        v.z1 = g.z1;
        volumes.push_back(v);
        continue;
      }
      kernels::cuda::ResampleJob j;
      j.in = src;
      j.in_h = ih;
      j.in_w = iw;
      j.in_row_stride = iw * c;
      j.in_pixel_stride = c;
      j.out = dst;
      j.out_h = oh;
      j.out_w = ow;
      j.channels = c;
      j.params = *params[i];
      jobs.push_back(j);
    }
  }
  kernels::cuda::resample_volume_gpu(ws, d.dtype, in.dtype(), volumes);
  kernels::cuda::resample_gpu(ws, d.dtype, in.dtype(), jobs);
}

}  // namespace stoker
