// readers.sequence: sequences of frames from folders of image files, decoded into FHWC uint8.
//
// The folders are listed and cut into sequences once (readers/frame_sequences.h, DALI's
// SequenceLoader semantics); SampleReader picks the sequences of each batch (sharding,
// shuffling, padding, checkpoints, on_error='skip'). A batch is made in two passes on the
// pipeline's threads: each sequence's frames are read and their headers peeked (so that the
// batch is allocated at once and frames of different sizes are caught before any pixel work),
// then every frame of the batch is decoded straight into its place, one frame per task, so a
// small batch of long sequences still keeps every thread busy.
#include <atomic>
#include <string>
#include <utility>
#include <vector>

#include "codecs/image_codec.h"
#include "ops/image/image_types.h"
#include "ops/io/reader_base.h"
#include "readers/file_list.h"
#include "readers/frame_sequences.h"

namespace stoker {
namespace {

std::string shape_text(const codecs::ImageInfo& info, const Shape& hwc) {
  return std::to_string(hwc[0]) + "x" + std::to_string(hwc[1]) + " with " +
         std::to_string(hwc[2]) + (hwc[2] == 1 ? " channel" : " channels") + " (" +
         codecs::format_name(info.format) + ")";
}

class SequenceReader : public SampleReader {
 public:
  explicit SequenceReader(const OpSpec& spec) : SampleReader(spec) {
    const std::string root = spec.get<std::string>("file_root");
    length_ = spec.get<int64_t>("sequence_length");
    const int64_t step = spec.get<int64_t>("step");
    stride_ = spec.get<int64_t>("stride");
    const int64_t stride = stride_;
    const auto type = static_cast<ImageType>(spec.get<int64_t>("image_type"));
    switch (type) {
      case ImageType::kRGB: params_.color = codecs::ColorOut::kRGB; break;
      case ImageType::kBGR: params_.color = codecs::ColorOut::kBGR; break;
      case ImageType::kGray: params_.color = codecs::ColorOut::kGray; break;
      case ImageType::kAnyData: params_.color = codecs::ColorOut::kAny; break;
      default:
        spec.arg_error("image_type", std::string("must be RGB, BGR, GRAY or ANY_DATA, got ") +
                                         image_type_name(type) +
                                         "; decode as RGB and convert the frames with "
                                         "fn.color_space_conversion.");
    }
    try {
      streams_ = readers::list_frame_streams(root);
    } catch (const Error& e) {
      throw e.with_context(spec.display_name());
    }
    if (streams_.empty())
      fail(ErrorKind::kNotFound,
           spec.display_name() + ": file_root '" + root +
               "' has no sub-folder with frames; put each sequence's frames (.jpg, .jpeg, .png, "
               ".bmp, .tif, .tiff, .pnm, .ppm, .pgm, .pbm, .jp2 or .webp files) in a folder of "
               "its own inside file_root");
    sequences_ = readers::cut_sequences(streams_, length_, step, stride);
    if (sequences_.empty()) {
      const readers::FrameStream* longest = &streams_[0];
      for (const auto& s : streams_)
        if (s.frames.size() > longest->frames.size()) longest = &s;
      // (length-1)*stride+1 frames, exact even where it does not fit in 64 bits.
      unsigned __int128 span = static_cast<unsigned __int128>(length_ - 1) * stride + 1;
      std::string need;
      do {
        need.insert(need.begin(), static_cast<char>('0' + static_cast<int>(span % 10)));
        span /= 10;
      } while (span != 0);
      fail(ErrorKind::kInvalidArgument,
           spec.display_name() + ": no folder of file_root '" + root + "' has the " +
               need + " frames that one sequence of sequence_length=" +
               std::to_string(length_) + " with stride=" + std::to_string(stride) +
               " spans; the longest, '" + longest->folder + "', has " +
               std::to_string(longest->frames.size()) +
               ". Give a smaller sequence_length or stride.");
    }
    init_order(static_cast<int64_t>(sequences_.size()));
  }

