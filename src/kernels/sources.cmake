# Files of src/kernels, listed one by one. (STOKER_CUDA_SOURCES: only built with CUDA.)
list(APPEND STOKER_SOURCES
  src/kernels/cpu/imgproc/resample.cc)
list(APPEND STOKER_TEST_SOURCES
  tests/cpp/kernels/resample_test.cc)
