// experimental.remap: output(x, y) = input(mapx(x, y), mapy(x, y)), sampled by the shared warp
// kernel (kernels/cpu/warp/warp.h) with a per-pixel RowMap that reads the two maps. DALI 2.4 has
// it on the GPU only (NPP's remap); this is its CPU version: the same inputs, pixel origins and
// constant-zero border; its GPU twin runs the same sampler in kernels/cuda/warp_gpu. "center" is
// OpenCV's convention (pixel (i, j) centred at (i, j)), and with INTERP_NN it picks OpenCV's
// pixel (the map rounded half to even); "corner" puts pixel (i, j) on [i, i+1) x [j, j+1), so a
// map value k reads pixel k.
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/cpu/warp/warp.h"
#include "kernels/cuda/warp_gpu.h"
#include "ops/generic/gpu_twin.h"
#include "ops/image/image_types.h"
#include "pipeline/operator.h"

namespace stoker {
namespace {

// Where a map's frames, height and width sit (frames < 0: one map for every frame).
struct MapLayout {
  int frames = -1, h = 0, w = 1, c = -1;
};

class Remap : public Operator {
 public:
  explicit Remap(const OpSpec& spec) : Operator(spec) {
    const int v = static_cast<int>(spec.get<int64_t>("interp"));
    const auto interp = static_cast<InterpType>(v);
    if (interp == InterpType::kNN) interp_ = kernels::WarpInterp::kNearest;
    else if (interp == InterpType::kLinear) interp_ = kernels::WarpInterp::kLinear;
    else if (interp == InterpType::kCubic) interp_ = kernels::WarpInterp::kCubic;
    else {
      static const char* const kNames[] = {"INTERP_NN", "INTERP_LINEAR", "INTERP_CUBIC", "INTERP_LANCZOS3",
                                           "INTERP_TRIANGULAR", "INTERP_GAUSSIAN"};
      spec.arg_error("interp", std::string("must be INTERP_NN, INTERP_LINEAR or INTERP_CUBIC, got ") +
                                   (v >= 0 && v < 6 ? kNames[v] : std::to_string(v).c_str()) + ".");
    }
    center_ = spec.get<std::string>("pixel_origin") == "center";
  }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    OutputDesc d;
    d.dtype = in.dtype();
    if (d.dtype != DType::kUInt8 && d.dtype != DType::kInt16 && d.dtype != DType::kUInt16 &&
        d.dtype != DType::kFloat32)
      fail(ErrorKind::kInvalidArgument,
           spec_.display_name() + ": input 0 has type " + dtype_name(d.dtype) +
               ", but the operator takes uint8, int16, uint16 or float32 images; cast them first "
               "(fn.cast).");
    d.layout = in.layout();
    const int nd = in.ndim();
    if (d.layout.empty()) d.layout = nd == 3 ? "HWC" : nd == 4 ? "FHWC" : "";
    if (!((nd == 3 && d.layout == "HWC") || (nd == 4 && d.layout == "FHWC")))
      fail(ErrorKind::kInvalidArgument,
           spec_.display_name() + ": input 0 must be images with layout HWC or sequences with layout "
                                  "FHWC (channels last), got layout '" + in.layout() + "' with " +
               std::to_string(nd) + " dimensions. Decode with fn.decoders.image (HWC), or transpose "
                                    "channel-first data first.");
    sequence_ = nd == 4;
    for (int k = 1; k <= 2; ++k) {
      const Batch& m = ws.input(k);
      if (m.size() != in.size())
        fail(ErrorKind::kInvalidArgument,
             spec_.display_name() + ": input " + std::to_string(k) + " (" + map_name(k) + ") has " +
                 std::to_string(m.size()) + " samples but input 0 has " + std::to_string(in.size()) +
                 "; give one map per sample.");
      if (m.dtype() != DType::kFloat32)
        fail(ErrorKind::kInvalidArgument,
             spec_.display_name() + ": input " + std::to_string(k) + " (" + map_name(k) + ") has type " +
                 dtype_name(m.dtype()) + ", but the maps must be float32; cast them first "
                                         "(fn.cast(..., dtype=types.FLOAT)).");
    }
    maps_[0] = map_layout(ws.input(1), 1);
    maps_[1] = map_layout(ws.input(2), 2);
    for (size_t i = 0; i < in.size(); ++i) {
      const Shape& s = in.shape(i);
      const Shape& mx = ws.input(1).shape(i);
      const Shape& my = ws.input(2).shape(i);
      if (mx != my)
        fail(ErrorKind::kInvalidArgument,
             spec_.display_name() + ": mapx and mapy must have the same shape, got " + to_string(mx) +
                 " and " + to_string(my) + " for sample " + std::to_string(i) + ".");
      const MapLayout& ml = maps_[0];
      if (ml.c >= 0 && mx[ml.c] != 1)
        fail(ErrorKind::kInvalidArgument,
             spec_.display_name() + ": the maps must have one channel, got shape " + to_string(mx) +
                 " for sample " + std::to_string(i) + "; give one (x or y) coordinate per output pixel.");
      if (ml.frames >= 0 && mx[ml.frames] != s[0])
        fail(ErrorKind::kInvalidArgument,
             spec_.display_name() + ": the maps of sample " + std::to_string(i) + " have " +
                 std::to_string(mx[ml.frames]) + " frames but the sequence has " + std::to_string(s[0]) +
                 "; give one map per frame, or one map (without frames) for all of them.");
      Shape o = s;
      const size_t k = sequence_ ? 1 : 0;
      o[k] = mx[ml.h];
      o[k + 1] = mx[ml.w];
      d.shapes.push_back(o);
    }
    return {d};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const Batch& in = ws.input(0);
    Batch& out = ws.output(0);
    const Shape& si = in.shape(i);
    const Shape& so = out.shape(i);
    const size_t k = sequence_ ? 1 : 0;
    const int64_t frames = sequence_ ? si[0] : 1;
    const int64_t ih = si[k], iw = si[k + 1], c = si[k + 2], oh = so[k], ow = so[k + 1];
    const float* mapx = ws.input(1).data<float>(i);
    const float* mapy = ws.input(2).data<float>(i);
    const int64_t map_frame = maps_[0].frames >= 0 ? oh * ow : 0;
    kernels::WarpBorder border;
    border.clamp = false;  // DALI's (NPP's) border: constant 0
    border.fill = 0.0f;
    const bool nearest_center = center_ && interp_ == kernels::WarpInterp::kNearest;
    const float shift = center_ ? 0.5f : 0.0f;  // the sampler works in "corner" coordinates
    visit_dtype(in.dtype(), [&](auto t) {
      using T = decltype(t);
      if constexpr (std::is_same_v<T, uint8_t> || std::is_same_v<T, int16_t> ||
                    std::is_same_v<T, uint16_t> || std::is_same_v<T, float>) {
        const T* src = in.data<T>(i);
        T* dst = out.data<T>(i);
        for (int64_t f = 0; f < frames; ++f) {
          const float* fx = mapx + f * map_frame;
          const float* fy = mapy + f * map_frame;
          kernels::RowMap map = [=](int64_t y, int64_t width, float* sx, float* sy) {
            const float* px = fx + y * ow;
            const float* py = fy + y * ow;
            if (nearest_center) {
              // OpenCV's pixel: the map rounded half to even; its centre, for the sampler's floor.
              for (int64_t x = 0; x < width; ++x) {
                sx[x] = std::nearbyint(px[x]) + 0.5f;
                sy[x] = std::nearbyint(py[x]) + 0.5f;
              }
            } else {
              for (int64_t x = 0; x < width; ++x) {
                sx[x] = px[x] + shift;
                sy[x] = py[x] + shift;
              }
            }
          };
          kernels::warp(ImageView<T>(dst + f * oh * ow * c, oh, ow, c),
                        ImageView<const T>(src + f * ih * iw * c, ih, iw, c), map, interp_, border);
        }
      }
    });
  }

