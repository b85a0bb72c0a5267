// The mixed backend of the image decoders: CPU input (encoded files), GPU output.
//
// Per batch:
//  0. prepare_batch_mixed(): the decoder's own planning (headers, windows, the fused resize), and
//     the choice of decoder: each JPEG that nvJPEG can take is parsed on the worker threads. With
//     staging, the executor runs this on the cpu stage's thread, an iteration ahead, so that
//     the mixed stage's thread only decodes (Operator::prepare). The workers that parse the
//     engines' JPEGs also copy them into one pinned block, which the engines read from.
//  1. Baseline JPEGs the hardware engines accept go to them as one batch (nvjpegDecodeBatched),
//     the others to nvJPEG on CUDA cores, one per worker thread, each on its own stream.
//  2. Everything else (PNG and other formats, CMYK, 12-bit, lossless, EXIF-rotated images,
//     16-bit output, files without an end marker, and whatever nvJPEG refuses) is decoded by the
//     CPU decoder on the worker threads into pinned memory and copied up.
//     1 and 2 are one parallel_for: one worker waits for the engines' batch while the others
//     decode on CUDA cores and on the CPU (a second round takes what nvJPEG refused).
//  3. GPU-decoded images whose decoded region is not the output (the fused resize's input, or a
//     whole image where the engines refused the window) went to scratch memory; one launch of
//     the slice kernel (crops) and one of the resampling kernel (the fused resize) make the
//     outputs.
// The host waits for the GPU only around the hardware batch: before it, for the work queued on
// the pipeline's stream (the engines write into memory that stream handed out, and they do not
// wait for it), and after it, until the engines' work is done (codecs/nvjpeg/README.md says
// why). The crops run on the pipeline's stream, which waits for the engines' and the worker
// streams with events.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <mutex>

#include "codecs/nvjpeg/nvjpeg_decoder.h"
#include "core/log.h"
#include "core/cuda/cuda_util.h"
#include "kernels/cuda/lookup_gpu.h"
#include "kernels/cuda/resample_gpu.h"
#include "kernels/cuda/slice_gpu.h"
#include "kernels/cuda/ycbcr_gpu.h"
#include "ops/image/decoder.h"
#include "pipeline/gpu_batch.h"
#include "pipeline/gpu_context.h"

