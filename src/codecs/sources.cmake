# Files of src/codecs, listed one by one. (STOKER_CUDA_SOURCES: only built with CUDA.)
list(APPEND STOKER_SOURCES
  src/codecs/image_codec.cc
  src/codecs/jpeg.cc
  src/codecs/png.cc
  src/codecs/tiff.cc
  src/codecs/webp.cc
  src/codecs/jpeg2k.cc
  src/codecs/bmp.cc
  src/codecs/pnm.cc)
list(APPEND STOKER_TEST_SOURCES
  tests/cpp/codecs/image_codec_test.cc
  tests/cpp/codecs/formats_test.cc)
