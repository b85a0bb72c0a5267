// warp_affine and rotate: one affine output-to-input map per sample, sampled by the shared warp
// kernel. Sequences (FHWC) use the same map for every frame. Volumes (DHWC, and sequences of
// them, FDHWC) take a 3x4 map and the 3-D sampler (CPU only).
#include <array>
#include <cmath>
#include <cstdio>
#include <optional>

#include "core/repr.h"
#include "kernels/cuda/warp_gpu.h"
#include "ops/generic/gpu_twin.h"
#include "ops/warp/warp_common.h"
#include "pipeline/gpu_batch.h"

namespace stoker {
namespace {

using warp_ops::ImageDims;

const char* kInterpDoc = "Type of interpolation used: INTERP_NN or INTERP_LINEAR (DALI's choices), "
                         "or INTERP_CUBIC (OpenCV's bicubic, a = -0.75).";
const char* kFillDoc = "Value used to fill areas that are outside the source image. If a value is "
                       "not specified, the source coordinates are clamped and the border pixel is "
                       "repeated.";
const char* kSizeDoc = "Output size (height, width), or (depth, height, width) for volumes, in "
                       "pixels; non-integer sizes are rounded to the nearest integer. The channel "
                       "dimension is excluded.";

// A volume sample seen as frames of (depth, height, width, channels).
struct VolumeDims {
  int64_t frames = 1;
  kernels::VolumeDims v;
};

VolumeDims volume_dims(const Shape& s) {
  VolumeDims d;
  size_t k = 0;
  if (s.size() == 5) d.frames = s[k++];
  d.v = kernels::VolumeDims{s[k], s[k + 1], s[k + 2], s[k + 3]};
  return d;
}
const char* kDtypeDoc = "Output data type: the input type (default) or float; a float input may "
                        "be written to any type.";

class AffineWarp : public Operator {
 public:
  AffineWarp(const OpSpec& spec, bool rotate) : Operator(spec), rotate_(rotate) {
    if (spec.has("fill_value")) {
      border_.clamp = false;
      border_.fill = spec.get<float>("fill_value");
    }
    if (spec.has("interp_type")) warp_ops::warp_interp(spec, spec.get<double>("interp_type"));
    if (spec.has("size")) {
      auto s = spec.get<std::vector<double>>("size");
      if (!s.empty()) check_size(s, -1, s.size() == 3 ? 3 : 2);
    }
    if (rotate_) {
      keep_size_ = spec.get<bool>("keep_size");
      if (spec.has("axis")) const_axis_ = check_axis(spec.get<std::vector<double>>("axis"), -1);
      return;
    }
    inverse_map_ = spec.get<bool>("inverse_map");
    bool as_input = spec.num_inputs > 1;
    bool as_arg = spec.has("matrix") || spec.is_tensor_arg("matrix");
    if (as_input && as_arg)
      spec.arg_error("matrix", "was given both as an argument and as the second input; give one.");
    if (!as_input && !as_arg)
      spec.arg_error("matrix", "is required: give the 2x3 output-to-input matrix [M11, M12, M13, "
                               "M21, M22, M23] as this argument or as the second input.");
    if (spec.has("matrix")) {
      auto m = spec.get<std::vector<double>>("matrix");
      if (m.size() == 12)
        const_matrix3_ = to_map3(m, -1);
      else
        const_matrix_ = to_map(m, -1);
    }
  }

