#include "kernels/cpu/warp/warp.h"

namespace stoker {
namespace kernels {

bool invert_affine(const AffineMap2D& a, AffineMap2D* inv) {
  const double* m = a.m;
  double det = m[0] * m[4] - m[1] * m[3];
  if (!std::isfinite(det) || det == 0.0) return false;
  double r = 1.0 / det;
  double i0 = m[4] * r, i1 = -m[1] * r, i3 = -m[3] * r, i4 = m[0] * r;
  inv->m[0] = i0;
  inv->m[1] = i1;
  inv->m[2] = -(i0 * m[2] + i1 * m[5]);
  inv->m[3] = i3;
  inv->m[4] = i4;
  inv->m[5] = -(i3 * m[2] + i4 * m[5]);
  return true;
}

void rotated_canvas_size(int64_t in_h, int64_t in_w, double angle_deg, int64_t* out_h, int64_t* out_w) {
  // The radians in float32, as DALI converts them: at odd multiples of 45 degrees this decides
  // which of |sin| and |cos| is the larger, and so which side keeps which parity (a 10x21
  // image turned by 45 degrees is 23x22 in DALI, 22x23 with double radians).
  const float rad = static_cast<float>(angle_deg) * static_cast<float>(M_PI / 180.0);
  double c = std::abs(std::cos(double{rad})), s = std::abs(std::sin(double{rad}));
  // The small epsilon keeps right angles from growing a pixel through rounding noise.
  constexpr double eps = 1e-2;
  int64_t w = static_cast<int64_t>(std::ceil(c * in_w + s * in_h - eps));
  int64_t h = static_cast<int64_t>(std::ceil(c * in_h + s * in_w - eps));
  // Keep the parity of the input side each output side mostly comes from: then the pixel grids
  // line up at the centre and small angles blur less.
  int64_t pw = (s <= c ? in_w : in_h) % 2, ph = (s <= c ? in_h : in_w) % 2;
  if (w % 2 != pw) ++w;
  if (h % 2 != ph) ++h;
  *out_w = std::max<int64_t>(w, 1);
  *out_h = std::max<int64_t>(h, 1);
}

AffineMap2D rotation_map(int64_t in_h, int64_t in_w, int64_t out_h, int64_t out_w, double angle_deg) {
  // src = in / 2 + R (dst - out / 2), R = [[cos, -sin], [sin, cos]]: with y pointing down, this
  // turns the picture counter-clockwise on screen.
  double a = angle_deg * M_PI / 180.0;
  double c = std::cos(a), s = std::sin(a);
  double ox = out_w * 0.5, oy = out_h * 0.5;
  AffineMap2D m;
  m.m[0] = c;
  m.m[1] = -s;
  m.m[2] = in_w * 0.5 - (c * ox - s * oy);
  m.m[3] = s;
  m.m[4] = c;
  m.m[5] = in_h * 0.5 - (s * ox + c * oy);
  return m;
}

bool invert_affine(const AffineMap3D& a, AffineMap3D* inv) {
  const double* m = a.m;  // rows (m0 m1 m2 | m3), (m4 m5 m6 | m7), (m8 m9 m10 | m11)
  const double c00 = m[5] * m[10] - m[6] * m[9], c01 = m[6] * m[8] - m[4] * m[10],
               c02 = m[4] * m[9] - m[5] * m[8];
  const double det = m[0] * c00 + m[1] * c01 + m[2] * c02;
  if (!std::isfinite(det) || det == 0.0) return false;
  const double r = 1.0 / det;
  double b[9] = {c00 * r, (m[2] * m[9] - m[1] * m[10]) * r, (m[1] * m[6] - m[2] * m[5]) * r,
                 c01 * r, (m[0] * m[10] - m[2] * m[8]) * r, (m[2] * m[4] - m[0] * m[6]) * r,
                 c02 * r, (m[1] * m[8] - m[0] * m[9]) * r, (m[0] * m[5] - m[1] * m[4]) * r};
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) inv->m[i * 4 + j] = b[i * 3 + j];
    inv->m[i * 4 + 3] = -(b[i * 3] * m[3] + b[i * 3 + 1] * m[7] + b[i * 3 + 2] * m[11]);
  }
  return true;
}

namespace {

// The rotation by `rad` about `axis` (normalised here), right-handed: R = cos I +
// sin [u]x + (1 - cos) u u^T, row-major, in T's arithmetic.
template <typename T>
void rotation_3d(const double axis[3], T rad, T r[9]) {
  const double n = std::sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
  const T x = static_cast<T>(axis[0] / n), y = static_cast<T>(axis[1] / n), z = static_cast<T>(axis[2] / n);
  const T c = std::cos(rad), s = std::sin(rad), t = 1 - c;
  r[0] = t * x * x + c;     r[1] = t * x * y - s * z; r[2] = t * x * z + s * y;
  r[3] = t * x * y + s * z; r[4] = t * y * y + c;     r[5] = t * y * z - s * x;
  r[6] = t * x * z - s * y; r[7] = t * y * z + s * x; r[8] = t * z * z + c;
}

}  // namespace

void rotated_canvas_size_3d(const VolumeDims& in, const double axis[3], double angle_deg,
                            int64_t* out_d, int64_t* out_h, int64_t* out_w) {
  // In float32 throughout, as DALI sizes it, so that sides landing near a whole number round
  // the same way.
  const float rad = static_cast<float>(angle_deg) * static_cast<float>(M_PI / 180.0);
  float r[9];
  rotation_3d<float>(axis, rad, r);
  const int64_t size[3] = {in.width, in.height, in.depth};
  int64_t o[3];
  for (int i = 0; i < 3; ++i) {
    float acc = 0;
    int dominant = i;  // the input side that contributes most to this output side
    for (int j = 0; j < 3; ++j) {
      const float a = std::fabs(r[i * 3 + j]);
      acc += a * static_cast<float>(size[j]);
      if (a > std::fabs(r[i * 3 + dominant])) dominant = j;
    }
    o[i] = static_cast<int64_t>(std::ceil(acc - 1e-2f));
    if (o[i] % 2 != size[dominant] % 2) ++o[i];  // keep the parity: less blur at the centre
    o[i] = std::max<int64_t>(o[i], 1);
  }
  *out_w = o[0];
  *out_h = o[1];
  *out_d = o[2];
}

