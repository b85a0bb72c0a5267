// decoders.video: encoded video bytes (a 1-D uint8 sample, e.g. from readers.file) in, frames
// (FHWC, RGB) out, decoded on the CPU or (device='mixed') on NVDEC into device memory where the
// GPU takes the stream (codecs/video/video_codec.h). The bytes are demuxed in place through an
// AVIOContext; which frames and how a sequence past the end is padded are DALI's arguments.
#include <algorithm>
#include <cstring>

#include "codecs/video/video_codec.h"
#include "core/log.h"
#include "ops/video/frame_list.h"
#include "pipeline/operator.h"
#ifdef STOKER_WITH_CUDA
#include "core/cuda/cuda_util.h"
#include "pipeline/gpu_batch.h"
#include "pipeline/gpu_context.h"
#endif

namespace stoker {
namespace {

namespace cv = codecs::video;
namespace vf = video_frames;

struct Plan {
  std::unique_ptr<cv::VideoFile> video;
  std::vector<int64_t> frames;  // per output frame: the video's frame, or -1 for fill
};

class VideoDecoder : public Operator {
 public:
  VideoDecoder(const OpSpec& spec, bool on_gpu) : Operator(spec), on_gpu_(on_gpu) {
    if (!cv::built_with_ffmpeg())
      throw Error(ErrorKind::kUnsupported, cv::without_ffmpeg_message(spec.display_name()));
    const bool frames = spec.has("frames") || spec.is_tensor_arg("frames");
    auto given = [&](const char* a) { return spec.has(a) || spec.is_tensor_arg(a); };
    if (frames && (given("start_frame") || given("sequence_length") || given("stride") || given("end_frame")))
      spec.arg_error("frames", "cannot be combined with start_frame, end_frame, sequence_length "
                               "or stride; give the frames to decode or a range, not both");
    if (given("end_frame") && given("sequence_length"))
      spec.arg_error("end_frame", "cannot be combined with sequence_length; give one of them");
    pad_ = vf::parse_pad_mode(spec, spec.get<std::string>("pad_mode"));
    fill_ = vf::parse_fill_value(spec);
  }

  bool sample_wise() const override { return false; }

  void run_batch(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int64_t n = static_cast<int64_t>(in.size());
    const std::string op = spec_.display_name();
    if (in.dtype() != DType::kUInt8)
      throw Error(ErrorKind::kTypeMismatch,
                  op + ": the input must be encoded video bytes (uint8), got " +
                      dtype_name(in.dtype()) + "; read the files with fn.readers.file");
    if (on_gpu_) start_gpu(ws);
    std::vector<Plan> plans(n);
    std::vector<Shape> shapes(n);
    std::vector<char> bad(n, 0);
    auto where = [&](int64_t i) {
      const std::string& src = in[i].source;
      return "sample " + std::to_string(i) + (src.empty() ? "" : " ('" + src + "')");
    };
    ws.thread_pool->parallel_for(n, [&](int64_t i, int) {
      try {
        if (in.shape(i).size() != 1)
          throw Error(ErrorKind::kInvalidArgument,
                      "the input must be 1-D encoded bytes, got a sample with " +
                          std::to_string(in.shape(i).size()) + " dimensions");
        if (in.shape(i)[0] == 0) throw Error(ErrorKind::kDecode, "the encoded video is empty (0 bytes)");
        plans[i].video = cv::VideoFile::open_memory(static_cast<const uint8_t*>(in[i].data),
                                                     static_cast<size_t>(in.shape(i)[0]), gpu_);
        plans[i].frames = select(ws, i, plans[i].video->info().num_frames());
        const cv::VideoInfo& v = plans[i].video->info();
        shapes[i] = {static_cast<int64_t>(plans[i].frames.size()), v.height, v.width, 3};
      } catch (const Error& e) {
        std::string msg = where(i) + ": " + e.what();
        if (!ws.report_bad_sample(i, in[i].source, msg)) throw Error(e.kind(), op + ": " + msg);
        bad[i] = 1;
        plans[i].video.reset();
        shapes[i] = {0, 0, 0, 3};
      }
    });
    ws.outputs.assign(1, Batch());
    Batch& out = ws.outputs[0];
#ifdef STOKER_WITH_CUDA
    if (on_gpu_) out = allocate_device_batch(ws, DType::kUInt8, shapes, "FHWC");
#endif
    if (!on_gpu_) out.allocate(*ws.host_pool, DType::kUInt8, shapes, "FHWC");
    ws.thread_pool->parallel_for(n, [&](int64_t i, int) {
      out[i].source = in[i].source;
      if (bad[i]) return;
      try {
#ifdef STOKER_WITH_CUDA
        if (on_gpu_)
          vf::decode_device(*plans[i].video, plans[i].frames, cv::ColorFormat::kRGB, fill_,
                            {out.data<uint8_t>(i), false, 1.0f}, ws.gpu->stream());
#endif
        if (!on_gpu_)
          vf::decode(*plans[i].video, plans[i].frames, cv::ColorFormat::kRGB, fill_, out.data<uint8_t>(i));
      } catch (const Error& e) {
        std::string msg = where(i) + ": " + e.what();
        if (!ws.report_bad_sample(i, in[i].source, msg)) throw Error(e.kind(), op + ": " + msg);
#ifdef STOKER_WITH_CUDA
        if (on_gpu_) cuda_memset_async(out[i].data, 0, out.sample_bytes(i), ws.gpu->stream());
#endif
        if (!on_gpu_) std::memset(out[i].data, 0, out.sample_bytes(i));
      }
      plans[i].video.reset();
    });
  }

