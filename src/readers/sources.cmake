# Files of src/readers, listed one by one. (STOKER_CUDA_SOURCES: only built with CUDA.)
list(APPEND STOKER_SOURCES
  src/readers/file_list.cc
  src/readers/sample_order.cc)
list(APPEND STOKER_TEST_SOURCES
  tests/cpp/readers/file_list_test.cc
  tests/cpp/readers/sample_order_test.cc)
