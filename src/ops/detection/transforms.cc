// transforms.translation, scale, rotation, shear, crop and combine: one affine matrix per
// sample, ndim x (ndim + 1) float32, ndim inferred from the arguments as DALI infers it. An
// optional input matrix is composed with the new transform: new @ input (the input applied
// first), or input @ new with reverse_order.
#include <algorithm>
#include <string>
#include <vector>

#include "kernels/cpu/detection/affine.h"
#include "pipeline/operator.h"

namespace stoker {
namespace {

using kernels::Affine;

std::string sample_str(int64_t i) { return " for sample " + std::to_string(i); }

// The ndim x (ndim + 1) matrix `b[i]` as an Affine; `what` names it in errors.
Affine read_matrix(const OpSpec& spec, const Batch& b, int64_t i, const std::string& what) {
  const Shape& s = b.shape(i);
  if (s.size() != 2 || s[0] < 1 || s[1] != s[0] + 1)
    fail(ErrorKind::kInvalidArgument,
         spec.display_name() + ": " + what + " of sample " + std::to_string(i) + " has shape " +
             to_string(s) + "; an affine transform is a matrix of shape (ndim, ndim + 1): (2, 3) "
             "for 2-D, (3, 4) for 3-D.");
  const int nd = static_cast<int>(s[0]);
  std::vector<double> rows(nd * (nd + 1));
  visit_dtype(b.dtype(), [&](auto t) {
    using T = decltype(t);
    const T* p = static_cast<const T*>(b[i].data);
    for (size_t k = 0; k < rows.size(); ++k) rows[k] = static_cast<double>(p[k]);
  });
  return kernels::affine_from_rows(rows.data(), nd);
}

// Shared by the transforms.*: builds each sample's matrix in setup(), composes it with the
// input's, and writes it out.
class TransformOp : public Operator {
 public:
  explicit TransformOp(const OpSpec& spec)
      : Operator(spec), reverse_(spec.get<bool>("reverse_order")) {}

  // The input matrices are read (and checked) in setup(); they are a few floats per sample.
  bool setup_reads_input_data() const override { return true; }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const int64_t n = ws.inputs.empty() ? ws.batch_size : static_cast<int64_t>(ws.input(0).size());
    mats_.clear();
    mats_.reserve(n);
    std::vector<Shape> shapes;
    for (int64_t i = 0; i < n; ++i) {
      Affine a = make(ws, i);
      if (!ws.inputs.empty()) {
        const Affine in = read_matrix(spec_, ws.input(0), i, "the input");
        if (in.ndim != a.ndim)
          fail(ErrorKind::kInvalidArgument,
               spec_.display_name() + ": the input of sample " + std::to_string(i) + " is a " +
                   std::to_string(in.ndim) + "-D transform (shape " +
                   to_string(ws.input(0).shape(i)) + "), but the arguments make a " +
                   std::to_string(a.ndim) + "-D one; the two must have the same dimensions.");
        a = reverse_ ? kernels::affine_compose(in, a) : kernels::affine_compose(a, in);
      }
      if (i > 0 && a.ndim != mats_[0].ndim)
        fail(ErrorKind::kInvalidArgument,
             spec_.display_name() + ": sample " + std::to_string(i) + " is a " +
                 std::to_string(a.ndim) + "-D transform but sample 0 a " +
                 std::to_string(mats_[0].ndim) + "-D one; all samples of a batch must have the "
                 "same dimensions.");
      shapes.push_back(Shape{a.ndim, a.ndim + 1});
      mats_.push_back(std::move(a));
    }
    return {OutputDesc{DType::kFloat32, "", shapes}};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    kernels::affine_store(ws.output(0).data<float>(i), mats_[i]);
  }

 protected:
  virtual Affine make(Workspace& ws, int64_t i) = 0;

