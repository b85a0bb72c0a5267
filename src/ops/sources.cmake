# Files of src/ops, listed one by one. (STOKER_CUDA_SOURCES: only built with CUDA.)
list(APPEND STOKER_SOURCES
  src/ops/generic/cast.cc
  src/ops/generic/constant.cc
  src/ops/generic/dump_image.cc
  src/ops/generic/inflate.cc
  src/ops/generic/conditional.cc
  src/ops/generic/batch_permute.cc
  src/ops/generic/join.cc
  src/ops/generic/reshape.cc
  src/ops/generic/shapes.cc
  src/ops/generic/subscript.cc
  src/ops/generic/to_gpu.cc
  src/ops/io/file_reader.cc
  src/ops/math/arithmetic.cc
  src/ops/math/reductions.cc
  src/ops/random/beta_choice.cc
  src/ops/random/random_ops.cc)
include(src/ops/image/sources.cmake)
include(src/ops/io/sources.cmake)
