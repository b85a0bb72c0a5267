// decoders.image: encoded images (JPEG, PNG) to HWC pixels on the CPU; and the base that the
// cropping decoders (decoder_crop.cc) share with it.
#include "ops/image/decoder.h"
#include "ops/image/decoder_mixed.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <exception>
#include <limits>
#include <string>

#include "core/convert.h"
#include "kernels/cuda/ycbcr_gpu.h"
#include "ops/image/image_types.h"
#include "ops/image/resample_args.h"

namespace stoker {
namespace {

std::string describe_source(const Batch& b, size_t i) {
  return b[i].source.empty() ? "" : " ('" + b[i].source + "')";
}

// Whether the EXIF orientation reverses the output's rows (y) or columns (x) relative to the
// stored image: what decides on which side a DCT-scaled axis has its partial last pixel.
bool flips_y(int orientation) { return orientation == 3 || orientation == 4 || orientation == 7 || orientation == 8; }
bool flips_x(int orientation) { return orientation == 2 || orientation == 3 || orientation == 6 || orientation == 7; }

}  // namespace

int dct_scale_for(int64_t h, int64_t w, int64_t out_h, int64_t out_w) {
  for (int d : {8, 4, 2})
    if (h >= out_h * d && w >= out_w * d) return d;
  return 1;
}

ImageDecoderBase::ImageDecoderBase(const OpSpec& spec) : Operator(spec) {
  auto t = static_cast<ImageType>(spec.get<int64_t>("output_type"));
  switch (t) {
    case ImageType::kRGB: base_.color = codecs::ColorOut::kRGB; break;
    case ImageType::kBGR: base_.color = codecs::ColorOut::kBGR; break;
    case ImageType::kGray: base_.color = codecs::ColorOut::kGray; break;
    case ImageType::kAnyData: base_.color = codecs::ColorOut::kAny; break;
    case ImageType::kYCbCr: base_.color = codecs::ColorOut::kRGB; ycbcr_ = true; break;
    default:
      spec.arg_error("output_type", std::string("must be RGB, BGR, GRAY, YCbCr or ANY_DATA, got ") +
                                        image_type_name(t) + ".");
  }
  dtype_ = static_cast<DType>(spec.get<int64_t>("dtype"));
  switch (dtype_) {
    case DType::kUInt8: case DType::kUInt16: case DType::kFloat32:
    case DType::kInt8: case DType::kInt16: case DType::kInt32: case DType::kUInt32: break;
    default:
      spec.arg_error("dtype", std::string("must be UINT8, UINT16, FLOAT, INT8, INT16, INT32 or UINT32 "
                                          "(as DALI), got ") + dtype_name(dtype_) + ".");
  }
  if (ycbcr_ && dtype_ != DType::kUInt8 && dtype_ != DType::kFloat32) {
    std::string name = dtype_name(dtype_);  // as DALI's types name it: UINT16
    for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    spec.arg_error("output_type", "YCbCr is given as UINT8 or FLOAT, not " + name +
                                      "; decode as RGB " + name + ", or YCbCr UINT8 / FLOAT.");
  }
  base_.apply_orientation = spec.get<bool>("adjust_orientation");
  base_.fast_idct = spec.get<bool>("use_fast_idct");
  base_.limits.max_pixels = spec.get<int64_t>("max_pixels");
  fallback_shape_ = spec.get<std::vector<int64_t>>("fallback_shape");
  fallback_value_ = spec.get<int64_t>("fallback_value");
}

void ImageDecoderBase::fill_fallback(Workspace& ws, int64_t i) const {
  Batch& out = ws.output(0);
  int64_t n = volume(out.shape(i));
  if (dtype_ == DType::kUInt8) {
    std::fill_n(out.data<uint8_t>(i), n, static_cast<uint8_t>(fallback_value_));
  } else if (dtype_ == DType::kUInt16) {
    std::fill_n(out.data<uint16_t>(i), n, static_cast<uint16_t>(fallback_value_));
  } else {  // the value as a decoded uint8 pixel reads in this type
    visit_dtype(dtype_, [&](auto t) {
      using T = decltype(t);
      std::fill_n(out.data<T>(i), n, from_u8<T>(static_cast<uint8_t>(fallback_value_)));
    });
  }
}


CropWindow2D ImageDecoderBase::window(Workspace&, int64_t, int64_t height, int64_t width) {
  return CropWindow2D{0, 0, height, width};
}

ImageDecoderBase::SamplePlan ImageDecoderBase::plan_sample(Workspace& ws, int64_t i,
                                                           const uint8_t* data, size_t size) {
  SamplePlan p;
  p.info = codecs::peek(data, size, base_.limits);
  p.params = base_;
  const Shape full = codecs::output_shape(p.info, base_);  // oriented, full size
  const int64_t H = full[0], W = full[1];
  const CropWindow2D win = window(ws, i, H, W);
  if (win.h <= 0 || win.w <= 0 || win.y < 0 || win.x < 0 || win.y + win.h > H || win.x + win.w > W)
    fail(ErrorKind::kInvalidArgument,
         "the window of rows [" + std::to_string(win.y) + ", " + std::to_string(win.y + win.h) +
             ") and columns [" + std::to_string(win.x) + ", " + std::to_string(win.x + win.w) +
             ") is empty or reaches outside the " + std::to_string(H) + "x" + std::to_string(W) +
             " (HxW) image; keep the window inside the image");
  if (!resize_) {
    if (win.y != 0 || win.x != 0 || win.h != H || win.w != W)
      p.params.roi = codecs::Roi{win.y, win.x, win.y + win.h, win.x + win.w};
    return p;
  }
  // Fused resize: decode (maybe DCT-scaled) the window plus what the filter reaches around it,
  // then resample the window's exact (fractional, when scaled) extent.
  const int d = resize_->dct_downscale && p.info.format == codecs::ImageFormat::kJpeg
                    ? dct_scale_for(win.h, win.w, resize_->height, resize_->width) : 1;
  p.params.scale_denom = d;
  const Shape scaled = codecs::output_shape(p.info, p.params);
  const int64_t Hs = scaled[0], Ws = scaled[1];
  const int orientation =
      base_.apply_orientation && p.info.orientation >= 1 && p.info.orientation <= 8 ? p.info.orientation : 1;
  // A scaled axis covers ceil(extent / d) pixels; when the orientation reverses the axis, the
  // partial pixel comes first and shifts every position by the difference.
  const double off_y = flips_y(orientation) ? Hs - static_cast<double>(H) / d : 0.0;
  const double off_x = flips_x(orientation) ? Ws - static_cast<double>(W) / d : 0.0;
  const double fy0 = static_cast<double>(win.y) / d + off_y, fy1 = static_cast<double>(win.y + win.h) / d + off_y;
  const double fx0 = static_cast<double>(win.x) / d + off_x, fx1 = static_cast<double>(win.x + win.w) / d + off_x;
  const double ry = resample_reach(resize_->params, (fy1 - fy0) / resize_->height);
  const double rx = resample_reach(resize_->params, (fx1 - fx0) / resize_->width);
  const int64_t y0 = std::max<int64_t>(0, static_cast<int64_t>(std::floor(fy0 - ry)));
  const int64_t y1 = std::min<int64_t>(Hs, static_cast<int64_t>(std::ceil(fy1 + ry)));
  const int64_t x0 = std::max<int64_t>(0, static_cast<int64_t>(std::floor(fx0 - rx)));
  const int64_t x1 = std::min<int64_t>(Ws, static_cast<int64_t>(std::ceil(fx1 + rx)));
  p.params.roi = codecs::Roi{y0, x0, y1, x1};
  p.region = codecs::output_shape(p.info, p.params);
  p.src = kernels::ResampleRoi{fy0 - y0, fx0 - x0, fy1 - y0, fx1 - x0};
  return p;
}

std::vector<OutputDesc> ImageDecoderBase::setup(Workspace& ws) {
  OutputDesc d = plan_batch(ws, plans_);
  if (on_error() == OnError::kReplace && !resize_ && !mixed_backend_) decode_ahead(ws, d);
  return {d};
}

Error ImageDecoderBase::sample_error(const Error& e, const Batch& in, size_t i) const {
  const std::string context = "sample " + std::to_string(i) + describe_source(in, i);
  const std::string name = spec_.display_name(), msg = e.what();
  if (msg.rfind(name, 0) == 0) return Error(e.kind(), name + " [" + context + "]" + msg.substr(name.size()));
  return Error(e.kind(), name + ", " + context + ": " + msg);
}

OutputDesc ImageDecoderBase::plan_batch(Workspace& ws, std::vector<SamplePlan>& plans) {
  const Batch& in = ws.input(0);
  if (in.dtype() != DType::kUInt8)
    spec_.arg_error("input", std::string("must be encoded bytes (uint8), got ") + dtype_name(in.dtype()) + ".");
  plans.resize(in.size());
  OutputDesc d{dtype_, "HWC", {}};
  for (size_t i = 0; i < in.size(); ++i) {
    try {
      plans[i] = plan_sample(ws, static_cast<int64_t>(i), in.data<uint8_t>(i), in.sample_bytes(i));
      const SamplePlan& p = plans[i];
      if (p.src)
        d.shapes.push_back({resize_->height, resize_->width, p.region[2]});
      else
        d.shapes.push_back(codecs::output_shape(p.info, p.params));
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::kInternal || !ws.report_bad_sample(i, in[i].source, e.what()))
        throw sample_error(e, in, i);
      // Skipped samples never run (the iteration restarts); replaced ones get the fallback.
      plans[i] = SamplePlan{};
      plans[i].failed = true;
      d.shapes.push_back(fallback_shape());
    }
  }
  return d;
}

