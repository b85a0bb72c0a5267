# Files of src/ops/io, listed one by one. (file_reader.cc is listed in src/ops/sources.cmake.)
list(APPEND STOKER_SOURCES
  src/ops/io/caffe_reader.cc
  src/ops/io/coco_reader.cc
  src/ops/io/file_selection.cc
  src/ops/io/fits_reader.cc
  src/ops/io/mxnet_reader.cc
  src/ops/io/nemo_asr_reader.cc
  src/ops/io/numpy_decoder.cc
  src/ops/io/numpy_reader.cc
  src/ops/io/reader_base.cc
  src/ops/io/tfrecord_reader.cc
  src/ops/io/webdataset_reader.cc)
