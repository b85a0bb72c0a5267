// filter (and its old name experimental.filter) and laplacian: convolutions over the data axes of
// images, sequences and volumes. Leading F / C axes are independent planes, a trailing C is
// interleaved channels, and the remaining 1 to 3 axes are convolved (kernels/cpu/filter). Both
// have GPU twins that give the CPU's bits (kernels/cuda/filter_gpu.h).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>

#include "kernels/cuda/filter_gpu.h"
#include "ops/generic/gpu_twin.h"
#include "core/repr.h"
#include "kernels/cpu/filter/convolution.h"
#include "pipeline/operator.h"

namespace stoker {
namespace {

using kernels::FilterBorder;

constexpr int kMaxLaplacianWindow = 31;

struct ConvLayout {
  int lead = 0;           // leading F / C axes: independent planes
  bool frames = false;    // the first axis is frames
  int axes = 0;           // data axes
  bool channels = false;  // trailing interleaved channels
};

// Where F, C and the data axes are; `what` names the accepted layouts for the message.
ConvLayout parse_layout(const OpSpec& spec, const std::string& l, int nd, int min_axes, int max_axes,
                        bool frames_first, const std::string& what) {
  ConvLayout r;
  if (l.empty()) {
    if (nd < min_axes || nd > max_axes)
      fail(ErrorKind::kInvalidArgument,
           spec.display_name() + ": input 0 has no layout and " + std::to_string(nd) +
               " dimensions; without a layout it must have " + std::to_string(min_axes) + " to " +
               std::to_string(max_axes) + " data dimensions (set a layout such as HWC for more).");
    r.axes = nd;
    return r;
  }
  const int n = static_cast<int>(l.size());
  while (r.lead < n && r.lead < 2 && (l[r.lead] == 'F' || l[r.lead] == 'C')) ++r.lead;
  r.frames = l[0] == 'F';
  r.channels = l.back() == 'C' && n - 1 >= r.lead;
  const int end = r.channels ? n - 1 : n;
  r.axes = end - r.lead;
  bool bad = r.axes < min_axes || r.axes > max_axes;
  for (int k = r.lead; k < end; ++k) bad |= l[k] == 'C' || l[k] == 'F';
  if (frames_first && r.lead == 2 && l[1] == 'F') bad = true;
  if (bad)
    fail(ErrorKind::kInvalidArgument,
         spec.display_name() + ": input 0 has layout '" + l + "'; " + what);
  return r;
}

std::string extents_repr(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t k = 0; k < v.size(); ++k) s += (k ? " x " : "") + std::to_string(v[k]);
  return s;
}

// ------------------------------------------------------------------------------------- filter

FilterBorder parse_border(const OpSpec& spec) {
  std::string b = spec.get<std::string>("border");
  std::string l = b;
  std::transform(l.begin(), l.end(), l.begin(), [](unsigned char c) { return std::tolower(c); });
  if (l == "reflect_101" || l == "reflect101" || l == "101") return FilterBorder::kReflect101;
  if (l == "reflect_1001" || l == "reflect1001" || l == "1001" || l == "reflect") return FilterBorder::kReflect1001;
  if (l == "wrap") return FilterBorder::kWrap;
  if (l == "clamp" || l == "edge") return FilterBorder::kClamp;
  if (l == "constant" || l == "fill" || l == "pad") return FilterBorder::kConstant;
  spec.arg_error("border", "must be one of 'reflect_101', 'reflect_1001', 'wrap', 'clamp' or 'constant', got '" +
                               b + "'.");
}

bool parse_valid(const OpSpec& spec) {
  std::string m = spec.get<std::string>("mode");
  std::string l = m;
  std::transform(l.begin(), l.end(), l.begin(), [](unsigned char c) { return std::tolower(c); });
  if (l == "same") return false;
  if (l == "valid") return true;
  spec.arg_error("mode", "must be 'same' or 'valid', got '" + m + "'.");
}

bool filter_input_type(DType t) {
  return t == DType::kUInt8 || t == DType::kInt8 || t == DType::kUInt16 || t == DType::kInt16 ||
         t == DType::kFloat16 || t == DType::kFloat32;
}

class Filter : public Operator {
 public:
  explicit Filter(const OpSpec& spec) : Operator(spec) {
    border_ = parse_border(spec);
    valid_ = parse_valid(spec);
  }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const Batch& filt = ws.input(1);
    const std::string& name = spec_.display_name();
    if (!filter_input_type(in.dtype()))
      fail(ErrorKind::kInvalidArgument,
           name + ": input 0 (data) has type " + dtype_name(in.dtype()) +
               ", but the operator takes uint8, int8, uint16, int16, float16 or float32; cast it first "
               "(fn.cast).");
    layout_ = parse_layout(spec_, in.layout(), in.ndim(), 2, 3, true,
                           "filter needs 2 or 3 data axes, channels first or last, and frames ('F') "
                           "outermost, as in HW, HWC, CHW, FHWC, FCHW or DHWC.");
    out_dtype_ = in.dtype();
    if (spec_.has("dtype")) {
      DType d = static_cast<DType>(spec_.get<int64_t>("dtype"));
      if (d != in.dtype() && d != DType::kFloat32)
        spec_.arg_error("dtype", std::string("must be the input type (") + dtype_name(in.dtype()) +
                                     ") or float32, got " + dtype_name(d) + ".");
      out_dtype_ = d;
    }
    if (filt.dtype() != DType::kFloat32)
      fail(ErrorKind::kInvalidArgument,
           name + ": input 1 (filter) has type " + dtype_name(filt.dtype()) +
               ", but filters must be float32; cast them first (fn.cast).");
    per_frame_filter_ = layout_.frames && !filt.layout().empty() && filt.layout()[0] == 'F';
    const int fdims = layout_.axes + (per_frame_filter_ ? 1 : 0);
    has_fill_ = ws.inputs.size() > 2;
    if (has_fill_) {
      const Batch& fill = ws.input(2);
      if (fill.dtype() != in.dtype())
        fail(ErrorKind::kInvalidArgument,
             name + ": input 2 (fill_value) has type " + dtype_name(fill.dtype()) +
                 ", but it must have the type of input 0 (" + dtype_name(in.dtype()) + ").");
      per_frame_fill_ = layout_.frames && !fill.layout().empty() && fill.layout()[0] == 'F';
    }
    std::vector<Shape> shapes(in.size());
    kernel_shapes_.assign(in.size(), {});
    anchors_.assign(in.size(), {});
    for (size_t i = 0; i < in.size(); ++i) {
      const int64_t si = static_cast<int64_t>(i);
      const Shape& s = in.shape(i);
      const Shape& f = filt.shape(i);
      const int64_t frames = layout_.frames ? s[0] : 1;
      if (static_cast<int>(f.size()) != fdims)
        fail(ErrorKind::kInvalidArgument,
             name + ": input 1 (filter) must hold a " + std::to_string(layout_.axes) + "-D filter per sample" +
                 (per_frame_filter_ ? " per frame" : "") + " (the data has " + std::to_string(layout_.axes) +
                 " data axes), got shape " + to_string(f) + " for sample " + std::to_string(i) + ".");
      if (per_frame_filter_ && f[0] != frames)
        fail(ErrorKind::kInvalidArgument,
             name + ": input 1 (filter) is given per frame, with " + std::to_string(f[0]) +
                 " filters for sample " + std::to_string(i) + ", which has " + std::to_string(frames) +
                 " frames; give one filter per frame.");
      std::vector<int64_t> k(f.begin() + (per_frame_filter_ ? 1 : 0), f.end());
      for (int64_t e : k)
        if (e < 1)
          fail(ErrorKind::kInvalidArgument,
               name + ": input 1 (filter) is empty for sample " + std::to_string(i) + " (shape " +
                   to_string(f) + "); every extent of a filter must be at least 1.");
      if (has_fill_) {
        const Shape& v = ws.input(2).shape(i);
        const int64_t want = per_frame_fill_ ? frames : 1;
        if (volume(v) != want || (!per_frame_fill_ && !v.empty()))
          fail(ErrorKind::kInvalidArgument,
               name + ": input 2 (fill_value) must hold one scalar per sample" +
                   (layout_.frames ? std::string(" (or, through fn.per_frame, one per frame)") : "") +
                   ", got shape " + to_string(v) + " for sample " + std::to_string(i) + ".");
      }
      std::vector<double> a = ws.list_arg("anchor", si, {-1.0});
      if (a.size() == 1) a.assign(layout_.axes, a[0]);
      if (static_cast<int>(a.size()) != layout_.axes)
        spec_.arg_error("anchor", "takes 1 or " + std::to_string(layout_.axes) +
                                      " values (one per filter axis), got " + std::to_string(a.size()) +
                                      " for sample " + std::to_string(i) + ".");
      std::vector<int64_t> anchor(layout_.axes);
      for (int d = 0; d < layout_.axes; ++d) {
        if (a[d] != std::floor(a[d]) || a[d] < -1 || a[d] >= static_cast<double>(k[d]))
          spec_.arg_error("anchor", "must lie within the filter (-1 for its middle, else 0 to extent - 1 on each "
                                    "axis), got " + numbers_repr(a) + " with a filter of shape " +
                                    extents_repr(k) + " for sample " + std::to_string(i) + ".");
        anchor[d] = a[d] < 0 ? k[d] / 2 : static_cast<int64_t>(a[d]);
      }
      Shape o = s;
      if (valid_) {
        for (int d = 0; d < layout_.axes; ++d) {
          const int64_t e = s[layout_.lead + d] - k[d] + 1;
          if (e < 1) {
            std::vector<int64_t> sp(s.begin() + layout_.lead, s.begin() + layout_.lead + layout_.axes);
            fail(ErrorKind::kInvalidArgument,
                 name + ": the filter of sample " + std::to_string(i) + " (" + extents_repr(k) +
                     ") is larger than the sample (" + extents_repr(sp) +
                     "); with mode='valid' a filter must fit inside the sample. Use mode='same' or a "
                     "smaller filter.");
          }
          o[layout_.lead + d] = e;
        }
      }
      shapes[i] = o;
      kernel_shapes_[i] = k;
      anchors_[i] = anchor;
    }
    return {OutputDesc{out_dtype_, in.layout(), shapes}};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const Batch& in = ws.input(0);
    Batch& out = ws.output(0);
    const Shape& s = in.shape(i);
    const Shape& os = out.shape(i);
    int64_t planes = 1;
    for (int k = 0; k < layout_.lead; ++k) planes *= s[k];
    const int64_t frames = layout_.frames ? s[0] : 1;
    const int64_t planes_per_frame = planes / std::max<int64_t>(frames, 1);
    std::vector<int64_t> spatial(s.begin() + layout_.lead, s.begin() + layout_.lead + layout_.axes);
    const int64_t channels = layout_.channels ? s.back() : 1;
    int64_t in_plane = channels, out_plane = channels;
    for (int d = 0; d < layout_.axes; ++d) {
      in_plane *= s[layout_.lead + d];
      out_plane *= os[layout_.lead + d];
    }
    int64_t kvol = 1;
    for (int64_t e : kernel_shapes_[i]) kvol *= e;
    const float* kernel = ws.input(1).data<float>(i);
    kernels::CorrelateArgs args;
    args.kernel_shape = kernel_shapes_[i];
    args.anchor = anchors_[i];
    args.valid = valid_;
    args.border = border_;
    thread_local std::vector<float> scratch;
    visit_dtype(in.dtype(), [&](auto ti) {
      using In = decltype(ti);
      if constexpr (std::is_same_v<In, uint8_t> || std::is_same_v<In, int8_t> ||
                    std::is_same_v<In, uint16_t> || std::is_same_v<In, int16_t> ||
                    std::is_same_v<In, float16> || std::is_same_v<In, float>) {
        auto go = [&](auto to) {
          using Out = decltype(to);
          const In* src = in.data<In>(i);
          Out* dst = out.data<Out>(i);
          for (int64_t p = 0; p < planes; ++p) {
            const int64_t frame = p / std::max<int64_t>(planes_per_frame, 1);
            if (has_fill_) {
              const In* fv = ws.input(2).data<In>(i);
              args.fill = static_cast<float>(fv[per_frame_fill_ ? frame : 0]);
            }
            const float* k = kernel + (per_frame_filter_ ? frame * kvol : 0);
            kernels::correlate(dst + p * out_plane, src + p * in_plane, spatial, channels, k, args,
                               &scratch);
          }
        };
        if (out_dtype_ == in.dtype()) go(In{});
        else go(float{});
      }
    });
  }

