// multi_paste: each output is a canvas of zeros onto which regions of input samples are pasted,
// in order (a later region covers an earlier one where they overlap). The regions are worked out
// and checked in setup(); run_sample() copies rows (kernels/cpu/geometry/strided_copy) or converts
// them when dtype asks for another type (rounding as fn.cast does).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "core/repr.h"
#include "kernels/cpu/geometry/strided_copy.h"
#include "kernels/cuda/cast_gpu.h"
#include "kernels/cuda/copy_gpu.h"
#include "ops/generic/gpu_twin.h"
#include "core/cast_value.h"
#include "ops/geometry/geometry_common.h"

namespace stoker {
namespace {

// One pasted region: rows [in_y, in_y + h) and columns [in_x, in_x + w) of a source sample land
// at (out_y, out_x) of the output.
struct Region {
  int input = 0;       // which input batch
  int64_t sample = 0;  // which sample of it
  int64_t in_y = 0, in_x = 0, h = 0, w = 0, out_y = 0, out_x = 0;
};

bool paste_type(DType t) {
  return t == DType::kUInt8 || t == DType::kInt16 || t == DType::kInt32 || t == DType::kFloat32;
}

template <typename F>
void visit_paste_type(DType t, F&& f) {
  switch (t) {
    case DType::kUInt8: return f(uint8_t{});
    case DType::kInt16: return f(int16_t{});
    case DType::kInt32: return f(int32_t{});
    case DType::kFloat32: return f(float{});
    default: STOKER_ASSERT(false, "multi_paste: unexpected type");
  }
}

std::string pair_str(int64_t a, int64_t b) { return std::to_string(a) + " x " + std::to_string(b); }

class MultiPaste : public Operator {
 public:
  explicit MultiPaste(const OpSpec& spec) : Operator(spec) {
    with_ids_ = spec.has("in_ids") || spec.is_tensor_arg("in_ids");
    if (with_ids_ && spec.num_inputs != 1)
      spec.arg_error("in_ids", "is given, so the operator takes exactly one input batch (the samples "
                               "in_ids picks from), got " + std::to_string(spec.num_inputs) +
                                   " inputs. Leave in_ids out to paste sample i of each input into "
                                   "output i.");
    for (const char* a : {"in_anchors", "shapes", "out_anchors"}) {
      const std::string rel = std::string(a) + "_rel";
      if ((spec.has(a) || spec.is_tensor_arg(a)) && (spec.has(rel) || spec.is_tensor_arg(rel)))
        spec.arg_error(rel, std::string("cannot be given together with ") + a + "; give one of them.");
    }
    if (spec.has("dtype")) {
      DType t = static_cast<DType>(spec.get<int64_t>("dtype"));
      if (!paste_type(t))
        spec.arg_error("dtype", std::string("must be UINT8, INT16, INT32 or FLOAT, got ") + dtype_name(t) + ".");
    }
  }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in0 = ws.input(0);
    const int n_in = static_cast<int>(ws.inputs.size());
    std::string layout = in0.layout();
    const int nd = in0.ndim();
    if (layout.empty()) layout = nd == 3 ? "HWC" : nd == 4 ? "FHWC" : "";
    for (int k = 0; k < n_in; ++k) {
      const Batch& b = ws.input(k);
      const std::string l = b.layout().empty() ? layout : b.layout();
      if (!((l == "HWC" && b.ndim() == 3) || (l == "FHWC" && b.ndim() == 4)) || l != layout)
        fail(ErrorKind::kInvalidArgument,
             spec_.display_name() + ": input " + std::to_string(k) + " must be images with layout HWC or " +
                 "sequences with layout FHWC (the same for every input), got layout '" + b.layout() +
                 "' with " + std::to_string(b.ndim()) + " dimensions. Decode with fn.decoders.image "
                 "(HWC), or transpose channel-first data first.");
      if (!paste_type(b.dtype()))
        fail(ErrorKind::kInvalidArgument,
             spec_.display_name() + ": input " + std::to_string(k) + " has type " + dtype_name(b.dtype()) +
                 ", but the operator takes uint8, int16, int32 or float32 images; cast them first (fn.cast).");
      if (b.dtype() != in0.dtype())
        fail(ErrorKind::kInvalidArgument,
             spec_.display_name() + ": all inputs must have the same type; input 0 is " +
                 dtype_name(in0.dtype()) + " and input " + std::to_string(k) + " is " + dtype_name(b.dtype()) +
                 ". Cast them to one type first.");
      if (b.size() != in0.size())
        fail(ErrorKind::kInvalidArgument,
             spec_.display_name() + ": all inputs must have as many samples; input 0 has " +
                 std::to_string(in0.size()) + " and input " + std::to_string(k) + " has " +
                 std::to_string(b.size()) + ".");
    }
    seq_ = layout == "FHWC";
    const int hd = seq_ ? 1 : 0;  // index of H in a sample's shape
    const int64_t n = static_cast<int64_t>(in0.size());
    OutputDesc d;
    d.layout = layout;
    d.dtype = spec_.has("dtype") ? static_cast<DType>(spec_.get<int64_t>("dtype")) : in0.dtype();
    // Without output_size every input sample must have one shape, which the outputs take.
    const bool sized = ws.has_arg("output_size");
    if (!sized) {
      for (int k = 0; k < n_in; ++k)
        for (int64_t i = 0; i < n; ++i)
          if (ws.input(k).shape(i) != in0.shape(0))
            spec_.arg_error("output_size",
                            "is needed when the input samples differ in shape: sample 0 of input 0 is " +
                                to_string(in0.shape(0)) + " but sample " + std::to_string(i) + " of input " +
                                std::to_string(k) + " is " + to_string(ws.input(k).shape(i)) +
                                ". Give output_size=(height, width).");
    }
    regions_.assign(n, {});
    for (int64_t i = 0; i < n; ++i) {
      Shape out = in0.shape(i);
      if (sized) {
        std::vector<double> sz = ws.list_arg("output_size", i);
        if (sz.size() != 2)
          spec_.arg_error("output_size", "takes 2 values (height, width), got " + std::to_string(sz.size()) +
                                             " for sample " + std::to_string(i) + ".");
        if (!(sz[0] >= 0 && sz[1] >= 0))
          spec_.arg_error("output_size", "must not be negative, got (" + num(sz[0]) + ", " +
                                             num(sz[1]) + ") for sample " + std::to_string(i) + ".");
        out[hd] = static_cast<int64_t>(sz[0]);
        out[hd + 1] = static_cast<int64_t>(sz[1]);
      }
      d.shapes.push_back(out);
      // Which samples are pasted, in order.
      std::vector<std::pair<int, int64_t>> src;
      if (with_ids_) {
        for (double v : ids_for(ws, i)) {
          if (!(v >= 0 && v < static_cast<double>(n)))
            spec_.arg_error("in_ids", "must be sample indices in [0, " + std::to_string(n - 1) +
                                          "] (the batch has " + std::to_string(n) + " samples), got " +
                                          num(v) + " for output sample " + std::to_string(i) + ".");
          src.emplace_back(0, static_cast<int64_t>(v));
        }
      } else {
        for (int k = 0; k < n_in; ++k) src.emplace_back(k, i);
      }
      const int64_t count = static_cast<int64_t>(src.size());
      std::vector<double> ia = regions_arg(ws, "in_anchors", i, count),
                          iar = regions_arg(ws, "in_anchors_rel", i, count),
                          sh = regions_arg(ws, "shapes", i, count),
                          shr = regions_arg(ws, "shapes_rel", i, count),
                          oa = regions_arg(ws, "out_anchors", i, count),
                          oar = regions_arg(ws, "out_anchors_rel", i, count);
      for (int64_t r = 0; r < count; ++r) {
        Region g;
        g.input = src[r].first;
        g.sample = src[r].second;
        const Shape& s = ws.input(g.input).shape(g.sample);
        if (s[s.size() - 1] != out[out.size() - 1] || (seq_ && s[0] != out[0]))
          fail(ErrorKind::kInvalidArgument,
               spec_.display_name() + ": region " + std::to_string(r) + " of output sample " + std::to_string(i) +
                   " comes from a sample of shape " + to_string(s) + ", whose " +
                   (seq_ && s[0] != out[0] ? "frame count" : "channel count") + " differs from the output's " +
                   to_string(out) + ". Paste samples with the same number of channels (and frames).");
        const int64_t H = s[hd], W = s[hd + 1], OH = out[hd], OW = out[hd + 1];
        int64_t a[2] = {0, 0}, e[2], o[2] = {0, 0};
        const int64_t src_ext[2] = {H, W}, out_ext[2] = {OH, OW};
        for (int k = 0; k < 2; ++k) {
          if (!ia.empty()) a[k] = static_cast<int64_t>(ia[r * 2 + k]);
          if (!iar.empty())
            a[k] = static_cast<int64_t>(std::floor(rel(iar[r * 2 + k], "in_anchors_rel", r, i) *
                                                   static_cast<float>(src_ext[k])));
          e[k] = src_ext[k] - a[k];
          if (!sh.empty()) e[k] = static_cast<int64_t>(sh[r * 2 + k]);
          if (!shr.empty())
            e[k] = static_cast<int64_t>(std::ceil(rel(shr[r * 2 + k], "shapes_rel", r, i) *
                                                  static_cast<float>(src_ext[k])));
          if (!oa.empty()) o[k] = static_cast<int64_t>(oa[r * 2 + k]);
          if (!oar.empty())
            o[k] = static_cast<int64_t>(std::floor(rel(oar[r * 2 + k], "out_anchors_rel", r, i) *
                                                   static_cast<float>(out_ext[k])));
        }
        const std::string where = " for region " + std::to_string(r) + " of output sample " + std::to_string(i);
        for (int k = 0; k < 2; ++k)
          if (a[k] < 0 || e[k] < 0 || a[k] + e[k] > src_ext[k])
            fail(ErrorKind::kInvalidArgument,
                 spec_.display_name() + ": the pasted region must lie within its source sample" + where +
                     ": input anchor " + pair_str(a[0], a[1]) + " and shape " + pair_str(e[0], e[1]) +
                     " reach outside the source's " + pair_str(H, W) +
                     ". Check in_anchors / shapes (or their _rel forms).");
        for (int k = 0; k < 2; ++k)
          if (o[k] < 0 || o[k] + e[k] > out_ext[k])
            fail(ErrorKind::kInvalidArgument,
                 spec_.display_name() + ": the pasted region must lie within the output" + where +
                     ": output anchor " + pair_str(o[0], o[1]) + " and shape " + pair_str(e[0], e[1]) +
                     " reach outside the output's " + pair_str(OH, OW) +
                     ". Check out_anchors / shapes, or make output_size larger.");
        g.in_y = a[0];
        g.in_x = a[1];
        g.h = e[0];
        g.w = e[1];
        g.out_y = o[0];
        g.out_x = o[1];
        if (g.h > 0 && g.w > 0) regions_[i].push_back(g);
      }
    }
    return {d};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    Batch& out = ws.output(0);
    const Shape& os = out.shape(i);
    const size_t oe = dtype_size(out.dtype());
    std::memset(out[i].data, 0, static_cast<size_t>(volume(os)) * oe);
    const int hd = seq_ ? 1 : 0;
    const int64_t frames = seq_ ? os[0] : 1, OH = os[hd], OW = os[hd + 1], C = os[hd + 2];
    for (const Region& g : regions_[i]) {
      const Batch& in = ws.input(g.input);
      const Shape& is = in.shape(g.sample);
      const int64_t H = is[hd], W = is[hd + 1];
      const Shape frame{H, W, C};
      for (int64_t f = 0; f < frames; ++f) {
        const char* src = static_cast<const char*>(in[g.sample].data) +
                          static_cast<size_t>(f * H * W * C) * dtype_size(in.dtype());
        char* dst = static_cast<char*>(out[i].data) + static_cast<size_t>(f * OH * OW * C) * oe;
        for (int64_t y = 0; y < g.h; ++y) {
          char* row = dst + static_cast<size_t>(((g.out_y + y) * OW + g.out_x) * C) * oe;
          if (in.dtype() == out.dtype()) {
            kernels::strided_copy(row, src, frame, {g.in_y + y, g.in_x, 0}, {1, 1, 1}, Shape{1, g.w, C}, oe);
            continue;
          }
          visit_paste_type(out.dtype(), [&](auto to) {
            visit_paste_type(in.dtype(), [&](auto ti) {
              using Out = decltype(to);
              using In = decltype(ti);
              const In* s = reinterpret_cast<const In*>(src) + ((g.in_y + y) * W + g.in_x) * C;
              Out* o = reinterpret_cast<Out*>(row);
              for (int64_t k = 0; k < g.w * C; ++k) o[k] = cast_value<Out>(s[k]);
            });
          });
        }
      }
    }
  }

