# Files of src/kernels/cpu/filter: separable and general convolution, morphology, median.
# Convolution (filter, laplacian).
list(APPEND STOKER_SOURCES
  src/kernels/cpu/filter/convolution.cc
)
list(APPEND STOKER_TEST_SOURCES
  tests/cpp/kernels/filter_convolution_test.cc
)
# Morphology and the median.
list(APPEND STOKER_SOURCES
  src/kernels/cpu/filter/morphology.cc
)
list(APPEND STOKER_TEST_SOURCES
  tests/cpp/kernels/filter_morphology_test.cc
)