  // The GPU twin: one job per plane (kernels/cuda/filter_gpu.h). The filters and fill values may
  // be CPU inputs (uploaded with the launch's parameters) or GPU ones (read where they are).
  void run_gpu(Workspace& ws, const std::vector<OutputDesc>& descs) {
    require_device_input(ws);
    const Batch& in = ws.input(0);
    const Batch& filt = ws.input(1);
    ws.outputs.assign(1, allocate_device_batch(ws, descs[0].dtype, descs[0].shapes, descs[0].layout));
    Batch& out = ws.outputs[0];
    DeviceParams host_data(ws);
    const bool filt_host = filt.memory() != MemoryKind::kDevice;
    const bool fill_host = has_fill_ && ws.input(2).memory() != MemoryKind::kDevice;
    std::vector<size_t> filt_off(in.size()), fill_off(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
      if (filt_host)
        filt_off[i] = host_data.add(filt.data<float>(i), static_cast<size_t>(volume(filt.shape(i))));
      if (fill_host) {
        const Batch& f = ws.input(2);
        fill_off[i] = host_data.add(f.data<char>(i), f.sample_bytes(i));
      }
    }
    if (filt_host || fill_host) host_data.upload();
    const size_t es = dtype_size(in.dtype()), os = dtype_size(out.dtype());
    std::vector<kernels::cuda::CorrelateJob> jobs;
    for (size_t i = 0; i < in.size(); ++i) {
      const Shape& s = in.shape(i);
      const Shape& o = out.shape(i);
      int64_t planes = 1;
      for (int k = 0; k < layout_.lead; ++k) planes *= s[k];
      const int64_t frames = layout_.frames ? s[0] : 1;
      const int64_t planes_per_frame = planes / std::max<int64_t>(frames, 1);
      const int64_t channels = layout_.channels ? s.back() : 1;
      const std::vector<int64_t>& K = kernel_shapes_[i];
      int64_t in_plane = channels, out_plane = channels, kvol = 1;
      kernels::cuda::CorrelateJob j;
      j.channels = channels;
      const int nd = layout_.axes;
      for (int d = 0; d < nd; ++d) {
        in_plane *= s[layout_.lead + d];
        out_plane *= o[layout_.lead + d];
        kvol *= K[d];
        j.n[3 - nd + d] = s[layout_.lead + d];
        j.m[3 - nd + d] = o[layout_.lead + d];
        j.K[3 - nd + d] = K[d];
        j.s[3 - nd + d] = valid_ ? 0 : -anchors_[i][d];
      }
      const float* kernel = filt_host ? host_data.device<float>(filt_off[i])
                                      : static_cast<const float*>(filt[i].data);
      const char* fill = !has_fill_ ? nullptr
                         : fill_host ? host_data.device<char>(fill_off[i])
                                     : static_cast<const char*>(ws.input(2)[i].data);
      for (int64_t p = 0; p < planes; ++p) {
        const int64_t frame = p / std::max<int64_t>(planes_per_frame, 1);
        j.in = static_cast<const char*>(in[i].data) + static_cast<size_t>(p * in_plane) * es;
        j.out = static_cast<char*>(out[i].data) + static_cast<size_t>(p * out_plane) * os;
        j.kernel = kernel + (per_frame_filter_ ? frame * kvol : 0);
        j.fill = fill ? fill + (per_frame_fill_ ? frame : 0) * es : nullptr;
        jobs.push_back(j);
      }
    }
    kernels::cuda::correlate_gpu(ws, out.dtype(), in.dtype(), border_, jobs);
  }

