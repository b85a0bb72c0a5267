# Files of src/kernels/cpu/warp, listed one by one.
list(APPEND STOKER_SOURCES
  src/kernels/cpu/warp/gaussian_blur.cc
  src/kernels/cpu/warp/jpeg_distortion.cc
  src/kernels/cpu/warp/warp.cc)
list(APPEND STOKER_TEST_SOURCES
  tests/cpp/kernels/warp_kernels_test.cc
  tests/cpp/kernels/warp_ops_test.cc
  tests/cpp/kernels/volume_kernels_test.cc)
