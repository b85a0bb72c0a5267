# Files of src/kernels/cpu/video: frame conversions.
list(APPEND STOKER_SOURCES
)
