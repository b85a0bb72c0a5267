// Builds without CUDA: asking for a GPU stage says so.
#include "core/error.h"
#include "pipeline/gpu_context.h"

namespace stoker {

std::unique_ptr<GpuContext> make_gpu_context(int device) {
  fail(ErrorKind::kUnsupported,
       "this pipeline has GPU stages (device='mixed' or 'gpu', or .gpu()), but stoker was built "
       "without CUDA. Build it where nvcc is available (STOKER_CUDA=ON), or keep the pipeline on "
       "the CPU (device='cpu', device_id=None).");
}

}  // namespace stoker
