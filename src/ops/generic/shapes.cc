// shapes, get_property, copy, cast_like, element_extract, per_frame, sequence_rearrange: what a
// batch knows about itself, and the frames of sequences.
#include <cstring>

#include "core/convert.h"
#include "kernels/cuda/cast_gpu.h"
#include "kernels/cuda/copy_gpu.h"
#include "core/cast_value.h"
#include "ops/generic/gpu_twin.h"
#include "ops/generic/shared_view.h"
#include "pipeline/gpu_batch.h"
#include "pipeline/operator.h"

namespace stoker {
namespace {

[[noreturn]] void op_error(const OpSpec& spec, const std::string& what) {
  fail(ErrorKind::kInvalidArgument, spec.display_name() + ": " + what);
}

class Shapes : public Operator {
 public:
  explicit Shapes(const OpSpec& spec) : Operator(spec) {
    dtype_ = static_cast<DType>(spec.get<int64_t>("dtype"));
    switch (dtype_) {
      case DType::kInt32: case DType::kUInt32: case DType::kInt64: case DType::kUInt64:
      case DType::kFloat32: case DType::kFloat64: break;
      default:
        spec.arg_error("dtype", std::string("must be one of int32, uint32, int64, uint64, float32 "
                                            "or float64, got ") + dtype_name(dtype_) + ".");
    }
  }
  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    OutputDesc d{dtype_, "", {}};
    for (size_t i = 0; i < in.size(); ++i) d.shapes.push_back({static_cast<int64_t>(in.shape(i).size())});
    return {d};
  }
  void run_sample(Workspace& ws, int64_t i, int) override {
    const Shape& s = ws.input(0).shape(i);
    visit_dtype(dtype_, [&](auto t) {
      using T = decltype(t);
      for (size_t d = 0; d < s.size(); ++d) ws.output(0).data<T>(i)[d] = static_cast<T>(s[d]);
    });
  }

 private:
  DType dtype_;
};

class GetProperty : public Operator {
 public:
  explicit GetProperty(const OpSpec& spec) : Operator(spec), layout_(spec.get<std::string>("key") == "layout") {}
  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    OutputDesc d{DType::kUInt8, "", {}};
    for (size_t i = 0; i < in.size(); ++i)
      d.shapes.push_back({static_cast<int64_t>(value(in, i).size())});
    return {d};
  }
  void run_sample(Workspace& ws, int64_t i, int) override {
    const std::string& v = value(ws.input(0), i);
    if (!v.empty()) std::memcpy(ws.output(0)[i].data, v.data(), v.size());
  }

 private:
  const std::string& value(const Batch& in, size_t i) const { return layout_ ? in.layout() : in[i].source; }
  bool layout_;
};

class Copy : public Operator {
 public:
  explicit Copy(const OpSpec& spec) : Operator(spec) {}
  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    return {OutputDesc{in.dtype(), in.layout(), in.shapes()}};
  }
  void run_sample(Workspace& ws, int64_t i, int) override {
    const Batch& in = ws.input(0);
    if (size_t n = in.sample_bytes(i)) std::memcpy(ws.output(0)[i].data, in[i].data, n);
  }
  void run_gpu(Workspace& ws, const std::vector<OutputDesc>& descs) {
    require_device_input(ws);
    const Batch& in = ws.input(0);
    const OutputDesc& d = descs[0];
    ws.outputs.assign(1, allocate_device_batch(ws, d.dtype, d.shapes, d.layout));
    std::vector<kernels::cuda::CopyJob> jobs;
    for (size_t i = 0; i < in.size(); ++i)
      jobs.push_back(kernels::cuda::dense_copy_job(in[i].data, ws.outputs[0][i].data, volume(in.shape(i))));
    kernels::cuda::strided_copy_gpu(ws, dtype_size(in.dtype()), jobs);
  }
};

class CastLike : public Operator {
 public:
  explicit CastLike(const OpSpec& spec) : Operator(spec) {}
  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    return {OutputDesc{ws.input(1).dtype(), in.layout(), in.shapes()}};
  }
  void run_sample(Workspace& ws, int64_t i, int) override {
    const Batch& in = ws.input(0);
    Batch& out = ws.output(0);
    const int64_t n = volume(in.shape(i));
    visit_dtype(in.dtype(), [&](auto ti) {
      using In = decltype(ti);
      visit_dtype(out.dtype(), [&](auto to) {
        using Out = decltype(to);
        const In* src = in.data<In>(i);
        Out* dst = out.data<Out>(i);
        for (int64_t k = 0; k < n; ++k) dst[k] = cast_value<Out>(src[k]);
      });
    });
  }
  void run_gpu(Workspace& ws, const std::vector<OutputDesc>& descs) {
    require_device_input(ws);
    const Batch& in = ws.input(0);
    const OutputDesc& d = descs[0];
    ws.outputs.assign(1, allocate_device_batch(ws, d.dtype, d.shapes, d.layout));
    std::vector<kernels::cuda::CastJob> jobs(in.size());
    for (size_t i = 0; i < in.size(); ++i) jobs[i] = {in[i].data, ws.outputs[0][i].data, volume(in.shape(i))};
    kernels::cuda::cast_gpu(ws, d.dtype, in.dtype(), jobs);
  }
};