 private:
  std::vector<int64_t> select(Workspace& ws, int64_t i, int64_t n) const {
    std::vector<int64_t> idx;
    if (ws.has_arg("frames")) {
      for (double f : ws.list_arg("frames", i)) {
        if (f < 0 || f >= n)
          throw Error(ErrorKind::kInvalidArgument,
                      "argument 'frames': frame " + std::to_string(static_cast<int64_t>(f)) +
                          " is outside the video's " + std::to_string(n) + " frames (0 to " +
                          std::to_string(n - 1) + ")");
        idx.push_back(static_cast<int64_t>(f));
      }
      return idx;
    }
    const int64_t start = static_cast<int64_t>(ws.scalar_arg("start_frame", i, 0));
    const int64_t stride = static_cast<int64_t>(ws.scalar_arg("stride", i, 1));
    if (start < 0)
      throw Error(ErrorKind::kInvalidArgument,
                  "argument 'start_frame' must be >= 0, got " + std::to_string(start));
    if (stride < 1)
      throw Error(ErrorKind::kInvalidArgument,
                  "argument 'stride' must be >= 1, got " + std::to_string(stride));
    int64_t count;
    if (ws.has_arg("sequence_length")) {
      count = static_cast<int64_t>(ws.scalar_arg("sequence_length", i, 0));
      if (count < 1)
        throw Error(ErrorKind::kInvalidArgument,
                    "argument 'sequence_length' must be >= 1, got " + std::to_string(count));
    } else {
      const int64_t end = ws.has_arg("end_frame") ? static_cast<int64_t>(ws.scalar_arg("end_frame", i, 0)) : n;
      if (end <= start)
        throw Error(ErrorKind::kInvalidArgument,
                    "argument 'end_frame' (" + std::to_string(end) +
                        ") must be greater than start_frame (" + std::to_string(start) + ")");
      count = (end - start + stride - 1) / stride;
    }
    for (int64_t k = 0; k < count; ++k) {
      int64_t f = start + k * stride;
      if (f >= n) {
        if (pad_ == vf::PadMode::kNone) {
          if (idx.empty())
            throw Error(ErrorKind::kInvalidArgument,
                        "start_frame " + std::to_string(start) + " is past the video's " +
                            std::to_string(n) + " frames");
          break;
        }
        f = vf::frame_at(pad_, f, 0, n);
      }
      idx.push_back(f);
    }
    return idx;
  }