 private:
  FilterBorder border_ = FilterBorder::kReflect101;
  bool valid_ = false;
  ConvLayout layout_;
  DType out_dtype_ = DType::kNone;
  bool per_frame_filter_ = false, has_fill_ = false, per_frame_fill_ = false;
  std::vector<std::vector<int64_t>> kernel_shapes_, anchors_;
};

void define_filter(OpSchema& schema) {
  schema.doc("Convolves the data with a filter given per sample as an input. Like DALI's, it computes a "
             "correlation: the filter is not flipped. Inputs: data (images HW/HWC/CHW, sequences "
             "FHWC/FCHW, volumes DHWC; uint8, int8, uint16, int16, float16 or float32), filter (a float32 "
             "2-D array per sample for images and sequences, 3-D for volumes; through fn.per_frame, one "
             "per frame of a sequence) and optionally fill_value (a scalar of the data's type per sample, "
             "or per frame, used by border='constant'; 0 without it). The intermediate type is float32; "
             "integer outputs are rounded half to even and saturated.")
      .inputs(2, 3, {"data", "filter", "fill_value"}).outputs(1)
      .arg({.name = "anchor", .type = ArgType::kIntList, .default_value = std::vector<int64_t>{-1},
            .doc = "Position of the filter over the input: with a filter of extents (r, s) and anchor (a, b), "
                   "output (x, y) is the product of the filter and the input window from (x - a, y - b) to "
                   "(x - a + r - 1, y - b + s - 1). -1 (the default) takes the middle of each extent "
                   "(rounded down). One value for all axes or one per filter axis. Ignored in 'valid' mode.",
            .tensor = true, .list_min = 1, .list_max = 3})
      .arg({.name = "border", .type = ArgType::kString, .default_value = std::string("reflect_101"),
            .doc = "Out-of-bound filter positions: 'reflect_101' (dcb|abcdefghi|hgf, the default), "
                   "'reflect_1001' (cba|abcdefghi|ihg), 'wrap' (ghi|abcdefghi|abc), 'clamp' "
                   "(aaa|abcdefghi|iii) or 'constant' (the fill_value input, zero by default)."})
      .arg({.name = "mode", .type = ArgType::kString, .default_value = std::string("same"),
            .doc = "'same' (default): the output has the input's size and `border` handles the edges; "
                   "'valid': the output is cropped by filter_extent - 1 so that every filter position lies "
                   "inside the input."})
      .arg({.name = "dtype", .type = ArgType::kDType, .optional = true,
            .doc = "Output data type: the input type (default) or float32. Integer outputs are clamped to "
                   "the type's range."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<Filter>(s); })
      STOKER_GPU_TWIN(Filter);
}

