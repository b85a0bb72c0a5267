# Files of src/codecs/video: demuxing and decoding through FFmpeg (libavformat, libavcodec).
list(APPEND STOKER_SOURCES
  src/codecs/video/ffmpeg_video.cc
)
