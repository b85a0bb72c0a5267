// coord_transform: points [..., D] (any numeric type) -> M @ p + T, with M and T given apart or
// as one [D_out, D + 1] matrix MT (what transforms.* output). Computed in float32; an integer
// output (dtype equal to the input's type) is rounded half away from zero and saturated.
#include <string>
#include <vector>

#include "kernels/cpu/detection/affine.h"
#include "kernels/cuda/detection_gpu.h"
#include "ops/generic/gpu_twin.h"
#include "pipeline/operator.h"

namespace stoker {
namespace {

class CoordTransform : public Operator {
 public:
  explicit CoordTransform(const OpSpec& spec)
      : Operator(spec), dtype_(static_cast<DType>(spec.get<int64_t>("dtype"))) {}

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const bool fused = ws.has_arg("MT"), separate = ws.has_arg("M") || ws.has_arg("T");
    if (fused && separate)
      fail(ErrorKind::kInvalidArgument,
           spec_.display_name() + ": the combined argument 'MT' cannot be given together with "
           "'M' or 'T'; give either MT, or M and/or T.");
    if (in.size() > 0 && dtype_ != DType::kFloat32 && dtype_ != in.dtype())
      spec_.arg_error("dtype", "must be float32 or the input's type (" +
                                   std::string(dtype_name(in.dtype())) + "), got " +
                                   dtype_name(dtype_) + ".");
    if (in.size() > 0) check_output_type(in.dtype());
    mt_.assign(in.size(), {});
    dout_.assign(in.size(), 0);
    std::vector<Shape> shapes;
    for (size_t i = 0; i < in.size(); ++i) {
      const Shape& s = in.shape(i);
      if (s.size() < 2)
        fail(ErrorKind::kInvalidArgument,
             spec_.display_name() + ": sample " + std::to_string(i) + " of the input has shape " +
                 to_string(s) + "; give points as [N, D] (one point of D coordinates per row).");
      const int din = static_cast<int>(s.back());
      mt_[i] = fused ? from_mt(ws, i, din) : from_m_t(ws, i, din);
      dout_[i] = static_cast<int>(mt_[i].size() / (din + 1));
      Shape o = s;
      o.back() = dout_[i];
      shapes.push_back(o);
    }
    return {OutputDesc{in.size() > 0 ? dtype_ : DType::kFloat32, "", shapes}};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    const Batch& in = ws.input(0);
    const Shape& s = in.shape(i);
    const int din = static_cast<int>(s.back());
    const int64_t n = din ? volume(s) / din : 0;
    Batch& out = ws.output(0);
    visit_dtype(in.dtype(), [&](auto ti) {
      using In = decltype(ti);
      const In* src = static_cast<const In*>(in[i].data);
      auto go = [&](auto* dst) {
        kernels::transform_points(dst, src, n, din, dout_[i], mt_[i].data());
      };
      if (dtype_ == DType::kFloat32) {
        go(out.data<float>(i));
      } else if constexpr (!std::is_same_v<In, float16> && !std::is_same_v<In, bool>) {
        go(out.data<In>(i));
      }
    });
  }

  void run_gpu(Workspace& ws, const std::vector<OutputDesc>& descs) {
    require_device_input(ws);
    const Batch& in = ws.input(0);
    ws.outputs.assign(1, allocate_device_batch(ws, descs[0].dtype, descs[0].shapes, descs[0].layout));
    if (in.size() == 0) return;
    std::vector<kernels::cuda::PointsJob> jobs(in.size());
    std::vector<float> matrices;
    for (size_t i = 0; i < in.size(); ++i) {
      const Shape& s = in.shape(i);
      kernels::cuda::PointsJob& j = jobs[i];
      j.in = in[i].data;
      j.out = ws.outputs[0][i].data;
      j.din = static_cast<int>(s.back());
      j.dout = dout_[i];
      j.npoints = j.din ? volume(s) / j.din : 0;
      j.mt = static_cast<int64_t>(matrices.size());
      matrices.insert(matrices.end(), mt_[i].begin(), mt_[i].end());
    }
    kernels::cuda::transform_points_gpu(ws, in.dtype(), descs[0].dtype, jobs, matrices);
  }

 private:
  // The values of a matrix argument and, for a per-sample tensor, its shape (empty otherwise).
  std::vector<double> values(Workspace& ws, const std::string& name, int64_t i, Shape* shape) {
    auto it = spec_.tensor_args.find(name);
    if (it != spec_.tensor_args.end()) *shape = ws.arg_inputs[it->second]->shape(i);
    return ws.list_arg(name, i);
  }

