#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/cpu/detection/affine.h"

using namespace stoker;
using namespace stoker::kernels;

namespace {

// Applies an affine transform to a point by its homogeneous matrix.
std::vector<double> apply(const Affine& a, std::vector<double> p) {
  std::vector<double> r(a.ndim, 0.0);
  for (int i = 0; i < a.ndim; ++i) {
    r[i] = a.at(i, a.ndim);
    for (int j = 0; j < a.ndim; ++j) r[i] += a.at(i, j) * p[j];
  }
  return r;
}

}  // namespace

TEST(DetectionAffine, ScaleAboutCenterKeepsTheCenter) {
  const double s[2] = {2, 3}, c[2] = {1, 1};
  Affine a = affine_scale(s, c, 2);
  auto p = apply(a, {1, 1});
  EXPECT_DOUBLE_EQ(p[0], 1);
  EXPECT_DOUBLE_EQ(p[1], 1);
  p = apply(a, {2, 3});
  EXPECT_DOUBLE_EQ(p[0], 3);
  EXPECT_DOUBLE_EQ(p[1], 7);
}

TEST(DetectionAffine, Rotation2DTurnsXTowardY) {
  const double c[2] = {1, 2};
  Affine a = affine_rotation_2d(90, c);
  auto p = apply(a, {2, 2});  // one unit right of the center -> one unit below (toward +y)
  EXPECT_NEAR(p[0], 1, 1e-12);
  EXPECT_NEAR(p[1], 3, 1e-12);
}

TEST(DetectionAffine, Rotation3DAboutZIsThe2DRotation) {
  const double axis[3] = {0, 0, 5};
  Affine a3 = affine_rotation_3d(30, axis, nullptr);
  Affine a2 = affine_rotation_2d(30, nullptr);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) EXPECT_NEAR(a3.at(i, j), a2.at(i, j), 1e-15);
  EXPECT_DOUBLE_EQ(a3.at(2, 2), 1);
  // The axis itself stays put; the matrix is orthonormal.
  const double k[3] = {1, 2, -2};
  Affine r = affine_rotation_3d(77, k, nullptr);
  auto p = apply(r, {1, 2, -2});
  EXPECT_NEAR(p[0], 1, 1e-12);
  EXPECT_NEAR(p[1], 2, 1e-12);
  EXPECT_NEAR(p[2], -2, 1e-12);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      double d = 0;
      for (int m = 0; m < 3; ++m) d += r.at(i, m) * r.at(j, m);
      EXPECT_NEAR(d, i == j ? 1 : 0, 1e-12);
    }
}

TEST(DetectionAffine, ShearFillsOffDiagonalsRowByRow) {
  const double s[6] = {1, 2, 3, 4, 5, 6};
  Affine a = affine_shear(s, nullptr, 3);
  const double want[3][3] = {{1, 1, 2}, {3, 1, 4}, {5, 6, 1}};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) EXPECT_DOUBLE_EQ(a.at(i, j), want[i][j]);
  auto t = shear_from_angles({45, -45});
  EXPECT_NEAR(t[0], 1, 1e-15);
  EXPECT_NEAR(t[1], -1, 1e-15);
}

TEST(DetectionAffine, CropMapsBoxOntoBox) {
  const double fs[2] = {3, 1}, fe[2] = {0, 3}, ts[2] = {1, 1}, te[2] = {5, 2};
  Affine a = affine_crop(fs, fe, ts, te, 2, /*absolute=*/true);
  auto p = apply(a, {0, 1});
  EXPECT_DOUBLE_EQ(p[0], 1);
  EXPECT_DOUBLE_EQ(p[1], 1);
  p = apply(a, {3, 3});
  EXPECT_DOUBLE_EQ(p[0], 5);
  EXPECT_DOUBLE_EQ(p[1], 2);
  // Without `absolute` the reversed x range flips the axis.
  Affine b = affine_crop(fs, fe, ts, te, 2, false);
  EXPECT_DOUBLE_EQ(apply(b, {3, 1})[0], 1);
  EXPECT_DOUBLE_EQ(apply(b, {0, 1})[0], 5);
}

TEST(DetectionAffine, ComposeAppliesTheRightOperandFirst) {
  const double off[2] = {1, 2}, s[2] = {2, 3};
  Affine t = affine_translation(off, 2), sc = affine_scale(s, nullptr, 2);
  auto p = apply(affine_compose(sc, t), {1, 1});  // translate, then scale
  EXPECT_DOUBLE_EQ(p[0], 4);
  EXPECT_DOUBLE_EQ(p[1], 9);
  float rows[6];
  affine_store(rows, affine_compose(t, sc));
  const float want[6] = {2, 0, 1, 0, 3, 2};
  for (int k = 0; k < 6; ++k) EXPECT_EQ(rows[k], want[k]);
  std::vector<double> back(rows, rows + 6);
  Affine r = affine_from_rows(back.data(), 2);
  EXPECT_DOUBLE_EQ(r.at(2, 2), 1);
  EXPECT_DOUBLE_EQ(r.at(1, 2), 2);
}

TEST(DetectionAffine, TransformPointsRoundsHalfAwayAndSaturates) {
  const float mt[6] = {0.5f, 0, 0.5f, 0, -1, 0.5f};  // x/2 + 1/2, -y + 1/2
  const int16_t in[6] = {0, 2, 4, -1, 100, 32767};
  int16_t out[6];
  transform_points(out, in, 3, 2, 2, mt);
  const int16_t want[6] = {1, -2, 3, 2, 51, -32767};
  for (int k = 0; k < 6; ++k) EXPECT_EQ(out[k], want[k]) << k;
  const uint8_t u[2] = {3, 250};
  const float grow[6] = {1, 0, -3.5f, 0, 2, 0};
  uint8_t uo[2];
  transform_points(uo, u, 1, 2, 2, grow);
  EXPECT_EQ(uo[0], 0);    // -0.5 -> -1 -> saturated to 0
  EXPECT_EQ(uo[1], 255);  // 500 -> 255
  float fo[3];
  const float mt3[9] = {1, 2, 0, 3, 4, 1, 0, 0, 7};
  const float p[2] = {1, 1};
  transform_points(fo, p, 1, 2, 3, mt3);
  EXPECT_EQ(fo[0], 3);
  EXPECT_EQ(fo[1], 8);
  EXPECT_EQ(fo[2], 7);
}