Shape ImageDecoderBase::fallback_shape() const {
  const int64_t c = base_.color == codecs::ColorOut::kGray ? 1 : 3;
  if (resize_) return {resize_->height, resize_->width, c};
  return {fallback_shape_[0], fallback_shape_[1], c};
}

// on_error='replace' without a fused resize: the output's shape depends on whether the data
// decodes, not only on the header (a truncated scan fails after the header gave a size), and
// shapes are fixed at setup. So the samples are decoded here, on the worker threads, into pool
// memory that run_sample then copies to the output; those that fail get the fallback's shape.
// The cost: one copy per image, and the batch's decoded images held once more until it runs.
void ImageDecoderBase::decode_ahead(Workspace& ws, OutputDesc& d) {
  const Batch& in = ws.input(0);
  const int64_t n = static_cast<int64_t>(in.size());
  const size_t elem = dtype_size(dtype_);
  std::vector<std::exception_ptr> errors(static_cast<size_t>(n));
  ws.thread_pool->parallel_for(n, [&](int64_t i, int) {
    SamplePlan& p = plans_[i];
    if (p.failed) return;
    const Shape& s = d.shapes[i];
    try {  // out of memory (the pool's cap) is not the sample's fault: it is raised, not replaced
      p.ahead = ws.host_pool->allocate(static_cast<size_t>(volume(s)) * elem);
    } catch (...) {
      errors[i] = std::current_exception();
      return;
    }
    try {
      decode_into(p, in.data<uint8_t>(i), in.sample_bytes(i), p.ahead.get(), s);
    } catch (const Error& e) {
      p.ahead.reset();
      if (e.kind() == ErrorKind::kInternal || !ws.report_bad_sample(i, in[i].source, e.what())) {
        errors[i] = std::make_exception_ptr(sample_error(e, in, i));
        return;
      }
      p.failed = true;
    } catch (...) {
      p.ahead.reset();
      errors[i] = std::current_exception();
    }
  });
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  for (int64_t i = 0; i < n; ++i)
    if (plans_[i].failed) d.shapes[i] = fallback_shape();
}

