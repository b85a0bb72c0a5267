// decoders.video: encoded video bytes (a 1-D uint8 sample, e.g. from readers.file) in, frames
// (FHWC, RGB) out, decoded on the CPU or (device='mixed') on NVDEC into device memory where the
// GPU takes the stream (codecs/video/video_codec.h). The bytes are demuxed in place through an
// AVIOContext; which frames and how a sequence past the end is padded are DALI's arguments.
#include <algorithm>
#include <cstring>

#include "codecs/video/video_codec.h"
#include "core/log.h"
#include "pipeline/operator.h"
#ifdef STOKER_WITH_CUDA
#include "core/cuda/cuda_util.h"
#include "pipeline/gpu_batch.h"
#include "pipeline/gpu_context.h"
#endif

namespace stoker {
namespace {

namespace cv = codecs::video;

enum class PadMode { kNone, kConstant, kEdge, kReflect1001, kReflect101 };

PadMode parse_pad_mode(const OpSpec& spec, const std::string& m) {
  if (m == "none") return PadMode::kNone;
  if (m == "constant") return PadMode::kConstant;
  if (m == "edge" || m == "repeat") return PadMode::kEdge;
  if (m == "reflect_1001" || m == "symmetric") return PadMode::kReflect1001;
  if (m == "reflect_101" || m == "reflect") return PadMode::kReflect101;
  spec.arg_error("pad_mode", "must be one of 'none', 'constant', 'edge' ('repeat'), "
                             "'reflect_1001' ('symmetric'), 'reflect_101' ('reflect'), got '" + m + "'");
}

// Index of the frame that stands at position i >= n (past the end) of an n-frame video.
int64_t pad_index(PadMode mode, int64_t i, int64_t n) {
  switch (mode) {
    case PadMode::kEdge: return n - 1;
    case PadMode::kReflect1001: {
      int64_t p = i % (2 * n);
      return p < n ? p : 2 * n - 1 - p;
    }
    case PadMode::kReflect101: {
      if (n == 1) return 0;
      int64_t p = i % (2 * n - 2);
      return p < n ? p : 2 * n - 2 - p;
    }
    default: return -1;  // constant: filled
  }
}

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
    pad_ = parse_pad_mode(spec, spec.get<std::string>("pad_mode"));
    fill_ = spec.get<std::vector<int64_t>>("fill_value");
    if (fill_.empty() || (fill_.size() != 1 && fill_.size() != 3))
      spec.arg_error("fill_value", "must have 1 value or 3 (one per channel), got " +
                                       std::to_string(fill_.size()));
    for (int64_t v : fill_)
      if (v < 0 || v > 255)
        spec.arg_error("fill_value", "values must be in [0, 255], got " + std::to_string(v));
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
        if (on_gpu_) decode_device(ws, plans[i], out.data<uint8_t>(i));
        else decode(plans[i], out.data<uint8_t>(i));
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
        if (pad_ == PadMode::kNone) {
          if (idx.empty())
            throw Error(ErrorKind::kInvalidArgument,
                        "start_frame " + std::to_string(start) + " is past the video's " +
                            std::to_string(n) + " frames");
          break;
        }
        f = pad_index(pad_, f, n);
      }
      idx.push_back(f);
    }
    return idx;
  }

  void decode(Plan& p, uint8_t* out) const {
    const cv::VideoInfo& v = p.video->info();
    const size_t fb = static_cast<size_t>(v.height) * v.width * 3;
    // Decode each distinct frame once, in order, into its first position; copy the repeats.
    std::vector<std::pair<int64_t, size_t>> order;
    for (size_t k = 0; k < p.frames.size(); ++k)
      if (p.frames[k] >= 0) order.push_back({p.frames[k], k});
    std::sort(order.begin(), order.end());
    for (size_t j = 0; j < order.size(); ++j) {
      if (j > 0 && order[j].first == order[j - 1].first) {
        std::memcpy(out + order[j].second * fb, out + order[j - 1].second * fb, fb);
      } else {
        p.video->decode(order[j].first, 1, 1, cv::ColorFormat::kRGB, out + order[j].second * fb);
      }
    }
    for (size_t k = 0; k < p.frames.size(); ++k) {
      if (p.frames[k] >= 0) continue;
      uint8_t* f = out + k * fb;
      for (size_t px = 0; px < fb; ++px) f[px] = static_cast<uint8_t>(fill_[fill_.size() == 1 ? 0 : px % 3]);
    }
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

  // decode() to device memory: each distinct frame decoded once, the repeats copied on the
  // GPU, the fill frames set there.
  void decode_device(Workspace& ws, Plan& p, uint8_t* out) const {
#ifdef STOKER_WITH_CUDA
    const cv::VideoInfo& v = p.video->info();
    const size_t fb = static_cast<size_t>(v.height) * v.width * 3;
    void* stream = ws.gpu->stream();
    std::vector<std::pair<int64_t, size_t>> order;
    for (size_t k = 0; k < p.frames.size(); ++k)
      if (p.frames[k] >= 0) order.push_back({p.frames[k], k});
    std::sort(order.begin(), order.end());
    for (size_t j = 0; j < order.size(); ++j) {
      if (j > 0 && order[j].first == order[j - 1].first)
        cuda_memcpy_async(out + order[j].second * fb, out + order[j - 1].second * fb, fb, stream);
      else
        p.video->decode_device(order[j].first, 1, 1, cv::ColorFormat::kRGB,
                               {out + order[j].second * fb, false, 1.0f});
    }
    std::vector<uint8_t> fill;  // one fill frame, uploaded for each padded position
    for (size_t k = 0; k < p.frames.size(); ++k) {
      if (p.frames[k] >= 0) continue;
      const bool flat = fill_.size() == 1 || (fill_[0] == fill_[1] && fill_[1] == fill_[2]);
      if (flat) {
        cuda_memset_async(out + k * fb, static_cast<int>(fill_[0]), fb, stream);
        continue;
      }
      if (fill.empty()) {
        fill.resize(fb);
        for (size_t px = 0; px < fb; ++px) fill[px] = static_cast<uint8_t>(fill_[px % 3]);
      }
      cuda_memcpy_async(out + k * fb, fill.data(), fb, stream);  // pageable: read on return
    }
#endif
  }

  const bool on_gpu_;
  bool gpu_started_ = false;
  std::shared_ptr<cv::GpuDecoding> gpu_;  // on the GPU: FFmpeg's CUDA device, or none
  PadMode pad_ = PadMode::kConstant;
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
