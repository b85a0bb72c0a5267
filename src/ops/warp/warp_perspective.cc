// experimental.warp_perspective: one 3x3 homography per sample, sampled by the shared warp kernel
// (kernels/cpu/warp/warp.h). DALI 2.4 runs OpenCV's warpPerspective on the CPU; the map here
// computes the source points in OpenCV's float32 arithmetic, so nearest neighbour picks OpenCV's
// pixels and linear interpolation lands within a unit of its values.
#include <cmath>
#include <cstdio>
#include <optional>

#include "core/repr.h"
#include "kernels/cuda/warp_gpu.h"
#include "ops/generic/gpu_twin.h"
#include "ops/image/image_layout.h"
#include "ops/warp/warp_common.h"

namespace stoker {
namespace {

using warp_ops::ImageDims;

// Where H, W and C sit in a sample of each accepted layout (c < 0: no channel axis).
struct PlaneLayout {
  int frames = -1, h = 0, w = 1, c = -1;
  bool planar = false;  // channels before H and W (CHW, FCHW)
};

PlaneLayout plane_layout(const std::string& l) {
  if (l == "HW") return {-1, 0, 1, -1, false};
  if (l == "HWC") return {-1, 0, 1, 2, false};
  if (l == "FHWC") return {0, 1, 2, 3, false};
  if (l == "CHW") return {-1, 1, 2, 0, true};
  return {0, 2, 3, 1, true};  // FCHW
}

class WarpPerspective : public Operator {
 public:
  explicit WarpPerspective(const OpSpec& spec) : Operator(spec) {
    const std::string bm = spec.get<std::string>("border_mode");
    if (bm == "constant") {
      border_.clamp = false;
    } else if (bm == "replicate") {
      border_.clamp = true;
    } else {
      border_.fold = bm == "reflect" ? kernels::WarpFold::kReflect
                     : bm == "reflect_101" ? kernels::WarpFold::kReflect101
                                           : kernels::WarpFold::kWrap;
    }
    fill_ = spec.get<std::vector<double>>("fill_value");
    for (double v : fill_)
      if (std::isnan(v)) spec.arg_error("fill_value", "must be numbers, got NaN.");
    interp_ = interp_for(spec.get<double>("interp_type"));
    inverse_map_ = spec.get<bool>("inverse_map");
    center_ = spec.get<std::string>("pixel_origin") == "center";
    if (spec.has("size")) {
      auto s = spec.get<std::vector<double>>("size");
      if (!s.empty()) check_size(s, -1);
    }
    const bool as_input = spec.num_inputs > 1;
    const bool as_arg = spec.is_tensor_arg("matrix") ||
                        (spec.has("matrix") && !spec.get<std::vector<double>>("matrix").empty());
    if (as_input && as_arg)
      spec.arg_error("matrix", "was given both as an argument and as the second input (matrix_input); "
                               "give one of them.");
    if (!as_input && !as_arg)
      spec.arg_error("matrix", "is required: give the 3x3 perspective matrix (9 values, row by row) as "
                               "this argument or as the second input (matrix_input).");
    if (as_arg && !spec.is_tensor_arg("matrix"))
      const_matrix_ = to_map(spec.get<std::vector<double>>("matrix"), -1);
  }

