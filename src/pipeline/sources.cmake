# Files of src/pipeline, listed one by one. (STOKER_CUDA_SOURCES: only built with CUDA.)
list(APPEND STOKER_SOURCES
  src/pipeline/executor.cc
  src/pipeline/operator.cc
  src/pipeline/schema.cc)