void ImageDecoderBase::run_sample(Workspace& ws, int64_t i, int) {
  const Batch& in = ws.input(0);
  Batch& out = ws.output(0);
  SamplePlan& p = plans_[i];
  if (p.failed) return fill_fallback(ws, i);
  if (p.ahead) {  // decoded at setup (decode_ahead)
    std::memcpy(out[i].data, p.ahead.get(), out.sample_bytes(i));
    p.ahead.reset();
    return;
  }
  if (on_error() == OnError::kReplace) {
    // Decode errors met now (a truncated scan under a fused resize, whose output shape does
    // not depend on the data) are replaced too; the executor handles 'skip'.
    try {
      decode_sample(ws, i);
    } catch (const Error& e) {
      if (e.kind() == ErrorKind::kInternal || !ws.report_bad_sample(i, in[i].source, e.what())) throw;
      fill_fallback(ws, i);
    }
    return;
  }
  decode_sample(ws, i);
}

void ImageDecoderBase::decode_sample(Workspace& ws, int64_t i) {
  const Batch& in = ws.input(0);
  Batch& out = ws.output(0);
  decode_into(plans_[i], in.data<uint8_t>(i), in.sample_bytes(i), out[i].data, out.shape(i));
}

// DALI 2.4's conversions, checked bit for bit on the ImageNet sample: YCbCr is ITU-R BT.601
// in studio range (Y 16..235, Cb/Cr 16..240) from the RGB pixels, each product in float32 and
// rounded half away from zero; FLOAT is the uint8 value times 1/255 (so 0..1); YCbCr in FLOAT
// is the same sums on those 0..1 RGB values, not rounded, with DALI's offsets 0.0625 and 0.5
// (16/256 and 128/256, so not exactly the 8-bit YCbCr / 255). INT8, INT16, INT32 and UINT32 are
// from_u8's.
kernels::cuda::YCbCrParams ImageDecoderBase::ycbcr_params(bool to_float) {
  constexpr float kY = 219.0f / 255.0f, kC = 224.0f / 255.0f;
  kernels::cuda::YCbCrParams p;
  p.y[0] = 0.299f * kY, p.y[1] = 0.587f * kY, p.y[2] = 0.114f * kY;
  p.cb[0] = 0.168736f * kC, p.cb[1] = 0.331264f * kC, p.cb[2] = 0.5f * kC;
  p.cr[0] = 0.5f * kC, p.cr[1] = 0.418688f * kC, p.cr[2] = 0.081312f * kC;
  p.y0 = to_float ? 0.0625f : 16.0f;
  p.c0 = to_float ? 0.5f : 128.0f;
  p.to_float = to_float;
  return p;
}

