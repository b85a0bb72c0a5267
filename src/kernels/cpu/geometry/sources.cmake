# Files of src/kernels/cpu/geometry, listed one by one.
list(APPEND STOKER_SOURCES
  src/kernels/cpu/geometry/erase.cc
  src/kernels/cpu/geometry/normalize.cc
  src/kernels/cpu/geometry/slice.cc
  src/kernels/cpu/geometry/strided_copy.cc
  src/kernels/cpu/geometry/strided_row.cc)
list(APPEND STOKER_TEST_SOURCES
  tests/cpp/kernels/geometry_normalize_erase_test.cc
  tests/cpp/kernels/geometry_slice_test.cc
  tests/cpp/kernels/strided_copy_test.cc)