namespace stoker {

struct ImageDecoderBase::MixedState {
  std::unique_ptr<nvjpeg::BatchDecoder> decoder;
  int device = -1;
  double hw_load = 0.65;
  bool fancy = false;
  bool ampere = false;  // hw_decoder_load applies to the A100's engines only (as in DALI)
  int64_t gpu_huffman_pixels = 1000000;
  int64_t batches = 0;  // prepared so far
  std::atomic<int64_t> routed[3] = {0, 0, 0};  // by Route
  std::atomic<int64_t> windows{0};             // GPU-decoded images that decoded only a window
};

namespace {

enum class Route : int8_t { kCpu, kHardware, kCuda };

// True when the data ends with the JPEG end-of-image marker (allowing a little padding after
// it). A truncated file lacks it; nvJPEG would fill the missing part silently, so such files
// go to the CPU decoder, which reports them.
bool has_end_marker(const uint8_t* data, size_t size) {
  const size_t tail = std::min<size_t>(size, 4096);
  for (size_t k = 1; k < tail; ++k) {
    const size_t i = size - 1 - k;
    if (data[i] == 0xFF && data[i + 1] == 0xD9) return true;
  }
  return false;
}

// True for JPEGs whose components are stored as RGB rather than YCbCr (an Adobe APP14 marker
// with transform 0, or SOF component ids 'R', 'G', 'B', libjpeg's rules): nvJPEG converts them
// from YCbCr regardless, so they go to the CPU decoder.
bool stored_as_rgb(const uint8_t* data, size_t size) {
  size_t i = 2;  // after SOI
  bool adobe_rgb = false;
  while (i + 4 <= size) {
    if (data[i] != 0xFF) return adobe_rgb;
    const uint8_t marker = data[i + 1];
    if (marker == 0xFF) { ++i; continue; }
    const size_t len = (size_t(data[i + 2]) << 8) | data[i + 3];
    const uint8_t* seg = data + i + 4;
    if (len < 2 || i + 2 + len > size) return adobe_rgb;
    if (marker == 0xEE && len >= 14 && std::memcmp(seg, "Adobe", 5) == 0)
      adobe_rgb = seg[11] == 0;
    if ((marker >= 0xC0 && marker <= 0xCF) && marker != 0xC4 && marker != 0xC8 && marker != 0xCC) {
      if (len >= 8 + 3 * 3 && seg[5] == 3 && seg[6] == 'R' && seg[9] == 'G' && seg[12] == 'B')
        return true;
      return adobe_rgb;
    }
    if (marker == 0xDA) return adobe_rgb;
    i += 2 + len;
  }
  return adobe_rgb;
}

}  // namespace

namespace {
// STOKER_TRACE_MIXED=1: the time of each phase of every 16th batch (for profiling);
// STOKER_TRACE_MIXED_EVERY=1: each phase as it ends, every batch (for finding a stall). Both
// logged at debug level (core/log.h).
struct PhaseClock {
  bool on = std::getenv("STOKER_TRACE_MIXED") != nullptr;
  bool every = std::getenv("STOKER_TRACE_MIXED_EVERY") != nullptr;
  std::chrono::steady_clock::time_point t = std::chrono::steady_clock::now();
  std::string line;
  void lap(const char* name) {
    if (every) log_message(LogLevel::kDebug, "stoker mixed decoder: %s done", name);
    if (!on) return;
    auto now = std::chrono::steady_clock::now();
    char buf[64];
    std::snprintf(buf, sizeof buf, " %s %.2f", name,
                  std::chrono::duration<double, std::milli>(now - t).count());
    line += buf;
    t = now;
  }
};
}  // namespace

// One batch as prepare_batch_mixed() planned it.
struct ImageDecoderBase::MixedBatch {
  bool skipped = false;  // a sample was skipped (on_error): the executor restarts the iteration
  OutputDesc desc;
  std::vector<SamplePlan> plans;
  std::vector<Route> route;
  std::vector<nvjpeg::Window> want, decoded;  // per image: the window kept; the window decoded
  // The engines' images, copied into one pinned block (at pinned_at[i]; -1: not copied) so that
  // nvJPEG's copies to the GPU are DMA rather than staged through the driver from pageable memory.
  std::shared_ptr<void> pinned;
  std::vector<int64_t> pinned_at;
  PhaseClock clock;
};

std::shared_ptr<ImageDecoderBase::MixedBatch> ImageDecoderBase::prepare_batch_mixed(Workspace& ws) {
  const Batch& in = ws.input(0);
  auto b = std::make_shared<MixedBatch>();
  PhaseClock& clock = b->clock;
  b->desc = plan_batch(ws, b->plans);
  clock.lap("setup");
  if (ws.errors && ws.errors->has_skipped()) {
    b->skipped = true;
    return b;
  }
  const int64_t n = static_cast<int64_t>(in.size());
  const int threads = ws.thread_pool->size();
  // Made here, before the first run_batch_mixed(), which may run on another thread but always
  // after the prepare of its own iteration.
  if (!mixed_) {
    mixed_ = std::make_shared<MixedState>();
    mixed_->hw_load = spec_.get<double>("hw_decoder_load");
    mixed_->fancy = spec_.get<bool>("jpeg_fancy_upsampling");
    mixed_->gpu_huffman_pixels = spec_.get<int64_t>("hybrid_huffman_threshold");
  }
  if (!mixed_->decoder || mixed_->device != ws.gpu->device()) {
    std::string why;
    if (!nvjpeg::nvjpeg_available(&why))
      fail(ErrorKind::kUnsupported, "device='mixed' decodes JPEGs with nvJPEG, which cannot be "
                                    "used here: " + why);
    mixed_->device = ws.gpu->device();
    mixed_->decoder = std::make_unique<nvjpeg::BatchDecoder>(mixed_->device, threads, mixed_->fancy,
                                                            mixed_->gpu_huffman_pixels);
    mixed_->ampere = cuda_device_major(mixed_->device) == 8;
  }
  nvjpeg::BatchDecoder& dec = *mixed_->decoder;
  clock.on = clock.on && mixed_->batches++ % 16 == 0;

  // Routes. Only 8-bit output in RGB, BGR or gray, at the stored orientation, from JPEGs with
  // 1 or 3 components of 8 bits goes to nvJPEG. Each decodes the window the plan keeps (the
  // crop, or the fused resize's region) where it can; the engines may take only whole images.
  std::vector<Route>& route = b->route;
  std::vector<nvjpeg::Window>& want = b->want;
  std::vector<nvjpeg::Window>& decoded = b->decoded;
  route.assign(n, Route::kCpu);
  want.assign(n, {});
  decoded.assign(n, {});
  // Room in pinned memory for every JPEG the engines may take; the workers copy those they do.
  b->pinned_at.assign(n, -1);
  std::vector<int64_t> at(n, -1);
  int64_t pinned_bytes = 0;
  if (dec.has_hardware())
    for (int64_t i = 0; i < n; ++i)
      if (!b->plans[i].failed && b->plans[i].info.format == codecs::ImageFormat::kJpeg) {
        at[i] = pinned_bytes;
        pinned_bytes += static_cast<int64_t>(in.sample_bytes(i) + 63) / 64 * 64;
      }
  if (pinned_bytes) b->pinned = ws.gpu->allocate_pinned(static_cast<size_t>(pinned_bytes));
  ws.thread_pool->parallel_for(n, [&](int64_t i, int thread) {
    const SamplePlan& p = b->plans[i];
    if (p.failed || dtype_ != DType::kUInt8 || p.info.format != codecs::ImageFormat::kJpeg) return;
    if (base_.apply_orientation && p.info.orientation != 1) return;
    const uint8_t* data = in.data<uint8_t>(i);
    const size_t size = in.sample_bytes(i);
    if (!has_end_marker(data, size) || stored_as_rgb(data, size)) return;
    // Images of a few pixels (reftest's 3x3 and 4x4) come out wrong from nvJPEG; they cost
    // nothing on the CPU.
    if (p.info.height < 16 || p.info.width < 16) return;
    const codecs::Roi& r = p.params.roi;
    if (!r.is_full()) {
      const int64_t y1 = r.y1 < 0 ? p.info.height : r.y1, x1 = r.x1 < 0 ? p.info.width : r.x1;
      want[i] = nvjpeg::Window{r.y0, r.x0, y1 - r.y0, x1 - r.x0};
    }
    nvjpeg::StreamInfo info;
    try {
      info = dec.parse(data, size, thread, want[i]);
    } catch (const Error&) {
      return;  // the CPU decoder reports it (or decodes what nvJPEG cannot parse)
    }
    if (info.height != p.info.height || info.width != p.info.width || info.precision != 8) return;
    if (info.encoding == nvjpeg::JpegEncoding::kLosslessHuffman) return;
    // Grayscale JPEGs go to the CPU: nvJPEG decodes some (a single component with 2x2 sampling
    // factors, reftest's grayscale_16x24_sampling2x2.jpg) wrongly, and they are rare in
    // training data.
    if (info.components != 3) return;
    route[i] = info.hardware ? Route::kHardware : Route::kCuda;
    decoded[i] = info.hardware && !info.hardware_window ? nvjpeg::Window{} : want[i];
    if (info.hardware && at[i] >= 0) {
      std::memcpy(static_cast<char*>(b->pinned.get()) + at[i], data, size);
      b->pinned_at[i] = at[i];
    }
  });
  clock.lap("parse");
  // On an A100, hw_decoder_load of the hardware-eligible share stays on the engines; the rest
  // decodes on CUDA cores at the same time.
  if (mixed_->ampere && mixed_->hw_load < 1.0) {
    int64_t eligible = std::count(route.begin(), route.end(), Route::kHardware);
    int64_t keep = static_cast<int64_t>(std::llround(eligible * mixed_->hw_load));
    for (int64_t i = n - 1, moved = 0; i >= 0 && moved < eligible - keep; --i)
      if (route[i] == Route::kHardware) route[i] = Route::kCuda, decoded[i] = want[i], ++moved;
  }
  return b;
}

void ImageDecoderBase::run_batch_mixed(Workspace& ws) {
  std::shared_ptr<MixedBatch> b = ws.prepared ? std::static_pointer_cast<MixedBatch>(ws.prepared)
                                              : prepare_batch_mixed(ws);
  if (b->skipped) return;  // the executor restarts the iteration
  PhaseClock& clock = b->clock;
  clock.lap("wait");  // from the end of prepare to here (queued, when staged)
  plans_ = std::move(b->plans);  // where run_sample (the CPU decoder) reads them
  std::vector<Route>& route = b->route;
  const std::vector<nvjpeg::Window>& want = b->want;
  const std::vector<nvjpeg::Window>& decoded = b->decoded;
  const Batch& in = ws.input(0);
  const int64_t n = static_cast<int64_t>(in.size());
  nvjpeg::BatchDecoder& dec = *mixed_->decoder;
  const bool gray = base_.color == codecs::ColorOut::kGray;
  const nvjpeg::OutputFormat format = gray ? nvjpeg::OutputFormat::kY
                                      : base_.color == codecs::ColorOut::kBGR ? nvjpeg::OutputFormat::kBGRI
                                                                              : nvjpeg::OutputFormat::kRGBI;
  auto stream = ws.gpu->stream();
  ws.outputs.assign(1, allocate_device_batch(ws, dtype_, b->desc.shapes, "HWC"));
  Batch& out = ws.outputs[0];

  // Where each GPU-decoded image goes: straight into the output when what it decodes is the
  // output, else into scratch, cropped or resampled from there.
  const int64_t c_out = gray ? 1 : 3;
  auto extent = [&](int64_t i) {  // rows and columns decoded
    const nvjpeg::Window& d = decoded[i];
    return d.whole() ? std::pair{plans_[i].info.height, plans_[i].info.width} : std::pair{d.h, d.w};
  };
  std::vector<int64_t> scratch_off(n, -1);
  int64_t scratch_bytes = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (route[i] == Route::kCpu) continue;
    // (decoded[i] is either want[i] or the whole image)
    const bool is_output = !plans_[i].src && decoded[i].whole() == want[i].whole();
    if (is_output) continue;
    scratch_off[i] = scratch_bytes;
    auto [h, w] = extent(i);
    scratch_bytes += h * w * c_out;
  }
  std::shared_ptr<void> scratch;
  if (scratch_bytes) scratch = ws.gpu->allocate_device(static_cast<size_t>(scratch_bytes));
  auto target = [&](int64_t i) {
    nvjpeg::DecodeTarget t;
    t.data = in.data<uint8_t>(i);
    t.size = in.sample_bytes(i);
    t.window = decoded[i];
    t.pitch = static_cast<size_t>(extent(i).second * c_out);
    t.dst = scratch_off[i] >= 0 ? static_cast<uint8_t*>(scratch.get()) + scratch_off[i]
                                : static_cast<uint8_t*>(out[i].data);
    return t;
  };