void ImageDecoderBase::convert_decoded(const uint8_t* src, void* dst, const Shape& s) const {
  const int64_t n = volume(s);
  const bool to_float = dtype_ == DType::kFloat32;
  constexpr float kNorm = 1.0f / 255.0f;
  if (!ycbcr_) {
    visit_dtype(dtype_, [&](auto t) {
      using T = decltype(t);
      T lut[256];
      for (int v = 0; v < 256; ++v) lut[v] = from_u8<T>(static_cast<uint8_t>(v));
      T* d = static_cast<T*>(dst);
      for (int64_t k = 0; k < n; ++k) d[k] = lut[src[k]];
    });
    return;
  }
  auto round_sat = [](float v) {
    const float r = std::trunc(v) + std::trunc(2.0f * (v - std::trunc(v)));
    return static_cast<uint8_t>(std::clamp(r, 0.0f, 255.0f));
  };
  const kernels::cuda::YCbCrParams p = ycbcr_params(to_float);
  for (int64_t k = 0; k < n; k += 3) {
    float r = src[k], g = src[k + 1], b = src[k + 2];
    if (to_float) r *= kNorm, g *= kNorm, b *= kNorm;
    const float y = r * p.y[0] + g * p.y[1] + b * p.y[2] + p.y0;
    const float cb = -r * p.cb[0] - g * p.cb[1] + b * p.cb[2] + p.c0;
    const float cr = r * p.cr[0] - g * p.cr[1] - b * p.cr[2] + p.c0;
    if (to_float) {
      float* f = static_cast<float*>(dst) + k;
      f[0] = y, f[1] = cb, f[2] = cr;
    } else {
      uint8_t* u = static_cast<uint8_t*>(dst) + k;
      u[0] = round_sat(y), u[1] = round_sat(cb), u[2] = round_sat(cr);
    }
  }
}

