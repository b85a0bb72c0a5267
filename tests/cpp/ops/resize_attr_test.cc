// DALI's resize sizing rules: the examples from DALI's documentation of fn.resize and the cases
// of DALI's own resize_attr tests (written here from the documented behaviour).
#include "ops/image/resize_attr.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/error.h"

namespace stoker {
namespace {

ResizeResult2D run(const ResizeArgs& a, int64_t h, int64_t w) { return compute_resize_2d(a, h, w); }

void expect_size(const ResizeResult2D& r, int64_t h, int64_t w) {
  EXPECT_EQ(r.out_h, h);
  EXPECT_EQ(r.out_w, w);
}

void expect_window(const ResizeResult2D& r, double y0, double x0, double y1, double x1) {
  EXPECT_NEAR(r.y0, y0, 1e-4);
  EXPECT_NEAR(r.x0, x0, 1e-4);
  EXPECT_NEAR(r.y1, y1, 1e-4);
  EXPECT_NEAR(r.x1, x1, 1e-4);
}

std::string error_of(const ResizeArgs& a, std::vector<int64_t> shape) {
  try {
    compute_resize(a, shape);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

// --- documented examples (sizes written W x H in the docs; shapes here are H, W) ---------------

TEST(ResizeAttr, NotSmallerWithMaxSize) {  // 640x480, size 600x600, max_size 720 -> 720x540
  ResizeArgs a;
  a.size = std::vector<float>{600, 600};
  a.mode = ResizeMode::kNotSmaller;
  a.max_size = {720};
  expect_size(run(a, 480, 640), 540, 720);
}

TEST(ResizeAttr, NotLarger) {  // 640x480 with 600x500 -> 600x450
  ResizeArgs a;
  a.size = std::vector<float>{500, 600};
  a.mode = ResizeMode::kNotLarger;
  expect_size(run(a, 480, 640), 450, 600);
}

TEST(ResizeAttr, ModeDocExamples) {
  ResizeArgs a;  // "a 1280x720, with a desired output size of 640x480, produces 640x360"
  a.size = std::vector<float>{480, 640};
  a.mode = ResizeMode::kNotLarger;
  expect_size(run(a, 720, 1280), 360, 640);
  a.mode = ResizeMode::kNotSmaller;  // "640x480 with 1920x1080 produces 1920x1440"
  a.size = std::vector<float>{1080, 1920};
  expect_size(run(a, 480, 640), 1440, 1920);
}

TEST(ResizeAttr, MaxSizeTakesPrecedenceDocExample) {
  // mode="not_smaller", size=800, max_size=1400: 1200x600 -> 1400x700
  ResizeArgs a;
  a.size = std::vector<float>{800};
  a.mode = ResizeMode::kNotSmaller;
  a.max_size = {1400};
  expect_size(run(a, 600, 1200), 700, 1400);
}

TEST(ResizeAttr, SizeWithOneFreeAxis) {
  // 640x480 with the height given as 600 and the width free (size is in H, W order: [600, 0]):
  // the width follows the height's scale -> 800x600.
  ResizeArgs a;
  a.size = std::vector<float>{600, 0};
  expect_size(run(a, 480, 640), 600, 800);
  // [0, 600]: the width given -> 600x450.
  a.size = std::vector<float>{0, 600};
  expect_size(run(a, 480, 640), 450, 600);
  // Stretch leaves the free axis alone.
  a.mode = ResizeMode::kStretch;
  expect_size(run(a, 480, 640), 480, 600);
}

TEST(ResizeAttr, ResizeShorterRounding) {  // 500x375, resize_shorter=256 -> 341x256 (341.33)
  ResizeArgs a;
  a.resize_shorter = 256;
  ResizeResult2D r = run(a, 375, 500);
  expect_size(r, 256, 341);
  // subpixel_scale (the default): the window shrinks about its centre to keep the scale exact.
  const double ideal = 500.0 * 256 / 375;  // 341.333
  const double half = 250 * 341 / ideal;
  expect_window(r, 0, 250 - half, 375, 250 + half);
  a.subpixel_scale = false;
  expect_window(run(a, 375, 500), 0, 0, 375, 500);
  // Portrait and a .5 case: 333x500 -> 256 x 384.38 -> 384; 3x2 -> 3 x 4.5 -> 5 (half away from 0)
  a.subpixel_scale = true;
  expect_size(run(a, 500, 333), 384, 256);
  a.resize_shorter = 3;
  expect_size(run(a, 2, 2), 3, 3);
  expect_size(run(a, 2, 3), 3, 5);
}

TEST(ResizeAttr, ResizeShorterAndLongerWithMaxSize) {
  ResizeArgs a;
  a.resize_shorter = 600;
  expect_size(run(a, 400, 800), 600, 1200);
  expect_size(run(a, 500, 250), 1200, 600);
  a.max_size = {800, 1000};
  expect_size(run(a, 400, 800), 500, 1000);
  expect_size(run(a, 500, 250), 800, 400);
  ResizeArgs b;
  b.resize_longer = 600;
  expect_size(run(b, 400, 800), 300, 600);
  expect_size(run(b, 500, 250), 600, 300);
  expect_size(run(b, 480, 640), 450, 600);
}

TEST(ResizeAttr, SeparateArguments) {
  ResizeArgs a;
  a.resize_x = 480;
  expect_size(run(a, 768, 1024), 360, 480);
  expect_size(run(a, 320, 240), 640, 480);
  ResizeArgs b;
  b.resize_y = 480;
  expect_size(run(b, 768, 1024), 480, 640);
  expect_size(run(b, 320, 240), 480, 360);
  ResizeArgs c;
  c.resize_x = 300;
  c.resize_y = 200;
  expect_size(run(c, 768, 1024), 200, 300);
}

TEST(ResizeAttr, NegativeSizeFlips) {
  ResizeArgs a;
  a.resize_x = -200;
  a.resize_y = 100;
  ResizeResult2D r = run(a, 400, 800);
  expect_size(r, 100, 200);
  expect_window(r, 0, 800, 400, 0);
}

TEST(ResizeAttr, RoiAbsoluteAndFlipped) {
  // roi (7, 200) - (330, 40): x given backwards (flipped); resize_y negative flips y.
  ResizeArgs a;
  a.resize_x = 200;
  a.resize_y = -100;
  a.roi_start = std::vector<float>{7, 200};
  a.roi_end = std::vector<float>{330, 40};
  ResizeResult2D r = run(a, 400, 800);
  expect_size(r, 100, 200);
  expect_window(r, 330, 200, 7, 40);
  a.roi_end = std::vector<float>{80, 230};
  r = run(a, 100, 250);
  expect_window(r, 80, 200, 7, 230);
}

TEST(ResizeAttr, RoiRelative) {
  ResizeArgs a;
  a.resize_x = -200;
  a.resize_y = 100;
  a.roi_start = std::vector<float>{0.1f, 0.9f};
  a.roi_end = std::vector<float>{0.5f, 0.5f};
  a.roi_relative = true;
  ResizeResult2D r = run(a, 400, 800);
  expect_size(r, 100, 200);
  expect_window(r, 40, 400, 200, 720);  // x: 720 -> 400 flipped, then flipped back by -200
  a.roi_start = std::vector<float>{0.8f, 0.9f};
  r = run(a, 100, 250);
  expect_window(r, 80, 125, 50, 225);
}

TEST(ResizeAttr, RoiSetsTheScale) {
  // A 100x50 window resized by resize_shorter=100 -> scale 2 -> 200x100.
  ResizeArgs a;
  a.resize_shorter = 100;
  a.roi_start = std::vector<float>{10, 20};
  a.roi_end = std::vector<float>{110, 70};
  ResizeResult2D r = run(a, 480, 640);
  expect_size(r, 200, 100);
  expect_window(r, 10, 20, 110, 70);
}

TEST(ResizeAttr, DegenerateRoiIsWidened) {
  ResizeArgs a;
  a.size = std::vector<float>{10, 10};
  a.roi_start = std::vector<float>{5, 5};
  a.roi_end = std::vector<float>{5, 5};
  ResizeResult2D r = run(a, 20, 20);
  expect_size(r, 10, 10);
  EXPECT_NEAR(r.y1 - r.y0, 1e-3, 1e-6);
  EXPECT_NEAR(r.x1 - r.x0, 1e-3, 1e-6);
}

TEST(ResizeAttr, DefaultModeAverageScaleAndMaxSize) {
  ResizeArgs a;
  a.size = std::vector<float>{0, 300};
  a.max_size = {100, 0};  // 0: no limit on that axis
  expect_size(run(a, 200, 600), 100, 300);
  a.max_size = {};
  expect_size(run(a, 200, 600), 100, 300);
  a.size = std::vector<float>{0, 900};
  a.max_size = {250};
  expect_size(run(a, 200, 600), 250, 250);  // default mode caps each axis on its own
}

TEST(ResizeAttr, NoSizeKeepsInput) {
  ResizeArgs a;
  a.size = std::vector<float>{0, 0};
  expect_size(run(a, 37, 41), 37, 41);
}

TEST(ResizeAttr, TinyOutputIsAtLeastOnePixel) {
  ResizeArgs a;
  a.resize_x = 0.2f;
  a.resize_y = 0.3f;
  expect_size(run(a, 100, 100), 1, 1);
}

TEST(ResizeAttr, EmptyInput) {
  ResizeArgs a;
  a.size = std::vector<float>{0, 0};
  ResizeResult r = compute_resize(a, {0, 10});
  EXPECT_EQ(r.out_size, (std::vector<int64_t>{0, 10}));
  // The empty axis has no scale of its own and stays empty, whatever was asked (as in DALI).
  a.size = std::vector<float>{5, 5};
  r = compute_resize(a, {0, 10});
  EXPECT_EQ(r.out_size, (std::vector<int64_t>{0, 5}));
  a.mode = ResizeMode::kStretch;
  EXPECT_EQ(compute_resize(a, {0, 10}).out_size, (std::vector<int64_t>{0, 5}));
}

// --- volumes --------------------------------------------------------------------------------

TEST(ResizeAttr, Volume) {
  ResizeArgs a;
  a.resize_z = 480;
  ResizeResult r = compute_resize(a, {512, 768, 1024});
  EXPECT_EQ(r.out_size, (std::vector<int64_t>{480, 720, 960}));
  r = compute_resize(a, {400, 320, 240});
  EXPECT_EQ(r.out_size, (std::vector<int64_t>{480, 384, 288}));

  ResizeArgs b;  // default mode: the missing axis takes the geometric mean of the others' scales
  b.resize_x = 120;
  b.resize_z = 140;
  b.subpixel_scale = false;
  r = compute_resize(b, {123, 234, 345});
  const int y = static_cast<int>(std::lround(234 * std::sqrt(140.0 / 123 * 120 / 345)));
  EXPECT_EQ(r.out_size, (std::vector<int64_t>{140, y, 120}));
  EXPECT_DOUBLE_EQ(r.roi_lo[1], 0);
  EXPECT_DOUBLE_EQ(r.roi_hi[1], 234);
  b.subpixel_scale = true;  // the window of the rounded axis is scaled about its centre
  r = compute_resize(b, {123, 234, 345});
  const double ideal = 234 * std::sqrt(140.0 / 123 * 120 / 345);
  EXPECT_NEAR(r.roi_lo[1], 117 - 117 * y / ideal, 1e-3);
  EXPECT_NEAR(r.roi_hi[1], 117 + 117 * y / ideal, 1e-3);
  b.mode = ResizeMode::kStretch;
  r = compute_resize(b, {123, 234, 345});
  EXPECT_EQ(r.out_size, (std::vector<int64_t>{140, 234, 120}));
}

TEST(ResizeAttr, VolumeNotLargerNotSmaller) {
  ResizeArgs a;
  a.resize_x = 500;
  a.resize_y = 400;
  a.mode = ResizeMode::kNotLarger;
  EXPECT_EQ(compute_resize(a, {1536, 768, 1024}).out_size, (std::vector<int64_t>{750, 375, 500}));
  EXPECT_EQ(compute_resize(a, {32, 320, 240}).out_size, (std::vector<int64_t>{40, 400, 300}));
  a.resize_z = 600;
  EXPECT_EQ(compute_resize(a, {1536, 768, 1024}).out_size, (std::vector<int64_t>{600, 300, 400}));

  ResizeArgs b;
  b.resize_x = 600;
  b.resize_y = 480;
  b.mode = ResizeMode::kNotSmaller;
  EXPECT_EQ(compute_resize(b, {1536, 768, 1024}).out_size, (std::vector<int64_t>{960, 480, 640}));
  EXPECT_EQ(compute_resize(b, {32, 320, 240}).out_size, (std::vector<int64_t>{80, 800, 600}));
  b.resize_z = 160;
  EXPECT_EQ(compute_resize(b, {32, 320, 240}).out_size, (std::vector<int64_t>{160, 1600, 1200}));
  b.max_size = {720};
  EXPECT_EQ(compute_resize(b, {1536, 768, 1024}).out_size, (std::vector<int64_t>{720, 360, 480}));
  EXPECT_EQ(compute_resize(b, {32, 320, 240}).out_size, (std::vector<int64_t>{72, 720, 540}));
  b.max_size = {720, 384, 400};
  EXPECT_EQ(compute_resize(b, {1536, 768, 1024}).out_size, (std::vector<int64_t>{600, 300, 400}));
  ResizeResult r = compute_resize(b, {32, 320, 240});
  EXPECT_EQ(r.out_size, (std::vector<int64_t>{38, 384, 288}));
  EXPECT_NEAR(r.roi_lo[0], 0.166667, 1e-4);  // 38.4 rounded to 38: window kept at scale 1.2
  EXPECT_NEAR(r.roi_hi[0], 31.83333, 1e-4);
}

// --- argument errors ------------------------------------------------------------------------

TEST(ResizeAttr, Errors) {
  ResizeArgs none;
  EXPECT_NE(error_of(none, {10, 10}).find("exactly one way"), std::string::npos);

  ResizeArgs two;
  two.resize_x = 10;
  two.size = std::vector<float>{10, 10};
  std::string msg = error_of(two, {10, 10});
  EXPECT_NE(msg.find("resize_x, size"), std::string::npos) << msg;

  ResizeArgs mode;
  mode.resize_shorter = 10;
  mode.mode = ResizeMode::kStretch;
  EXPECT_NE(error_of(mode, {10, 10}).find("cannot be combined with mode"), std::string::npos);

  ResizeArgs len;
  len.size = std::vector<float>{1, 2, 3};
  msg = error_of(len, {10, 10});
  EXPECT_NE(msg.find("size: expected one value"), std::string::npos) << msg;
  EXPECT_NE(msg.find("got 3 values [1, 2, 3]"), std::string::npos) << msg;

  ResizeArgs roi;
  roi.resize_x = 5;
  roi.roi_start = std::vector<float>{0, 0};
  EXPECT_NE(error_of(roi, {10, 10}).find("roi_start and roi_end must be given together"),
            std::string::npos);

  ResizeArgs z;
  z.resize_z = 5;
  EXPECT_NE(error_of(z, {10, 10}).find("resize_z: only applies to volumes"), std::string::npos);

  ResizeArgs nan;
  nan.resize_x = std::nanf("");
  EXPECT_NE(error_of(nan, {10, 10}).find("resize_x: expected a finite number"),
            std::string::npos);

  ResizeArgs huge;
  huge.resize_shorter = 1e6f;
  EXPECT_NE(error_of(huge, {1, 100000}).find("use max_size"), std::string::npos);

  EXPECT_EQ(parse_resize_mode("not_larger"), ResizeMode::kNotLarger);
  try {
    parse_resize_mode("fit");
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("got \"fit\""), std::string::npos);
  }
}

}  // namespace
}  // namespace stoker