// A sequence input: at least 2-D, and a layout that is empty or starts with 'F'.
void check_sequence(const OpSpec& spec, const Batch& in, const std::string& what) {
  if (!in.layout().empty() && in.layout()[0] != 'F')
    op_error(spec, "expects sequences (layout starting with 'F', frames first), got layout \"" +
                       in.layout() + "\". Mark the outer dimension as frames with fn.per_frame or "
                       "fn.reshape(layout=...).");
  for (size_t i = 0; i < in.size(); ++i)
    if (in.shape(i).size() < 2)
      op_error(spec, "expects sequences of at least 2 dimensions (frames and " + what +
                         "), got shape " + to_string(in.shape(i)) + " for sample " + std::to_string(i) + ".");
}

class ElementExtract : public Operator {
 public:
  explicit ElementExtract(const OpSpec& spec) : Operator(spec), map_(spec.get<std::vector<int64_t>>("element_map")) {
    if (map_.empty()) spec.arg_error("element_map", "must not be empty.");
    for (int64_t e : map_)
      if (e < 0) spec.arg_error("element_map", "must not have negative indices, got " + to_string(map_) + ".");
  }
  bool sample_wise() const override { return false; }

  void run_batch(Workspace& ws) override {
    const Batch& in = ws.input(0);
    check_sequence(spec_, in, "the elements");
    const std::string layout = in.layout().empty() ? "" : in.layout().substr(1);
    ws.outputs.clear();
    for (int64_t e : map_) {
      Batch out = view_of(in, in.dtype(), layout);
      for (size_t i = 0; i < in.size(); ++i) {
        const Shape& s = in.shape(i);
        if (e >= s[0])
          spec_.arg_error("element_map", "has the index " + std::to_string(e) + ", but sample " +
                                             std::to_string(i) + " has " + std::to_string(s[0]) +
                                             " frames (shape " + to_string(s) + ").");
        out[i].shape = Shape(s.begin() + 1, s.end());
        // A frame of a sequence is a contiguous part of it: the output is a view.
        out[i].data = static_cast<uint8_t*>(in[i].data) + e * volume(out[i].shape) * dtype_size(in.dtype());
      }
      ws.outputs.push_back(std::move(out));
    }
  }

 private:
  std::vector<int64_t> map_;
};

class PerFrame : public Operator {
 public:
  explicit PerFrame(const OpSpec& spec) : Operator(spec), replace_(spec.get<bool>("replace")) {}
  bool sample_wise() const override { return false; }

  void run_batch(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const int ndim = in.ndim();
    if (ndim == 0)
      op_error(spec_, "cannot mark 0-D samples as sequences: a per-frame tensor needs an outer "
                      "dimension with one entry per frame.");
    std::string layout = in.layout();
    if (layout.empty()) {
      layout = "F" + std::string(ndim - 1, '*');
    } else if (layout[0] != 'F') {
      if (!replace_)
        op_error(spec_, "the input layout \"" + layout + "\" does not start with 'F' (frames). "
                        "Give replace=True to make its first dimension the frames.");
      layout[0] = 'F';
    }
    ws.outputs.assign(1, view_of(in, in.dtype(), layout));
  }

 private:
  bool replace_;
};