  // The GPU twin: the canvases zeroed, then one launch per region index (region r of every
  // output sample), so that later regions cover earlier ones as on the CPU. Same-type pastes are
  // 2-D strided copies (one per region and frame); converting ones cast row by row.
  void run_gpu(Workspace& ws, const std::vector<OutputDesc>& descs) {
    for (size_t k = 0; k < ws.inputs.size(); ++k) require_device_input(ws, static_cast<int>(k));
    const OutputDesc& d = descs[0];
    ws.outputs.assign(1, allocate_device_batch(ws, d.dtype, d.shapes, d.layout));
    Batch& out = ws.outputs[0];
    const size_t oe = dtype_size(out.dtype());
    for (size_t i = 0; i < out.size(); ++i)
      kernels::cuda::zero_gpu(ws, out[i].data, static_cast<size_t>(volume(out.shape(i))) * oe);
    const DType in_type = ws.input(0).dtype();
    const bool same = in_type == out.dtype();
    const size_t ie = dtype_size(in_type);
    const int hd = seq_ ? 1 : 0;
    size_t layers = 0;
    for (const auto& r : regions_) layers = std::max(layers, r.size());
    for (size_t layer = 0; layer < layers; ++layer) {
      std::vector<kernels::cuda::CopyJob> copies;
      std::vector<kernels::cuda::CastJob> casts;
      for (size_t i = 0; i < out.size(); ++i) {
        if (layer >= regions_[i].size()) continue;
        const Region& g = regions_[i][layer];
        const Batch& in = ws.input(g.input);
        const Shape& is = in.shape(g.sample);
        const Shape& os = out.shape(i);
        const int64_t frames = seq_ ? os[0] : 1, H = is[hd], W = is[hd + 1];
        const int64_t OH = os[hd], OW = os[hd + 1], C = os[hd + 2];
        for (int64_t f = 0; f < frames; ++f) {
          const char* src = static_cast<const char*>(in[g.sample].data) +
                            static_cast<size_t>((f * H + g.in_y) * W + g.in_x) * C * ie;
          char* dst = static_cast<char*>(out[i].data) +
                      static_cast<size_t>((f * OH + g.out_y) * OW + g.out_x) * C * oe;
          if (same) {
            kernels::cuda::CopyJob j;
            kernels::cuda::make_copy_job(&j, src, dst, Shape{g.h, g.w * C}, {W * C, 1}, {OW * C, 1});
            copies.push_back(j);
            continue;
          }
          for (int64_t y = 0; y < g.h; ++y)
            casts.push_back({src + static_cast<size_t>(y * W * C) * ie,
                             dst + static_cast<size_t>(y * OW * C) * oe, g.w * C});
        }
      }
      if (!copies.empty()) kernels::cuda::strided_copy_gpu(ws, oe, copies);
      if (!casts.empty()) kernels::cuda::cast_gpu(ws, out.dtype(), in_type, casts);
    }
  }