  // setup() reads the matrices (shared by both backends), also when they come as input 1.
  bool setup_reads_input_data() const override { return !rotate_ && spec_.num_inputs > 1; }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    OutputDesc d;
    volume_ = (in.layout() == "DHWC" && in.ndim() == 4) || (in.layout() == "FDHWC" && in.ndim() == 5);
    if (!volume_ && in.layout().find('D') != std::string::npos)
      fail(ErrorKind::kInvalidArgument,
           spec_.display_name() + ": input 0 must be volumes with layout DHWC or sequences of "
                                  "volumes with layout FDHWC (channels last), got layout '" +
               in.layout() + "' with " + std::to_string(in.ndim()) +
               " dimensions. Transpose channel-first volumes (CDHW) to DHWC first.");
    d.layout = volume_ ? in.layout() : warp_ops::image_layout(spec_, in, true);
    d.dtype = warp_ops::output_dtype(spec_, in.dtype());
    if (volume_) return setup_volumes(ws, d);
    if (!rotate_ && ws.inputs.size() > 1 && ws.input(1).size() != in.size())
      fail(ErrorKind::kInvalidArgument,
           spec_.display_name() + ": input 1 (mtx) has " + std::to_string(ws.input(1).size()) +
               " samples but input 0 has " + std::to_string(in.size()) + "; give one matrix per sample.");
    if (!rotate_ && ws.inputs.size() > 1 && ws.input(1).memory() == MemoryKind::kDevice)
      fail(ErrorKind::kInvalidArgument,
           spec_.display_name() + ": input 1 (mtx) must be a CPU tensor (the matrices are read when "
                                  "the launch is set up); give it without .gpu().");
    for (size_t i = 0; i < in.size(); ++i) {
      ImageDims dims = warp_ops::image_dims(in.shape(i));
      int64_t h = dims.height, w = dims.width;
      std::vector<double> size = ws.has_arg("size") ? ws.list_arg("size", i) : std::vector<double>{};
      if (!size.empty()) {
        check_size(size, static_cast<int64_t>(i), 2);
        h = std::max<int64_t>(static_cast<int64_t>(std::round(size[0])), 1);
        w = std::max<int64_t>(static_cast<int64_t>(std::round(size[1])), 1);
      } else if (rotate_ && !keep_size_) {
        double angle = angle_for(ws, static_cast<int64_t>(i));
        kernels::rotated_canvas_size(dims.height, dims.width, angle, &h, &w);
      }
      d.shapes.push_back(warp_ops::with_hw(in.shape(i), h, w));
    }
    // Each sample's map and interpolation, computed here so that both backends share them.
    maps_.assign(in.size(), {});
    interps_.assign(in.size(), kernels::WarpInterp::kLinear);
    for (size_t k = 0; k < in.size(); ++k) {
      const int64_t i = static_cast<int64_t>(k);
      ImageDims di = warp_ops::image_dims(in.shape(k)), dout = warp_ops::image_dims(d.shapes[k]);
      maps_[k] = rotate_ ? kernels::rotation_map(di.height, di.width, dout.height, dout.width,
                                                 angle_for(ws, i))
                         : matrix_for(ws, i);
      interps_[k] = warp_ops::warp_interp(spec_, ws.scalar_arg("interp_type", i, 1));
    }
    return {d};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const Batch& in = ws.input(0);
    Batch& out = ws.output(0);
    if (volume_) {
      const VolumeDims di = volume_dims(in.shape(i)), dout = volume_dims(out.shape(i));
      const int64_t in_n = di.v.depth * di.v.height * di.v.width * di.v.channels;
      const int64_t out_n = dout.v.depth * dout.v.height * dout.v.width * dout.v.channels;
      warp_ops::visit_out_in(out.dtype(), in.dtype(), [&](auto to, auto ti) {
        using Out = decltype(to);
        using In = decltype(ti);
        kernels::WarpBorder border = border_;
        border.fill = static_cast<float>(convert_sat<Out>(border.fill));  // as DALI: fill in the output type
        for (int64_t f = 0; f < di.frames; ++f)
          kernels::warp_affine_3d(out.data<Out>(i) + f * out_n, dout.v, in.data<In>(i) + f * in_n,
                                  di.v, maps3_[i], interps_[i], border);
      });
      return;
    }
    ImageDims di = warp_ops::image_dims(in.shape(i)), dout = warp_ops::image_dims(out.shape(i));
    const kernels::AffineMap2D& map = maps_[i];
    const kernels::WarpInterp interp = interps_[i];
    warp_ops::visit_out_in(out.dtype(), in.dtype(), [&](auto to, auto ti) {
      using Out = decltype(to);
      using In = decltype(ti);
      kernels::WarpBorder border = border_;
      border.fill = static_cast<float>(convert_sat<Out>(border.fill));  // as DALI: fill in the output type
      const In* src = in.data<In>(i);
      Out* dst = out.data<Out>(i);
      for (int64_t f = 0; f < di.frames; ++f)
        kernels::warp_affine(warp_ops::frame_view(dst, dout, f), warp_ops::frame_view(src, di, f), map,
                             interp, border);
    });
  }

