#include "codecs/video/video_codec.h"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <mutex>

#include "core/error.h"

#if STOKER_WITH_FFMPEG
extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/hwcontext.h>
#include <libavutil/imgutils.h>
#include <libavutil/pixdesc.h>
#include <libswscale/swscale.h>
#if STOKER_WITH_CUDA
#include <libavutil/hwcontext_cuda.h>
#endif
}
#endif
#if STOKER_WITH_CUDA
#include "kernels/cuda/video_gpu.h"
#endif

namespace stoker::codecs::video {

std::string without_ffmpeg_message(const std::string& op) {
  return op + ": stoker was built without FFmpeg; install libavformat-dev libavcodec-dev "
              "libswscale-dev and rebuild";
}

namespace {
std::atomic<int64_t> g_nvdec_frames{0}, g_cpu_frames{0};
}  // namespace

GpuDecodeCounts gpu_decode_counts() { return {g_nvdec_frames.load(), g_cpu_frames.load()}; }

#if STOKER_WITH_FFMPEG

bool built_with_ffmpeg() { return true; }

#if STOKER_WITH_CUDA
namespace {
// The driver's primary context of a device (the one the CUDA runtime, and so the pipeline,
// works in), from libcuda itself: stoker links only the runtime.
struct PrimaryContext {
  using Retain = CUresult (*)(CUcontext*, CUdevice);
  using Release = CUresult (*)(CUdevice);
  using Get = CUresult (*)(CUdevice*, int);
  Retain retain = nullptr;
  Release release = nullptr;
  Get get = nullptr;
  PrimaryContext() {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
    retain = reinterpret_cast<Retain>(dlsym(lib, "cuDevicePrimaryCtxRetain"));
    release = reinterpret_cast<Release>(dlsym(lib, "cuDevicePrimaryCtxRelease_v2"));
    if (!release) release = reinterpret_cast<Release>(dlsym(lib, "cuDevicePrimaryCtxRelease"));
    get = reinterpret_cast<Get>(dlsym(lib, "cuDeviceGet"));
  }
  static const PrimaryContext& get_instance() {
    static const PrimaryContext p;
    return p;
  }
};
}  // namespace
#endif

class GpuDecoding {
 public:
  ~GpuDecoding() {
    av_buffer_unref(&device);
#if STOKER_WITH_CUDA
    if (context) PrimaryContext::get_instance().release(cu_device);
#endif
  }
  AVBufferRef* device = nullptr;  // an AVHWDeviceContext of type CUDA; null: the CPU decodes
  void* stream = nullptr;
#if STOKER_WITH_CUDA
  CUcontext context = nullptr;    // the primary context, retained
  CUdevice cu_device = 0;
#endif
};

std::shared_ptr<GpuDecoding> make_gpu_decoding(int device, void* stream, std::string* why) {
#if STOKER_WITH_CUDA
  auto g = std::make_shared<GpuDecoding>();
  g->stream = stream;
  auto no_nvdec = [&](const std::string& reason) {
    if (why) *why = reason;
    av_buffer_unref(&g->device);
    return g;
  };
  // FFmpeg's own device creation would set the primary context's flags, which the runtime has
  // already made active, and refuse; it is given the context instead.
  const PrimaryContext& pc = PrimaryContext::get_instance();
  if (!pc.retain || !pc.release || !pc.get) return no_nvdec("the CUDA driver library (libcuda.so.1) was not found");
  if (pc.get(&g->cu_device, device) != CUDA_SUCCESS || pc.retain(&g->context, g->cu_device) != CUDA_SUCCESS) {
    g->context = nullptr;
    return no_nvdec("the CUDA driver gives no context for device " + std::to_string(device));
  }
  g->device = av_hwdevice_ctx_alloc(AV_HWDEVICE_TYPE_CUDA);
  if (!g->device) return no_nvdec("this FFmpeg has no CUDA support");
  auto* hw = reinterpret_cast<AVHWDeviceContext*>(g->device->data);
  auto* cu = static_cast<AVCUDADeviceContext*>(hw->hwctx);
  cu->cuda_ctx = g->context;
  cu->stream = static_cast<CUstream>(stream);
  const int ret = av_hwdevice_ctx_init(g->device);
  if (ret < 0) {
    char buf[AV_ERROR_MAX_STRING_SIZE] = {0};
    av_strerror(ret, buf, sizeof(buf));
    return no_nvdec(std::string("FFmpeg cannot use CUDA device ") + std::to_string(device) +
                    " (" + buf + ")");
  }
  return g;
#else
  if (why) *why = "stoker was built without CUDA";
  return nullptr;
#endif
}

namespace {

// Pixel sizes past this are refused before anything is allocated (a header may lie).
constexpr int64_t kMaxFramePixels = int64_t{1} << 27;

std::string av_error(int err) {
  char buf[AV_ERROR_MAX_STRING_SIZE] = {0};
  av_strerror(err, buf, sizeof(buf));
  return buf;
}

[[noreturn]] void decode_fail(const std::string& what) { throw Error(ErrorKind::kDecode, what); }

void quiet_ffmpeg() {
  static std::once_flag once;
  std::call_once(once, [] { av_log_set_level(AV_LOG_QUIET); });
}

struct MemorySource {
  const uint8_t* data = nullptr;
  size_t size = 0;
  size_t pos = 0;
};

int memory_read(void* opaque, uint8_t* buf, int buf_size) {
  auto* m = static_cast<MemorySource*>(opaque);
  size_t n = std::min(static_cast<size_t>(buf_size), m->size - m->pos);
  if (n == 0) return AVERROR_EOF;
  std::memcpy(buf, m->data + m->pos, n);
  m->pos += n;
  return static_cast<int>(n);
}

int64_t memory_seek(void* opaque, int64_t offset, int whence) {
  auto* m = static_cast<MemorySource*>(opaque);
  int64_t base = 0;
  switch (whence & ~AVSEEK_FORCE) {
    case AVSEEK_SIZE: return static_cast<int64_t>(m->size);
    case SEEK_SET: base = 0; break;
    case SEEK_CUR: base = static_cast<int64_t>(m->pos); break;
    case SEEK_END: base = static_cast<int64_t>(m->size); break;
    default: return AVERROR(EINVAL);
  }
  int64_t p = base + offset;
  if (p < 0 || p > static_cast<int64_t>(m->size)) return AVERROR(EINVAL);
  m->pos = static_cast<size_t>(p);
  return p;
}

bool is_jpeg_range_format(AVPixelFormat f) {
  return f == AV_PIX_FMT_YUVJ420P || f == AV_PIX_FMT_YUVJ422P || f == AV_PIX_FMT_YUVJ444P ||
         f == AV_PIX_FMT_YUVJ440P || f == AV_PIX_FMT_YUVJ411P;
}

AVPixelFormat plain_twin(AVPixelFormat f) {
  switch (f) {
    case AV_PIX_FMT_YUVJ420P: return AV_PIX_FMT_YUV420P;
    case AV_PIX_FMT_YUVJ422P: return AV_PIX_FMT_YUV422P;
    case AV_PIX_FMT_YUVJ444P: return AV_PIX_FMT_YUV444P;
    case AV_PIX_FMT_YUVJ440P: return AV_PIX_FMT_YUV440P;
    case AV_PIX_FMT_YUVJ411P: return AV_PIX_FMT_YUV411P;
    default: return f;
  }
}

class FfmpegVideo final : public VideoFile {
 public:
  ~FfmpegVideo() override {
    if (sws_) sws_freeContext(sws_);
    av_frame_free(&frame_);
    av_packet_free(&packet_);
    avcodec_free_context(&dec_);
    if (fmt_) {
      AVIOContext* pb = custom_io_ ? fmt_->pb : nullptr;
      avformat_close_input(&fmt_);
      if (pb) {
        av_freep(&pb->buffer);
        avio_context_free(&pb);
      }
    }
  }