  // 2. One parallel_for decodes everything: its first item is the engines' batch (a worker
  // waits for the engines), the next ones the CUDA cores' images, the last ones the CPU's, into
  // pinned memory laid out like the output. So the engines, the CUDA cores and the CPU decoder
  // work at the same time, and no worker idles behind a phase that only some of them have work
  // in (the engines, or the few images the CPU decodes). What nvJPEG refuses goes to a second
  // round: a failed engine batch to the CUDA cores one by one (which finds the bad image), what
  // the CUDA cores refuse to the CPU decoder.
  std::vector<int64_t> hw, cuda, cpu;
  for (int64_t i = 0; i < n; ++i)
    (route[i] == Route::kHardware ? hw : route[i] == Route::kCuda ? cuda : cpu).push_back(i);
  std::vector<nvjpeg::DecodeTarget> hw_targets;
  for (int64_t i : hw) {
    hw_targets.push_back(target(i));
    if (b->pinned_at[i] >= 0)
      hw_targets.back().data = static_cast<const uint8_t*>(b->pinned.get()) + b->pinned_at[i];
  }
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex mu;
  // The CPU decoder for sample i (run_sample does what the CPU backend does: fallbacks,
  // on_error='replace'); the first error is kept, named as the CPU backend names it.
  auto decode_cpu = [&](int64_t i, int thread) {
    try {
      run_sample(ws, i, thread);
    } catch (const Error& e) {
      if (e.kind() != ErrorKind::kInternal && ws.on_error == OnError::kSkip &&
          ws.report_bad_sample(i, in[i].source, e.what()))
        return;
      std::lock_guard<std::mutex> g(mu);
      if (!failed.exchange(true)) error = std::make_exception_ptr(sample_error(e, in, static_cast<size_t>(i)));
    } catch (...) {
      std::lock_guard<std::mutex> g(mu);
      if (!failed.exchange(true)) error = std::current_exception();
    }
  };
  // Pinned memory for the CPU's images, laid out like the output, swapped in as ws.outputs[0]
  // while run_sample writes there; uploaded once the decoding is done.
  struct Staging {
    std::vector<int64_t> images;
    std::vector<size_t> off;
    std::shared_ptr<void> block;
    Batch host;
  };
  auto stage = [&](const std::vector<int64_t>& images) {
    Staging st;
    st.images = images;
    size_t bytes = 0;
    for (int64_t i : images) {
      st.off.push_back(bytes);
      bytes += out.sample_bytes(i);
    }
    st.block = ws.gpu->allocate_pinned(std::max<size_t>(bytes, 1));
    st.host = Batch(dtype_, "HWC");
    st.host.resize(n);
    for (size_t k = 0; k < images.size(); ++k) {
      Sample& smp = st.host[images[k]];
      smp.owner = st.block;
      smp.data = static_cast<char*>(st.block.get()) + st.off[k];
      smp.shape = out.shape(images[k]);
      smp.source = in[images[k]].source;
    }
    return st;
  };
  auto upload = [&](const Staging& st) {
    for (size_t k = 0; k < st.images.size(); ++k) {
      const int64_t i = st.images[k];
      if (out.sample_bytes(i))
        ws.gpu->copy_async(out[i].data, static_cast<char*>(st.block.get()) + st.off[k], out.sample_bytes(i));
    }
  };
  // Runs f(item, thread) over `items` with ws.outputs[0] holding st's pinned batch (for
  // run_sample), the device batch back in place afterwards.
  auto with_staging = [&](Staging& st, int64_t items, const std::function<void(int64_t, int)>& f) {
    Batch device_out = std::move(ws.outputs[0]);
    ws.outputs[0] = std::move(st.host);
    try {
      ws.thread_pool->parallel_for(items, f);
    } catch (...) {
      st.host = std::move(ws.outputs[0]);
      ws.outputs[0] = std::move(device_out);
      throw;
    }
    st.host = std::move(ws.outputs[0]);
    ws.outputs[0] = std::move(device_out);
  };