  void run_gpu(Workspace& ws, const std::vector<OutputDesc>& descs) {
    require_device_input(ws);
    const Batch& in = ws.input(0);
    const OutputDesc& d = descs[0];
    ws.outputs.assign(1, allocate_device_batch(ws, d.dtype, d.shapes, d.layout));
    Batch& out = ws.outputs[0];
    float fill = 0.0f;  // as DALI: the fill value in the output type
    visit_dtype(d.dtype, [&](auto t) { fill = static_cast<float>(convert_sat<decltype(t)>(border_.fill)); });
    if (volume_) {
      std::vector<kernels::cuda::Warp3DJob> jobs(in.size());
      for (size_t i = 0; i < in.size(); ++i) {
        const VolumeDims di = volume_dims(in.shape(i)), dout = volume_dims(out.shape(i));
        kernels::cuda::Warp3DJob& j = jobs[i];
        j.in = in[i].data;
        j.out = out[i].data;
        j.frames = di.frames;
        j.in_dims = di.v;
        j.out_dims = dout.v;
        j.map = maps3_[i];
        j.interp = interps_[i];
        j.clamp = border_.clamp;
        j.fill = fill;
      }
      kernels::cuda::warp3d_gpu(ws, d.dtype, in.dtype(), jobs);
      return;
    }
    std::vector<kernels::cuda::WarpJob> jobs(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      ImageDims di = warp_ops::image_dims(in.shape(i)), dout = warp_ops::image_dims(out.shape(i));
      kernels::cuda::WarpJob& j = jobs[i];
      j.in = in[i].data;
      j.out = out[i].data;
      j.frames = di.frames;
      j.in_h = di.height;
      j.in_w = di.width;
      j.out_h = dout.height;
      j.out_w = dout.width;
      j.channels = di.channels;
      j.kind = kernels::cuda::WarpMapKind::kAffine;
      j.affine = maps_[i];
      j.interp = interps_[i];
      j.border = border_;
      j.border.fill = fill;
    }
    kernels::cuda::warp_gpu(ws, d.dtype, in.dtype(), jobs);
  }

 private:
  // `ndim`: the spatial axes of the data (2 images, 3 volumes).
  void check_size(const std::vector<double>& s, int64_t sample, int ndim) const {
    std::string where = sample < 0 ? "" : " for sample " + std::to_string(sample);
    if (ndim == 2 && s.size() == 3)
      spec_.arg_error("size", "takes 0 to 2 values, got 3" + where + ": images (HWC, FHWC) take "
                              "(height, width); (depth, height, width) is for volumes (DHWC, FDHWC).");
    if (ndim == 3 && s.size() != 3)
      spec_.arg_error("size", "takes 3 values (depth, height, width) for volumes (DHWC, FDHWC)" +
                                  where + ", got " + std::to_string(s.size()) + ".");
    if (s.size() != static_cast<size_t>(ndim))
      spec_.arg_error("size", "takes 2 values (height, width)" + where + ", got " +
                                  std::to_string(s.size()) + ".");
    std::string got;
    for (double v : s) got += (got.empty() ? "" : ", ") + num(v);
    for (double v : s)
      if (!(v > 0) || !std::isfinite(v) || v > 1e9)
        spec_.arg_error("size", "must be positive" + where + ", got (" + got + ").");
  }

  // The rotation axis (x, y, z): three finite values, not all zero.
  std::array<double, 3> check_axis(const std::vector<double>& a, int64_t sample) const {
    std::string where = sample < 0 ? "" : " for sample " + std::to_string(sample);
    if (a.size() != 3)
      spec_.arg_error("axis", "takes 3 values (x, y, z)" + where + ", got " + std::to_string(a.size()) +
                                  "; e.g. axis=[0, 0, 1] turns each slice of a volume in its plane.");
    if (!std::isfinite(a[0]) || !std::isfinite(a[1]) || !std::isfinite(a[2]) ||
        (a[0] == 0 && a[1] == 0 && a[2] == 0))
      spec_.arg_error("axis", "must be a finite, non-zero vector" + where + ", got (" + num(a[0]) +
                                  ", " + num(a[1]) + ", " + num(a[2]) + ").");
    return {a[0], a[1], a[2]};
  }

