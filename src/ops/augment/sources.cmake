# Files of src/ops/augment: random perturbations of pixels (noise, grid_mask, jitter).
list(APPEND STOKER_SOURCES
  src/ops/augment/noise.cc
  src/ops/augment/grid_mask.cc
  src/ops/augment/jitter.cc
)
