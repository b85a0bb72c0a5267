// The sequences of readers.sequence: folders of frame images cut into windows of frames.
//
// DALI's SequenceLoader (sequence_loader.cc) semantics:
//  - a stream is a sub-folder of file_root; its frames are the files directly in it whose
//    extension (any case) is one of DALI's image extensions (jpg, jpeg, png, bmp, tif, tiff,
//    pnm, ppm, pgm, pbm, jp2, webp). DALI globs "file_root/*/*", so names starting with '.'
//    (folders and files) are left out, and so are files directly in file_root;
//  - frames are ordered, and streams follow each other, by their full paths compared byte by
//    byte (strcmp), as DALI sorts the glob's paths;
//  - a sequence starts at frames 0, step, 2*step, ... of a stream and takes the frames
//    start, start+stride, ..., start+(length-1)*stride; only whole sequences are kept, so a
//    stream shorter than (length-1)*stride+1 frames gives none. Sequences never cross streams.
// Unlike DALI, folders named like images inside a stream are not taken as frames (DALI then
// fails to map them at run time), and a file_root that is missing or has no frames gets an
// error that says which.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace stoker::readers {

struct FrameStream {
  std::string folder;               // file_root/name
  std::vector<std::string> frames;  // full paths, in order
};

// The streams of `file_root` in DALI's order, empty folders left out. Raises Error(kNotFound)
// when file_root does not exist or is not a folder, kIO when it cannot be listed.
std::vector<FrameStream> list_frame_streams(const std::string& file_root);

// Whether `name` ends in one of the image extensions readers.sequence takes (any case).
bool is_sequence_frame_name(const std::string& name);

struct FrameSequence {
  int32_t stream = 0;  // index into the streams
  int64_t start = 0;   // first frame
};

// Every whole sequence of `length` frames `stride` apart, starting `step` apart, stream after
// stream. length, step, stride >= 1.
std::vector<FrameSequence> cut_sequences(const std::vector<FrameStream>& streams, int64_t length,
                                         int64_t step, int64_t stride);

}  // namespace stoker::readers
