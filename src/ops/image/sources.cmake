# Files of src/ops/image, listed one by one.
list(APPEND STOKER_SOURCES
  src/ops/image/decoder.cc
  src/ops/image/decoder_crop.cc
  src/ops/image/peek_image_shape.cc
  src/ops/image/random_crop_attr.cc
  src/ops/image/random_resized_crop.cc
  src/ops/image/resize.cc
  src/ops/image/tensor_resize.cc
  src/ops/image/resize_attr.cc)
list(APPEND STOKER_TEST_SOURCES
  tests/cpp/ops/random_crop_attr_test.cc
  tests/cpp/ops/resize_attr_test.cc)
# GPU twins and the mixed decoders (CUDA builds only).
list(APPEND STOKER_CUDA_SOURCES
  src/ops/image/decoder_mixed.cc
  src/ops/image/resample_gpu.cc)
# resize_crop_mirror (and DALI's deprecated fast_resize_crop_mirror).
list(APPEND STOKER_SOURCES
  src/ops/image/resize_crop_mirror.cc)
