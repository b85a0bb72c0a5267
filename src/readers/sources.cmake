# Files of src/readers, listed one by one. (STOKER_CUDA_SOURCES: only built with CUDA.)
list(APPEND STOKER_SOURCES
  src/readers/file_list.cc
  src/readers/frame_sequences.cc
  src/readers/remote.cc
  src/readers/sample_order.cc)
list(APPEND STOKER_TEST_SOURCES
  tests/cpp/readers/file_list_test.cc
  tests/cpp/readers/frame_sequences_test.cc
  tests/cpp/readers/sample_order_test.cc)
list(APPEND STOKER_SOURCES
  src/readers/caffe.cc
  src/readers/coco.cc
  src/readers/coco_mask.cc
  src/readers/nemo_asr.cc
  src/readers/fits.cc
  src/readers/npy.cc
  src/readers/random_access_file.cc
  src/readers/recordio.cc
  src/readers/tar.cc
  src/readers/tfrecord.cc
  src/readers/webdataset.cc)
list(APPEND STOKER_TEST_SOURCES
  tests/cpp/readers/tfrecord_test.cc)
# LMDB is optional (readers.caffe, readers.caffe2): without it lmdb_unavailable.cc takes the place
# of lmdb.cc and the readers raise "stoker was built without LMDB".
find_path(LMDB_INCLUDE_DIR lmdb.h)
find_library(LMDB_LIBRARY lmdb)
if(LMDB_INCLUDE_DIR AND LMDB_LIBRARY AND NOT STOKER_WITHOUT_LMDB)
  message(STATUS "stoker: LMDB ${LMDB_LIBRARY}")
  list(APPEND STOKER_SOURCES src/readers/lmdb.cc)
  include_directories(${LMDB_INCLUDE_DIR})
  # The module and the tests are defined after this file is included; they link liblmdb.
  link_libraries(${LMDB_LIBRARY})
else()
  message(STATUS "stoker: LMDB not found (readers.caffe and readers.caffe2 will say so)")
  list(APPEND STOKER_SOURCES src/readers/lmdb_unavailable.cc)
endif()
