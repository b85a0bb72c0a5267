# Files of src/kernels/cpu/augment: the pixel arithmetic of noise, grid_mask and jitter.
list(APPEND STOKER_SOURCES
  src/kernels/cpu/augment/augment.cc
)