  // The GPU twin: one job per sample in the shared warp kernel (kernels/cuda/warp_gpu.h), which
  // samples as kernels::warp does. The maps may be CPU inputs (uploaded with the launch's
  // parameters) or GPU ones (read where they are).
  void run_gpu(Workspace& ws, const std::vector<OutputDesc>& descs) {
    require_device_input(ws);
    const Batch& in = ws.input(0);
    ws.outputs.assign(1, allocate_device_batch(ws, descs[0].dtype, descs[0].shapes, descs[0].layout));
    Batch& out = ws.outputs[0];
    const Batch& mx = ws.input(1);
    const Batch& my = ws.input(2);
    DeviceParams host_maps(ws);
    const bool x_host = mx.memory() != MemoryKind::kDevice, y_host = my.memory() != MemoryKind::kDevice;
    std::vector<size_t> x_at(in.size()), y_at(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      if (x_host) x_at[i] = host_maps.add(mx.data<float>(i), static_cast<size_t>(volume(mx.shape(i))));
      if (y_host) y_at[i] = host_maps.add(my.data<float>(i), static_cast<size_t>(volume(my.shape(i))));
    }
    if (x_host || y_host) host_maps.upload();
    const size_t k = sequence_ ? 1 : 0;
    std::vector<kernels::cuda::WarpJob> jobs(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      const Shape& si = in.shape(i);
      const Shape& so = out.shape(i);
      kernels::cuda::WarpJob& j = jobs[i];
      j.in = in[i].data;
      j.out = out[i].data;
      j.frames = sequence_ ? si[0] : 1;
      j.in_h = si[k];
      j.in_w = si[k + 1];
      j.channels = si[k + 2];
      j.out_h = so[k];
      j.out_w = so[k + 1];
      j.kind = kernels::cuda::WarpMapKind::kRemap;
      j.interp = interp_;
      j.border.clamp = false;  // constant 0, as run_sample()
      j.border.fill = 0.0f;
      j.mapx = x_host ? host_maps.device<float>(x_at[i]) : static_cast<const float*>(mx[i].data);
      j.mapy = y_host ? host_maps.device<float>(y_at[i]) : static_cast<const float*>(my[i].data);
      j.map_frame = maps_[0].frames >= 0 ? j.out_h * j.out_w : 0;
      j.remap_round = center_ && interp_ == kernels::WarpInterp::kNearest;
      j.remap_shift = center_ ? 0.5f : 0.0f;
    }
    kernels::cuda::warp_gpu(ws, out.dtype(), in.dtype(), jobs);
  }