// ---------------------------------------------------------------------------------- laplacian

bool laplacian_input_type(DType t) {
  return t == DType::kUInt8 || t == DType::kInt8 || t == DType::kUInt16 || t == DType::kInt16 ||
         t == DType::kUInt32 || t == DType::kInt32 || t == DType::kInt64 || t == DType::kFloat16 ||
         t == DType::kFloat32;
}

class Laplacian : public Operator {
 public:
  explicit Laplacian(const OpSpec& spec) : Operator(spec) {
    normalized_ = spec.get<bool>("normalized_kernel");
    if (normalized_ && (spec.has("scale") || spec.is_tensor_arg("scale")))
      spec.arg_error("scale", "cannot be given when normalized_kernel is True (the kernels are then scaled "
                              "automatically); give one of them.");
  }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    if (!laplacian_input_type(in.dtype()))
      fail(ErrorKind::kInvalidArgument,
           spec_.display_name() + ": input 0 has type " + dtype_name(in.dtype()) +
               ", but the operator takes uint8, int8, uint16, int16, uint32, int32, int64, float16 or "
               "float32; cast it first (fn.cast).");
    layout_ = parse_layout(spec_, in.layout(), in.ndim(), 1, 3, false,
                           "laplacian needs 1 to 3 data axes, channels first or last, and frames ('F') "
                           "first, as in HW, HWC, CHW, DHWC or FHWC.");
    out_dtype_ = in.dtype();
    if (spec_.has("dtype")) {
      DType d = static_cast<DType>(spec_.get<int64_t>("dtype"));
      if (d != in.dtype() && d != DType::kFloat32)
        spec_.arg_error("dtype", std::string("must be the input type (") + dtype_name(in.dtype()) +
                                     ") or float32, got " + dtype_name(d) + ".");
      out_dtype_ = d;
    }
    terms_.assign(in.size(), {});
    for (size_t i = 0; i < in.size(); ++i) terms_[i] = sample_terms(ws, static_cast<int64_t>(i));
    return {OutputDesc{out_dtype_, in.layout(), in.shapes()}};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const Batch& in = ws.input(0);
    Batch& out = ws.output(0);
    const Shape& s = in.shape(i);
    int64_t planes = 1;
    for (int k = 0; k < layout_.lead; ++k) planes *= s[k];
    std::vector<int64_t> spatial(s.begin() + layout_.lead, s.begin() + layout_.lead + layout_.axes);
    const int64_t channels = layout_.channels ? s.back() : 1;
    int64_t plane = channels;
    for (int64_t e : spatial) plane *= e;
    thread_local std::vector<float> scratch;
    visit_dtype(in.dtype(), [&](auto ti) {
      using In = decltype(ti);
      if constexpr (std::is_same_v<In, uint8_t> || std::is_same_v<In, int8_t> ||
                    std::is_same_v<In, uint16_t> || std::is_same_v<In, int16_t> ||
                    std::is_same_v<In, uint32_t> || std::is_same_v<In, int32_t> ||
                    std::is_same_v<In, int64_t> || std::is_same_v<In, float16> ||
                    std::is_same_v<In, float>) {
        auto go = [&](auto to) {
          using Out = decltype(to);
          const In* src = in.data<In>(i);
          Out* dst = out.data<Out>(i);
          for (int64_t p = 0; p < planes; ++p)
            kernels::separable_sum(dst + p * plane, src + p * plane, spatial, channels, terms_[i], &scratch);
        };
        if (out_dtype_ == in.dtype()) go(In{});
        else go(float{});
      }
    });
  }

  // The GPU twin: one job per plane (a frame or planar channel), the sample's terms as setup()
  // made them (kernels/cuda/filter_gpu.h).
  void run_gpu(Workspace& ws, const std::vector<OutputDesc>& descs) {
    require_device_input(ws);
    const Batch& in = ws.input(0);
    ws.outputs.assign(1, allocate_device_batch(ws, descs[0].dtype, descs[0].shapes, descs[0].layout));
    Batch& out = ws.outputs[0];
    const size_t es = dtype_size(in.dtype()), os = dtype_size(out.dtype());
    std::vector<kernels::cuda::SeparableSumJob> jobs;
    for (size_t i = 0; i < in.size(); ++i) {
      const Shape& s = in.shape(i);
      int64_t planes = 1;
      for (int k = 0; k < layout_.lead; ++k) planes *= s[k];
      kernels::cuda::SeparableSumJob j;
      j.channels = layout_.channels ? s.back() : 1;
      j.terms = &terms_[i];
      int64_t plane = j.channels;
      const int nd = layout_.axes;
      for (int d = 0; d < nd; ++d) {
        j.n[3 - nd + d] = s[layout_.lead + d];
        plane *= s[layout_.lead + d];
      }
      for (int64_t p = 0; p < planes; ++p) {
        j.in = static_cast<const char*>(in[i].data) + static_cast<size_t>(p * plane) * es;
        j.out = static_cast<char*>(out[i].data) + static_cast<size_t>(p * plane) * os;
        jobs.push_back(j);
      }
    }
    kernels::cuda::separable_sum_gpu(ws, out.dtype(), in.dtype(), jobs);
  }

 private:
  // Per data axis d: a second-derivative window along d, smoothing windows along the others, and
  // the partial's scale (arguments ordered outermost first).
  std::vector<kernels::SeparableTerm> sample_terms(const Workspace& ws, int64_t i) const {
    const int n = layout_.axes;
    auto per_axis = [&](const char* arg, std::vector<double> v) {
      if (v.size() == 1) v.assign(n, v[0]);
      if (static_cast<int>(v.size()) != n)
        spec_.arg_error(arg, "takes 1 or " + std::to_string(n) + " values (one per data axis), got " +
                                 std::to_string(v.size()) + " for sample " + std::to_string(i) + ".");
      return v;
    };
    auto check_size = [&](const char* arg, double v, int lo, int d) {
      if (v != std::floor(v) || v < lo || v > kMaxLaplacianWindow || static_cast<int64_t>(v) % 2 == 0)
        spec_.arg_error(arg, "must be an odd integer between " + std::to_string(lo) + " and " +
                                 std::to_string(kMaxLaplacianWindow) + ", got " + num(v) + " for sample " +
                                 std::to_string(i) + ", axis " + std::to_string(d) + ".");
      return static_cast<int>(v);
    };
    std::vector<double> win = per_axis("window_size", ws.list_arg("window_size", i, {3.0}));
    const bool has_smoothing = ws.has_arg("smoothing_size");
    std::vector<double> sm = has_smoothing ? per_axis("smoothing_size", ws.list_arg("smoothing_size", i)) : win;
    std::vector<double> sc = per_axis("scale", ws.list_arg("scale", i, {1.0}));
    std::vector<int> dsize(n), ssize(n);
    for (int d = 0; d < n; ++d) {
      dsize[d] = check_size("window_size", win[d], 3, d);
      if (has_smoothing) ssize[d] = check_size("smoothing_size", sm[d], 1, d);
      if (!std::isfinite(sc[d]))
        spec_.arg_error("scale", "must be finite, got " + num(sc[d]) + " for sample " + std::to_string(i) + ".");
    }
    std::vector<kernels::SeparableTerm> terms(n);
    for (int d = 0; d < n; ++d) {
      kernels::SeparableTerm& t = terms[d];
      t.windows.resize(n);
      int total = 0;
      for (int a = 0; a < n; ++a) {
        // Without smoothing_size, the smoothing windows of partial d have its derivative's size.
        const int size = a == d ? dsize[d] : has_smoothing ? ssize[a] : dsize[d];
        t.windows[a] = a == d ? kernels::second_derivative_window(size) : kernels::binomial_window(size);
        total += size;
      }
      t.scale = normalized_ ? static_cast<float>(std::ldexp(1.0, -total + n + 2)) : static_cast<float>(sc[d]);
    }
    return terms;
  }

  bool normalized_ = false;
  ConvLayout layout_;
  DType out_dtype_ = DType::kNone;
  std::vector<std::vector<kernels::SeparableTerm>> terms_;  // [sample][partial]
};

}  // namespace