 private:
  // in_ids of output sample i: a per-sample 1-D tensor (or a scalar), or the constant list.
  std::vector<double> ids_for(const Workspace& ws, int64_t i) const {
    auto it = spec_.tensor_args.find("in_ids");
    if (it != spec_.tensor_args.end()) {
      const Shape& s = ws.arg_inputs[it->second]->shape(i);
      if (s.size() > 1)
        spec_.arg_error("in_ids", "must be a 1-D list of sample indices per output sample, got shape " +
                                      to_string(s) + " for sample " + std::to_string(i) + ".");
    }
    return ws.list_arg("in_ids", i);
  }

  // A [count, 2] argument of output sample i, flat (empty when not given).
  std::vector<double> regions_arg(const Workspace& ws, const char* name, int64_t i, int64_t count) const {
    if (!ws.has_arg(name)) return {};
    auto it = spec_.tensor_args.find(name);
    if (it != spec_.tensor_args.end()) {
      const Shape& s = ws.arg_inputs[it->second]->shape(i);
      if (s.size() != 2 || s[0] != count || s[1] != 2)
        spec_.arg_error(name, "must be a 2-D tensor of shape (number of pasted regions, 2), here (" +
                                  std::to_string(count) + ", 2), got shape " + to_string(s) +
                                  " for output sample " + std::to_string(i) + ".");
    }
    std::vector<double> v = ws.list_arg(name, i);
    if (static_cast<int64_t>(v.size()) != count * 2)
      spec_.arg_error(name, "must give 2 values (y, x) per pasted region, " + std::to_string(count * 2) +
                                " here, got " + std::to_string(v.size()) + " for output sample " +
                                std::to_string(i) + ".");
    return v;
  }

