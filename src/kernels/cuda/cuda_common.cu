#include "kernels/cuda/cuda_common.cuh"

#include <string>

#include "core/cuda/cuda_util.h"

namespace stoker::kernels::cuda {

void check_launch(const char* what) {
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess)
    detail::throw_cuda_error(static_cast<int>(e), (std::string("launching ") + what).c_str(),
                             __FILE__, __LINE__);
}

}  // namespace stoker::kernels::cuda