  // setup() reads the matrices, also when they come as input 1.
  bool setup_reads_input_data() const override { return spec_.num_inputs > 1; }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    OutputDesc d;
    d.layout = image_or_sequence_layout(spec_, in);
    d.dtype = in.dtype();
    if (d.dtype != DType::kUInt8 && d.dtype != DType::kInt16 && d.dtype != DType::kUInt16 &&
        d.dtype != DType::kFloat32)
      fail(ErrorKind::kInvalidArgument,
           spec_.display_name() + ": input 0 has type " + dtype_name(d.dtype) +
               ", but the operator takes uint8, int16, uint16 or float32 images; cast them first "
               "(fn.cast).");
    if (ws.inputs.size() > 1 && ws.input(1).size() != in.size())
      fail(ErrorKind::kInvalidArgument,
           spec_.display_name() + ": input 1 (matrix_input) has " + std::to_string(ws.input(1).size()) +
               " samples but input 0 has " + std::to_string(in.size()) + "; give one 3x3 matrix per sample.");
    if (ws.inputs.size() > 1 && ws.input(1).memory() == MemoryKind::kDevice)
      fail(ErrorKind::kInvalidArgument,
           spec_.display_name() + ": input 1 (matrix_input) must be a CPU tensor (the matrices are "
                                  "read on the host, also for device='gpu'); give it without .gpu().");
    layout_ = plane_layout(d.layout);
    const int64_t n = static_cast<int64_t>(in.size());
    maps_.assign(n, {});
    for (int64_t i = 0; i < n; ++i) {
      const Shape& s = in.shape(i);
      const int64_t channels = layout_.c < 0 ? 1 : s[layout_.c];
      if (!fill_.empty() && fill_.size() != 1 && static_cast<int64_t>(fill_.size()) != channels)
        spec_.arg_error("fill_value", "takes one value or one per channel; sample " + std::to_string(i) +
                                          " has " + std::to_string(channels) + " channels, got " +
                                          std::to_string(fill_.size()) + " values.");
      int64_t h = s[layout_.h], w = s[layout_.w];
      std::vector<double> size = ws.has_arg("size") ? ws.list_arg("size", i) : std::vector<double>{};
      if (!size.empty()) {
        check_size(size, i);
        h = std::max<int64_t>(static_cast<int64_t>(std::round(size[0])), 1);
        w = std::max<int64_t>(static_cast<int64_t>(std::round(size[1])), 1);
      }
      Shape o = s;
      o[layout_.h] = h;
      o[layout_.w] = w;
      d.shapes.push_back(o);
      maps_[i] = matrix_for(ws, i);
    }
    return {d};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const Batch& in = ws.input(0);
    Batch& out = ws.output(0);
    const Shape& si = in.shape(i);
    const Shape& so = out.shape(i);
    const int64_t frames = layout_.frames < 0 ? 1 : si[layout_.frames];
    const int64_t channels = layout_.c < 0 ? 1 : si[layout_.c];
    const int64_t ih = si[layout_.h], iw = si[layout_.w], oh = so[layout_.h], ow = so[layout_.w];
    const kernels::RowMap map =
        kernels::perspective_row_map(maps_[i], interp_ == kernels::WarpInterp::kNearest);
    const std::vector<float> fill = fills_for(in.dtype(), channels);
    visit_dtype(in.dtype(), [&](auto t) {
      using T = decltype(t);
      kernels::WarpBorder border = border_;
      const T* src = in.data<T>(i);
      T* dst = out.data<T>(i);
      const int64_t in_frame = ih * iw * channels, out_frame = oh * ow * channels;
      for (int64_t f = 0; f < frames; ++f) {
        const T* fs = src + f * in_frame;
        T* fd = dst + f * out_frame;
        if (!layout_.planar) {
          border.channel_fill = fill.data();
          kernels::warp(ImageView<T>(fd, oh, ow, channels), ImageView<const T>(fs, ih, iw, channels), map,
                        interp_, border);
        } else {
          for (int64_t c = 0; c < channels; ++c) {  // one plane at a time, the same map
            border.channel_fill = fill.data() + c;
            kernels::warp(ImageView<T>(fd + c * oh * ow, oh, ow, 1), ImageView<const T>(fs + c * ih * iw, ih, iw, 1),
                          map, interp_, border);
          }
        }
      }
    });
  }

  // The GPU twin: the same maps and borders in one launch (kernels/cuda/warp_gpu.h); planar
  // layouts go plane by plane, each plane a job of one channel with its own fill.
  void run_gpu(Workspace& ws, const std::vector<OutputDesc>& descs) {
    require_device_input(ws);
    const Batch& in = ws.input(0);
    const OutputDesc& d = descs[0];
    ws.outputs.assign(1, allocate_device_batch(ws, d.dtype, d.shapes, d.layout));
    Batch& out = ws.outputs[0];
    const size_t es = dtype_size(in.dtype());
    std::vector<std::vector<float>> fills(in.size());
    std::vector<kernels::cuda::WarpJob> jobs;
    for (size_t i = 0; i < in.size(); ++i) {
      const Shape& si = in.shape(i);
      const Shape& so = out.shape(i);
      const int64_t frames = layout_.frames < 0 ? 1 : si[layout_.frames];
      const int64_t channels = layout_.c < 0 ? 1 : si[layout_.c];
      fills[i] = fills_for(in.dtype(), channels);
      kernels::cuda::WarpJob j;
      j.in_h = si[layout_.h];
      j.in_w = si[layout_.w];
      j.out_h = so[layout_.h];
      j.out_w = so[layout_.w];
      j.kind = kernels::cuda::WarpMapKind::kPerspective;
      j.perspective = maps_[i];
      j.interp = interp_;
      j.border = border_;
      if (!layout_.planar) {
        j.in = in[i].data;
        j.out = out[i].data;
        j.frames = frames;
        j.channels = channels;
        j.border.channel_fill = fills[i].data();
        jobs.push_back(j);
        continue;
      }
      j.frames = 1;
      j.channels = 1;
      for (int64_t f = 0; f < frames; ++f)
        for (int64_t c = 0; c < channels; ++c) {
          const int64_t plane = f * channels + c;
          j.in = static_cast<const char*>(in[i].data) + static_cast<size_t>(plane * j.in_h * j.in_w) * es;
          j.out = static_cast<char*>(out[i].data) + static_cast<size_t>(plane * j.out_h * j.out_w) * es;
          j.border.channel_fill = fills[i].data() + c;
          jobs.push_back(j);
        }
    }
    kernels::cuda::warp_gpu(ws, d.dtype, in.dtype(), jobs);
  }

