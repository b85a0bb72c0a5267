# Files of src/pipeline, listed one by one. (STOKER_CUDA_SOURCES: only built with CUDA.)
list(APPEND STOKER_SOURCES
  src/pipeline/dali_format.cc
  src/pipeline/executor.cc
  src/pipeline/gpu_batch.cc
  src/pipeline/graph.cc
  src/pipeline/operator.cc
  src/pipeline/plugin.cc
  src/pipeline/schema.cc)
# GPU stages: the CUDA implementation, or the one that says the build has no CUDA.
list(APPEND STOKER_CUDA_SOURCES src/pipeline/gpu_context_cuda.cc)
list(APPEND STOKER_NOCUDA_SOURCES src/pipeline/gpu_context_none.cc)
