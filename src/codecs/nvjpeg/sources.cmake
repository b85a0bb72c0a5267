# Files of src/codecs/nvjpeg: nvJPEG loaded at run time (CUDA builds only; no nvJPEG needed to
# build).
list(APPEND STOKER_CUDA_SOURCES
  src/codecs/nvjpeg/nvjpeg_decoder.cc
  src/codecs/nvjpeg/nvjpeg_loader.cc)
list(APPEND STOKER_CUDA_TEST_SOURCES
  tests/cpp/cuda/nvjpeg_test.cc)

# The check of the loader's declarations against the real nvjpeg.h is built wherever that
# header is found: the CUDA toolkit's, or one given with -DNVJPEG_INCLUDE_DIR=... (see
# scripts/fetch_nvjpeg_headers.sh). Only that one test file sees the header.
if(STOKER_WITH_CUDA)
  find_path(NVJPEG_INCLUDE_DIR nvjpeg.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
  if(NVJPEG_INCLUDE_DIR)
    list(APPEND STOKER_CUDA_TEST_SOURCES tests/cpp/cuda/nvjpeg_abi_test.cc)
    set_source_files_properties(tests/cpp/cuda/nvjpeg_abi_test.cc PROPERTIES
      INCLUDE_DIRECTORIES "${NVJPEG_INCLUDE_DIR};${CUDAToolkit_INCLUDE_DIRS}")
    message(STATUS "stoker: nvJPEG ABI test against ${NVJPEG_INCLUDE_DIR}/nvjpeg.h")
  else()
    message(STATUS "stoker: no nvjpeg.h found; the nvJPEG ABI test is not built")
  endif()
endif()
