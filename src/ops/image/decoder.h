// The decoders.image family (image, image_crop, image_slice, image_random_crop): one base that
// reads headers at setup, asks the derived decoder for a window, and decodes only that window
// (the codec's roi), optionally resampled to a fixed size in the same pass.
//
// Windows are in the coordinates of the output image: after EXIF orientation (when applied),
// at full size. So decoders.image_crop(crop=c) equals decoders.image followed by crop(crop=c)
// up to the JPEG decoder's own rounding.
//
// The fused resize (a stoker extension of decoders.image_random_crop) may decode at 1/2, 1/4 or
// 1/8 of the size with libjpeg's DCT scaling, as long as the window then still has at least as
// many pixels as the output on both axes; the resampling then starts from fewer pixels.
#pragma once
#include <limits>
#include <memory>
#include <optional>
#include <vector>

#include "codecs/image_codec.h"
#include "core/convert.h"
#include "kernels/cpu/imgproc/resample.h"
#include "kernels/cuda/ycbcr_gpu.h"
#include "ops/image/random_crop_attr.h"
#include "pipeline/operator.h"

namespace stoker {

class ImageDecoderBase : public Operator {
 public:
  explicit ImageDecoderBase(const OpSpec& spec);

  bool setup_reads_input_data() const override { return true; }
  std::vector<OutputDesc> setup(Workspace& ws) override;
  void run_sample(Workspace& ws, int64_t sample, int thread) override;

  // The arguments of every image decoder: output_type, dtype, adjust_orientation, max_pixels.
  static void add_args(OpSchema& schema);

 protected:
  // The part of `sample` to output, in pixels of the oriented full-size image of `height` x
  // `width`; it must lie inside. Runs at setup, once per sample and iteration.
  virtual CropWindow2D window(Workspace& ws, int64_t sample, int64_t height, int64_t width);

  // Set by a derived decoder (in its constructor) to resample each window to a fixed size.
  struct FusedResize {
    int64_t height = 0, width = 0;
    kernels::ResampleParams params;
    bool dct_downscale = true;  // JPEG only: decode at 1/2, 1/4, 1/8 when the window allows
  };
  std::optional<FusedResize> resize_;

  // The 'mixed' backend (decoder_mixed.cc, CUDA builds only): the same planning, then nvJPEG
  // (hardware engines, then CUDA cores) for the JPEGs it takes and the CPU decoder for the rest,
  // in one device batch. MixedDecoder<Op> (decoder_mixed.h) makes a decoder's mixed twin.
  // prepare_batch_mixed() plans the batch (headers, windows) and picks a decoder for each
  // image; the executor may run it a stage early (Operator::prepare). run_batch_mixed() decodes.
  struct MixedBatch;
  void prepare_mixed();
  std::shared_ptr<MixedBatch> prepare_batch_mixed(Workspace& ws);
  void run_batch_mixed(Workspace& ws);
  void convert_mixed(Workspace& ws);
  // The mixed backend: images decoded so far by the JPEG engines, by nvJPEG on CUDA cores and
  // by the CPU, and how many of the GPU ones decoded just the window kept.
  std::vector<std::pair<std::string, int64_t>> mixed_counters() const;

 protected:
  struct SamplePlan {
    codecs::ImageInfo info;
    codecs::DecodeParams params;              // roi and scale of the decode
    std::optional<kernels::ResampleRoi> src;  // fused resize: the window in the decoded region
    Shape region;                             // fused resize: the decoded region (H, W, C)
    bool failed = false;                      // on_error: the header was bad; output the fallback
    std::shared_ptr<void> ahead;              // decoded at setup (decode_ahead), to copy out
  };
  // Error `e` of sample i, worded as the executor words errors of a sample, the operator named
  // once: "fn.decoders.image (train.py:3), sample 0 ('a.jpg'): corrupt JPEG: ...", and for an
  // error that names the operator already (an argument's) "fn.decoders.image_crop (train.py:3)
  // [sample 0 ('a.jpg')]: argument 'crop' ...". (It once said "fn.decoders.image_crop (...):
  // sample 0 ('a.jpg'): fn.decoders.image_crop (...): argument 'crop' ...".)
  Error sample_error(const Error& e, const Batch& in, size_t i) const;
  // on_error='replace': fills sample i with fallback_value.
  void fill_fallback(Workspace& ws, int64_t i) const;
  SamplePlan plan_sample(Workspace& ws, int64_t i, const uint8_t* data, size_t size);
  // Plans every sample of the batch into `plans`; returns the output's description.
  OutputDesc plan_batch(Workspace& ws, std::vector<SamplePlan>& plans);
  void decode_sample(Workspace& ws, int64_t i);
  // on_error='replace' (CPU, no fused resize): decodes every sample at setup, so that one whose
  // data turns out bad gets the fallback's shape. See decoder.cc.
  void decode_ahead(Workspace& ws, OutputDesc& d);
  Shape fallback_shape() const;
  bool mixed_backend_ = false;  // set by prepare_mixed()
  // The output type of a mixed decoder that decodes uint8 and converts after (prepare_mixed).
  DType mixed_out_ = DType::kNone;
  bool mixed_ycbcr_ = false;
  // The BT.601 studio-range factors convert_decoded uses (shared with the mixed decoders' kernel).
  static kernels::cuda::YCbCrParams ycbcr_params(bool to_float);
  // output_type=YCbCr or dtype=FLOAT: the image is decoded as RGB / uint8 into a staging buffer
  // and converted into the output (convert_decoded).
  bool converts() const { return ycbcr_ || (dtype_ != DType::kUInt8 && dtype_ != DType::kUInt16); }
  // A decoded 8-bit value in another type, as DALI 2.4 converts it (checked on all 256
  // values): v * (1/255) in float32 (FLOAT stops there), then times the type's largest value in
  // float32, rounded to nearest even and saturated.
  template <typename T>
  static T from_u8(uint8_t v) {
    const float f = static_cast<float>(v) * (1.0f / 255.0f);
    if constexpr (std::is_floating_point_v<T>) {
      return static_cast<T>(f);
    } else if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      return convert_sat<T>(f * static_cast<float>(std::numeric_limits<T>::max()));
    } else {
      return T(f);
    }
  }
  void convert_decoded(const uint8_t* src, void* dst, const Shape& s) const;
  // Decodes sample i (planned in `p`) into dst, of shape s and type dtype_.
  void decode_into(const SamplePlan& p, const uint8_t* data, size_t size, void* dst, const Shape& s);
  bool ycbcr_ = false;

  codecs::DecodeParams base_;
  DType dtype_;
  std::vector<int64_t> fallback_shape_;  // H, W of the replacement image
  int64_t fallback_value_ = 0;
  std::vector<SamplePlan> plans_;
  struct MixedState;
  std::shared_ptr<MixedState> mixed_;  // the nvJPEG decoder and its options (mixed backend)
};

// The largest DCT scale denominator (1, 2, 4 or 8) at which a window of h x w stored pixels
// still has at least out_h x out_w pixels.
int dct_scale_for(int64_t h, int64_t w, int64_t out_h, int64_t out_w);

}  // namespace stoker
