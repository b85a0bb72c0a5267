# Files of src/kernels/cuda: the batched GPU kernels (CUDA builds only).
list(APPEND STOKER_CUDA_SOURCES
  src/kernels/cuda/cuda_common.cu
  src/kernels/cuda/detection_gpu.cu
  src/kernels/cuda/filter_gpu.cu
  src/kernels/cuda/lz4_gpu.cu
  src/kernels/cuda/resample_gpu.cu
  src/kernels/cuda/slice_gpu.cu)
# The GPU twins of the colour, cast, normalize and erase operators (and the warps, blur).
list(APPEND STOKER_CUDA_SOURCES
  src/kernels/cuda/arithmetic_gpu.cu
  src/kernels/cuda/blur_gpu.cu
  src/kernels/cuda/cast_gpu.cu
  src/kernels/cuda/color_gpu.cu
  src/kernels/cuda/copy_gpu.cu
  src/kernels/cuda/erase_gpu.cu
  src/kernels/cuda/lookup_gpu.cu
  src/kernels/cuda/normalize_gpu.cu
  src/kernels/cuda/reduce_gpu.cu
  src/kernels/cuda/warp_gpu.cu
  src/kernels/cuda/ycbcr_gpu.cu)
# The GPU twins of the spectral audio operators (preemphasis, spectrogram, mel filter bank, mfcc,
# to_decibels, nonsilent_region) and the run-time loader of cuFFT, which is never linked.
list(APPEND STOKER_CUDA_SOURCES
  src/kernels/cuda/audio_gpu.cu
  src/kernels/cuda/cufft_loader.cc)
# NVDEC's frames (issue 20's readers.video and decoders.video on the GPU) to RGB or YCbCr.
list(APPEND STOKER_CUDA_SOURCES
  src/kernels/cuda/video_gpu.cu)
# The GPU twins of issue 22's rank filters (experimental.erode, dilate, median_blur), of
# noise.gaussian, noise.salt_and_pepper, grid_mask and jitter; laplacian's twin is in
# filter_gpu.cu, experimental.remap's in warp_gpu.cu.
list(APPEND STOKER_CUDA_SOURCES
  src/kernels/cuda/augment_gpu.cu)
list(APPEND STOKER_CUDA_TEST_SOURCES
  tests/cpp/cuda/cufft_loader_test.cc)