  std::vector<nvjpeg::DecodeTarget> cuda_targets;
  for (int64_t i : cuda) cuda_targets.push_back(target(i));
  Staging first = stage(cpu);
  std::vector<int64_t> retry_cuda, late_cpu;
  const int64_t lead = hw.empty() ? 0 : 1;
  if (!cuda.empty()) dec.fork(stream);
  with_staging(first, lead + static_cast<int64_t>(cuda.size() + cpu.size()), [&](int64_t k, int thread) {
    if (k < lead) {
      try {
        dec.decode_hardware(hw_targets, format, stream);
      } catch (const Error& e) {
        if (e.kind() == ErrorKind::kOutOfMemory) throw;
        std::lock_guard<std::mutex> g(mu);
        retry_cuda = hw;
      }
      return;
    }
    k -= lead;
    if (k < static_cast<int64_t>(cuda.size())) {
      try {
        dec.decode_cuda(cuda_targets[k], format, thread);
      } catch (const Error& e) {
        // Whatever nvJPEG refuses (bad data, unsupported coding, or INVALID_PARAMETER for some
        // malformed headers), the CPU decoder decodes or reports with the file's name.
        if (e.kind() == ErrorKind::kOutOfMemory) throw;
        std::lock_guard<std::mutex> g(mu);
        late_cpu.push_back(cuda[k]);
      }
      return;
    }
    decode_cpu(cpu[k - cuda.size()], thread);
  });
  if (!retry_cuda.empty()) {
    if (cuda.empty()) dec.fork(stream);
    ws.thread_pool->parallel_for(static_cast<int64_t>(retry_cuda.size()), [&](int64_t k, int thread) {
      const int64_t i = retry_cuda[k];
      try {
        dec.decode_cuda(target(i), format, thread);
      } catch (const Error& e) {
        if (e.kind() == ErrorKind::kOutOfMemory) throw;
        std::lock_guard<std::mutex> g(mu);
        late_cpu.push_back(i);
      }
    });
  }
  if (!cuda.empty() || !retry_cuda.empty()) dec.join(stream);
  for (int64_t i : late_cpu) route[i] = Route::kCpu;
  std::sort(late_cpu.begin(), late_cpu.end());
  Staging late = stage(late_cpu);
  if (!late_cpu.empty())
    with_staging(late, static_cast<int64_t>(late_cpu.size()),
                 [&](int64_t k, int thread) { decode_cpu(late_cpu[k], thread); });
  if (error) std::rethrow_exception(error);
  upload(first);
  upload(late);
  clock.lap("decode");
  // 3. Crops and the fused resize of what went to scratch.
  std::vector<kernels::SliceArgs> crops;
  std::vector<void*> crop_out;
  std::vector<const void*> crop_in;
  std::vector<kernels::cuda::ResampleJob> resizes;
  for (int64_t i = 0; i < n; ++i) {
    if (route[i] == Route::kCpu || scratch_off[i] < 0) continue;
    const SamplePlan& p = plans_[i];
    const uint8_t* src = static_cast<const uint8_t*>(scratch.get()) + scratch_off[i];
    const auto [dh, dw] = extent(i);
    const int64_t dy = decoded[i].whole() ? 0 : decoded[i].y, dx = decoded[i].whole() ? 0 : decoded[i].x;
    const nvjpeg::Window& w = want[i];
    const int64_t y0 = w.whole() ? 0 : w.y, x0 = w.whole() ? 0 : w.x;
    const int64_t h = w.whole() ? p.info.height : w.h, wd = w.whole() ? p.info.width : w.w;
    if (p.src) {
      kernels::cuda::ResampleJob j;
      j.in = src + ((y0 - dy) * dw + (x0 - dx)) * c_out;
      j.in_h = h;
      j.in_w = wd;
      j.in_row_stride = dw * c_out;
      j.in_pixel_stride = c_out;
      j.out = out[i].data;
      j.out_h = out.shape(i)[0];
      j.out_w = out.shape(i)[1];
      j.channels = c_out;
      j.params = resize_->params;
      j.params.roi = *p.src;
      resizes.push_back(j);
    } else {
      kernels::SliceArgs a;
      a.in_shape = {dh, dw, c_out};
      a.anchor = {y0 - dy, x0 - dx, 0};
      a.shape = {h, wd, c_out};
      crops.push_back(a);
      crop_in.push_back(src);
      crop_out.push_back(out[i].data);
    }
  }
  if (!crops.empty())
    kernels::cuda::slice_flip_normalize_gpu(ws, DType::kUInt8, DType::kUInt8, crop_out, crop_in, crops);
  if (!resizes.empty())
    kernels::cuda::resample_gpu(ws, DType::kUInt8, DType::kUInt8, resizes);

