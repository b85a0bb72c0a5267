# Files of src/core, listed one by one. (STOKER_CUDA_SOURCES: only built with CUDA.)
list(APPEND STOKER_SOURCES
  src/core/batch.cc
  src/core/dlpack.cc
  src/core/dtype.cc
  src/core/memory.cc
  src/core/run_time_library.cc
  src/core/thread_pool.cc)
list(APPEND STOKER_TEST_SOURCES
  tests/cpp/testdata_environment.cc
  tests/cpp/core/core_test.cc
  tests/cpp/core/memory_pool_test.cc
  tests/cpp/core/size_overflow_test.cc)
