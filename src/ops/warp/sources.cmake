# Files of src/ops/warp, listed one by one.
list(APPEND STOKER_SOURCES
  src/ops/warp/displacement.cc
  src/ops/warp/gaussian_blur.cc
  src/ops/warp/jpeg_compression_distortion.cc
  src/ops/warp/warp_affine.cc)
# experimental.warp_perspective (CPU).
list(APPEND STOKER_SOURCES
  src/ops/warp/warp_perspective.cc)
# experimental.remap (CPU).
list(APPEND STOKER_SOURCES
  src/ops/warp/remap.cc)