 private:
  // The fill per channel in the output type, as OpenCV saturates it (rounding half to even).
  std::vector<float> fills_for(DType type, int64_t channels) const {
    std::vector<float> fill(static_cast<size_t>(channels), 0.0f);
    visit_dtype(type, [&](auto t) {
      using T = decltype(t);
      for (int64_t c = 0; c < channels; ++c)
        if (!fill_.empty())
          fill[c] = static_cast<float>(convert_sat<T>(fill_.size() == 1 ? fill_[0] : fill_[c]));
    });
    return fill;
  }


  kernels::WarpInterp interp_for(double v) const {
    switch (static_cast<InterpType>(static_cast<int>(v))) {
      case InterpType::kNN: return kernels::WarpInterp::kNearest;
      case InterpType::kLinear: return kernels::WarpInterp::kLinear;
      case InterpType::kCubic: return kernels::WarpInterp::kCubic;
      default: break;
    }
    spec_.arg_error("interp_type", "must be INTERP_NN, INTERP_LINEAR or INTERP_CUBIC, got " +
                                       std::to_string(static_cast<int>(v)) + ".");
  }

  void check_size(const std::vector<double>& s, int64_t sample) const {
    std::string where = sample < 0 ? "" : " for sample " + std::to_string(sample);
    if (s.size() != 2)
      spec_.arg_error("size", "takes 2 values (height, width)" + where + ", got " + std::to_string(s.size()) + ".");
    for (double v : s)
      if (!(v > 0) || !std::isfinite(v) || v > 1e9)
        spec_.arg_error("size", "must be positive" + where + ", got (" + num(s[0]) + ", " + num(s[1]) + ").");
  }

  // The user's matrix (float32, as DALI holds it) as the kernel's map: inverted when it maps
  // input to output, then moved to OpenCV's convention (pixel centres at integers) for "corner".
  kernels::PerspectiveMap2D to_map(const std::vector<double>& v, int64_t sample) const {
    std::string where = sample < 0 ? "" : " for sample " + std::to_string(sample);
    if (v.size() != 9)
      spec_.arg_error("matrix", "takes 9 values, a 3x3 matrix row by row" + where + ", got " +
                                    std::to_string(v.size()) + ".");
    kernels::PerspectiveMap2D p;
    for (int k = 0; k < 9; ++k) {
      if (!std::isfinite(v[k]))
        spec_.arg_error("matrix", "must be finite" + where + ", got " + num(v[k]) + " at position " +
                                      std::to_string(k) + ".");
      p.m[k] = static_cast<float>(v[k]);
    }
    if (!inverse_map_) {
      kernels::PerspectiveMap2D inv;
      if (!kernels::invert_perspective(p, &inv))
        spec_.arg_error("matrix", "is singular" + where + "; with inverse_map=False it maps input to "
                                  "output and must be invertible.");
      p = inv;
    }
    if (!center_) {
      // T(-0.5) (M T(0.5)) in float32, term by term, as DALI adjusts the matrix before OpenCV.
      float m[9], a[9];
      for (int k = 0; k < 9; ++k) m[k] = static_cast<float>(p.m[k]);
      for (int r = 0; r < 3; ++r) {
        a[r * 3] = m[r * 3];
        a[r * 3 + 1] = m[r * 3 + 1];
        float t = m[r * 3] * 0.5f;
        t += m[r * 3 + 1] * 0.5f;
        a[r * 3 + 2] = t + m[r * 3 + 2];
      }
      for (int c = 0; c < 3; ++c) {
        p.m[c] = a[c] - 0.5f * a[6 + c];
        p.m[3 + c] = a[3 + c] - 0.5f * a[6 + c];
        p.m[6 + c] = a[6 + c];
      }
    }
    return p;
  }

