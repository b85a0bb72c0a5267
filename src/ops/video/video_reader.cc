// readers.video and experimental.readers.video: sequences of frames from video files, decoded
// through FFmpeg: on the CPU, or (device='gpu') on NVDEC where the GPU takes the stream, into
// device memory (codecs/video/video_codec.h). The sequences of all files form the sample list
// that SampleOrder shards and shuffles. Which sequences a file gives:
//  - readers.video (DALI's VideoLoader): starts s = start, start + step, ... while
//    s + (sequence_length - 1) * stride < end; with pad_sequences also the shorter tails,
//    zero-padded;
//  - experimental.readers.video (DALI's VideoLoaderDecoder): starts s = start, start + step, ...
//    (step defaults to stride * sequence_length) while s + stride * sequence_length <= end;
//    with a pad_mode other than 'none' also the tail, its frames past the end given by the pad
//    mode (video_frames::frame_at); with uniform_sample one sequence per file, spread evenly.
// Where experimental.readers.video departs from DALI 2.4 (src/ops/README.md): a file_list line
// with a start and no end reads to the video's end (DALI finds no frames), an end past the
// video is the video's end (DALI finds none), times turn into stream ticks rounded to the
// nearest (not truncated), and an unreadable file is an error naming it (DALI skips it).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <mutex>
#include <sstream>
#include <sys/stat.h>
#include <unordered_map>

#include "codecs/video/video_codec.h"
#include "core/log.h"
#include "ops/image/image_types.h"
#include "ops/io/reader_base.h"
#include "ops/video/frame_list.h"
#ifdef STOKER_WITH_CUDA
#include "core/cuda/cuda_util.h"
#include "pipeline/gpu_batch.h"
#include "pipeline/gpu_context.h"
#endif

