# Files of src/ops/color, listed one by one.
list(APPEND STOKER_SOURCES
  src/ops/color/brightness_contrast.cc
  src/ops/color/color_space_conversion.cc
  src/ops/color/color_twist.cc)
# equalize, clahe, debayer.
list(APPEND STOKER_SOURCES
  src/ops/color/equalize.cc
  src/ops/color/clahe.cc
  src/ops/color/debayer.cc)
