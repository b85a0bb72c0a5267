# Files of src/ops/color, listed one by one.
list(APPEND STOKER_SOURCES
  src/ops/color/brightness_contrast.cc
  src/ops/color/color_space_conversion.cc
  src/ops/color/color_twist.cc)
