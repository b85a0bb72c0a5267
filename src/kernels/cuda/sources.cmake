# Files of src/kernels/cuda: the batched GPU kernels (CUDA builds only).
list(APPEND STOKER_CUDA_SOURCES
  src/kernels/cuda/cuda_common.cu
  src/kernels/cuda/resample_gpu.cu
  src/kernels/cuda/slice_gpu.cu)
