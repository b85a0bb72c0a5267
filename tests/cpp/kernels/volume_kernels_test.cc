// Kernel-level checks of the 3-D paths: resample_volume's depth pass and warp_affine_3d.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/cpu/imgproc/resample.h"
#include "kernels/cpu/warp/warp.h"

namespace stoker {
namespace kernels {
namespace {

std::vector<uint8_t> ramp(int64_t n) {
  std::vector<uint8_t> v(n);
  for (int64_t k = 0; k < n; ++k) v[k] = static_cast<uint8_t>((k * 37) % 251);
  return v;
}

TEST(VolumeKernels, ResampleWithDepthKeptIsTheSliceResample) {
  const int64_t D = 5, H = 9, W = 11, C = 3, OH = 4, OW = 17;
  auto src = ramp(D * H * W * C);
  ResampleParams p;
  p.min_filter = p.mag_filter = ResampleFilter::kCubic;
  std::vector<uint8_t> vol(D * OH * OW * C), slice(OH * OW * C);
  resample_volume(vol.data(), D, OH, OW, src.data(), D, H, W, C, p, 0.0, double(D));
  for (int64_t z = 0; z < D; ++z) {
    resample(ImageView<uint8_t>(slice.data(), OH, OW, C),
             ImageView<const uint8_t>(src.data() + z * H * W * C, H, W, C), p);
    EXPECT_TRUE(std::equal(slice.begin(), slice.end(), vol.begin() + z * OH * OW * C)) << z;
  }
}

TEST(VolumeKernels, ResampleDepthOnlyIsLinearAlongDepth) {
  // Doubling the depth of a 2-slice volume with linear: slices at 0.25 and 0.75 between the two
  // (clamped outside), whichever pass order the shapes pick.
  const int64_t H = 3, W = 4, C = 1;
  std::vector<float> src(2 * H * W), out(4 * H * W);
  for (int64_t k = 0; k < H * W; ++k) {
    src[k] = 0.0f;
    src[H * W + k] = 100.0f;
  }
  ResampleParams p;
  resample_volume(out.data(), 4, H, W, src.data(), 2, H, W, C, p, 0.0, 2.0);
  const float expect[4] = {0.0f, 25.0f, 75.0f, 100.0f};
  for (int z = 0; z < 4; ++z)
    for (int64_t k = 0; k < H * W; ++k) EXPECT_FLOAT_EQ(out[z * H * W + k], expect[z]) << z;
  // Flipped window: the slices in reverse order.
  resample_volume(out.data(), 4, H, W, src.data(), 2, H, W, C, p, 2.0, 0.0);
  for (int z = 0; z < 4; ++z) EXPECT_FLOAT_EQ(out[z * H * W], expect[3 - z]) << z;
}

TEST(VolumeKernels, WarpIdentityAndShift) {
  const VolumeDims d{4, 5, 6, 2};
  auto src = ramp(4 * 5 * 6 * 2);
  std::vector<uint8_t> dst(src.size());
  for (WarpInterp interp : {WarpInterp::kNearest, WarpInterp::kLinear}) {
    warp_affine_3d(dst.data(), d, src.data(), d, AffineMap3D{}, interp, WarpBorder{});
    EXPECT_EQ(dst, src);
  }
  // One voxel deeper, with a fill: the first output slice reads outside.
  AffineMap3D m;
  m.m[11] = -1;
  WarpBorder fill;
  fill.clamp = false;
  fill.fill = 9;
  warp_affine_3d(dst.data(), d, src.data(), d, m, WarpInterp::kLinear, fill);
  const int64_t slice = 5 * 6 * 2;
  for (int64_t k = 0; k < slice; ++k) EXPECT_EQ(dst[k], 9);
  EXPECT_TRUE(std::equal(src.begin(), src.end() - slice, dst.begin() + slice));
}

TEST(VolumeKernels, InverseAndRotationGeometry) {
  AffineMap3D a, inv, back;
  const double v[12] = {0.9, 0.1, 0.05, 1.5, -0.1, 1.1, 0.2, -2, 0.05, -0.15, 0.95, 1};
  std::copy(v, v + 12, a.m);
  ASSERT_TRUE(invert_affine(a, &inv));
  ASSERT_TRUE(invert_affine(inv, &back));
  for (int k = 0; k < 12; ++k) EXPECT_NEAR(back.m[k], a.m[k], 1e-12);
  AffineMap3D singular;
  singular.m[5] = 0;
  EXPECT_FALSE(invert_affine(singular, &inv));
  // A quarter turn about z swaps height and width and keeps depth.
  const double z[3] = {0, 0, 1};
  int64_t od, oh, ow;
  rotated_canvas_size_3d(VolumeDims{6, 8, 10, 1}, z, 90, &od, &oh, &ow);
  EXPECT_EQ(od, 6);
  EXPECT_EQ(oh, 10);
  EXPECT_EQ(ow, 8);
  // The centre of the output maps to the centre of the input.
  AffineMap3D r = rotation_map_3d(VolumeDims{6, 8, 10, 1}, VolumeDims{6, 10, 8, 1}, z, 90);
  const double c[3] = {4, 5, 3};
  for (int i = 0; i < 3; ++i)
    EXPECT_NEAR(r.m[i * 4] * c[0] + r.m[i * 4 + 1] * c[1] + r.m[i * 4 + 2] * c[2] + r.m[i * 4 + 3],
                (i == 0 ? 5 : i == 1 ? 4 : 3), 1e-12);
}

}  // namespace
}  // namespace kernels
}  // namespace stoker
