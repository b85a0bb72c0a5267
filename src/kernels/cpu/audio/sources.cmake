# Files of src/kernels/cpu/audio: the spectral kernels (FFT through third_party/pocketfft).
# Spectral: preemphasis, spectrogram, mel filter bank, mfcc, decibels, nonsilent region.
list(APPEND STOKER_SOURCES
  src/kernels/cpu/audio/spectral.cc
)
set_property(SOURCE src/kernels/cpu/audio/spectral.cc APPEND PROPERTY INCLUDE_DIRECTORIES
             ${CMAKE_CURRENT_SOURCE_DIR}/third_party/pocketfft)
list(APPEND STOKER_TEST_SOURCES
  tests/cpp/kernels/audio_spectral_test.cc
)
