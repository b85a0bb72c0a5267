# Files of src/ops/geometry, listed one by one.
list(APPEND STOKER_SOURCES
  src/ops/geometry/geometry_common.cc
  src/ops/geometry/crop.cc
  src/ops/geometry/crop_mirror_normalize.cc
  src/ops/geometry/erase.cc
  src/ops/geometry/flip.cc
  src/ops/geometry/normalize.cc
  src/ops/geometry/pad.cc
  src/ops/geometry/paste.cc
  src/ops/geometry/slice.cc
  src/ops/geometry/transpose.cc)
# GPU twins (CUDA builds only).
list(APPEND STOKER_CUDA_SOURCES
  src/ops/geometry/slice_gpu.cc)
# multi_paste (CPU).
list(APPEND STOKER_SOURCES
  src/ops/geometry/multi_paste.cc)
