# Files of src/codecs/audio: audio decoding through libsndfile, resampling through libsoxr.
list(APPEND STOKER_SOURCES
  src/codecs/audio/resample.cc
  src/codecs/audio/sndfile.cc)