  clock.lap("post");
  if (clock.on)
    log_message(LogLevel::kDebug, "stoker mixed decoder: %lld images (%zu hw, %zu cuda, %zu cpu), ms:%s",
                static_cast<long long>(n), hw.size(), cuda.size(), cpu.size(), clock.line.c_str());
  for (int64_t i = 0; i < n; ++i) {
    mixed_->routed[static_cast<int>(route[i])]++;
    if (route[i] != Route::kCpu && !decoded[i].whole()) mixed_->windows++;
  }
  if (mixed_out_ != DType::kNone) convert_mixed(ws);
  // The scratch and staging blocks return to the pools here; the pools wait for the stream.
}

// The decoded uint8 RGB images to mixed_out_: YCbCr with the CPU's sums, or each value through
// a table of from_u8's (the CPU decoder's conversion, so the values are the CPU's).
void ImageDecoderBase::convert_mixed(Workspace& ws) {
  const Batch& u8 = ws.outputs[0];
  Batch out = allocate_device_batch(ws, mixed_out_, u8.shapes(), u8.layout());
  if (mixed_ycbcr_) {
    std::vector<kernels::cuda::YCbCrJob> jobs(u8.size());
    for (size_t i = 0; i < u8.size(); ++i) {
      jobs[i] = {static_cast<const uint8_t*>(u8[i].data), out[i].data, volume(u8.shape(i)) / 3};
      out[i].source = u8[i].source;
    }
    kernels::cuda::ycbcr_gpu(ws, ycbcr_params(mixed_out_ == DType::kFloat32), jobs);
    ws.outputs[0] = std::move(out);
    return;
  }
  std::vector<uint64_t> table(256, 0);
  visit_dtype(mixed_out_, [&](auto t) {
    using T = decltype(t);
    for (int v = 0; v < 256; ++v) {
      const T x = from_u8<T>(static_cast<uint8_t>(v));
      std::memcpy(&table[v], &x, sizeof(T));
    }
  });
  std::vector<kernels::cuda::LookupJob> jobs(u8.size());
  for (size_t i = 0; i < u8.size(); ++i) {
    jobs[i] = {u8[i].data, out[i].data, volume(u8.shape(i))};
    out[i].source = u8[i].source;
  }
  kernels::cuda::lookup_gpu(ws, DType::kUInt8, dtype_size(mixed_out_), table, 0, jobs);
  ws.outputs[0] = std::move(out);
}

std::vector<std::pair<std::string, int64_t>> ImageDecoderBase::mixed_counters() const {
  if (!mixed_) return {};
  const auto& r = mixed_->routed;
  return {{"jpeg_engines", r[static_cast<int>(Route::kHardware)]},
          {"cuda_cores", r[static_cast<int>(Route::kCuda)]},
          {"cpu", r[static_cast<int>(Route::kCpu)]},
          {"window_only", mixed_->windows}};
}

}  // namespace stoker