  void run_batch(Workspace& ws) override {
    const std::vector<readers::Pick>& picks = this->picks();
    const int64_t n = static_cast<int64_t>(picks.size());
    const int64_t stride = stride_;
    // Pass 1: bytes and headers of every frame; the sequence's shape.
    std::vector<Plan> plans(n);
    ws.thread_pool->parallel_for(n, [&](int64_t i, int) {
      Plan& p = plans[i];
      const readers::FrameSequence& seq = sequences_[picks[i].index];
      const readers::FrameStream& stream = streams_[seq.stream];
      p.frames.resize(length_);
      for (int64_t f = 0; f < length_; ++f) p.frames[f].path = stream.frames[seq.start + f * stride];
      int64_t f = 0;
      try {
        for (; f < length_; ++f) {
          Frame& fr = p.frames[f];
          fr.bytes = readers::read_file(fr.path);
          fr.info = codecs::peek(fr.bytes.data(), fr.bytes.size(), params_.limits);
          const Shape hwc = codecs::output_shape(fr.info, params_);
          if (f == 0) {
            p.shape = {length_, hwc[0], hwc[1], hwc[2]};
          } else if (hwc[0] != p.shape[1] || hwc[1] != p.shape[2] || hwc[2] != p.shape[3]) {
            fail(ErrorKind::kDecode,
                 "the frame is " + shape_text(fr.info, hwc) + " but frame 0 of the sequence, '" +
                     p.frames[0].path + "', is " +
                     shape_text(p.frames[0].info, {p.shape[1], p.shape[2], p.shape[3]}) +
                     "; all frames of a sequence must have one size and number of channels "
                     "(resize the frames of '" + stream.folder + "' to one size)");
          }
        }
      } catch (const Error& e) {
        bad(ws, p, i, f, e);
      }
    });
    std::vector<Shape> shapes(n);
    for (int64_t i = 0; i < n; ++i) shapes[i] = plans[i].bad ? Shape{0, 0, 0, 0} : plans[i].shape;
    ws.outputs.assign(1, Batch());
    Batch& out = ws.outputs[0];
    out.allocate(*ws.host_pool, DType::kUInt8, shapes, "FHWC");
    for (int64_t i = 0; i < n; ++i) {
      const readers::FrameSequence& seq = sequences_[picks[i].index];
      out[i].source = streams_[seq.stream].frames[seq.start];
    }
    // Pass 2: every frame of the batch is a task of its own.
    std::vector<std::pair<int64_t, int64_t>> tasks;
    for (int64_t i = 0; i < n; ++i)
      if (!plans[i].bad)
        for (int64_t f = 0; f < length_; ++f) tasks.emplace_back(i, f);
    ws.thread_pool->parallel_for(static_cast<int64_t>(tasks.size()), [&](int64_t t, int) {
      const auto [i, f] = tasks[t];
      Plan& p = plans[i];
      Frame& fr = p.frames[f];
      const int64_t frame_elems = p.shape[1] * p.shape[2] * p.shape[3];
      try {
        ImageView<uint8_t> view(out.data<uint8_t>(i) + f * frame_elems, p.shape[1], p.shape[2],
                                p.shape[3]);
        codecs::decode(fr.bytes.data(), fr.bytes.size(), fr.info, params_, view);
      } catch (const Error& e) {
        bad(ws, p, i, f, e);
      }
      fr.bytes = {};
    });
  }

 private:
  struct Frame {
    std::string path;
    std::vector<uint8_t> bytes;
    codecs::ImageInfo info;
  };
  struct Plan {
    std::vector<Frame> frames;
    Shape shape;
    std::atomic<bool> bad{false};
  };

  // Frame f of sample i could not be read or decoded: recorded under on_error='skip' (the
  // sequence is then never delivered again), else raised naming the sample, frame and file.
  void bad(Workspace& ws, Plan& p, int64_t i, int64_t f, const Error& e) const {
    const std::string& path = p.frames[f].path;
    // One report per sequence: each report makes the order deliver one more sequence.
    if (p.bad.exchange(true)) return;
    if (ws.report_bad_sample(i, path, e.what())) return;
    throw e.with_context("sample " + std::to_string(i) + ", frame " + std::to_string(f) + " of " +
                         std::to_string(length_) + " ('" + path + "')");
  }

  int64_t length_ = 0, stride_ = 1;
  codecs::DecodeParams params_;
  std::vector<readers::FrameStream> streams_;
  std::vector<readers::FrameSequence> sequences_;
};

}  // namespace

STOKER_REGISTER_OP_NAMED(readers_sequence, "readers.sequence") {
  add_reader_args(schema);
  schema.doc("Reads sequences of frames from folders of image files: each sub-folder of "
             "file_root is one stream (an extracted video) whose frames are its image files in "
             "name order. A sequence takes sequence_length frames stride apart; sequences start "
             "step frames apart and never cross a folder, and only whole sequences are read "
             "(a folder with too few frames gives none). The frames are decoded into one FHWC "
             "uint8 tensor per sequence; all frames of a sequence must have one size.")
      .inputs(0, 0).outputs(1, {"frames"})
      .arg({.name = "file_root", .type = ArgType::kString,
            .doc = "Folder with one sub-folder of frame images per stream."})
      .arg({.name = "sequence_length", .type = ArgType::kInt,
            .doc = "Frames in each sequence.", .min = 1})
      .arg({.name = "step", .type = ArgType::kInt, .default_value = int64_t{1},
            .doc = "Frames between the first frames of two consecutive sequences of a folder.",
            .min = 1})
      .arg({.name = "stride", .type = ArgType::kInt, .default_value = int64_t{1},
            .doc = "Frames between two consecutive frames of a sequence.", .min = 1})
      .arg({.name = "image_type", .type = ArgType::kImageType, .default_value = int64_t{0},
            .doc = "Colour space of the output frames: RGB, BGR, GRAY (one channel) or ANY_DATA "
                   "(the files' own channels)."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<SequenceReader>(s); });
  add_on_error_arg(schema, /*can_replace=*/false);
}

}  // namespace stoker
