#include "ops/video/frame_list.h"

#include <algorithm>
#include <cstring>
#include <utility>

#ifdef STOKER_WITH_CUDA
#include "core/cuda/cuda_util.h"
#include "kernels/cuda/video_gpu.h"
#endif

namespace stoker::video_frames {

namespace cv = codecs::video;

PadMode parse_pad_mode(const OpSpec& spec, const std::string& m) {
  if (m == "none") return PadMode::kNone;
  if (m == "constant") return PadMode::kConstant;
  if (m == "edge" || m == "repeat") return PadMode::kEdge;
  if (m == "reflect_1001" || m == "symmetric") return PadMode::kReflect1001;
  if (m == "reflect_101" || m == "reflect") return PadMode::kReflect101;
  spec.arg_error("pad_mode", "must be one of 'none', 'constant', 'edge' ('repeat'), "
                             "'reflect_1001' ('symmetric'), 'reflect_101' ('reflect'), got '" + m + "'");
}

std::vector<int64_t> parse_fill_value(const OpSpec& spec) {
  std::vector<int64_t> fill = spec.get<std::vector<int64_t>>("fill_value");
  if (fill.empty() || (fill.size() != 1 && fill.size() != 3))
    spec.arg_error("fill_value", "must have 1 value or 3 (one per channel), got " +
                                     std::to_string(fill.size()));
  for (int64_t v : fill)
    if (v < 0 || v > 255)
      spec.arg_error("fill_value", "values must be in [0, 255], got " + std::to_string(v));
  return fill;
}

int64_t frame_at(PadMode mode, int64_t i, int64_t lo, int64_t hi) {
  if (i >= lo && i < hi) return i;
  switch (mode) {
    case PadMode::kEdge: return std::clamp(i, lo, hi - 1);
    case PadMode::kReflect1001: {
      const int64_t p = i % (2 * hi);
      return p < hi ? p : 2 * hi - 1 - p;
    }
    case PadMode::kReflect101: {
      if (hi == 1) return 0;
      const int64_t p = i % (2 * hi - 2);
      return p < hi ? p : 2 * hi - 2 - p;
    }
    default: return -1;
  }
}

namespace {

// (frame, output position) for every decoded position, sorted by frame.
std::vector<std::pair<int64_t, size_t>> decode_order(const std::vector<int64_t>& frames) {
  std::vector<std::pair<int64_t, size_t>> order;
  for (size_t k = 0; k < frames.size(); ++k)
    if (frames[k] >= 0) order.push_back({frames[k], k});
  std::sort(order.begin(), order.end());
  return order;
}

void fill_frame(uint8_t* f, size_t bytes, const std::vector<int64_t>& fill) {
  if (fill.size() == 1) {
    std::memset(f, static_cast<int>(fill[0]), bytes);
    return;
  }
  for (size_t px = 0; px < bytes; ++px) f[px] = static_cast<uint8_t>(fill[px % 3]);
}

}  // namespace

void decode(cv::VideoFile& video, const std::vector<int64_t>& frames, cv::ColorFormat color,
            const std::vector<int64_t>& fill, uint8_t* out) {
  const cv::VideoInfo& v = video.info();
  const size_t fb = static_cast<size_t>(v.height) * v.width * 3;
  const auto order = decode_order(frames);
  for (size_t j = 0; j < order.size(); ++j) {
    if (j > 0 && order[j].first == order[j - 1].first)
      std::memcpy(out + order[j].second * fb, out + order[j - 1].second * fb, fb);
    else
      video.decode(order[j].first, 1, 1, color, out + order[j].second * fb);
  }
  for (size_t k = 0; k < frames.size(); ++k)
    if (frames[k] < 0) fill_frame(out + k * fb, fb, fill);
}

void decode_device(cv::VideoFile& video, const std::vector<int64_t>& frames,
                   cv::ColorFormat color, const std::vector<int64_t>& fill,
                   const cv::DeviceFrames& out, void* stream) {
#ifdef STOKER_WITH_CUDA
  const cv::VideoInfo& v = video.info();
  const int64_t values = static_cast<int64_t>(v.height) * v.width * 3;
  const size_t fb = static_cast<size_t>(values) * (out.f32 ? sizeof(float) : 1);
  auto* base = static_cast<char*>(out.data);
  const auto order = decode_order(frames);
  for (size_t j = 0; j < order.size(); ++j) {
    char* dst = base + order[j].second * fb;
    if (j > 0 && order[j].first == order[j - 1].first)
      cuda_memcpy_async(dst, base + order[j - 1].second * fb, fb, stream);
    else
      video.decode_device(order[j].first, 1, 1, color, {dst, out.f32, out.scale});
  }
  const bool flat = fill.size() == 1 || (fill[0] == fill[1] && fill[1] == fill[2]);
  std::vector<uint8_t> host;  // one fill frame, uploaded for each padded position
  for (size_t k = 0; k < frames.size(); ++k) {
    if (frames[k] >= 0) continue;
    char* dst = base + k * fb;
    if (flat && (!out.f32 || fill[0] == 0)) {  // float 0 is all zero bytes
      cuda_memset_async(dst, static_cast<int>(fill[0]), fb, stream);
      continue;
    }
    if (host.empty()) {
      host.resize(static_cast<size_t>(values));
      fill_frame(host.data(), host.size(), fill);
    }
    kernels::cuda::host_frame_gpu(host.data(), values, {dst, out.f32, out.scale}, stream);
  }
#else
  (void)video, (void)frames, (void)color, (void)fill, (void)out, (void)stream;
  throw Error(ErrorKind::kUnsupported, "stoker was built without CUDA");
#endif
}

}  // namespace stoker::video_frames
