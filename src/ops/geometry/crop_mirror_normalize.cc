// crop_mirror_normalize: crop, horizontal mirror, per-channel (x - mean) / std * scale + shift,
// layout change (HWC -> CHW), channel padding and type conversion fused into one pass over the
// output. The per-channel factors are folded into out = x * mul + add (mul = scale / std,
// add = shift - mean * mul) once per sample, so the inner loop is a multiply and an add.
#include <algorithm>
#include <cmath>

#include "ops/geometry/geometry_common.h"

namespace stoker {
namespace {

using geometry::axis_index;
using geometry::layout_repr;

class CropMirrorNormalize : public geometry::SliceOperator {
 public:
  explicit CropMirrorNormalize(const OpSpec& spec)
      : SliceOperator(spec), crop_(spec_), policy_(geometry::out_of_bounds_policy(spec)) {
    const char* dtype_arg = spec.has("output_dtype") ? "output_dtype" : "dtype";  // old name first
    dtype_ = static_cast<DType>(spec.get<int64_t>(dtype_arg));
    if (dtype_ != DType::kFloat32 && dtype_ != DType::kFloat16 && dtype_ != DType::kUInt8 &&
        dtype_ != DType::kInt8)
      spec.arg_error(dtype_arg, std::string("must be FLOAT, FLOAT16, UINT8 or INT8, got ") +
                                  dtype_name(dtype_) + ".");
    output_layout_ = spec.get<std::string>("output_layout");
    pad_output_ = spec.get<bool>("pad_output");
    scale_ = spec.get<double>("scale");
    shift_ = spec.get<double>("shift");
    fill_ = spec.get<std::vector<double>>("fill_values");
    if (!spec.is_tensor_arg("mean") && !spec.is_tensor_arg("std"))
      check_mean_std(spec.get<std::vector<double>>("mean"), spec.get<std::vector<double>>("std"), -1, -1);
  }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const std::string& layout = in.layout();
    int c_axis = axis_index(layout, 'C');
    if (c_axis < 0 || axis_index(layout, 'H') < 0 || axis_index(layout, 'W') < 0)
      fail(ErrorKind::kInvalidArgument,
           "expects images with a layout that has H, W and C axes (HWC, CHW, FHWC, DHWC, ...), got " +
               layout_repr(layout) + ". Decoded images are HWC; a layout can be set with "
               "fn.transpose(..., output_layout=...).");
    if (in.dtype() == DType::kBool)
      fail(ErrorKind::kTypeMismatch, "expects numeric input, got bool.");
    std::string out_layout = resolve_layout(layout);
    std::vector<int> perm(layout.size());
    for (size_t k = 0; k < out_layout.size(); ++k) perm[k] = axis_index(layout, out_layout[k]);

    const int64_t n = static_cast<int64_t>(in.size());
    args_.assign(n, {});
    OutputDesc desc{dtype_, out_layout, {}};
    for (int64_t i = 0; i < n; ++i) {
      const Shape& shape = in.shape(i);
      kernels::SliceArgs& a = args_[i];
      a.in_shape = shape;
      crop_.compute(ws, i, shape, layout, a.anchor, a.shape);
      geometry::apply_out_of_bounds(policy_, shape, a.anchor, a.shape, "the crop window");
      const int64_t channels = shape[c_axis];
      if (pad_output_) a.shape[c_axis] = next_pow2(channels);
      a.flip.assign(shape.size(), false);
      if (ws.scalar_arg("mirror", i, 0) != 0) a.flip[axis_index(layout, 'W')] = true;
      a.perm = perm;
      a.channel_dim = c_axis;
      geometry::check_fill_values(spec_, "fill_values", fill_, channels);
      a.fill = fill_;
      std::vector<double> mean = ws.list_arg("mean", i), stddev = ws.list_arg("std", i);
      check_mean_std(mean, stddev, channels, i);
      size_t nc = std::max(mean.size(), stddev.size());
      a.mul.resize(nc);
      a.add.resize(nc);
      for (size_t c = 0; c < nc; ++c) {
        double m = mean[mean.size() == 1 ? 0 : c], s = stddev[stddev.size() == 1 ? 0 : c];
        double mul = scale_ / s;
        a.mul[c] = static_cast<float>(mul);
        a.add[c] = static_cast<float>(shift_ - m * mul);
      }
      desc.shapes.push_back(kernels::slice_output_shape(a));
    }
    return {desc};
  }


 private:
  static int64_t next_pow2(int64_t c) {
    int64_t p = 1;
    while (p < c) p <<= 1;
    return p;
  }

