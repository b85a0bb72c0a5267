// Affine transform matrices of the transforms.* operators and the point arithmetic of
// coord_transform. Matrices are built in double and rounded to float32 once, at the end, so
// the operators' outputs are within a float32 rounding of the exact matrix (DALI builds them in
// float32 and may differ from them by that much).
#pragma once
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/convert.h"

namespace stoker {
namespace kernels {

// An affine transform of ndim-D points, held as its (ndim+1) x (ndim+1) homogeneous matrix,
// row-major; the last row is (0, ..., 0, 1).
struct Affine {
  int ndim = 0;
  std::vector<double> m;
  double& at(int r, int c) { return m[r * (ndim + 1) + c]; }
  double at(int r, int c) const { return m[r * (ndim + 1) + c]; }
};

Affine affine_identity(int ndim);
// From the ndim x (ndim+1) rows of an affine matrix (what the operators output).
Affine affine_from_rows(const double* rows, int ndim);
// Writes the ndim x (ndim+1) rows in float32.
void affine_store(float* out, const Affine& a);
// a after b: the matrix product a @ b (b is applied to the points first).
Affine affine_compose(const Affine& a, const Affine& b);

// x -> x + offset.
Affine affine_translation(const double* offset, int ndim);
// x -> center + scale * (x - center); center may be null (the origin).
Affine affine_scale(const double* scale, const double* center, int ndim);
// Counter-clockwise (x toward y) by angle_deg degrees about center (null: the origin), 2-D.
Affine affine_rotation_2d(double angle_deg, const double* center);
// By angle_deg degrees about `axis` (normalized here; a zero axis gives NaN, as in DALI),
// right-handed, through center (null: the origin), 3-D.
Affine affine_rotation_3d(double angle_deg, const double* axis, const double* center);
// Shear about center (null: the origin): the identity with its off-diagonal elements, row by
// row, taken from `shear` (2 for 2-D: sxy, syx; 6 for 3-D: sxy, sxz, syx, syz, szx, szy).
Affine affine_shear(const double* shear, const double* center, int ndim);
// The shear factors of shear angles in degrees (tan of each).
std::vector<double> shear_from_angles(const std::vector<double>& angles_deg);
// Maps the box [from_start, from_end] onto [to_start, to_end] per axis; with `absolute`, a
// start above its end is swapped with it first.
Affine affine_crop(const double* from_start, const double* from_end, const double* to_start,
                   const double* to_end, int ndim, bool absolute);

// coord_transform: out[p] = M @ in[p] + T for npoints points of din coordinates, with
// mt = dout rows of (M row, T element) in float32, computed in float32. Integer outputs are
// rounded half away from zero and saturated.
template <typename Out, typename In>
void transform_points(Out* out, const In* in, int64_t npoints, int din, int dout,
                      const float* mt) {
  for (int64_t p = 0; p < npoints; ++p, in += din, out += dout) {
    for (int r = 0; r < dout; ++r) {
      const float* row = mt + r * (din + 1);
      float acc = 0.0f;
      for (int c = 0; c < din; ++c) acc += row[c] * static_cast<float>(in[c]);
      acc += row[din];
      if constexpr (std::is_floating_point_v<Out>) {
        out[r] = static_cast<Out>(acc);
      } else {
        out[r] = convert_sat<Out>(std::round(acc));
      }
    }
  }
}

}  // namespace kernels
}  // namespace stoker