AffineMap3D rotation_map_3d(const VolumeDims& in, const VolumeDims& out, const double axis[3],
                            double angle_deg) {
  // src = in / 2 + R(axis, -angle) (dst - out / 2): the inverse of turning the volume.
  double r[9];
  rotation_3d<double>(axis, -angle_deg * M_PI / 180.0, r);
  const double ci[3] = {in.width * 0.5, in.height * 0.5, in.depth * 0.5};
  const double co[3] = {out.width * 0.5, out.height * 0.5, out.depth * 0.5};
  AffineMap3D m;
  for (int i = 0; i < 3; ++i) {
    double t = ci[i];
    for (int j = 0; j < 3; ++j) {
      m.m[i * 4 + j] = r[i * 3 + j];
      t -= r[i * 3 + j] * co[j];
    }
    m.m[i * 4 + 3] = t;
  }
  return m;
}

RowMap affine_row_map(const AffineMap2D& a) {
  return [a](int64_t y, int64_t width, float* sx, float* sy) {
    const double* m = a.m;
    double yc = y + 0.5;
    double bx = m[1] * yc + m[2], by = m[4] * yc + m[5];
    for (int64_t x = 0; x < width; ++x) {
      double xc = x + 0.5;
      sx[x] = static_cast<float>(m[0] * xc + bx);
      sy[x] = static_cast<float>(m[3] * xc + by);
    }
  };
}

bool invert_perspective(const PerspectiveMap2D& a, PerspectiveMap2D* inv) {
  const double* m = a.m;
  // The adjugate over the determinant.
  double c0 = m[4] * m[8] - m[5] * m[7], c1 = m[5] * m[6] - m[3] * m[8], c2 = m[3] * m[7] - m[4] * m[6];
  double det = m[0] * c0 + m[1] * c1 + m[2] * c2;
  if (!std::isfinite(det) || det == 0.0) return false;
  double r = 1.0 / det;
  double* o = inv->m;
  o[0] = c0 * r;
  o[1] = (m[2] * m[7] - m[1] * m[8]) * r;
  o[2] = (m[1] * m[5] - m[2] * m[4]) * r;
  o[3] = c1 * r;
  o[4] = (m[0] * m[8] - m[2] * m[6]) * r;
  o[5] = (m[2] * m[3] - m[0] * m[5]) * r;
  o[6] = c2 * r;
  o[7] = (m[1] * m[6] - m[0] * m[7]) * r;
  o[8] = (m[0] * m[4] - m[1] * m[3]) * r;
  return true;
}

RowMap perspective_row_map(const PerspectiveMap2D& p, bool nearest) {
  return [p, nearest](int64_t y, int64_t width, float* sx, float* sy) {
    const double* m = p.m;
    const double yd = static_cast<double>(y);
    // Per row, rounded to float once; per pixel, a float multiply-add (computed in double: the
    // product of two floats is exact there) and a float division.
    const double bx = static_cast<float>(yd * m[1] + m[2]), by = static_cast<float>(yd * m[4] + m[5]),
                 bw = static_cast<float>(yd * m[7] + m[8]);
    const double m0 = static_cast<float>(m[0]), m3 = static_cast<float>(m[3]), m6 = static_cast<float>(m[6]);
    for (int64_t x = 0; x < width; ++x) {
      const double xd = static_cast<double>(static_cast<float>(x));
      const float w = static_cast<float>(m6 * xd + bw);
      float u = static_cast<float>(m0 * xd + bx) / w, v = static_cast<float>(m3 * xd + by) / w;
      if (nearest) {
        u = std::nearbyint(u);  // half to even, as OpenCV's rounding
        v = std::nearbyint(v);
      }
      // To the sampler's convention: pixel (i, j) covers [i, i + 1), its centre at i + 0.5.
      sx[x] = u + 0.5f;
      sy[x] = v + 0.5f;
    }
  };
}

RowMap water_row_map(const WaterParams& p) {
  return [p](int64_t y, int64_t width, float* sx, float* sy) {
    float fy = static_cast<float>(y);
    float dx = p.ampl_x * std::sin(p.freq_x * fy + p.phase_x);
    for (int64_t x = 0; x < width; ++x) {
      float fx = static_cast<float>(x);
      sx[x] = fx + dx;
      sy[x] = fy + p.ampl_y * std::cos(p.freq_y * fx + p.phase_y);
    }
  };
}

RowMap sphere_row_map(int64_t height, int64_t width) {
  float mid_x = width * 0.5f, mid_y = height * 0.5f;
  // DALI truncates the radius to an integer; a 1-pixel image would divide by zero.
  int d = std::max(static_cast<int>(std::max(mid_x, mid_y)), 1);
  return [mid_x, mid_y, d](int64_t y, int64_t width, float* sx, float* sy) {
    float ty = y + 0.5f - mid_y;
    for (int64_t x = 0; x < width; ++x) {
      float tx = x + 0.5f - mid_x;
      float rad = std::sqrt(tx * tx + ty * ty) / d;
      sx[x] = mid_x + rad * tx;
      sy[x] = mid_y + rad * ty;
    }
  };
}

}  // namespace kernels
}  // namespace stoker
