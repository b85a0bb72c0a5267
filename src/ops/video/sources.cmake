# Files of src/ops/video: the video readers and decoders.
# readers.video and experimental.readers.video, decoders.video, experimental.inputs.video's schema,
# and the frame lists they share (frame_list).
list(APPEND STOKER_SOURCES
  src/ops/video/frame_list.cc
  src/ops/video/video_decoder.cc
  src/ops/video/video_input.cc
  src/ops/video/video_reader.cc
)
# readers.sequence (folders of frame images).
list(APPEND STOKER_SOURCES
  src/ops/video/sequence_reader.cc)