  void open(const std::string* path, const uint8_t* data, size_t size, const VideoInfo* index,
            std::shared_ptr<GpuDecoding> gpu) {
    quiet_ffmpeg();
    gpu_ = std::move(gpu);
    fmt_ = avformat_alloc_context();
    if (!fmt_) throw Error(ErrorKind::kOutOfMemory, "cannot allocate a demuxer");
    if (!path) {
      mem_ = MemorySource{data, size, 0};
      auto* buf = static_cast<uint8_t*>(av_malloc(kIoBuffer));
      AVIOContext* pb = buf ? avio_alloc_context(buf, kIoBuffer, 0, &mem_, memory_read, nullptr,
                                                 memory_seek)
                            : nullptr;
      if (!pb) {
        av_free(buf);
        avformat_free_context(fmt_);
        fmt_ = nullptr;
        throw Error(ErrorKind::kOutOfMemory, "cannot allocate a demuxer");
      }
      fmt_->pb = pb;
      fmt_->flags |= AVFMT_FLAG_CUSTOM_IO;
      custom_io_ = true;
    }
    AVIOContext* pb = custom_io_ ? fmt_->pb : nullptr;
    int ret = avformat_open_input(&fmt_, path ? path->c_str() : nullptr, nullptr, nullptr);
    if (ret < 0) {  // fmt_ is freed by avformat_open_input; the custom AVIOContext is ours
      fmt_ = nullptr;
      if (pb) {
        av_freep(&pb->buffer);
        avio_context_free(&pb);
      }
      decode_fail("not a video container FFmpeg can read (" + av_error(ret) + ")");
    }
    // A header claiming huge frames is refused before any frame is read.
    for (unsigned i = 0; i < fmt_->nb_streams; ++i) {
      const AVCodecParameters* p = fmt_->streams[i]->codecpar;
      if (p->codec_type == AVMEDIA_TYPE_VIDEO) check_size(p->width, p->height);
    }
    ret = avformat_find_stream_info(fmt_, nullptr);
    if (ret < 0) decode_fail("cannot read the streams of the video (" + av_error(ret) + ")");
    stream_ = av_find_best_stream(fmt_, AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
    if (stream_ < 0) decode_fail("the file holds no video stream with frames");
    AVStream* st = fmt_->streams[stream_];
    const AVCodecParameters* par = st->codecpar;
    info_.codec = avcodec_get_name(par->codec_id);
    codec_ = avcodec_find_decoder(par->codec_id);
    if (!codec_)
      throw Error(ErrorKind::kUnsupported,
                  "the video codec '" + info_.codec +
                      "' has no software decoder in the FFmpeg stoker was built with");
    info_.width = par->width;
    info_.height = par->height;
    if (info_.width <= 0 || info_.height <= 0)
      decode_fail("the video stream has no frame size (" + std::to_string(info_.width) + "x" +
                  std::to_string(info_.height) + ")");
    check_size(info_.width, info_.height);
    info_.time_base_num = st->time_base.num;
    info_.time_base_den = st->time_base.den;
    if (st->avg_frame_rate.num > 0 && st->avg_frame_rate.den > 0) info_.fps = av_q2d(st->avg_frame_rate);
    if (index) {  // the file was indexed before: no second scan
      info_ = *index;
      last_decoded_ = -1;
    } else {
      build_index(st);
    }
    open_decoder(par);
  }

  const VideoInfo& info() const override { return info_; }

  void decode(int64_t first, int64_t count, int64_t stride, ColorFormat color,
              uint8_t* out) override {
    const size_t frame_bytes = static_cast<size_t>(info_.width) * info_.height * 3;
    decode_frames(first, count, stride, [&](int64_t want, int64_t target) {
      if (frame_->format == AV_PIX_FMT_CUDA) download(target);
      convert(color, out + static_cast<size_t>(want) * frame_bytes, target);
    });
  }

  void decode_device(int64_t first, int64_t count, int64_t stride, ColorFormat color,
                     const DeviceFrames& out) override {
#if STOKER_WITH_CUDA
    if (!gpu_)
      throw Error(ErrorKind::kInvalidArgument, "decode_device() on a video opened for the CPU");
    const int64_t values = static_cast<int64_t>(info_.width) * info_.height * 3;
    const size_t frame_bytes = static_cast<size_t>(values) * (out.f32 ? sizeof(float) : 1);
    decode_frames(first, count, stride, [&](int64_t want, int64_t target) {
      kernels::cuda::FrameOut o{static_cast<char*>(out.data) + want * frame_bytes, out.f32,
                                out.scale};
      if (frame_->format == AV_PIX_FMT_CUDA && convert_device(color, o, target)) {
        g_nvdec_frames.fetch_add(1, std::memory_order_relaxed);
        return;
      }
      if (frame_->format == AV_PIX_FMT_CUDA) download(target);
      host_frame_.resize(static_cast<size_t>(values));
      convert(color, host_frame_.data(), target);
      kernels::cuda::host_frame_gpu(host_frame_.data(), values, o, gpu_->stream);
      g_cpu_frames.fetch_add(1, std::memory_order_relaxed);
    });
#else
    throw Error(ErrorKind::kUnsupported, "stoker was built without CUDA");
#endif
  }

 private:
  // Decodes frames first, first + stride, ... and calls emit(i, frame) with frame_ holding the
  // i-th of them.
  void decode_frames(int64_t first, int64_t count, int64_t stride,
                     const std::function<void(int64_t, int64_t)>& emit) {
    const int64_t n = info_.num_frames();
    if (count <= 0) return;
    if (first < 0 || stride <= 0 || first + (count - 1) * stride >= n)
      throw Error(ErrorKind::kInvalidArgument,
                  "frames " + std::to_string(first) + " to " +
                      std::to_string(first + (count - 1) * stride) + " asked of a video of " +
                      std::to_string(n) + " frames");
    int64_t key = first;
    while (key > 0 && !info_.frames[key].key) --key;
    bool from_start = false, sought = false;
    if (!(last_decoded_ >= 0 && first > last_decoded_ && key <= last_decoded_ + 1)) {
      seek(key);
      from_start = key == 0;
      sought = !from_start;
    }
    int64_t want = 0;  // the next of the `count` frames to fill
    bool eof = false;
    try {
      while (want < count) {
        int ret = avcodec_receive_frame(dec_, frame_);
        if (ret == 0) {
          // A keyframe that is not an IDR picture (an open GOP; cockatoo.mp4's frame 145)
          // starts a decoder that has not "recovered": FFmpeg flags what it outputs from there
          // as damaged. Before the first frame asked for, start over from the stream's
          // beginning, once, as for a frame the keyframe did not produce (below).
          if (sought && want == 0 && !frame_intact()) {
            av_frame_unref(frame_);
            seek(0);
            from_start = true;
            sought = false;
            eof = false;
            continue;
          }
          check_frame();
          int64_t pts = frame_->best_effort_timestamp;
          if (pts == AV_NOPTS_VALUE) pts = frame_->pts;
          const int64_t target = first + want * stride;
          const int64_t target_pts = info_.frames[target].pts;
          if (pts == target_pts) {
            emit(want, target);
            last_decoded_ = target;
            ++want;
          } else if (pts > target_pts) {
            // The frame was not produced from this keyframe (an open GOP): start over from the
            // beginning of the stream, once.
            if (from_start)
              decode_fail("frame " + std::to_string(target) + " (pts " +
                          std::to_string(target_pts) + ") was not produced by the decoder");
            seek(0);
            from_start = true;
            sought = false;
            eof = false;
          } else {
            auto it = std::lower_bound(
                info_.frames.begin(), info_.frames.end(), pts,
                [](const FrameEntry& f, int64_t p) { return f.pts < p; });
            if (it != info_.frames.end() && it->pts == pts)
              last_decoded_ = it - info_.frames.begin();
          }
          av_frame_unref(frame_);
          continue;
        }
        if (ret == AVERROR_EOF)
          decode_fail("the stream ends before frame " + std::to_string(first + want * stride) +
                      " of " + std::to_string(n) + " could be decoded");
        if (ret != AVERROR(EAGAIN))
          decode_fail("cannot decode frame " + std::to_string(first + want * stride) + " (" +
                      av_error(ret) + ")");
        if (eof) decode_fail("the decoder stopped before frame " +
                             std::to_string(first + want * stride));
        // The decoder wants input.
        for (;;) {
          ret = av_read_frame(fmt_, packet_);
          if (ret < 0) {
            if (ret != AVERROR_EOF)
              decode_fail("cannot read the packet of frame " +
                          std::to_string(first + want * stride) + " (" + av_error(ret) + ")");
            eof = true;
            dec_->skip_frame = AVDISCARD_DEFAULT;
            ret = avcodec_send_packet(dec_, nullptr);
            if (ret < 0 && ret != AVERROR_EOF)
              decode_fail("cannot decode frame " + std::to_string(first + want * stride) +
                          " (" + av_error(ret) + ")");
            break;
          }
          if (packet_->stream_index != stream_) {
            av_packet_unref(packet_);
            continue;
          }
          // The single-threaded decoder decodes the packet in this call (no frame is
          // waiting: receive asked for input), so the setting applies to this packet only.
          if (skippable_)
            dec_->skip_frame = unwanted(packet_->pts, first, count, stride) ? AVDISCARD_NONREF
                                                                            : AVDISCARD_DEFAULT;
          ret = avcodec_send_packet(dec_, packet_);
          av_packet_unref(packet_);
          if (ret < 0 && ret != AVERROR(EAGAIN))
            decode_fail("damaged data on the way to frame " +
                        std::to_string(first + want * stride) + " (" + av_error(ret) + ")");
          break;
        }
        if (eof) {
          // Drain: receive until EOF.
          eof = true;
          int r;
          while (want < count && (r = avcodec_receive_frame(dec_, frame_)) == 0) {
            check_frame();
            int64_t pts = frame_->best_effort_timestamp;
            if (pts == AV_NOPTS_VALUE) pts = frame_->pts;
            const int64_t target = first + want * stride;
            if (pts == info_.frames[target].pts) {
              emit(want, target);
              last_decoded_ = target;
              ++want;
            } else if (pts > info_.frames[target].pts) {
              av_frame_unref(frame_);
              decode_fail("frame " + std::to_string(target) + " was not produced by the decoder");
            }
            av_frame_unref(frame_);
          }
          if (want < count)
            decode_fail("the stream ends before frame " + std::to_string(first + want * stride) +
                        " of " + std::to_string(n) + " could be decoded");
          last_decoded_ = -1;  // the decoder is drained: the next call must seek
        }
      }
    } catch (...) {
      last_decoded_ = -1;
      av_frame_unref(frame_);
      throw;
    }
  }

  static constexpr int kIoBuffer = 1 << 16;

  void build_index(AVStream* st) {
    AVPacket* pkt = av_packet_alloc();
    if (!pkt) throw Error(ErrorKind::kOutOfMemory, "cannot allocate a packet");
    int ret;
    int64_t first_duration = 0;
    int64_t counter = 0;
    while ((ret = av_read_frame(fmt_, pkt)) >= 0) {
      if (pkt->stream_index == stream_) {
        if (pkt->flags & AV_PKT_FLAG_CORRUPT) {
          av_packet_free(&pkt);
          decode_fail("packet " + std::to_string(counter) + " of the video stream is corrupt");
        }
        int64_t pts = pkt->pts != AV_NOPTS_VALUE ? pkt->pts : pkt->dts;
        if (pts == AV_NOPTS_VALUE) pts = counter;
        if (counter == 0) first_duration = pkt->duration;
        info_.frames.push_back({pts, (pkt->flags & AV_PKT_FLAG_KEY) != 0});
        ++counter;
      }
      av_packet_unref(pkt);
    }
    av_packet_free(&pkt);
    if (ret != AVERROR_EOF) decode_fail("cannot read the video stream (" + av_error(ret) + ")");
    if (info_.frames.empty()) decode_fail("the video stream has no frames");
    if (st->nb_frames > 0 && counter < st->nb_frames)
      decode_fail("the video is truncated: its container lists " + std::to_string(st->nb_frames) +
                  " frames but only " + std::to_string(counter) + " could be read");
    // Containers without a frame count (Matroska/WebM) still give a duration: far fewer packets
    // than it promises means the file was cut or its structure is damaged.
    if (st->nb_frames <= 0 && info_.fps > 0) {
      double seconds = 0;
      if (st->duration != AV_NOPTS_VALUE && st->duration > 0)
        seconds = static_cast<double>(st->duration) * info_.time_base_num / info_.time_base_den;
      else if (fmt_->duration != AV_NOPTS_VALUE && fmt_->duration > 0)
        seconds = static_cast<double>(fmt_->duration) / AV_TIME_BASE;
      const double expected = seconds * info_.fps;
      if (static_cast<double>(counter) < 0.9 * expected - 2)
        decode_fail("the video is truncated or damaged: its container says it lasts " +
                    std::to_string(seconds).substr(0, std::to_string(seconds).find('.') + 4) +
                    " s (about " + std::to_string(static_cast<int64_t>(expected + 0.5)) +
                    " frames) but only " + std::to_string(counter) + " frames could be read");
    }
    std::stable_sort(info_.frames.begin(), info_.frames.end(),
                     [](const FrameEntry& a, const FrameEntry& b) { return a.pts < b.pts; });
    for (size_t i = 1; i < info_.frames.size(); ++i)
      if (info_.frames[i].pts == info_.frames[i - 1].pts)
        decode_fail("frames " + std::to_string(i - 1) + " and " + std::to_string(i) +
                    " of the video stream have the same timestamp");
    info_.frames.front().key = true;  // decoding starts at the stream's start anyway
    if (info_.fps > 0 && first_duration > 0) {
      // A duration is a whole number of time-base ticks: 30 fps in Matroska's 1 ms is 33 ms,
      // not 33.33. Only a difference of more than a tick (and 0.1%) is a different rate.
      const double tick = static_cast<double>(info_.time_base_num) / info_.time_base_den;
      const double d = static_cast<double>(first_duration) * tick;
      info_.variable_frame_rate = std::abs(d - 1.0 / info_.fps) > tick + 1e-3 / info_.fps;
    }
    last_decoded_ = -1;
  }

  void open_decoder(const AVCodecParameters* par) {
    dec_ = avcodec_alloc_context3(codec_);
    frame_ = av_frame_alloc();
    packet_ = av_packet_alloc();
    if (!dec_ || !frame_ || !packet_) throw Error(ErrorKind::kOutOfMemory, "cannot allocate a decoder");
    int ret = avcodec_parameters_to_context(dec_, par);
    if (ret < 0) decode_fail("cannot set up the '" + info_.codec + "' decoder (" + av_error(ret) + ")");
    dec_->thread_count = 1;
    dec_->pkt_timebase = fmt_->streams[stream_]->time_base;
    if (gpu_ && gpu_->device && decodes_on_cuda(codec_)) {
      dec_->hw_device_ctx = av_buffer_ref(gpu_->device);
      if (!dec_->hw_device_ctx) throw Error(ErrorKind::kOutOfMemory, "cannot allocate a decoder");
      dec_->get_format = cuda_or_software;
    }
    // H.264's non-reference pictures (nal_ref_idc 0) change no other picture, so those not
    // asked for need not be decoded (AVDISCARD_NONREF). HEVC's "non-reference" ones may still
    // be referred to by pictures of a higher temporal sub-layer, and VP9's may update the
    // probability contexts of later frames: every frame of those is decoded.
    skippable_ = par->codec_id == AV_CODEC_ID_H264;
    ret = avcodec_open2(dec_, codec_, nullptr);
    if (ret < 0)
      throw Error(ErrorKind::kUnsupported, "cannot open the '" + info_.codec + "' decoder (" +
                                               av_error(ret) + ")");
  }

  static void check_size(int64_t w, int64_t h) {
    if (w * h > kMaxFramePixels)
      decode_fail("the frames are " + std::to_string(w) + "x" + std::to_string(h) +
                  " pixels, more than stoker's limit of " + std::to_string(kMaxFramePixels) +
                  " pixels per frame");
  }

  bool frame_intact() const {
    return frame_->decode_error_flags == 0 && !(frame_->flags & AV_FRAME_FLAG_CORRUPT);
  }

  // The decoders conceal damaged data; a frame they had to patch up is an error here.
  void check_frame() {
    if (frame_intact()) return;
    int64_t pts = frame_->best_effort_timestamp;
    av_frame_unref(frame_);
    auto it = std::lower_bound(info_.frames.begin(), info_.frames.end(), pts,
                               [](const FrameEntry& f, int64_t p) { return f.pts < p; });
    std::string which = it != info_.frames.end() && it->pts == pts
                            ? "frame " + std::to_string(it - info_.frames.begin())
                            : "a frame (pts " + std::to_string(pts) + ")";
    decode_fail(which + " is corrupt: the decoder met damaged data in it");
  }

  // True for a packet whose frame this decode() does not return and no later call can ask
  // for without seeking: before the last frame asked for, and not one of them. (A frame past
  // it may be the next call's first, decoded on from here.) Unknown timestamps are wanted.
  bool unwanted(int64_t pts, int64_t first, int64_t count, int64_t stride) const {
    if (pts == AV_NOPTS_VALUE) return false;
    auto it = std::lower_bound(info_.frames.begin(), info_.frames.end(), pts,
                               [](const FrameEntry& f, int64_t p) { return f.pts < p; });
    if (it == info_.frames.end() || it->pts != pts) return false;
    const int64_t k = it - info_.frames.begin();
    if (k >= first + (count - 1) * stride) return false;
    return k < first || (k - first) % stride != 0;
  }

  void seek(int64_t key) {
    int ret = av_seek_frame(fmt_, stream_, info_.frames[key].pts, AVSEEK_FLAG_BACKWARD);
    if (ret < 0 && key == 0)
      ret = avformat_seek_file(fmt_, stream_, INT64_MIN, info_.frames[0].pts, info_.frames[0].pts,
                               0);
    if (ret < 0) ret = av_seek_frame(fmt_, -1, INT64_MIN, AVSEEK_FLAG_BACKWARD | AVSEEK_FLAG_BYTE);
    if (ret < 0) decode_fail("cannot seek to frame " + std::to_string(key) + " (" + av_error(ret) + ")");
    avcodec_flush_buffers(dec_);
    last_decoded_ = -1;
  }

  void check_frame_size(int64_t index) const {
    const int w = info_.width, h = info_.height;
    if (frame_->width != w || frame_->height != h)
      decode_fail("frame " + std::to_string(index) + " is " + std::to_string(frame_->width) + "x" +
                  std::to_string(frame_->height) + ", the stream's frames are " +
                  std::to_string(w) + "x" + std::to_string(h) +
                  "; videos whose frame size changes are not supported");
  }

  // A codec FFmpeg can decode on NVDEC (whether this GPU takes the stream's profile is asked
  // when decoding starts: cuda_or_software).
  static bool decodes_on_cuda(const AVCodec* codec) {
    for (int i = 0;; ++i) {
      const AVCodecHWConfig* c = avcodec_get_hw_config(codec, i);
      if (!c) return false;
      if ((c->methods & AV_CODEC_HW_CONFIG_METHOD_HW_DEVICE_CTX) &&
          c->device_type == AV_HWDEVICE_TYPE_CUDA)
        return true;
    }
  }

  // FFmpeg offers CUDA frames where NVDEC takes the stream; when it then fails to set NVDEC up
  // (a profile the GPU lacks), it asks again without them, and the CPU decodes.
  static AVPixelFormat cuda_or_software(AVCodecContext*, const AVPixelFormat* formats) {
    for (const AVPixelFormat* f = formats; *f != AV_PIX_FMT_NONE; ++f)
      if (*f == AV_PIX_FMT_CUDA) return *f;
    for (const AVPixelFormat* f = formats; *f != AV_PIX_FMT_NONE; ++f) {
      const AVPixFmtDescriptor* d = av_pix_fmt_desc_get(*f);
      if (d && !(d->flags & AV_PIX_FMT_FLAG_HWACCEL)) return *f;
    }
    return AV_PIX_FMT_NONE;
  }

  // A frame in device memory copied to a frame in host memory, in frame_'s place.
  void download(int64_t index) {
    AVFrame* sw = av_frame_alloc();
    if (!sw) throw Error(ErrorKind::kOutOfMemory, "cannot allocate a frame");
    int ret = av_hwframe_transfer_data(sw, frame_, 0);
    if (ret >= 0) ret = av_frame_copy_props(sw, frame_);
    if (ret < 0) {
      av_frame_free(&sw);
      decode_fail("frame " + std::to_string(index) + ": cannot copy it from the GPU (" +
                  av_error(ret) + ")");
    }
    av_frame_unref(frame_);
    av_frame_move_ref(frame_, sw);
    av_frame_free(&sw);
  }

#if STOKER_WITH_CUDA
  // NVDEC's frame to `out` on the GPU; false for a surface format the kernels do not read.
  bool convert_device(ColorFormat color, const kernels::cuda::FrameOut& out, int64_t index) {
    namespace kc = kernels::cuda;
    check_frame_size(index);
    const auto* fc = reinterpret_cast<const AVHWFramesContext*>(frame_->hw_frames_ctx->data);
    kc::YuvFrame f;
    switch (fc->sw_format) {
      case AV_PIX_FMT_NV12: f.layout = kc::YuvLayout::kNV12; break;
      case AV_PIX_FMT_P010LE:
      case AV_PIX_FMT_P016LE: f.layout = kc::YuvLayout::kP016; break;
      case AV_PIX_FMT_YUV444P: f.layout = kc::YuvLayout::kYUV444; break;
      case AV_PIX_FMT_YUV444P16LE: f.layout = kc::YuvLayout::kYUV444_16; break;
      default: return false;
    }
    const int planes = f.layout == kc::YuvLayout::kNV12 || f.layout == kc::YuvLayout::kP016 ? 2 : 3;
    for (int p = 0; p < planes; ++p) {
      f.plane[p] = frame_->data[p];
      f.pitch[p] = frame_->linesize[p];
    }
    f.width = info_.width;
    f.height = info_.height;
    // The matrix libswscale gives the same colorspace on the CPU (sws_getCoefficients).
    switch (frame_->colorspace) {
      case AVCOL_SPC_RGB:
      case AVCOL_SPC_BT709: f.kr = 0.2126f, f.kb = 0.0722f; break;
      case AVCOL_SPC_FCC: f.kr = 0.30f, f.kb = 0.11f; break;
      case AVCOL_SPC_SMPTE240M: f.kr = 0.212f, f.kb = 0.087f; break;
      case AVCOL_SPC_BT2020_NCL:
      case AVCOL_SPC_BT2020_CL: f.kr = 0.2627f, f.kb = 0.0593f; break;
      default: f.kr = 0.299f, f.kb = 0.114f; break;
    }
    f.full_range = frame_->color_range == AVCOL_RANGE_JPEG;
    kc::yuv_frame_gpu(f, color == ColorFormat::kYCbCr, out, gpu_->stream);
    return true;
  }
#endif

  void convert(ColorFormat color, uint8_t* out, int64_t index) {
    const int w = info_.width, h = info_.height;
    check_frame_size(index);
    auto src = static_cast<AVPixelFormat>(frame_->format);
    // The range is given below: a yuvj format is handed to libswscale as its plain twin, since
    // sws_getCachedContext compares the twin it keeps with the yuvj one asked for and makes a
    // new context for every frame, which may land at the same address and so skip the range
    // set below (full-range frames after the first came out in studio range).
    const int src_full = frame_->color_range == AVCOL_RANGE_JPEG || is_jpeg_range_format(src);
    src = plain_twin(src);
    const bool rgb = color == ColorFormat::kRGB;
    const AVPixelFormat dst = rgb ? AV_PIX_FMT_RGB24 : AV_PIX_FMT_YUV444P;
    SwsContext* before = sws_;
    sws_ = sws_getCachedContext(sws_, w, h, src, w, h, dst, SWS_BILINEAR, nullptr, nullptr, nullptr);
    if (!sws_)
      decode_fail("frame " + std::to_string(index) + ": cannot convert pixel format '" +
                  std::string(av_get_pix_fmt_name(src) ? av_get_pix_fmt_name(src) : "?") + "'");
    // FFmpeg's defaults: the frame's matrix (BT.601 when unspecified) and its range
    // (limited unless the frame says full or the format is a yuvj one).
    const int details[2] = {static_cast<int>(frame_->colorspace), src_full};
    if (sws_ != before || details[0] != sws_details_[0] || details[1] != sws_details_[1]) {
      const int* coefs = sws_getCoefficients(frame_->colorspace);
      sws_setColorspaceDetails(sws_, coefs, src_full, coefs, rgb ? 1 : src_full, 0, 1 << 16,
                               1 << 16);
      sws_details_[0] = details[0];
      sws_details_[1] = details[1];
    }
    // swscale's SIMD paths may write a little past a row; convert into padded planes first.
    const int planes = rgb ? 1 : 3;
    const int line = ((rgb ? w * 3 : w) + 63) / 64 * 64 + 64;
    tmp_.resize(static_cast<size_t>(line) * (h + 2) * planes);
    uint8_t* dst_data[4] = {nullptr, nullptr, nullptr, nullptr};
    int dst_lines[4] = {0, 0, 0, 0};
    for (int p = 0; p < planes; ++p) {
      dst_data[p] = tmp_.data() + static_cast<size_t>(p) * line * (h + 2);
      dst_lines[p] = line;
    }
    int ret = sws_scale(sws_, frame_->data, frame_->linesize, 0, h, dst_data, dst_lines);
    if (ret != h)
      decode_fail("frame " + std::to_string(index) + ": colour conversion failed");
    if (rgb) {
      for (int y = 0; y < h; ++y)
        std::memcpy(out + static_cast<size_t>(y) * w * 3, dst_data[0] + static_cast<size_t>(y) * line,
                    static_cast<size_t>(w) * 3);
    } else {
      for (int y = 0; y < h; ++y) {
        uint8_t* o = out + static_cast<size_t>(y) * w * 3;
        const uint8_t* a = dst_data[0] + static_cast<size_t>(y) * line;
        const uint8_t* b = dst_data[1] + static_cast<size_t>(y) * line;
        const uint8_t* c = dst_data[2] + static_cast<size_t>(y) * line;
        for (int x = 0; x < w; ++x) {
          o[3 * x] = a[x];
          o[3 * x + 1] = b[x];
          o[3 * x + 2] = c[x];
        }
      }
    }
  }

  AVFormatContext* fmt_ = nullptr;
  bool custom_io_ = false;
  MemorySource mem_;
  int stream_ = -1;
  const AVCodec* codec_ = nullptr;
  bool skippable_ = false;  // non-reference frames may be left undecoded (open_decoder)
  AVCodecContext* dec_ = nullptr;
  AVFrame* frame_ = nullptr;
  AVPacket* packet_ = nullptr;
  SwsContext* sws_ = nullptr;
  std::shared_ptr<GpuDecoding> gpu_;   // set: decoding for decode_device()
  std::vector<uint8_t> host_frame_;    // a CPU-decoded frame on its way to the GPU
  int sws_details_[2] = {-1, -1};  // the colorspace and range sws_ was set up for
  std::vector<uint8_t> tmp_;
  VideoInfo info_;
  int64_t last_decoded_ = -1;  // the last frame taken out of the decoder since the last seek
};

}  // namespace

std::unique_ptr<VideoFile> VideoFile::open_path(const std::string& path, const VideoInfo* index,
                                                std::shared_ptr<GpuDecoding> gpu) {
  auto v = std::make_unique<FfmpegVideo>();
  v->open(&path, nullptr, 0, index, std::move(gpu));
  return v;
}

std::unique_ptr<VideoFile> VideoFile::open_memory(const uint8_t* data, size_t size,
                                                  std::shared_ptr<GpuDecoding> gpu) {
  auto v = std::make_unique<FfmpegVideo>();
  v->open(nullptr, data, size, nullptr, std::move(gpu));
  return v;
}

#else  // !STOKER_WITH_FFMPEG

bool built_with_ffmpeg() { return false; }

class GpuDecoding {};

std::shared_ptr<GpuDecoding> make_gpu_decoding(int, void*, std::string* why) {
  if (why) *why = without_ffmpeg_message("video");
  return nullptr;
}

std::unique_ptr<VideoFile> VideoFile::open_path(const std::string&, const VideoInfo*,
                                                std::shared_ptr<GpuDecoding>) {
  throw Error(ErrorKind::kUnsupported, without_ffmpeg_message("video"));
}

std::unique_ptr<VideoFile> VideoFile::open_memory(const uint8_t*, size_t,
                                                  std::shared_ptr<GpuDecoding>) {
  throw Error(ErrorKind::kUnsupported, without_ffmpeg_message("video"));
}

#endif

}  // namespace stoker::codecs::video