  // The optional `center` for an ndim-D transform: empty when not given.
  std::vector<double> center(Workspace& ws, int64_t i, int ndim) const {
    if (!ws.has_arg("center")) return {};
    std::vector<double> c = ws.list_arg("center", i);
    if (static_cast<int>(c.size()) != ndim)
      spec_.arg_error("center", "has " + std::to_string(c.size()) + " values" + sample_str(i) +
                                    ", but the transform is " + std::to_string(ndim) +
                                    "-D: give " + std::to_string(ndim) + " values.");
    return c;
  }

  static const double* ptr(const std::vector<double>& v) { return v.empty() ? nullptr : v.data(); }

 private:
  bool reverse_;
  std::vector<Affine> mats_;
};

class Translation : public TransformOp {
 public:
  using TransformOp::TransformOp;
  Affine make(Workspace& ws, int64_t i) override {
    std::vector<double> off = ws.list_arg("offset", i);
    if (off.empty()) spec_.arg_error("offset", "must have at least one value" + sample_str(i) + ".");
    return kernels::affine_translation(off.data(), static_cast<int>(off.size()));
  }
};

class Scale : public TransformOp {
 public:
  using TransformOp::TransformOp;
  Affine make(Workspace& ws, int64_t i) override {
    std::vector<double> s = ws.list_arg("scale", i);
    if (s.empty()) spec_.arg_error("scale", "must have at least one value" + sample_str(i) + ".");
    int nd = static_cast<int>(s.size());
    if (nd == 1 && spec_.has("ndim")) nd = static_cast<int>(spec_.get<int64_t>("ndim"));
    if (nd != static_cast<int>(s.size())) s.assign(nd, s[0]);
    std::vector<double> c = center(ws, i, nd);
    return kernels::affine_scale(s.data(), ptr(c), nd);
  }
};

class Rotation : public TransformOp {
 public:
  using TransformOp::TransformOp;
  Affine make(Workspace& ws, int64_t i) override {
    const double angle = ws.scalar_arg("angle", i, 0);
    if (!ws.has_arg("axis")) {
      std::vector<double> c = center(ws, i, 2);
      return kernels::affine_rotation_2d(angle, ptr(c));
    }
    std::vector<double> axis = ws.list_arg("axis", i);
    if (axis.size() != 3)
      spec_.arg_error("axis", "must have 3 values (a 3-D rotation's axis; leave it out for 2-D), "
                              "got " + std::to_string(axis.size()) + sample_str(i) + ".");
    std::vector<double> c = center(ws, i, 3);
    return kernels::affine_rotation_3d(angle, axis.data(), ptr(c));
  }
};

class Shear : public TransformOp {
 public:
  using TransformOp::TransformOp;
  Affine make(Workspace& ws, int64_t i) override {
    const bool has_shear = ws.has_arg("shear"), has_angles = ws.has_arg("angles");
    if (has_shear == has_angles)
      fail(ErrorKind::kInvalidArgument,
           spec_.display_name() + ": give exactly one of the arguments 'shear' and 'angles'.");
    const std::string name = has_shear ? "shear" : "angles";
    std::vector<double> s = ws.list_arg(name, i);
    if (s.size() != 2 && s.size() != 6)
      spec_.arg_error(name, "must have 2 values (2-D) or 6 values (3-D: xy, xz, yx, yz, zx, zy), "
                            "got " + std::to_string(s.size()) + sample_str(i) + ".");
    if (has_angles) s = kernels::shear_from_angles(s);
    const int nd = s.size() == 2 ? 2 : 3;
    std::vector<double> c = center(ws, i, nd);
    return kernels::affine_shear(s.data(), ptr(c), nd);
  }
};

class Crop : public TransformOp {
 public:
  explicit Crop(const OpSpec& spec) : TransformOp(spec), absolute_(spec.get<bool>("absolute")) {}
  Affine make(Workspace& ws, int64_t i) override {
    static const char* kNames[4] = {"from_start", "from_end", "to_start", "to_end"};
    static const double kDefaults[4] = {0, 1, 0, 1};
    std::vector<double> v[4];
    size_t nd = 1;
    for (int k = 0; k < 4; ++k) {
      v[k] = ws.list_arg(kNames[k], i, {kDefaults[k]});
      if (v[k].empty())
        spec_.arg_error(kNames[k], "must have at least one value" + sample_str(i) + ".");
      nd = std::max(nd, v[k].size());
    }
    for (int k = 0; k < 4; ++k) {
      if (v[k].size() == 1) v[k].assign(nd, v[k][0]);
      if (v[k].size() != nd)
        spec_.arg_error(kNames[k], "has " + std::to_string(v[k].size()) + " values" +
                                       sample_str(i) + ", but another of from_start, from_end, "
                                       "to_start and to_end has " + std::to_string(nd) +
                                       "; give each one value per dimension, or one value for "
                                       "all.");
    }
    return kernels::affine_crop(v[0].data(), v[1].data(), v[2].data(), v[3].data(),
                                static_cast<int>(nd), absolute_);
  }

