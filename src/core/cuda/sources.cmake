# Files of src/core/cuda: CUDA runtime helpers, streams, events and the pinned/device pools.
# Everything here needs the CUDA runtime, so it all goes to STOKER_CUDA_SOURCES.
list(APPEND STOKER_CUDA_SOURCES
  src/core/cuda/cuda_memory.cc
  src/core/cuda/cuda_util.cc)
list(APPEND STOKER_CUDA_TEST_SOURCES
  tests/cpp/cuda/cuda_test.cc
  tests/cpp/cuda/test_kernels.cu)
