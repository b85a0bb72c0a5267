# Files of src/ops/filter: convolution and neighbourhood filters.
# filter, laplacian.
list(APPEND STOKER_SOURCES
  src/ops/filter/convolution.cc
)
# median_blur, erode, dilate.
list(APPEND STOKER_SOURCES
  src/ops/filter/morphology.cc
)
