// The GPU twin of the slice-kernel operators (geometry_common.h: SliceGpu).
#include "kernels/cuda/slice_gpu.h"
#include "ops/geometry/geometry_common.h"
#include "pipeline/gpu_batch.h"

namespace stoker::geometry {

void run_slice_gpu(Workspace& ws, const std::vector<OutputDesc>& descs,
                   const std::vector<kernels::SliceArgs>& args) {
  STOKER_ASSERT(descs.size() == 1, "slice operators have one output");
  const Batch& in = ws.input(0);
  const OutputDesc& d = descs[0];
  if (in.memory() != MemoryKind::kDevice)
    fail(ErrorKind::kInvalidArgument, ws.spec->display_name() +
                                          ": device='gpu' needs GPU input; move the input to the "
                                          "GPU with .gpu() or run the operator with device='cpu'.");
  if (!kernels::cuda::slice_gpu_supports(d.dtype, in.dtype(), in.empty() ? 1 : in.ndim()))
    fail(ErrorKind::kUnsupported,
         ws.spec->display_name() + ": the GPU backend does not convert " + dtype_name(in.dtype()) +
             " to " + dtype_name(d.dtype) + " or handle " + std::to_string(in.ndim()) +
             " dimensions (at most " + std::to_string(kernels::cuda::kMaxSliceDims) +
             "); run it with device='cpu'.");
  ws.outputs.assign(1, allocate_device_batch(ws, d.dtype, d.shapes, d.layout));
  Batch& out = ws.outputs[0];
  std::vector<void*> outs(in.size());
  std::vector<const void*> ins(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    outs[i] = out[i].data;
    ins[i] = in[i].data;
  }
  kernels::cuda::slice_flip_normalize_gpu(ws, d.dtype, in.dtype(), outs, ins, args);
}

}  // namespace stoker::geometry