 private:
  static std::string map_name(int k) { return k == 1 ? "mapx" : "mapy"; }

  MapLayout map_layout(const Batch& m, int k) const {
    std::string l = m.layout();
    const int nd = m.ndim();
    if (l.empty()) l = nd == 2 ? "HW" : nd == 3 ? (sequence_ ? "FHW" : "HWC") : nd == 4 ? "FHWC" : "";
    MapLayout r;
    if (nd == 2 && l == "HW") r = {-1, 0, 1, -1};
    else if (nd == 3 && l == "HWC") r = {-1, 0, 1, 2};
    else if (nd == 3 && l[0] == 'F') r = {0, 1, 2, -1};
    else if (nd == 4 && l[0] == 'F') r = {0, 1, 2, 3};
    else
      fail(ErrorKind::kInvalidArgument,
           spec_.display_name() + ": input " + std::to_string(k) + " (" + map_name(k) +
               ") must be maps with layout HW or HWC (one channel), or FHW or FHWC for one map per "
               "frame of a sequence, got layout '" + m.layout() + "' with " + std::to_string(nd) +
               " dimensions.");
    if (r.frames >= 0 && !sequence_)
      fail(ErrorKind::kInvalidArgument,
           spec_.display_name() + ": input " + std::to_string(k) + " (" + map_name(k) + ") has frames (layout '" +
               l + "') but input 0 is not a sequence (layout HWC); give maps with layout HW or HWC.");
    return r;
  }

  kernels::WarpInterp interp_ = kernels::WarpInterp::kLinear;
  bool center_ = false;
  bool sequence_ = false;
  MapLayout maps_[2];
};

}  // namespace

STOKER_REGISTER_OP_NAMED(experimental_remap, "experimental.remap") {
  schema
      .doc("The remap operation applies a generic geometrical transformation to an image: it takes "
           "pixels from one place in the input image and puts them in another place in the output "
           "image, output(x, y) = input(mapx(x, y), mapy(x, y)). The output has the input's type and "
           "channels and the maps' height and width (DALI requires them to be the input's). Points "
           "outside the input read 0 (a constant border). Images with layout HWC, or sequences "
           "(FHWC) with one map for every frame or one per frame (FHW).")
      .inputs(3, 3, {"input", "mapx", "mapy"})
      .outputs(1)
      .input_layouts({"HWC", "FHWC"})
      .arg({.name = "interp", .type = ArgType::kInterpType, .default_value = int64_t{1},
            .doc = "Interpolation type: INTERP_NN, INTERP_LINEAR (default) or INTERP_CUBIC."})
      .arg({.name = "pixel_origin", .type = ArgType::kString, .default_value = std::string("corner"),
            .doc = "Pixel origin: \"corner\" (default; pixel (i, j) covers [i, i+1) x [j, j+1)) or "
                   "\"center\" (pixel (i, j) is centred at (i, j)). Defines which part of the pixel "
                   "(upper-left corner or center) is interpreted as its origin. To match OpenCV, "
                   "pick \"center\".",
            .choices = {"corner", "center"}})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<Remap>(s); })
      STOKER_GPU_TWIN(Remap);
}

}  // namespace stoker