  // The GPU's decoders, set up on the first batch (the stream is the pipeline's).
  void start_gpu(Workspace& ws) {
#ifdef STOKER_WITH_CUDA
    if (gpu_started_) return;
    gpu_started_ = true;
    std::string why;
    gpu_ = cv::make_gpu_decoding(ws.gpu->device(), ws.gpu->stream(), &why);
    if (!why.empty())  // still correct, only slower
      log_message(LogLevel::kWarning, "%s: decoding on the CPU and copying the frames: %s",
                  spec_.display_name().c_str(), why.c_str());
#endif
  }

  const bool on_gpu_;
  bool gpu_started_ = false;
  std::shared_ptr<cv::GpuDecoding> gpu_;  // on the GPU: FFmpeg's CUDA device, or none
  vf::PadMode pad_ = vf::PadMode::kConstant;
  std::vector<int64_t> fill_;
};

}  // namespace

STOKER_REGISTER_OP_NAMED(decoders_video, "decoders.video") {
  schema.doc("Decodes encoded videos (1-D uint8 samples of a whole file) into sequences of RGB "
             "frames (FHWC) through FFmpeg: on the CPU or, with device='mixed', on NVDEC where "
             "the GPU takes the codec and profile (else on the CPU, then copied). Without frame arguments every frame is "
             "decoded; frames picks frames by index, start_frame with end_frame or "
             "sequence_length (and stride) a range, padded past the end by pad_mode.")
      .inputs(1, 1, {"encoded"}).outputs(1)
      .arg({.name = "affine", .type = ArgType::kBool, .default_value = true,
            .doc = "Accepted for DALI compatibility (thread pinning of the mixed backend)."})
      .arg({.name = "build_index", .type = ArgType::kBool, .default_value = true,
            .doc = "Accepted for DALI compatibility; stoker always indexes the frames (pts, "
                   "keyframes) so that a range seeks to the keyframe before it."})
      .arg({.name = "start_frame", .type = ArgType::kInt, .optional = true,
            .doc = "First frame to decode (default 0).", .tensor = true})
      .arg({.name = "end_frame", .type = ArgType::kInt, .optional = true,
            .doc = "Frame to stop before (exclusive); not with frames or sequence_length.", .tensor = true})
      .arg({.name = "sequence_length", .type = ArgType::kInt, .optional = true,
            .doc = "Number of frames to decode; not with frames or end_frame.", .tensor = true})
      .arg({.name = "stride", .type = ArgType::kInt, .optional = true,
            .doc = "Distance between decoded frames (default 1).", .tensor = true})
      .arg({.name = "frames", .type = ArgType::kIntList, .optional = true,
            .doc = "Indices of the frames to decode, in any order, repeats allowed.", .tensor = true})
      .arg({.name = "pad_mode", .type = ArgType::kString, .default_value = std::string("constant"),
            .doc = "Past the video's end: 'none' (a shorter sequence), 'constant' (fill_value), "
                   "'edge'/'repeat', 'reflect_1001'/'symmetric' (ABC -> ABCCBA), "
                   "'reflect_101'/'reflect' (ABC -> ABCBA)."})
      .arg({.name = "_display_name", .type = ArgType::kString, .optional = true,
            .doc = "How messages name the operator: experimental.inputs.video's own name."})
      .arg({.name = "fill_value", .type = ArgType::kIntList, .default_value = std::vector<int64_t>{0},
            .doc = "Value of padded frames with pad_mode='constant': one, or one per channel."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<VideoDecoder>(s, false); })
#ifdef STOKER_WITH_CUDA
      .backend(Backend::kMixed, [](const OpSpec& s) { return std::make_unique<VideoDecoder>(s, true); })
#endif
      ;
  add_on_error_arg(schema, /*can_replace=*/false);
}

}  // namespace stoker
