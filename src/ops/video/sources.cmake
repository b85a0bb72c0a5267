# Files of src/ops/video: the video readers and decoders.
# readers.video (CPU), decoders.video, experimental.inputs.video's schema.
list(APPEND STOKER_SOURCES
  src/ops/video/video_decoder.cc
  src/ops/video/video_input.cc
  src/ops/video/video_reader.cc
)
# readers.sequence (folders of frame images).
list(APPEND STOKER_SOURCES
  src/ops/video/sequence_reader.cc)