 private:
  bool absolute_;
};

class Combine : public Operator {
 public:
  explicit Combine(const OpSpec& spec) : Operator(spec), reverse_(spec.get<bool>("reverse_order")) {}

  bool setup_reads_input_data() const override { return true; }

  std::vector<OutputDesc> setup(Workspace& ws) override {
    const int64_t n = ws.input(0).size();
    mats_.assign(n, Affine{});
    std::vector<Shape> shapes;
    for (int64_t i = 0; i < n; ++i) {
      Affine acc;
      for (size_t k = 0; k < ws.inputs.size(); ++k) {
        const Affine m = read_matrix(spec_, ws.input(k), i, "input " + std::to_string(k));
        if (k == 0) {
          acc = m;
          continue;
        }
        if (m.ndim != acc.ndim)
          fail(ErrorKind::kInvalidArgument,
               spec_.display_name() + ": input " + std::to_string(k) + " of sample " +
                   std::to_string(i) + " is a " + std::to_string(m.ndim) + "-D transform (shape " +
                   to_string(ws.input(k).shape(i)) + ") but input 0 a " +
                   std::to_string(acc.ndim) + "-D one (shape " + to_string(ws.input(0).shape(i)) +
                   "); all the transforms combined must have the same dimensions.");
        // Inputs apply in order: input 0 first, so later ones multiply from the left.
        acc = reverse_ ? kernels::affine_compose(acc, m) : kernels::affine_compose(m, acc);
      }
      if (i > 0 && acc.ndim != mats_[0].ndim)
        fail(ErrorKind::kInvalidArgument,
             spec_.display_name() + ": sample " + std::to_string(i) + " is a " +
                 std::to_string(acc.ndim) + "-D transform but sample 0 a " +
                 std::to_string(mats_[0].ndim) + "-D one; all samples of a batch must have the "
                 "same dimensions.");
      shapes.push_back(Shape{acc.ndim, acc.ndim + 1});
      mats_[i] = std::move(acc);
    }
    return {OutputDesc{DType::kFloat32, "", shapes}};
  }

  void run_sample(Workspace& ws, int64_t i, int) override {
    kernels::affine_store(ws.output(0).data<float>(i), mats_[i]);
  }

 private:
  bool reverse_;
  std::vector<Affine> mats_;
};

void common_args(OpSchema& schema) {
  schema.inputs(0, 1, {"input"})
      .outputs(1)
      .arg({.name = "reverse_order", .type = ArgType::kBool, .default_value = false,
            .doc = "With an input matrix: False gives this transform @ input (the input applied "
                   "first), True gives input @ this transform."});
}

ArgDef center_arg() {
  return {.name = "center", .type = ArgType::kFloatList, .optional = true,
          .doc = "The point the transform is applied about (ndim values; default: the origin).",
          .tensor = true};
}

}  // namespace

STOKER_REGISTER_OP_NAMED(transforms_translation, "transforms.translation") {
  common_args(schema);
  schema.doc("An affine matrix that translates points by `offset`: (ndim, ndim + 1) float32, "
             "ndim = the number of offsets. Composed with the input matrix if one is given.")
      .arg({.name = "offset", .type = ArgType::kFloatList, .doc = "The translation vector.",
            .tensor = true})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<Translation>(s); });
}