void ImageDecoderBase::decode_into(const SamplePlan& p, const uint8_t* data, size_t size,
                                   void* out_data, const Shape& s) {
  // YCbCr / FLOAT: decoded as uint8 (RGB) into a per-thread staging buffer, then converted
  thread_local std::vector<uint8_t> staging;
  void* decoded = out_data;
  if (converts()) {
    const size_t n = static_cast<size_t>(volume(s));
    if (staging.size() < n) staging.resize(n);
    decoded = staging.data();
  }
  auto run = [&](auto type_tag) {
    using T = decltype(type_tag);
    ImageView<T> dst(static_cast<T*>(decoded), s[0], s[1], s[2]);
    if (!p.src) {
      codecs::decode(data, size, p.info, p.params, dst);
      return;
    }
    // Per thread, grown to the largest region seen: the decoded window before resampling.
    thread_local std::vector<T> region;
    const size_t n = static_cast<size_t>(volume(p.region));
    if (region.size() < n) region.resize(n);
    ImageView<T> r(region.data(), p.region[0], p.region[1], p.region[2]);
    codecs::decode(data, size, p.info, p.params, r);
    kernels::ResampleParams rp = resize_->params;
    rp.roi = *p.src;
    kernels::resample(dst, ImageView<const T>(r.data, r.height, r.width, r.channels), rp);
  };
  if (dtype_ == DType::kUInt16) {
    run(uint16_t{});
  } else {
    run(uint8_t{});
    if (converts()) convert_decoded(staging.data(), out_data, s);
  }
}

