#include "kernels/cpu/detection/affine.h"

#include <utility>

namespace stoker {
namespace kernels {
namespace {

constexpr double kPi = 3.14159265358979323846;

// T(center) @ a @ T(-center): a applied about center instead of the origin.
Affine about(const Affine& a, const double* center) {
  if (!center) return a;
  std::vector<double> neg(a.ndim);
  for (int d = 0; d < a.ndim; ++d) neg[d] = -center[d];
  return affine_compose(affine_translation(center, a.ndim),
                        affine_compose(a, affine_translation(neg.data(), a.ndim)));
}

}  // namespace

Affine affine_identity(int ndim) {
  Affine a{ndim, std::vector<double>((ndim + 1) * (ndim + 1), 0.0)};
  for (int d = 0; d <= ndim; ++d) a.at(d, d) = 1.0;
  return a;
}

Affine affine_from_rows(const double* rows, int ndim) {
  Affine a = affine_identity(ndim);
  for (int r = 0; r < ndim; ++r)
    for (int c = 0; c <= ndim; ++c) a.at(r, c) = rows[r * (ndim + 1) + c];
  return a;
}

void affine_store(float* out, const Affine& a) {
  for (int r = 0; r < a.ndim; ++r)
    for (int c = 0; c <= a.ndim; ++c) out[r * (a.ndim + 1) + c] = static_cast<float>(a.at(r, c));
}

Affine affine_compose(const Affine& a, const Affine& b) {
  const int n = a.ndim + 1;
  Affine r{a.ndim, std::vector<double>(n * n, 0.0)};
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < n; ++k) {
      const double v = a.at(i, k);
      if (v == 0.0) continue;  // keeps inf * 0 out of the product (a crop of a zero extent)
      for (int j = 0; j < n; ++j) r.at(i, j) += v * b.at(k, j);
    }
  return r;
}

Affine affine_translation(const double* offset, int ndim) {
  Affine a = affine_identity(ndim);
  for (int d = 0; d < ndim; ++d) a.at(d, ndim) = offset[d];
  return a;
}

Affine affine_scale(const double* scale, const double* center, int ndim) {
  Affine a = affine_identity(ndim);
  for (int d = 0; d < ndim; ++d) {
    a.at(d, d) = scale[d];
    if (center) a.at(d, ndim) = center[d] - scale[d] * center[d];
  }
  return a;
}

Affine affine_rotation_2d(double angle_deg, const double* center) {
  const double t = angle_deg * kPi / 180.0, c = std::cos(t), s = std::sin(t);
  Affine a = affine_identity(2);
  a.at(0, 0) = c;
  a.at(0, 1) = -s;
  a.at(1, 0) = s;
  a.at(1, 1) = c;
  return about(a, center);
}

Affine affine_rotation_3d(double angle_deg, const double* axis, const double* center) {
  const double len = std::sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
  const double k[3] = {axis[0] / len, axis[1] / len, axis[2] / len};
  const double t = angle_deg * kPi / 180.0, c = std::cos(t), s = std::sin(t);
  // Rodrigues: c I + s [k]x + (1 - c) k k^T.
  const double cross[3][3] = {{0, -k[2], k[1]}, {k[2], 0, -k[0]}, {-k[1], k[0], 0}};
  Affine a = affine_identity(3);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      a.at(i, j) = (i == j ? c : 0.0) + s * cross[i][j] + (1.0 - c) * k[i] * k[j];
  return about(a, center);
}

Affine affine_shear(const double* shear, const double* center, int ndim) {
  Affine a = affine_identity(ndim);
  int k = 0;
  for (int i = 0; i < ndim; ++i)
    for (int j = 0; j < ndim; ++j)
      if (i != j) a.at(i, j) = shear[k++];
  return about(a, center);
}

std::vector<double> shear_from_angles(const std::vector<double>& angles_deg) {
  std::vector<double> s(angles_deg.size());
  for (size_t i = 0; i < s.size(); ++i) s[i] = std::tan(angles_deg[i] * kPi / 180.0);
  return s;
}

Affine affine_crop(const double* from_start, const double* from_end, const double* to_start,
                   const double* to_end, int ndim, bool absolute) {
  Affine a = affine_identity(ndim);
  for (int d = 0; d < ndim; ++d) {
    double f0 = from_start[d], f1 = from_end[d], t0 = to_start[d], t1 = to_end[d];
    if (absolute) {
      if (f0 > f1) std::swap(f0, f1);
      if (t0 > t1) std::swap(t0, t1);
    }
    const double scale = (t1 - t0) / (f1 - f0);
    a.at(d, d) = scale;
    a.at(d, ndim) = t0 - scale * f0;
  }
  return a;
}

}  // namespace kernels
}  // namespace stoker