class SequenceRearrange : public Operator {
 public:
  explicit SequenceRearrange(const OpSpec& spec) : Operator(spec) {}

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    check_sequence(spec_, in, "the frames' own");
    OutputDesc d{in.dtype(), in.layout(), {}};
    orders_.assign(in.size(), {});
    for (size_t i = 0; i < in.size(); ++i) {
      const Shape& s = in.shape(i);
      for (double v : ws.list_arg("new_order", static_cast<int64_t>(i))) orders_[i].push_back(static_cast<int64_t>(v));
      if (orders_[i].empty())
        spec_.arg_error("new_order", "is empty for sample " + std::to_string(i) +
                                         "; an output sequence needs at least one frame.");
      for (size_t k = 0; k < orders_[i].size(); ++k)
        if (orders_[i][k] < 0 || orders_[i][k] >= s[0])
          spec_.arg_error("new_order", "[" + std::to_string(k) + "] = " + std::to_string(orders_[i][k]) +
                                           " is not a frame of sample " + std::to_string(i) + ", which has " +
                                           std::to_string(s[0]) + " (shape " + to_string(s) +
                                           "): give indices in [0, " + std::to_string(s[0] - 1) + "].");
      Shape o = s;
      o[0] = static_cast<int64_t>(orders_[i].size());
      d.shapes.push_back(o);
    }
    return {d};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const Batch& in = ws.input(0);
    const Shape& s = in.shape(i);
    const size_t frame = in.sample_bytes(i) / (s[0] ? s[0] : 1);
    auto* dst = static_cast<uint8_t*>(ws.output(0)[i].data);
    const auto* src = static_cast<const uint8_t*>(in[i].data);
    for (size_t k = 0; k < orders_[i].size(); ++k)
      if (frame) std::memcpy(dst + k * frame, src + orders_[i][k] * frame, frame);
  }
  void run_gpu(Workspace& ws, const std::vector<OutputDesc>& descs) {
    require_device_input(ws);
    const Batch& in = ws.input(0);
    const OutputDesc& d = descs[0];
    ws.outputs.assign(1, allocate_device_batch(ws, d.dtype, d.shapes, d.layout));
    const size_t elem = dtype_size(in.dtype());
    std::vector<kernels::cuda::CopyJob> jobs;
    for (size_t i = 0; i < in.size(); ++i) {
      const Shape& s = in.shape(i);
      const int64_t frame = s[0] ? volume(s) / s[0] : 0;
      const auto* src = static_cast<const uint8_t*>(in[i].data);
      auto* dst = static_cast<uint8_t*>(ws.outputs[0][i].data);
      for (size_t k = 0; k < orders_[i].size(); ++k)
        jobs.push_back(kernels::cuda::dense_copy_job(src + orders_[i][k] * frame * elem,
                                                     dst + k * frame * elem, frame));
    }
    kernels::cuda::strided_copy_gpu(ws, elem, jobs);
  }

 private:
  std::vector<std::vector<int64_t>> orders_;  // this iteration's, per sample
};

}  // namespace

STOKER_REGISTER_OP_NAMED(shapes, "shapes") {
  schema.doc("The shape of each sample, as a 1-D tensor.")
      .inputs(1, 1, {"input"}).outputs(1)
      .arg({.name = "dtype", .type = ArgType::kDType, .default_value = int64_t{static_cast<int>(DType::kInt64)},
            .doc = "The element type of the output: int32, uint32, int64, uint64, float32 or float64."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<Shapes>(s); })
      STOKER_GPU_HOST_TWIN(Shapes);
}

STOKER_REGISTER_OP_NAMED(get_property, "get_property") {
  schema.doc("A property of each sample as a 1-D uint8 array of characters: key \"layout\" (the "
             "batch's layout) or \"source_info\" (where the sample came from: the file path for "
             "readers.file; empty for samples made by operators).")
      .inputs(1, 1, {"input"}).outputs(1)
      .arg({.name = "key", .type = ArgType::kString, .doc = "The property: \"layout\" or \"source_info\".",
            .choices = {"layout", "source_info"}})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<GetProperty>(s); })
      STOKER_GPU_HOST_TWIN(GetProperty);
}

STOKER_REGISTER_OP_NAMED(copy, "copy") {
  schema.doc("A copy of the input.")
      .inputs(1, 1, {"input"}).outputs(1)
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<Copy>(s); })
      STOKER_GPU_TWIN(Copy);
}

STOKER_REGISTER_OP_NAMED(cast_like, "cast_like") {
  schema.doc("Casts the first input to the element type of the second (as fn.cast does).")
      .inputs(2, 2, {"input", "like"}).outputs(1)
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<CastLike>(s); })
      STOKER_GPU_TWIN(CastLike);
}

STOKER_REGISTER_OP_NAMED(element_extract, "element_extract") {
  schema.doc("Extracts frames from sequences: one output per index of element_map, each the "
             "frame at that index (FHWC in, HWC out). The outputs share the input's memory.")
      .inputs(1, 1, {"input"}).outputs(1)
      .arg({.name = "element_map", .type = ArgType::kIntList, .doc = "Indices of the frames to extract."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<ElementExtract>(s); })
      STOKER_GPU_VIEW(ElementExtract);
}

STOKER_REGISTER_OP_NAMED(per_frame, "per_frame") {
  schema.doc("Marks the input as a sequence (its layout starts with 'F'), for per-frame tensor "
             "arguments. Only the layout changes; an input without layout gets \"F\" and '*'s.")
      .inputs(1, 1, {"input"}).outputs(1)
      .arg({.name = "replace", .type = ArgType::kBool, .default_value = false,
            .doc = "With a layout that does not start with 'F': replace its first character "
                   "with 'F' (True) or raise an error (False)."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<PerFrame>(s); })
      STOKER_GPU_VIEW(PerFrame);
}

STOKER_REGISTER_OP_NAMED(sequence_rearrange, "sequence_rearrange") {
  schema.doc("Rearranges the frames of sequences: out[i] = in[new_order[i]]. Frames may be "
             "repeated or dropped; the outer dimension is the frames.")
      .inputs(1, 1, {"input"}).outputs(1)
      .arg({.name = "new_order", .type = ArgType::kIntList, .doc = "The input frame of each output frame.",
            .tensor = true})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<SequenceRearrange>(s); })
      STOKER_GPU_TWIN(SequenceRearrange);
}

}  // namespace stoker
