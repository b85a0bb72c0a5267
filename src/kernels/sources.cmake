# Files of src/kernels, listed one by one. (STOKER_CUDA_SOURCES: only built with CUDA.)