STOKER_REGISTER_OP_NAMED(filter, "filter") { define_filter(schema); }

STOKER_REGISTER_OP_NAMED(experimental_filter, "experimental.filter") {
  define_filter(schema);
  schema.doc("Old name of filter (DALI keeps it as a deprecated alias). " + schema.doc());
}

STOKER_REGISTER_OP_NAMED(laplacian, "laplacian") {
  schema.doc("Computes the Laplacian of the input: the sum over the data axes of second-order partial "
             "derivatives, each a separable convolution with a derivative window along its axis and "
             "smoothing windows along the others (OpenCV's getDerivKernels: binomial smoothing, the "
             "binomial convolved with [1, -2, 1] for the derivative). Borders mirror without repeating "
             "the edge (reflect-101). F and C are not data axes; channels first or last. The intermediate "
             "type is float32; integer outputs are rounded half away from zero and saturated.")
      .inputs(1, 1, {"input"}).outputs(1)
      .arg({.name = "window_size", .type = ArgType::kIntList, .default_value = std::vector<int64_t>{3},
            .doc = "Size of the derivative windows: odd, 3 to 31; one for all data axes or one per axis, "
                   "outermost first.",
            .tensor = true, .list_min = 1, .list_max = 3})
      .arg({.name = "smoothing_size", .type = ArgType::kIntList, .optional = true,
            .doc = "Size of the smoothing windows, per axis they smooth along: odd, 1 (no smoothing) to 31; "
                   "one for all axes or one per axis. Without it, the smoothing windows of each partial "
                   "derivative have the size of its derivative window.",
            .tensor = true, .list_min = 1, .list_max = 3})
      .arg({.name = "scale", .type = ArgType::kFloatList, .optional = true,
            .doc = "Factors for the partial derivatives (default [1.0]): one for all or one per data axis. "
                   "Must not be given with normalized_kernel=True.",
            .tensor = true, .list_min = 1, .list_max = 3})
      .arg({.name = "normalized_kernel", .type = ArgType::kBool, .default_value = false,
            .doc = "Scale each partial derivative by 2^(-s + n + 2), s the sum of the sizes of its windows "
                   "and n the number of data axes."})
      .arg({.name = "dtype", .type = ArgType::kDType, .optional = true,
            .doc = "Output data type: the input type (default) or float32."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<Laplacian>(s); })
      STOKER_GPU_TWIN(Laplacian);
}

}  // namespace stoker