  std::array<double, 3> axis_for(const Workspace& ws, int64_t i) const {
    if (spec_.is_tensor_arg("axis")) return check_axis(ws.list_arg("axis", i), i);
    if (!const_axis_)
      spec_.arg_error("axis", "is required for volumes (DHWC, FDHWC): give the rotation axis as 3 "
                              "values (x, y, z), e.g. axis=[0, 0, 1] to turn each slice in its plane.");
    return *const_axis_;
  }

  std::vector<OutputDesc> setup_volumes(Workspace& ws, OutputDesc& d) {
    const Batch& in = ws.input(0);
    const size_t n = in.size();
    if (!rotate_ && ws.inputs.size() > 1 && ws.input(1).size() != n)
      fail(ErrorKind::kInvalidArgument,
           spec_.display_name() + ": input 1 (mtx) has " + std::to_string(ws.input(1).size()) +
               " samples but input 0 has " + std::to_string(n) + "; give one matrix per sample.");
    maps3_.assign(n, {});
    interps_.assign(n, kernels::WarpInterp::kLinear);
    for (size_t k = 0; k < n; ++k) {
      const int64_t i = static_cast<int64_t>(k);
      const double interp = ws.scalar_arg("interp_type", i, 1);
      const auto it = static_cast<InterpType>(static_cast<int>(interp));
      if (it == InterpType::kNN || it == InterpType::kLinear)
        interps_[k] = warp_ops::warp_interp(spec_, interp);
      else
        spec_.arg_error("interp_type", "must be INTERP_NN or INTERP_LINEAR for volumes (DHWC, "
                                       "FDHWC), as DALI's 3-D warps, got " +
                                           std::to_string(static_cast<int>(interp)) + ".");
      const VolumeDims di = volume_dims(in.shape(k));
      VolumeDims dout = di;
      std::vector<double> size = ws.has_arg("size") ? ws.list_arg("size", i) : std::vector<double>{};
      std::array<double, 3> axis{0, 0, 1};
      if (rotate_) axis = axis_for(ws, i);
      if (!size.empty()) {
        check_size(size, i, 3);
        dout.v.depth = std::max<int64_t>(static_cast<int64_t>(std::round(size[0])), 1);
        dout.v.height = std::max<int64_t>(static_cast<int64_t>(std::round(size[1])), 1);
        dout.v.width = std::max<int64_t>(static_cast<int64_t>(std::round(size[2])), 1);
      } else if (rotate_ && !keep_size_) {
        kernels::rotated_canvas_size_3d(di.v, axis.data(), angle_for(ws, i), &dout.v.depth,
                                        &dout.v.height, &dout.v.width);
      }
      Shape o = in.shape(k);
      const size_t f = o.size() == 5 ? 1 : 0;
      o[f] = dout.v.depth;
      o[f + 1] = dout.v.height;
      o[f + 2] = dout.v.width;
      d.shapes.push_back(o);
      maps3_[k] = rotate_ ? kernels::rotation_map_3d(di.v, dout.v, axis.data(), angle_for(ws, i))
                          : matrix3_for(ws, i);
    }
    return {d};
  }

  kernels::AffineMap3D to_map3(const std::vector<double>& m, int64_t sample) const {
    std::string where = sample < 0 ? "" : " for sample " + std::to_string(sample);
    if (m.size() != 12)
      spec_.arg_error("matrix", "takes 12 values for volumes (DHWC, FDHWC), a 3x4 matrix [M11, M12, "
                                "M13, M14, M21, ..., M34] in (x, y, z) = (width, height, depth) "
                                "order" + where + ", got " + std::to_string(m.size()) + ".");
    kernels::AffineMap3D a;
    for (int k = 0; k < 12; ++k) {
      if (!std::isfinite(m[k])) spec_.arg_error("matrix", "must be finite" + where + ".");
      a.m[k] = m[k];
    }
    if (!inverse_map_) {
      kernels::AffineMap3D inv;
      if (!kernels::invert_affine(a, &inv))
        spec_.arg_error("matrix", "is singular" + where + "; with inverse_map=False it maps input to "
                                  "output and must be invertible.");
      a = inv;
    }
    return a;
  }