  // DALI's output_layout is given for one image ("CHW"); sequences and volumes keep their F
  // and D axes where the input has them.
  std::string resolve_layout(const std::string& in) const {
    std::string r = output_layout_.empty() ? in : output_layout_;
    if (axis_index(in, 'D') >= 0 && axis_index(r, 'D') < 0) {
      int h = axis_index(r, 'H');
      if (h >= 0) r.insert(r.begin() + h, 'D');
    }
    if (axis_index(in, 'F') >= 0 && axis_index(r, 'F') < 0) r = "F" + r;
    std::string a = in, b = r;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    if (a != b)
      spec_.arg_error("output_layout", "must be a permutation of the input layout " + layout_repr(in) +
                                           ", got '" + output_layout_ + "'.");
    return r;
  }

  // channels < 0: checked before the input is known.
  void check_mean_std(const std::vector<double>& mean, const std::vector<double>& stddev,
                      int64_t channels, int64_t sample) const {
    std::string where = sample >= 0 ? " for sample " + std::to_string(sample) : "";
    if (mean.empty()) spec_.arg_error("mean", "must not be empty" + where + ".");
    if (stddev.empty()) spec_.arg_error("std", "must not be empty" + where + ".");
    if (mean.size() > 1 && stddev.size() > 1 && mean.size() != stddev.size())
      spec_.arg_error("std", "has " + std::to_string(stddev.size()) + " values but 'mean' has " +
                                 std::to_string(mean.size()) + where +
                                 "; give as many, or one value for all channels.");
    for (double s : stddev)
      if (s == 0.0 || !std::isfinite(s))
        spec_.arg_error("std", "must be nonzero and finite, got " + std::to_string(s) + where + ".");
    if (channels >= 0) {
      auto check = [&](const char* name, size_t n) {
        if (n != 1 && static_cast<int64_t>(n) != channels)
          spec_.arg_error(name, "has " + std::to_string(n) + " values, but the input has " +
                                    std::to_string(channels) + " channel(s)" + where +
                                    "; give one value per channel, or one for all.");
      };
      check("mean", mean.size());
      check("std", stddev.size());
    }
  }

  geometry::CropWindow crop_;
  geometry::OutOfBounds policy_;
  DType dtype_;
  std::string output_layout_;
  bool pad_output_ = false;
  double scale_ = 1, shift_ = 0;
  std::vector<double> fill_;
};

}  // namespace

STOKER_REGISTER_OP_NAMED(crop_mirror_normalize, "crop_mirror_normalize") {
  schema
      .doc("Crops, mirrors, normalises, changes the layout (HWC to CHW by default) and converts "
           "the type of images in one pass: out = scale * (in - mean) / std + shift. Without crop "
           "arguments only mirroring and normalisation happen. Sequences (FHWC) get the same "
           "transform on every frame; volumes (DHWC) are cropped in depth too.")
      .inputs(1, 1, {"input"})
      .outputs(1)
      .input_layouts({"HWC", "CHW", "DHWC", "CDHW", "FHWC", "FCHW", "CFHW", "FDHWC", "FCDHW", "CFDHW"})
      .arg({.name = "dtype", .type = ArgType::kDType, .default_value = int64_t{static_cast<int>(DType::kFloat32)},
            .doc = "Output type: FLOAT, FLOAT16, INT8 or UINT8 (integers round half to even and saturate)."})
      .arg({.name = "output_dtype", .type = ArgType::kDType, .optional = true,
            .doc = "Old name of dtype.", .deprecated_alias = true, .alias_of = "dtype"})
      .arg({.name = "image_type", .type = ArgType::kImageType, .optional = true,
            .doc = "Accepted for old DALI code and ignored, as in DALI (which no longer uses it)."})
      .arg({.name = "output_layout", .type = ArgType::kString, .default_value = std::string("CHW"),
            .doc = "Layout of the output, a permutation of the input's (F and D axes are kept where "
                   "the input has them)."})
      .arg({.name = "pad_output", .type = ArgType::kBool, .default_value = false,
            .doc = "Pad the channels to the next power of two (3 -> 4) with fill_values."})
      .arg({.name = "mirror", .type = ArgType::kInt, .default_value = int64_t{0},
            .doc = "If nonzero, the image is flipped horizontally.", .tensor = true})
      .arg({.name = "mean", .type = ArgType::kFloatList, .default_value = std::vector<double>{0.0},
            .doc = "Mean pixel values: one per channel, or one for all.", .tensor = true, .list_min = 1})
      .arg({.name = "std", .type = ArgType::kFloatList, .default_value = std::vector<double>{1.0},
            .doc = "Standard deviations: one per channel, or one for all.", .tensor = true, .list_min = 1})
      .arg({.name = "scale", .type = ArgType::kFloat, .default_value = 1.0,
            .doc = "Multiplies the result (helps integer outputs use their range)."})
      .arg({.name = "shift", .type = ArgType::kFloat, .default_value = 0.0,
            .doc = "Added to the scaled result."});
  geometry::add_crop_args(schema);
  geometry::add_out_of_bounds_args(schema);
  schema.backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<CropMirrorNormalize>(s); })
      STOKER_SLICE_GPU_BACKEND(CropMirrorNormalize);
}

}  // namespace stoker