void ImageDecoderBase::add_args(OpSchema& schema) {
  schema
      .arg({.name = "output_type", .type = ArgType::kImageType, .default_value = int64_t{0},
            .doc = "Color space of the output: RGB, BGR, GRAY, YCbCr (ITU-R BT.601, studio "
                   "range, as DALI) or ANY_DATA (the file's own channels)."})
      .arg({.name = "dtype", .type = ArgType::kDType, .default_value = int64_t{0},
            .doc = "Output element type: UINT8, UINT16 (16-bit PNGs kept exact), FLOAT (the "
                   "8-bit values scaled to 0..1, as DALI), or INT8, INT16, INT32, UINT32 (the "
                   "8-bit values scaled to 0..the type's largest value, as DALI)."})
      .arg({.name = "adjust_orientation", .type = ArgType::kBool, .default_value = true,
            .doc = "Rotate and flip as the image's EXIF orientation says."})
      .arg({.name = "use_fast_idct", .type = ArgType::kBool, .default_value = false,
            .doc = "JPEGs on the CPU: libjpeg's fast integer IDCT (JDCT_IFAST), quicker and less "
                   "exact, as DALI's CPU decoder. device='mixed' ignores it, as DALI does."})
      .arg({.name = "max_pixels", .type = ArgType::kInt, .default_value = int64_t{128000000},
            .doc = "stoker: refuse images with more pixels than this (checked from the header, "
                   "before any allocation).", .min = 1})
      .arg({.name = "fallback_shape", .type = ArgType::kIntList,
            .default_value = std::vector<int64_t>{1, 1},
            .doc = "stoker: (H, W) of the image that replaces a bad one under on_error='replace' "
                   "(whether its header or its data is bad; with a fused resize, the resize's "
                   "size). Its channels are 1 for GRAY, else 3.",
            .min = 1, .list_min = 2, .list_max = 2})
      .arg({.name = "fallback_value", .type = ArgType::kInt, .default_value = int64_t{0},
            .doc = "stoker: the pixel value of that replacement image.", .min = 0, .max = 65535});
  add_on_error_arg(schema, /*can_replace=*/true);
  // The mixed (GPU) backend's options, as DALI names them; the CPU backend ignores them.
  schema
      .arg({.name = "hw_decoder_load", .type = ArgType::kFloat, .default_value = 0.65,
            .doc = "device='mixed': the share of the JPEGs the GPU's hardware engines decode on an "
                   "A100 (the rest go to the CUDA cores at the same time); later GPUs' engines "
                   "take every JPEG they can.", .min = 0.0, .max = 1.0})
      .arg({.name = "jpeg_fancy_upsampling", .type = ArgType::kBool, .default_value = false,
            .doc = "device='mixed': interpolate chroma as the CPU decoder (libjpeg-turbo) does."})
      .arg({.name = "hybrid_huffman_threshold", .type = ArgType::kInt, .default_value = int64_t{1000000},
            .doc = "device='mixed': JPEGs with more pixels than this that decode on CUDA cores "
                   "(not on the hardware engines) have their Huffman decoding done on the GPU "
                   "instead of on a CPU thread.", .min = 0})
      .arg({.name = "device_memory_padding", .type = ArgType::kInt, .default_value = int64_t{16777216},
            .doc = "Accepted for DALI compatibility (stoker's pools size themselves)."})
      .arg({.name = "host_memory_padding", .type = ArgType::kInt, .default_value = int64_t{8388608},
            .doc = "Accepted for DALI compatibility (stoker's pools size themselves)."})
      .arg({.name = "device_memory_padding_jpeg2k", .type = ArgType::kInt, .default_value = int64_t{0},
            .doc = "Accepted for DALI compatibility."})
      .arg({.name = "host_memory_padding_jpeg2k", .type = ArgType::kInt, .default_value = int64_t{0},
            .doc = "Accepted for DALI compatibility."})
      .arg({.name = "preallocate_width_hint", .type = ArgType::kInt, .default_value = int64_t{0},
            .doc = "Accepted for DALI compatibility."})
      .arg({.name = "preallocate_height_hint", .type = ArgType::kInt, .default_value = int64_t{0},
            .doc = "Accepted for DALI compatibility."})
      .arg({.name = "affine", .type = ArgType::kBool, .default_value = true,
            .doc = "Accepted for DALI compatibility (stoker's threads are not pinned)."})
      .arg({.name = "split_stages", .type = ArgType::kBool, .default_value = false,
            .doc = "Accepted for DALI compatibility."})
      .arg({.name = "use_chunk_allocator", .type = ArgType::kBool, .default_value = false,
            .doc = "Accepted for DALI compatibility."});
}

void ImageDecoderBase::prepare_mixed() {
  // nvJPEG has no DCT-domain scaling on CUDA cores: the mixed decoders decode at full size.
  if (resize_) resize_->dct_downscale = false;
  if (converts()) {
    // FLOAT, INT8, INT16, INT32, UINT32 and YCbCr: decoded as uint8 RGB like any image, then
    // converted on the GPU (run_batch_mixed's last step) with the CPU's arithmetic: a table of
    // from_u8's 256 values, or the YCbCr sums in the same float32 operations.
    mixed_out_ = dtype_;
    mixed_ycbcr_ = ycbcr_;
    dtype_ = DType::kUInt8;
    ycbcr_ = false;
  }
  mixed_backend_ = true;  // no decode_ahead: the GPU decodes
}

STOKER_REGISTER_OP_NAMED(decoders_image, "decoders.image") {
  schema.doc("Decodes JPEG and PNG images to HWC pixels (libjpeg-turbo, libpng). EXIF orientation "
             "is applied unless adjust_orientation=False.")
      .inputs(1, 1, {"encoded"}).outputs(1);
  ImageDecoderBase::add_args(schema);
  schema.backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<ImageDecoderBase>(s); })
      STOKER_MIXED_DECODER_BACKEND(ImageDecoderBase);
}

}  // namespace stoker