  kernels::AffineMap3D matrix3_for(const Workspace& ws, int64_t i) const {
    if (!spec_.is_tensor_arg("matrix") && ws.inputs.size() < 2) {
      if (const_matrix3_) return *const_matrix3_;
      return to_map3(spec_.get<std::vector<double>>("matrix"), -1);  // the 2-D matrix: says so
    }
    if (ws.inputs.size() > 1) {
      const Batch& mb = ws.input(1);
      if (volume(mb.shape(i)) != 12)
        fail(ErrorKind::kInvalidArgument,
             spec_.display_name() + ": input 1 (mtx) must hold a 3x4 matrix per sample for volumes "
                                    "(DHWC, FDHWC), got shape " + to_string(mb.shape(i)) +
                 " for sample " + std::to_string(i) + ".");
      std::vector<double> m(12);
      visit_dtype(mb.dtype(), [&](auto t) {
        using T = decltype(t);
        const T* p = mb.data<T>(i);
        for (int k = 0; k < 12; ++k) m[k] = static_cast<double>(p[k]);
      });
      return to_map3(m, i);
    }
    return to_map3(ws.list_arg("matrix", i), i);
  }

  double angle_for(const Workspace& ws, int64_t i) const {
    double a = ws.scalar_arg("angle", i, 0.0);
    if (!std::isfinite(a))
      spec_.arg_error("angle", "must be a finite number of degrees, got " + num(a) + " for sample " +
                                   std::to_string(i) + ".");
    return a;
  }

  kernels::AffineMap2D to_map(const std::vector<double>& m, int64_t sample) const {
    std::string where = sample < 0 ? "" : " for sample " + std::to_string(sample);
    if (m.size() != 6)
      spec_.arg_error("matrix", "takes 6 values, a 2x3 matrix [M11, M12, M13, M21, M22, M23]" + where +
                                    (m.size() == 12 ? ", for images (HWC, FHWC); 12 values are a "
                                                      "3x4 matrix for volumes (DHWC)" : "") +
                                    ", got " + std::to_string(m.size()) + ".");
    kernels::AffineMap2D a;
    for (int k = 0; k < 6; ++k) {
      if (!std::isfinite(m[k])) spec_.arg_error("matrix", "must be finite" + where + ".");
      a.m[k] = m[k];
    }
    if (!inverse_map_) {
      kernels::AffineMap2D inv;
      if (!kernels::invert_affine(a, &inv))
        spec_.arg_error("matrix", "is singular" + where + "; with inverse_map=False it maps input to "
                                  "output and must be invertible.");
      a = inv;
    }
    return a;
  }

  kernels::AffineMap2D matrix_for(const Workspace& ws, int64_t i) const {
    if (const_matrix_ && !spec_.is_tensor_arg("matrix")) return *const_matrix_;
    if (const_matrix3_ && !spec_.is_tensor_arg("matrix"))
      return to_map(spec_.get<std::vector<double>>("matrix"), -1);  // 12 values: says so
    if (ws.inputs.size() > 1) {
      const Batch& mb = ws.input(1);
      int64_t n = volume(mb.shape(i));
      if (n != 6)
        fail(ErrorKind::kInvalidArgument,
             spec_.display_name() + ": input 1 (mtx) must hold a 2x3 matrix per sample, got shape " +
                 to_string(mb.shape(i)) + " for sample " + std::to_string(i) + ".");
      std::vector<double> m(6);
      visit_dtype(mb.dtype(), [&](auto t) {
        using T = decltype(t);
        const T* p = mb.data<T>(i);
        for (int k = 0; k < 6; ++k) m[k] = static_cast<double>(p[k]);
      });
      return to_map(m, i);
    }
    return to_map(ws.list_arg("matrix", i), i);
  }

