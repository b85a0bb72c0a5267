# Files of src/ops/audio: audio decoding, resampling and the spectral operators.
# Decoding and resampling: decoders.audio, audio_resample.
list(APPEND STOKER_SOURCES
  src/ops/audio/audio_resample.cc
  src/ops/audio/decoder_audio.cc)
# Spectral: preemphasis_filter, spectrogram, mel_filter_bank, mfcc, to_decibels,
# power_spectrum, nonsilent_region.
list(APPEND STOKER_SOURCES
  src/ops/audio/spectral.cc
  src/ops/audio/preemphasis_nonsilence.cc
)