STOKER_REGISTER_OP_NAMED(transforms_scale, "transforms.scale") {
  common_args(schema);
  schema.doc("An affine matrix that scales points by `scale` per axis about `center`: (ndim, "
             "ndim + 1) float32. Composed with the input matrix if one is given.")
      .arg({.name = "scale", .type = ArgType::kFloatList, .doc = "The scale factor of each axis.",
            .tensor = true})
      .arg(center_arg())
      .arg({.name = "ndim", .type = ArgType::kInt, .optional = true,
            .doc = "The number of dimensions, where `scale` is a single value.", .min = 1.0})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<Scale>(s); });
}

STOKER_REGISTER_OP_NAMED(transforms_rotation, "transforms.rotation") {
  common_args(schema);
  schema.doc("An affine matrix that rotates points by `angle` degrees about `center`: 2-D "
             "((2, 3)) without `axis`, 3-D ((3, 4)) about `axis` with it. Positive angles turn "
             "x toward y. Composed with the input matrix if one is given.")
      .arg({.name = "angle", .type = ArgType::kFloat, .doc = "The angle, in degrees.",
            .tensor = true})
      .arg({.name = "axis", .type = ArgType::kFloatList, .optional = true,
            .doc = "The axis of a 3-D rotation (3 values, any length but zero).", .tensor = true})
      .arg(center_arg())
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<Rotation>(s); });
}

STOKER_REGISTER_OP_NAMED(transforms_shear, "transforms.shear") {
  common_args(schema);
  schema.doc("An affine matrix that shears points about `center`: the identity with the "
             "off-diagonal elements, row by row, from `shear` (2-D: sxy, syx; 3-D: sxy, sxz, "
             "syx, syz, szx, szy) or their tangents from `angles`. Composed with the input "
             "matrix if one is given.")
      .arg({.name = "shear", .type = ArgType::kFloatList, .optional = true,
            .doc = "The shear factors (2 or 6 values).", .tensor = true})
      .arg({.name = "angles", .type = ArgType::kFloatList, .optional = true,
            .doc = "The shear angles in degrees (2 or 6 values); the factors are their tangents.",
            .tensor = true})
      .arg(center_arg())
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<Shear>(s); });
}

STOKER_REGISTER_OP_NAMED(transforms_crop, "transforms.crop") {
  common_args(schema);
  schema.doc("An affine matrix that maps the box [from_start, from_end] onto [to_start, "
             "to_end], axis by axis; ndim is the longest of the four, one value applies to all "
             "axes. Composed with the input matrix if one is given.")
      .arg({.name = "from_start", .type = ArgType::kFloatList,
            .default_value = std::vector<double>{0.0}, .doc = "The source box's start.",
            .tensor = true})
      .arg({.name = "from_end", .type = ArgType::kFloatList,
            .default_value = std::vector<double>{1.0}, .doc = "The source box's end.",
            .tensor = true})
      .arg({.name = "to_start", .type = ArgType::kFloatList,
            .default_value = std::vector<double>{0.0}, .doc = "The destination box's start.",
            .tensor = true})
      .arg({.name = "to_end", .type = ArgType::kFloatList,
            .default_value = std::vector<double>{1.0}, .doc = "The destination box's end.",
            .tensor = true})
      .arg({.name = "absolute", .type = ArgType::kBool, .default_value = false,
            .doc = "If True, a start above its end is swapped with it (a box given by any two "
                   "corners)."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<Crop>(s); });
}

STOKER_REGISTER_OP_NAMED(transforms_combine, "transforms.combine") {
  schema.doc("Combines 2 or more affine matrices into one that applies them in order (input 0 "
             "first): M_n @ ... @ M_1 @ M_0, or M_0 @ M_1 @ ... @ M_n with reverse_order.")
      .inputs(2, 99, {"input0", "input1"})
      .outputs(1)
      .arg({.name = "reverse_order", .type = ArgType::kBool, .default_value = false,
            .doc = "True multiplies the matrices in the inputs' order (input 0 applied last)."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<Combine>(s); });
}

}  // namespace stoker