namespace stoker {
namespace {

namespace cv = codecs::video;
namespace vf = video_frames;

struct VideoEntry {
  std::string path;
  int label = 0;
  double start = 0, end = 0;  // from file_list (0, 0: the whole video)
  int64_t lo = 0, hi = 0;      // the frames [lo, hi) sequences are cut from
};

struct Sequence {
  int64_t file = 0;
  int64_t first = 0;
  int64_t frames = 0;  // readers.video: < sequence_length for zero-padded tails
  bool uniform = false;  // experimental.readers.video's uniform_sample
};

enum class FrameNum { kNone, kScalar, kSequence };

bool is_dir(const std::string& p) {
  struct stat s;
  return stat(p.c_str(), &s) == 0 && S_ISDIR(s.st_mode);
}

std::vector<std::string> list_dir(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = opendir(dir.c_str());
  if (!d) return names;
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

class VideoReader : public SampleReader {
 public:
  VideoReader(const OpSpec& spec, bool on_gpu, bool experimental)
      : SampleReader(spec), on_gpu_(on_gpu), experimental_(experimental) {
    const std::string op = spec.display_name();
    if (!cv::built_with_ffmpeg()) throw Error(ErrorKind::kUnsupported, cv::without_ffmpeg_message(op));
    seq_len_ = spec.get<int64_t>("sequence_length");
    stride_ = spec.get<int64_t>("stride");
    step_ = spec.get<int64_t>("step");
    if (step_ <= 0) step_ = experimental_ ? stride_ * seq_len_ : seq_len_;
    if (experimental_) {
      pad_ = vf::parse_pad_mode(spec, spec.get<std::string>("pad_mode"));
      fill_ = vf::parse_fill_value(spec);
      uniform_ = spec.get<bool>("uniform_sample");
    } else {
      if (spec.get<int64_t>("channels") != 3)
        spec.arg_error("channels", "must be 3 (RGB or YCbCr frames), got " +
                                       std::to_string(spec.get<int64_t>("channels")));
      dtype_ = static_cast<DType>(spec.get<int64_t>("dtype"));
      if (dtype_ != DType::kUInt8 && dtype_ != DType::kFloat32)
        spec.arg_error("dtype", "must be UINT8 or FLOAT, got " + std::string(dtype_name(dtype_)));
      normalized_ = spec.get<bool>("normalized");
    }
    auto it = static_cast<ImageType>(spec.get<int64_t>("image_type"));
    if (it != ImageType::kRGB && it != ImageType::kYCbCr)
      spec.arg_error("image_type", std::string("must be RGB or YCbCr, got ") + image_type_name(it));
    color_ = it == ImageType::kRGB ? cv::ColorFormat::kRGB : cv::ColorFormat::kYCbCr;
    std::string fnum = spec.get<std::string>("enable_frame_num");
    if (fnum == "none" || fnum == "false" || fnum == "False" || fnum.empty()) frame_num_ = FrameNum::kNone;
    else if (fnum == "scalar" || fnum == "true" || fnum == "True") frame_num_ = FrameNum::kScalar;
    else if (fnum == "sequence") frame_num_ = FrameNum::kSequence;
    else spec.arg_error("enable_frame_num", "must be 'none', 'scalar' or 'sequence', got '" + fnum + "'");
    timestamps_ = spec.get<bool>("enable_timestamps");

    list_files(spec);
    // Outputs: video, [labels], [frame_num], [timestamps] (DALI's order).
    const bool root = spec.has("file_root") && !spec.get<std::string>("file_root").empty();
    has_labels_ = root || has_file_list_ || spec.has("labels");
    // DALI's readers.video gives frame numbers and timestamps only after labels.
    if (!experimental_ && !has_labels_ && (frame_num_ != FrameNum::kNone || timestamps_))
      spec.arg_error(frame_num_ != FrameNum::kNone ? "enable_frame_num" : "enable_timestamps",
                     "needs labels: frame numbers and timestamps come after the labels output, "
                     "which exists with file_root, file_list or labels; pass labels=[] (labels "
                     "0, 1, 2, ...) with filenames");
    const int expected = 1 + has_labels_ + (frame_num_ != FrameNum::kNone) + timestamps_;
    if (spec.num_outputs != expected)
      throw Error(ErrorKind::kInvalidArgument,
                  op + ": these arguments give " + std::to_string(expected) +
                      " outputs (video, then labels with file_root, file_list or labels, "
                      "frame_num with enable_frame_num, timestamps with enable_timestamps), but "
                      "the call expects " + std::to_string(spec.num_outputs));
    if (experimental_) index_files_experimental(spec);
    else index_files(spec);
    init_order(static_cast<int64_t>(sequences_.size()));
  }

  void run_batch(Workspace& ws) override {
    const std::vector<readers::Pick>& picks = this->picks();
    const int64_t n = static_cast<int64_t>(picks.size());
    std::vector<Shape> shapes(n), lab(n, Shape{1}), fnum(n), ts(n, Shape{seq_len_});
    for (int64_t i = 0; i < n; ++i) {
      const Sequence& s = sequences_[picks[i].index];
      const cv::VideoInfo& v = infos_[s.file];
      shapes[i] = {seq_len_, v.height, v.width, 3};
      fnum[i] = frame_num_ == FrameNum::kScalar ? Shape{1} : Shape{seq_len_};
    }
    int o = 0;
    ws.outputs.assign(spec_.num_outputs, Batch());
    Batch& video = ws.outputs[o++];
    // On the GPU, the frames go to device memory and the small outputs to pinned memory, then
    // up in one copy each.
    auto allocate = [&](Batch& b, DType t, const std::vector<Shape>& sh, const std::string& layout) {
#ifdef STOKER_WITH_CUDA
      if (on_gpu_) {
        b = &b == &video ? allocate_device_batch(ws, t, sh, layout)
                         : allocate_pinned_batch(ws, t, sh, layout);
        return;
      }
#endif
      b.allocate(*ws.host_pool, t, sh, layout);
    };
    allocate(video, dtype_, shapes, "FHWC");
    Batch* labels = has_labels_ ? &ws.outputs[o++] : nullptr;
    if (labels) allocate(*labels, DType::kInt32, lab, "");
    Batch* frames = frame_num_ != FrameNum::kNone ? &ws.outputs[o++] : nullptr;
    if (frames) allocate(*frames, DType::kInt32, fnum, "");
    Batch* stamps = timestamps_ ? &ws.outputs[o++] : nullptr;
    if (stamps) allocate(*stamps, DType::kFloat64, ts, "");
    if (on_gpu_) start_gpu(ws);

    ws.thread_pool->parallel_for(n, [&](int64_t i, int thread) {
      const Sequence& s = sequences_[picks[i].index];
      const cv::VideoInfo& v = infos_[s.file];
      const std::string& path = files_[s.file].path;
      const std::vector<int64_t> idx = frame_list(s);
      video[i].source = path;
      try {
        with_file(thread, s.file, [&](cv::VideoFile& f) { decode_sample(ws, f, idx, video, i); });
      } catch (const Error& e) {
        std::string msg = path + ": frames " + std::to_string(idx.front()) + " to " +
                          std::to_string(*std::max_element(idx.begin(), idx.end())) + ": " + e.what();
        if (!ws.report_bad_sample(i, path, msg))
          throw Error(e.kind(), msg).with_context("sample " + std::to_string(i));
#ifdef STOKER_WITH_CUDA
        if (on_gpu_) cuda_memset_async(video[i].data, 0, video.sample_bytes(i), ws.gpu->stream());
#endif
        if (!on_gpu_) std::memset(video[i].data, 0, video.sample_bytes(i));
      }
      if (labels) {
        *labels->data<int32_t>(i) = files_[s.file].label;
        (*labels)[i].source = path;
      }
      if (frames) {
        int32_t* f = frames->data<int32_t>(i);
        if (frame_num_ == FrameNum::kScalar) f[0] = static_cast<int32_t>(s.first);
        else for (int64_t k = 0; k < seq_len_; ++k) f[k] = static_cast<int32_t>(idx[k]);
      }
      if (stamps) {
        // experimental.readers.video counts from the first frame, as DALI's does.
        const double t0 = experimental_ ? v.timestamp(0) : 0.0;
        double* t = stamps->data<double>(i);
        for (int64_t k = 0; k < seq_len_; ++k) t[k] = idx[k] >= 0 ? v.timestamp(idx[k]) - t0 : -1.0;
      }
    });
#ifdef STOKER_WITH_CUDA
    if (on_gpu_)
      for (Batch* b : {labels, frames, stamps})
        if (b) *b = upload_pinned_batch(ws, *b);
#endif
  }

 private:
  void list_files(const OpSpec& spec) {
    const std::string root = spec.has("file_root") ? spec.get<std::string>("file_root") : "";
    const std::string list = spec.has("file_list") ? spec.get<std::string>("file_list") : "";
    std::vector<std::string> names;
    if (spec.has("filenames")) names = spec.get<std::vector<std::string>>("filenames");
    const int given = !root.empty() + !list.empty() + !names.empty();
    if (given != 1)
      throw Error(ErrorKind::kInvalidArgument,
                  spec.display_name() + ": give exactly one of file_root, file_list and "
                                        "filenames (got " + std::to_string(given) + ")");
    has_file_list_ = !list.empty();
    if (!root.empty()) {
      if (!is_dir(root))
        throw Error(ErrorKind::kNotFound, spec.display_name() + ": argument 'file_root': '" +
                                              root + "' is not a folder");
      int label = 0;
      for (const std::string& d : list_dir(root)) {
        if (!is_dir(root + "/" + d)) continue;
        for (const std::string& f : list_dir(root + "/" + d))
          if (!is_dir(root + "/" + d + "/" + f)) files_.push_back({root + "/" + d + "/" + f, label});
        ++label;
      }
      std::sort(files_.begin(), files_.end(),
                [](const VideoEntry& a, const VideoEntry& b) { return a.path < b.path; });
    } else if (!list.empty()) {
      std::ifstream in(list);
      if (!in)
        throw Error(ErrorKind::kNotFound,
                    spec.display_name() + ": argument 'file_list': cannot open '" + list + "'");
      std::string line;
      int line_no = 0;
      while (std::getline(in, line)) {
        ++line_no;
        std::istringstream ls(line);
        VideoEntry e;
        if (!(ls >> e.path)) continue;
        long long label = -1;
        if (!(ls >> label) || label < 0)
          throw Error(ErrorKind::kInvalidArgument,
                      spec.display_name() + ": argument 'file_list': line " +
                          std::to_string(line_no) + " of '" + list + "' ('" + line +
                          "') must be 'path label [start [end]]' with a label >= 0");
        e.label = static_cast<int>(label);
        if (ls >> e.start) {
          if (!(ls >> e.end)) e.end = 0;
          if (e.start == e.end) continue;  // DALI skips such lines (with a warning)
        } else {
          e.start = 0;
        }
        std::string rest;
        if (ls >> rest)
          throw Error(ErrorKind::kInvalidArgument,
                      spec.display_name() + ": argument 'file_list': line " +
                          std::to_string(line_no) + " of '" + list + "' ('" + line +
                          "') must be 'path label [start [end]]'");
        files_.push_back(e);
      }
    } else {
      std::vector<int64_t> labels;
      if (spec.has("labels")) labels = spec.get<std::vector<int64_t>>("labels");
      if (!labels.empty() && labels.size() != names.size())
        spec.arg_error("labels", "has " + std::to_string(labels.size()) + " entries for " +
                                     std::to_string(names.size()) +
                                     " filenames; give one label per file, or an empty list "
                                     "for 0, 1, 2, ...");
      for (size_t i = 0; i < names.size(); ++i)
        files_.push_back({names[i], static_cast<int>(labels.empty() ? i : labels[i])});
    }
    if (files_.empty())
      throw Error(ErrorKind::kInvalidArgument, spec.display_name() + ": no video files were found");
  }

  void index_files(const OpSpec& spec) {
    const std::string op = spec.display_name();
    const bool frame_num_list = spec.get<bool>("file_list_frame_num");
    const bool preceding = spec.get<bool>("file_list_include_preceding_frame");
    const bool pad = spec.get<bool>("pad_sequences");
    const bool skip_vfr = spec.get<bool>("skip_vfr_check");
    const int64_t total = 1 + (seq_len_ - 1) * stride_;
    for (size_t fi = 0; fi < files_.size(); ++fi) {
      const VideoEntry& e = files_[fi];
      open_index(op, e.path);
      const cv::VideoInfo& v = infos_.back();
      if (!skip_vfr && v.variable_frame_rate)
        throw Error(ErrorKind::kDecode,
                    op + ": " + e.path + ": variable frame rate videos are not supported (the "
                    "first frame's duration disagrees with the average frame rate); pass "
                    "skip_vfr_check=True to read it anyway");
      const int64_t n = v.num_frames();
      int64_t start = 0, end = n;
      if (e.start != 0 || e.end != 0) {
        if (frame_num_list) {
          start = e.start >= 0 ? static_cast<int64_t>(std::ceil(e.start))
                               : n + static_cast<int64_t>(std::ceil(e.start));
          end = e.end > 0 ? static_cast<int64_t>(std::floor(e.end))
                          : n + static_cast<int64_t>(std::floor(e.end));
        } else {
          if (v.fps <= 0)
            throw Error(ErrorKind::kDecode, op + ": " + e.path +
                                                ": the video has no frame rate to turn the "
                                                "file_list times into frames; use "
                                                "file_list_frame_num=True with frame numbers");
          auto lo = [&](double t) { return static_cast<int64_t>(preceding ? std::floor(t * v.fps) : std::ceil(t * v.fps)); };
          auto hi = [&](double t) { return static_cast<int64_t>(preceding ? std::ceil(t * v.fps) : std::floor(t * v.fps)); };
          start = e.start >= 0 ? lo(e.start) : n + lo(e.start);
          end = e.end > 0 ? hi(e.end) : n + hi(e.end);
        }
        const char* what = frame_num_list ? "frame" : "time";
        if (start < 0 || start > end || end > n)
          throw Error(ErrorKind::kInvalidArgument,
                      op + ": argument 'file_list': " + e.path + ": the start " + what +
                          " and end " + what + " give frames [" + std::to_string(start) + ", " +
                          std::to_string(end) + "), outside the video's " + std::to_string(n) +
                          " frames or reversed");
      }
      int64_t s = start;
      for (; s < end && s + total <= end; s += step_) sequences_.push_back({int64_t(fi), s, seq_len_});
      if (pad)
        for (; s < end; s += step_) sequences_.push_back({int64_t(fi), s, 1 + (end - 1 - s) / stride_});
    }
    if (sequences_.empty())
      no_sequences(op, std::to_string(total) + " frames",
                   "Use a shorter sequence_length or stride, or pad_sequences=True");
  }

  // Opens `path` and appends its index (frames, keyframes, times) to infos_.
  void open_index(const std::string& op, const std::string& path) {
    struct stat st;
    if (stat(path.c_str(), &st) != 0 || S_ISDIR(st.st_mode))
      throw Error(ErrorKind::kNotFound, op + ": video file '" + path + "' does not exist");
    try {
      infos_.push_back(cv::VideoFile::open_path(path)->info());
    } catch (const Error& err) {
      throw Error(err.kind(), op + ": " + path + ": " + err.what());
    }
  }

  [[noreturn]] void no_sequences(const std::string& op, const std::string& need,
                                 const std::string& what_to_do) const {
    std::string lengths;
    for (size_t i = 0; i < infos_.size() && i < 5; ++i)
      lengths += (i ? ", " : "") + files_[i].path + ": " + std::to_string(infos_[i].num_frames());
    if (infos_.size() > 5) lengths += ", ...";
    throw Error(ErrorKind::kInvalidArgument,
                op + ": no file has a whole sequence of sequence_length=" +
                    std::to_string(seq_len_) + " frames with stride=" + std::to_string(stride_) +
                    " (" + need + "); the videos have (frames) " + lengths + ". " + what_to_do);
  }

  // experimental.readers.video's sequences (see the top of the file).
  void index_files_experimental(const OpSpec& spec) {
    const std::string op = spec.display_name();
    bool by_frames = false, start_down = true, end_down = false;
    if (has_file_list_) {
      const std::string format = spec.get<std::string>("file_list_format");
      if (format != "frames" && format != "timestamps")
        spec.arg_error("file_list_format", "must be 'frames' or 'timestamps', got '" + format + "'");
      by_frames = format == "frames";
      const std::string r = spec.get<std::string>("file_list_rounding");
      if (r != "start_down_end_up" && r != "start_up_end_down" && r != "all_up" && r != "all_down")
        spec.arg_error("file_list_rounding", "must be 'start_down_end_up', 'start_up_end_down', "
                                             "'all_up' or 'all_down', got '" + r + "'");
      start_down = r == "start_down_end_up" || r == "all_down";
      end_down = r == "start_up_end_down" || r == "all_down";
    }
    const int64_t span = stride_ * seq_len_;
    for (size_t fi = 0; fi < files_.size(); ++fi) {
      VideoEntry& e = files_[fi];
      open_index(op, e.path);
      const cv::VideoInfo& v = infos_.back();
      const int64_t n = v.num_frames();
      e.lo = 0;
      e.hi = n;
      if (e.start != 0 || e.end != 0) {
        if (by_frames) {
          // Negative values count from the end; an end of 0 (or none) is the video's end.
          const double start = e.start < 0 ? static_cast<double>(n) + e.start : e.start;
          const double end = e.end <= 0 ? static_cast<double>(n) + e.end : e.end;
          e.lo = static_cast<int64_t>(start_down ? std::floor(start) : std::ceil(start));
          e.hi = static_cast<int64_t>(end_down ? std::floor(end) : std::ceil(end));
        } else {
          e.lo = frame_by_time(v, e.start, start_down);
          e.hi = e.end == 0 ? n : frame_by_time(v, e.end, end_down);
        }
        e.lo = std::max<int64_t>(e.lo, 0);
        e.hi = std::min(e.hi, n);
      }
      if (e.lo >= e.hi) {
        log_message(LogLevel::kWarning, "%s: argument 'file_list': %s: the start and end give "
                    "no frames ([%lld, %lld) of the video's %lld); the line is left out",
                    op.c_str(), e.path.c_str(), static_cast<long long>(e.lo),
                    static_cast<long long>(e.hi), static_cast<long long>(n));
        continue;
      }
      if (uniform_) {
        sequences_.push_back({int64_t(fi), e.lo, seq_len_, true});
        continue;
      }
      int64_t s = e.lo;
      for (; s + span <= e.hi; s += step_) sequences_.push_back({int64_t(fi), s, seq_len_});
      if (pad_ != vf::PadMode::kNone && s < e.hi) sequences_.push_back({int64_t(fi), s, seq_len_});
    }
    if (sequences_.empty())
      no_sequences(op, "stride * sequence_length = " + std::to_string(span) + " frames",
                   "Use a shorter sequence_length or stride, or a pad_mode other than 'none'");
  }

  // The frame at `seconds` from the first frame: the one at that time, else the one before
  // (down) or after it; the video's end past its last frame.
  static int64_t frame_by_time(const cv::VideoInfo& v, double seconds, bool down) {
    const int64_t n = v.num_frames();
    if (seconds < 0)  // back from the end: the last frame's time plus one frame
      seconds += v.timestamp(n - 1) - v.timestamp(0) + (v.fps > 0 ? 1.0 / v.fps : 0.0);
    const int64_t pts = v.frames.front().pts +
                        std::llround(seconds * v.time_base_den / v.time_base_num);
    auto it = std::lower_bound(v.frames.begin(), v.frames.end(), pts,
                               [](const cv::FrameEntry& f, int64_t p) { return f.pts < p; });
    const int64_t k = it - v.frames.begin();
    if (k == n) return n;
    if (it->pts == pts || !down || k == 0) return k;
    return k - 1;
  }

  // The GPU's decoders, set up on the first batch (the stream is the pipeline's).
  void start_gpu(Workspace& ws) {
#ifdef STOKER_WITH_CUDA
    if (gpu_started_) return;
    gpu_started_ = true;
    std::string why;
    gpu_ = cv::make_gpu_decoding(ws.gpu->device(), ws.gpu->stream(), &why);
    if (!why.empty()) {
      // Still correct, only slower: each frame is decoded on the CPU and copied.
      log_message(LogLevel::kWarning, "%s: decoding on the CPU and copying the frames: %s",
                  spec_.display_name().c_str(), why.c_str());
    }
#endif
  }

  // The frames of sequence s, one per output frame: -1 where a fill frame stands (zeros for
  // readers.video's padded tails, fill_value for experimental.readers.video's).
  std::vector<int64_t> frame_list(const Sequence& s) const {
    const VideoEntry& e = files_[s.file];
    std::vector<int64_t> idx(static_cast<size_t>(seq_len_));
    for (int64_t k = 0; k < seq_len_; ++k) {
      if (s.uniform) {  // numpy.linspace(lo, hi - 1, sequence_length), rounded half away from 0
        const double t = seq_len_ > 1 ? static_cast<double>(k) / static_cast<double>(seq_len_ - 1) : 0.0;
        idx[k] = e.lo + static_cast<int64_t>(std::round(t * static_cast<double>(e.hi - e.lo - 1)));
      } else if (experimental_) {
        idx[k] = vf::frame_at(pad_, s.first + k * stride_, e.lo, e.hi);
      } else {
        idx[k] = k < s.frames ? s.first + k * stride_ : -1;
      }
    }
    return idx;
  }

  // Sample i: the frames `idx` of the open file, into host or device memory.
  void decode_sample(Workspace& ws, cv::VideoFile& f, const std::vector<int64_t>& idx,
                     Batch& video, int64_t i) const {
    const float scale = normalized_ ? 1.0f / 255.0f : 1.0f;
#ifdef STOKER_WITH_CUDA
    if (on_gpu_) {
      vf::decode_device(f, idx, color_, fill_, {video[i].data, dtype_ == DType::kFloat32, scale},
                        ws.gpu->stream());
      return;
    }
#else
    (void)ws;
#endif
    if (dtype_ == DType::kUInt8) {
      vf::decode(f, idx, color_, fill_, video.data<uint8_t>(i));
      return;
    }
    std::vector<uint8_t> tmp(video.sample_bytes(i) / sizeof(float));
    vf::decode(f, idx, color_, fill_, tmp.data());
    float* out = video.data<float>(i);
    for (size_t k = 0; k < tmp.size(); ++k) out[k] = tmp[k] * scale;
  }

  // Each thread keeps the last file it decoded open, so that consecutive sequences of one
  // file continue decoding without seeking. (Keeping four open per thread was measured on the
  // GPU, 2026-11-29: no faster, twice the device memory.)
  template <typename F>
  void with_file(int thread, int64_t file, F&& f) {
    std::unique_ptr<cv::VideoFile> v;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto& slot = open_[thread];
      if (slot.second && slot.first == file) v = std::move(slot.second);
    }
    if (!v) v = cv::VideoFile::open_path(files_[file].path, &infos_[file], on_gpu_ ? gpu_ : nullptr);
    f(*v);
    std::lock_guard<std::mutex> lock(mu_);
    open_[thread] = {file, std::move(v)};
  }

  const bool on_gpu_;
  const bool experimental_;  // experimental.readers.video
  vf::PadMode pad_ = vf::PadMode::kNone;
  std::vector<int64_t> fill_{0};
  bool uniform_ = false;
  bool gpu_started_ = false;
  std::shared_ptr<cv::GpuDecoding> gpu_;  // on the GPU: FFmpeg's CUDA device, or none
  int64_t seq_len_ = 0, step_ = 0, stride_ = 1;
  DType dtype_ = DType::kUInt8;
  cv::ColorFormat color_ = cv::ColorFormat::kRGB;
  bool normalized_ = false, timestamps_ = false, has_labels_ = false, has_file_list_ = false;
  FrameNum frame_num_ = FrameNum::kNone;
  std::vector<VideoEntry> files_;
  std::vector<cv::VideoInfo> infos_;
  std::vector<Sequence> sequences_;
  std::mutex mu_;
  std::unordered_map<int, std::pair<int64_t, std::unique_ptr<cv::VideoFile>>> open_;
};

// The arguments both video readers take, as DALI names them.
void add_video_reader_args(OpSchema& schema, const std::string& file_list_doc, const std::string& step_doc) {
  add_reader_args(schema);
  schema.inputs(0, 0).outputs(4, {"video", "labels", "frame_num", "timestamps"})
      .arg({.name = "filenames", .type = ArgType::kStringList, .optional = true,
            .doc = "Paths of the video files."})
      .arg({.name = "file_root", .type = ArgType::kString, .optional = true,
            .doc = "Folder with one sub-folder of videos per class (labels are the folders' "
                   "indices in sorted order)."})
      .arg({.name = "file_list", .type = ArgType::kString, .optional = true, .doc = file_list_doc})
      .arg({.name = "labels", .type = ArgType::kIntList, .optional = true,
            .doc = "A label per entry of filenames; an empty list gives 0, 1, 2, ...; without it "
                   "there is no labels output."})
      .arg({.name = "sequence_length", .type = ArgType::kInt, .doc = "Frames per sequence.", .min = 1})
      .arg({.name = "step", .type = ArgType::kInt, .default_value = int64_t{-1}, .doc = step_doc})
      .arg({.name = "stride", .type = ArgType::kInt, .default_value = int64_t{1},
            .doc = "Distance between consecutive frames of a sequence.", .min = 1})
      .arg({.name = "image_type", .type = ArgType::kImageType, .default_value = int64_t{0},
            .doc = "RGB, or YCbCr (the stream's own Y, Cb, Cr, chroma upsampled)."})
      .arg({.name = "enable_frame_num", .type = ArgType::kString, .default_value = std::string("none"),
            .doc = "'scalar': output the first frame's index (shape (1,)); 'sequence': every "
                   "frame's index (-1 for a fill frame); 'none': no frame_num output."})
      .arg({.name = "enable_timestamps", .type = ArgType::kBool, .default_value = false,
            .doc = "Output each frame's time in seconds (float64, -1 for a fill frame)."});
  add_on_error_arg(schema, /*can_replace=*/false);
}

}  // namespace

STOKER_REGISTER_OP_NAMED(readers_video, "readers.video") {
  add_video_reader_args(
      schema,
      "Text file of 'path label [start [end]]' lines; start and end are seconds (or frames with "
      "file_list_frame_num), negative ones count from the end.",
      "Frames between the starts of consecutive sequences; <= 0 means sequence_length.");
  schema.doc("Reads sequences of frames from video files (FHWC), decoded through FFmpeg: on the "
             "CPU (libavcodec's software decoders, libswscale's colour conversion) or, with "
             "device='gpu', on NVDEC where the GPU takes the codec and profile (else on the CPU, "
             "then copied), converted to RGB on the GPU. Outputs: "
             "video, then labels (with file_root, file_list or labels), frame_num (with "
             "enable_frame_num) and timestamps (with enable_timestamps).")
      .arg({.name = "channels", .type = ArgType::kInt, .default_value = int64_t{3},
            .doc = "Channels of the output frames (3)."})
      .arg({.name = "dtype", .type = ArgType::kDType, .default_value = int64_t{0},
            .doc = "UINT8 or FLOAT."})
      .arg({.name = "normalized", .type = ArgType::kBool, .default_value = false,
            .doc = "With dtype=FLOAT, values in [0, 1] instead of [0, 255]."})
      .arg({.name = "file_list_frame_num", .type = ArgType::kBool, .default_value = false,
            .doc = "Read file_list's start and end as frame numbers instead of seconds."})
      .arg({.name = "file_list_include_preceding_frame", .type = ArgType::kBool, .default_value = false,
            .doc = "Turn file_list times into frames with floor(start*fps) and ceil(end*fps) "
                   "instead of ceil and floor."})
      .arg({.name = "pad_sequences", .type = ArgType::kBool, .default_value = false,
            .doc = "Also give the short sequences at the end of a video, zero-padded."})
      .arg({.name = "skip_vfr_check", .type = ArgType::kBool, .default_value = false,
            .doc = "Read variable frame rate videos instead of refusing them."})
      .arg({.name = "additional_decode_surfaces", .type = ArgType::kInt, .default_value = int64_t{2},
            .doc = "Accepted for DALI compatibility (NVDEC surfaces); FFmpeg sizes its own pool."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<VideoReader>(s, false, false); })
#ifdef STOKER_WITH_CUDA
      .backend(Backend::kGPU, [](const OpSpec& s) { return std::make_unique<VideoReader>(s, true, false); })
#endif
      ;
}

STOKER_REGISTER_OP_NAMED(experimental_readers_video, "experimental.readers.video") {
  add_video_reader_args(
      schema,
      "Text file of 'path label [start [end]]' lines; start and end are seconds or frames "
      "(file_list_format), negative ones count from the end, the end (excluded) 0 or left out "
      "for the video's end.",
      "Frames between the starts of consecutive sequences; <= 0 means stride * sequence_length.");
  schema.doc("Reads sequences of frames from video files (FHWC, uint8), decoded through FFmpeg: "
             "on the CPU or, with device='gpu', on NVDEC where the GPU takes the codec and "
             "profile (else on the CPU, then copied). A video's tail shorter than a sequence is "
             "left out or padded (pad_mode); uniform_sample takes one evenly spread sequence per "
             "video. Outputs: video, then labels (with file_root, file_list or labels), "
             "frame_num (with enable_frame_num) and timestamps (with enable_timestamps).")
      .arg({.name = "pad_mode", .type = ArgType::kString, .default_value = std::string("none"),
            .doc = "A video's tail shorter than a sequence: 'none' (left out), 'constant' "
                   "(fill_value frames), 'edge'/'repeat', 'reflect_1001'/'symmetric' (ABC -> "
                   "ABCCBA), 'reflect_101'/'reflect' (ABC -> ABCBA)."})
      .arg({.name = "fill_value", .type = ArgType::kIntList, .default_value = std::vector<int64_t>{0},
            .doc = "Value of the padded frames with pad_mode='constant': one, or one per channel."})
      .arg({.name = "file_list_format", .type = ArgType::kString, .default_value = std::string("timestamps"),
            .doc = "file_list's start and end: 'timestamps' (seconds) or 'frames'."})
      .arg({.name = "file_list_rounding", .type = ArgType::kString,
            .default_value = std::string("start_down_end_up"),
            .doc = "A start or end between frames: 'start_down_end_up', 'start_up_end_down', "
                   "'all_up' or 'all_down'."})
      .arg({.name = "file_list_include_end", .type = ArgType::kBool, .default_value = true,
            .doc = "Accepted for DALI compatibility: in DALI 2.4 the end frame is excluded "
                   "either way (and the range kept inside the video, which stoker always does)."})
      .arg({.name = "uniform_sample", .type = ArgType::kBool, .default_value = false,
            .doc = "One sequence per video of sequence_length frames spread evenly over it "
                   "(or its file_list range), repeating frames where the video is shorter; "
                   "stride, step and pad_mode are then not used."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<VideoReader>(s, false, true); })
#ifdef STOKER_WITH_CUDA
      .backend(Backend::kGPU, [](const OpSpec& s) { return std::make_unique<VideoReader>(s, true, true); })
#endif
      ;
}

}  // namespace stoker