  kernels::PerspectiveMap2D matrix_for(const Workspace& ws, int64_t i) const {
    if (const_matrix_) return *const_matrix_;
    if (ws.inputs.size() > 1) {
      const Batch& mb = ws.input(1);
      const Shape& s = mb.shape(i);
      if (s.size() != 2 || s[0] != 3 || s[1] != 3)
        fail(ErrorKind::kInvalidArgument,
             spec_.display_name() + ": input 1 (matrix_input) must hold a 3x3 matrix per sample, got shape " +
                 to_string(s) + " for sample " + std::to_string(i) + ".");
      if (mb.dtype() == DType::kBool)
        fail(ErrorKind::kInvalidArgument,
             spec_.display_name() + ": input 1 (matrix_input) must be numbers (float32), got bool.");
      std::vector<double> m(9);
      visit_dtype(mb.dtype(), [&](auto t) {
        using T = decltype(t);
        const T* p = mb.data<T>(i);
        for (int k = 0; k < 9; ++k) m[k] = static_cast<double>(p[k]);
      });
      return to_map(m, i);
    }
    return to_map(ws.list_arg("matrix", i), i);
  }

  kernels::WarpBorder border_;
  std::vector<double> fill_;
  kernels::WarpInterp interp_ = kernels::WarpInterp::kLinear;
  bool inverse_map_ = true;
  bool center_ = false;
  PlaneLayout layout_;
  std::optional<kernels::PerspectiveMap2D> const_matrix_;
  std::vector<kernels::PerspectiveMap2D> maps_;
};

}  // namespace

STOKER_REGISTER_OP_NAMED(experimental_warp_perspective, "experimental.warp_perspective") {
  schema
      .doc("Performs a perspective transform on the images: output pixel (x, y) reads the source at "
           "((m0 x + m1 y + m2) / w, (m3 x + m4 y + m5) / w), w = m6 x + m7 y + m8, as OpenCV's "
           "warpPerspective with WARP_INVERSE_MAP. Sequences (FHWC, FCHW) use the same matrix for "
           "every frame.")
      .inputs(1, 2, {"input", "matrix_input"})
      .outputs(1)
      .input_layouts({"HW", "HWC", "FHWC", "CHW", "FCHW"})
      .arg({.name = "matrix", .type = ArgType::kFloatList, .default_value = std::vector<double>{},
            .doc = "3x3 perspective matrix of destination to source coordinates, 9 values row by row. "
                   "With inverse_map=False it maps source to destination (and is inverted). Instead "
                   "of this argument, the matrix can be the second input (a 3x3 tensor per sample).",
            .tensor = true})
      .arg({.name = "size", .type = ArgType::kFloatList, .default_value = std::vector<double>{},
            .doc = "Output size (height, width), in pixels, rounded to the nearest integer; the "
                   "channel dimension is excluded. Empty (default): the input's size.",
            .tensor = true, .list_min = 0, .list_max = 2})
      .arg({.name = "border_mode", .type = ArgType::kString, .default_value = std::string("constant"),
            .doc = "How pixels outside the source are read: \"constant\" (fill_value), \"replicate\" "
                   "(the edge pixel), \"reflect\" (fedcba|abcdefgh|hgfedcb), \"reflect_101\" "
                   "(gfedcb|abcdefgh|gfedcba) or \"wrap\" (cdefgh|abcdefgh|abcdefg).",
            .choices = {"constant", "replicate", "reflect", "reflect_101", "wrap"}})
      .arg({.name = "fill_value", .type = ArgType::kFloatList, .default_value = std::vector<double>{},
            .doc = "Value of the pixels outside the source with border_mode \"constant\": one value, "
                   "or one per channel. Empty (default): 0."})
      .arg({.name = "interp_type", .type = ArgType::kInterpType, .default_value = int64_t{1},
            .doc = "Type of interpolation used: INTERP_NN, INTERP_LINEAR (default) or INTERP_CUBIC."})
      .arg({.name = "inverse_map", .type = ArgType::kBool, .default_value = true,
            .doc = "True (default): the matrix maps destination to source coordinates. False: source "
                   "to destination (it is inverted first)."})
      .arg({.name = "pixel_origin", .type = ArgType::kString, .default_value = std::string("corner"),
            .doc = "Where (0, 0) is: \"corner\" (default), the top-left corner of the top-left pixel "
                   "(as OpenGL); \"center\", the centre of that pixel (as OpenCV).",
            .choices = {"corner", "center"}})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<WarpPerspective>(s); })
      STOKER_GPU_TWIN(WarpPerspective);
}

}  // namespace stoker
