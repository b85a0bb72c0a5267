# Files of src/kernels, listed one by one. (STOKER_CUDA_SOURCES: only built with CUDA.)
list(APPEND STOKER_SOURCES
  src/kernels/cpu/imgproc/resample.cc
  src/kernels/cpu/math/reduce.cc)
list(APPEND STOKER_TEST_SOURCES
  tests/cpp/kernels/reduce_test.cc
  tests/cpp/kernels/resample_test.cc)
