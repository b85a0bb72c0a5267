# Files of src/kernels/cpu/color, listed one by one.
list(APPEND STOKER_SOURCES
  src/kernels/cpu/color/color_affine.cc
  src/kernels/cpu/color/color_affine_avx2.cc
  src/kernels/cpu/color/hsv_convert.cc)
list(APPEND STOKER_TEST_SOURCES
  tests/cpp/kernels/color_affine_test.cc
  tests/cpp/kernels/color_ops_test.cc)
# Histograms (equalize, clahe) and demosaicing (debayer).
list(APPEND STOKER_SOURCES
  src/kernels/cpu/color/histogram.cc
  src/kernels/cpu/color/debayer.cc)