  std::vector<float> from_mt(Workspace& ws, int64_t i, int din) {
    Shape shape;
    std::vector<double> v = values(ws, "MT", i, &shape);
    const int cols = din + 1;
    if (v.size() == 1) {  // a scalar: that times the identity, no translation
      std::vector<float> r(din * cols, 0.0f);
      for (int d = 0; d < din; ++d) r[d * cols + d] = static_cast<float>(v[0]);
      return r;
    }
    if (!shape.empty() ? (shape.size() != 2 || shape[1] != cols || shape[0] < 1)
                       : (v.empty() || v.size() % cols != 0))
      spec_.arg_error("MT", "must be a matrix of " + std::to_string(cols) + " columns (the " +
                                std::to_string(din) + " coordinates of the points, then the "
                                "translation) for sample " + std::to_string(i) + ", got " +
                                (shape.empty() ? std::to_string(v.size()) + " values"
                                               : "shape " + to_string(shape)) + ".");
    return std::vector<float>(v.begin(), v.end());
  }

  std::vector<float> from_m_t(Workspace& ws, int64_t i, int din) {
    Shape mshape;
    std::vector<double> m = ws.has_arg("M") ? values(ws, "M", i, &mshape) : std::vector<double>{1.0};
    if (m.size() == 1) {  // a scalar: that times the identity
      std::vector<double> d(din * din, 0.0);
      for (int k = 0; k < din; ++k) d[k * din + k] = m[0];
      m = d;
      mshape.clear();
    } else if (!mshape.empty() ? (mshape.size() != 2 || mshape[1] != din || mshape[0] < 1)
                               : (m.empty() || m.size() % din != 0)) {
      spec_.arg_error("M", "must be a matrix of " + std::to_string(din) + " columns (the " +
                               std::to_string(din) + " coordinates of the points) for sample " +
                               std::to_string(i) + ", got " +
                               (mshape.empty() ? std::to_string(m.size()) + " values"
                                               : "shape " + to_string(mshape)) + ".");
    }
    const int dout = static_cast<int>(m.size() / din);
    Shape tshape;
    std::vector<double> t = ws.has_arg("T") ? values(ws, "T", i, &tshape) : std::vector<double>{0.0};
    if (t.size() == 1) t.assign(dout, t[0]);
    if (static_cast<int>(t.size()) != dout)
      spec_.arg_error("T", "must have 1 or " + std::to_string(dout) + " values (one per output "
                           "coordinate) for sample " + std::to_string(i) + ", got " +
                           std::to_string(t.size()) + ".");
    std::vector<float> r(dout * (din + 1));
    for (int row = 0; row < dout; ++row) {
      for (int c = 0; c < din; ++c) r[row * (din + 1) + c] = static_cast<float>(m[row * din + c]);
      r[row * (din + 1) + din] = static_cast<float>(t[row]);
    }
    return r;
  }

  void check_output_type(DType in) const {
    if (dtype_ != DType::kFloat32 && (in == DType::kFloat16 || in == DType::kBool))
      spec_.arg_error("dtype", "must be float32 for " + std::string(dtype_name(in)) +
                                   " points, got " + dtype_name(dtype_) + ".");
  }

  DType dtype_;
  std::vector<std::vector<float>> mt_;
  std::vector<int> dout_;
};

}  // namespace

STOKER_REGISTER_OP_NAMED(coord_transform, "coord_transform") {
  schema.doc("Applies an affine transform to points: out = M @ p + T for each point p (the last "
             "axis of the input, D coordinates), in float32. M is [D_out, D] (a scalar: that "
             "times the identity; default the identity), T has D_out values (a scalar: the same "
             "for all; default 0); or MT, the [D_out, D + 1] matrix [M | T] that transforms.* "
             "output. An integer dtype is rounded half away from zero and saturated.")
      .inputs(1, 1, {"input"})
      .outputs(1)
      .arg({.name = "M", .type = ArgType::kFloatList, .optional = true,
            .doc = "The linear part, row-major [D_out, D], or a scalar.", .tensor = true})
      .arg({.name = "T", .type = ArgType::kFloatList, .optional = true,
            .doc = "The translation, D_out values or a scalar.", .tensor = true})
      .arg({.name = "MT", .type = ArgType::kFloatList, .optional = true,
            .doc = "M and T in one [D_out, D + 1] matrix, or a scalar.", .tensor = true})
      .arg({.name = "dtype", .type = ArgType::kDType,
            .default_value = int64_t{static_cast<int>(DType::kFloat32)},
            .doc = "The output type: float32 or the input's type."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<CoordTransform>(s); })
      STOKER_GPU_TWIN(CoordTransform);
}

}  // namespace stoker