  bool rotate_;
  bool keep_size_ = false;
  bool inverse_map_ = true;
  kernels::WarpBorder border_;
  std::optional<kernels::AffineMap2D> const_matrix_;
  std::optional<kernels::AffineMap3D> const_matrix3_;
  std::optional<std::array<double, 3>> const_axis_;
  bool volume_ = false;
  std::vector<kernels::AffineMap2D> maps_;
  std::vector<kernels::AffineMap3D> maps3_;
  std::vector<kernels::WarpInterp> interps_;
};

void common_warp_args(OpSchema& s) {
  s.arg({.name = "size", .type = ArgType::kFloatList, .optional = true, .doc = kSizeDoc,
         .tensor = true, .list_min = 0, .list_max = 3})
      .arg({.name = "fill_value", .type = ArgType::kFloat, .optional = true, .doc = kFillDoc})
      .arg({.name = "interp_type", .type = ArgType::kInterpType, .default_value = int64_t{1},
            .doc = kInterpDoc, .tensor = true})
      .arg({.name = "dtype", .type = ArgType::kDType, .optional = true, .doc = kDtypeDoc});
}

}  // namespace

STOKER_REGISTER_OP_NAMED(warp_affine, "warp_affine") {
  schema.doc("Applies an affine transformation to the images. Output pixel (x, y) (pixel centres at "
             "+0.5) reads the source at (M11 x + M12 y + M13, M21 x + M22 y + M23), where [0, 0] "
             "is the corner of the first pixel. Sequences (FHWC) use the same matrix for every frame. "
             "Volumes (DHWC, FDHWC; CPU) take a 3x4 matrix over (x, y, z) = (width, height, depth) "
             "and INTERP_NN or INTERP_LINEAR.")
      .inputs(1, 2, {"data", "mtx"}).outputs(1).input_layouts({"HWC", "FHWC", "DHWC", "FDHWC"})
      .arg({.name = "matrix", .type = ArgType::kFloatList, .optional = true,
            .doc = "The 2x3 transform matrix, flat: (M11, M12, M13, M21, M22, M23). With inverse_map "
                   "(default) it maps output to input coordinates, as OpenCV's warpAffine with "
                   "WARP_INVERSE_MAP; otherwise input to output, and it is inverted. Instead of this "
                   "argument, the matrix can be the second input.",
            .tensor = true})
      .arg({.name = "inverse_map", .type = ArgType::kBool, .default_value = true,
            .doc = "True (default): the matrix maps output to input coordinates. False: input to "
                   "output (it is inverted first)."});
  common_warp_args(schema);
  schema.backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<AffineWarp>(s, false); })
      STOKER_GPU_TWIN_WITH(AffineWarp, false);
}

STOKER_REGISTER_OP_NAMED(rotate, "rotate") {
  schema.doc("Rotates the images by the specified angle, counter-clockwise, around the centre. "
             "Unless keep_size or size is given, the canvas grows to hold the whole rotated image "
             "(DALI's rule, keeping each side's parity where it can). Sequences (FHWC) rotate every "
             "frame by the sample's angle. Volumes (DHWC, FDHWC; CPU) turn about `axis`.")
      .inputs(1, 1, {"input"}).outputs(1).input_layouts({"HWC", "FHWC", "DHWC", "FDHWC"})
      .arg({.name = "angle", .type = ArgType::kFloat,
            .doc = "Angle, in degrees, by which the image is rotated; counter-clockwise, assuming "
                   "the top-left corner is at (0, 0).",
            .tensor = true})
      .arg({.name = "keep_size", .type = ArgType::kBool, .default_value = false,
            .doc = "If True, the original canvas size is kept. If False (default) and size is not "
                   "set, the canvas is adjusted to hold the rotated image with the least padding."})
      .arg({.name = "axis", .type = ArgType::kFloatList, .optional = true,
            .doc = "Volumes only (required there; ignored for images, as in DALI): the axis to "
                   "rotate about, (x, y, z) = (width, height, depth) directions, any non-zero "
                   "length; reversing it reverses the rotation.",
            .tensor = true});
  common_warp_args(schema);
  schema.backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<AffineWarp>(s, true); })
      STOKER_GPU_TWIN_WITH(AffineWarp, true);
}

}  // namespace stoker