  float rel(double v, const char* name, int64_t region, int64_t sample) const {
    if (!(v >= 0.0 && v <= 1.0))
      spec_.arg_error(name, "must be in [0, 1], got " + num(v) + " for region " +
                                std::to_string(region) + " of output sample " + std::to_string(sample) + ".");
    return static_cast<float>(v);
  }

  bool with_ids_ = false;
  bool seq_ = false;
  std::vector<std::vector<Region>> regions_;
};

}  // namespace

STOKER_REGISTER_OP_NAMED(multi_paste, "multi_paste") {
  schema
      .doc("Performs multiple pastes from image batch to each of the outputs. With in_ids, the "
           "operator takes one batch and in_ids lists, for each output sample, which of its samples "
           "are pasted; without it, sample i of every input is pasted into output i. Each output is a "
           "canvas of zeros of output_size (default: the inputs' shape, which must then be uniform); "
           "regions are pasted in order, later ones covering earlier ones. The type can change "
           "(dtype). Sequences (FHWC) paste frame by frame.")
      .inputs(1, 64, {"input_0"})
      .outputs(1)
      .input_layouts({"HWC", "FHWC"})
      .arg({.name = "in_ids", .type = ArgType::kIntList, .optional = true,
            .doc = "Indices of the input samples to paste into each output sample, in order. If "
                   "given, the operator takes exactly one input batch.",
            .tensor = true})
      .arg({.name = "in_anchors", .type = ArgType::kIntList, .optional = true,
            .doc = "Absolute (y, x) of the top-left corner of each source region: a 2-D tensor of "
                   "shape (number of regions, 2). Default: 0.",
            .tensor = true})
      .arg({.name = "in_anchors_rel", .type = ArgType::kFloatList, .optional = true,
            .doc = "Like in_anchors, relative to the source's shape (values in [0, 1], rounded down).",
            .tensor = true})
      .arg({.name = "shapes", .type = ArgType::kIntList, .optional = true,
            .doc = "(height, width) of each pasted region, shape (number of regions, 2). Default: from "
                   "the input anchor to the end of the source.",
            .tensor = true})
      .arg({.name = "shapes_rel", .type = ArgType::kFloatList, .optional = true,
            .doc = "Like shapes, relative to the source's shape (values in [0, 1], rounded up).",
            .tensor = true})
      .arg({.name = "out_anchors", .type = ArgType::kIntList, .optional = true,
            .doc = "Absolute (y, x) of the top-left corner of each pasted region in the output, shape "
                   "(number of regions, 2). Default: 0.",
            .tensor = true})
      .arg({.name = "out_anchors_rel", .type = ArgType::kFloatList, .optional = true,
            .doc = "Like out_anchors, relative to the output's size (values in [0, 1], rounded down).",
            .tensor = true})
      .arg({.name = "output_size", .type = ArgType::kIntList, .optional = true,
            .doc = "(height, width) of the output canvas. May be left out when all input samples have "
                   "one shape, which the outputs then take.",
            .tensor = true})
      .arg({.name = "dtype", .type = ArgType::kDType, .optional = true,
            .doc = "Output type: UINT8, INT16, INT32 or FLOAT; default: the input's. Floats going to "
                   "integers are rounded half away from zero and saturated, as fn.cast."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<MultiPaste>(s); })
      STOKER_GPU_TWIN(MultiPaste);
}

}  // namespace stoker
