// kernels::resample against slow, straightforward double-precision references written from the
// published formulas: PIL's ImagingResample (filter support widened by the scale, taps outside
// the image dropped and the rest renormalised), OpenCV's cv::resize (INTER_LINEAR / INTER_CUBIC
// with a = -0.75 and replicated borders / INTER_NEAREST = floor(x * in / out)), and the direct
// 2-D sum for the clamped-border filters. Images are synthetic (gradients plus noise, fixed
// seeds) of odd sizes; the comparison with the real Pillow and OpenCV on photos is in Python.
#include "kernels/cpu/imgproc/resample.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "core/error.h"

namespace stoker {
namespace kernels {
namespace {

using Filter = ResampleFilter;

// ---------------------------------------------------------------------------------------------
// Test images

template <typename T>
struct Image {
  int64_t h = 0, w = 0, c = 0;
  std::vector<T> data;
  Image() = default;
  Image(int64_t h_, int64_t w_, int64_t c_) : h(h_), w(w_), c(c_), data(h_ * w_ * c_) {}
  T& at(int64_t y, int64_t x, int64_t ch) { return data[(y * w + x) * c + ch]; }
  const T& at(int64_t y, int64_t x, int64_t ch) const { return data[(y * w + x) * c + ch]; }
  ImageView<T> view() { return ImageView<T>(data.data(), h, w, c); }
  ImageView<const T> cview() const { return ImageView<const T>(data.data(), h, w, c); }
};

// Smooth ramps, a hard edge (where cubic and lanczos overshoot) and noise, in [lo, hi].
template <typename T>
Image<T> make_image(int64_t h, int64_t w, int64_t c, uint32_t seed, double lo = 0,
                    double hi = 255) {
  Image<T> im(h, w, c);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> noise(-1, 1);
  for (int64_t y = 0; y < h; y++)
    for (int64_t x = 0; x < w; x++)
      for (int64_t ch = 0; ch < c; ch++) {
        double t = 0.5 + 0.3 * std::sin(0.37 * x + 0.11 * y + ch) + 0.15 * noise(rng);
        if ((x * 7 + y * 3) % 23 < 4) t = ch % 2 ? 1.0 : 0.0;  // edges
        t = std::min(std::max(t, 0.0), 1.0);
        double v = lo + (hi - lo) * t;
        if (std::is_integral<T>::value) v = std::round(v);
        im.at(y, x, ch) = static_cast<T>(v);
      }
  return im;
}

// ---------------------------------------------------------------------------------------------
// References

double tri(double x) {
  x = std::fabs(x);
  return x < 1 ? 1 - x : 0;
}
double keys(double x, double a) {
  x = std::fabs(x);
  if (x < 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return (((x - 5) * x + 8) * x - 4) * a;
  return 0;
}
double sinc(double x) {
  if (x == 0) return 1;
  return std::sin(M_PI * x) / (M_PI * x);
}
double lanczos3(double x) { return std::fabs(x) < 3 ? sinc(x) * sinc(x / 3) : 0; }
double gauss(double x) { return std::fabs(x) < 1 ? std::exp(-4 * x * x) : 0; }

double filter(Filter f, double x, double a) {
  switch (f) {
    case Filter::kLinear:
    case Filter::kTriangular: return tri(x);
    case Filter::kCubic: return keys(x, a);
    case Filter::kLanczos3: return lanczos3(x);
    case Filter::kGaussian: return gauss(x);
    default: return 0;
  }
}
double support(Filter f) {
  switch (f) {
    case Filter::kCubic: return 2;
    case Filter::kLanczos3: return 3;
    default: return 1;
  }
}

// Weights of one axis: w[o][j] for every source pixel j (dense, slow and plain).
using Weights = std::vector<std::vector<double>>;

// Filter-based resampling as PIL and DALI define it: output pixel o samples at
// c = r0 + (o + 0.5) * s; source pixel j (centre j + 0.5) weighs f((j + 0.5 - c) / fs), with
// fs = max(|s|, 1) when antialiasing. Outside taps: dropped (renormalize) or read as the edge
// pixel (clamp); then normalised to sum 1.
Weights filter_weights(int64_t in, int64_t out, double r0, double r1, Filter f, bool widen,
                       ResampleBorder border, double a) {
  const double s = (r1 - r0) / out;
  const double fs = widen ? std::max(std::fabs(s), 1.0) : 1.0;
  const double sup = support(f) * fs;
  Weights w(out, std::vector<double>(in, 0.0));
  for (int64_t o = 0; o < out; o++) {
    const double c = r0 + (o + 0.5) * s;
    double sum = 0;
    for (int64_t j = static_cast<int64_t>(std::floor(c - sup)) - 2; j <= c + sup + 2; j++) {
      double v = filter(f, (j + 0.5 - c) / fs, a);
      if (border == ResampleBorder::kRenormalize && (j < 0 || j >= in)) continue;
      w[o][std::min(std::max<int64_t>(j, 0), in - 1)] += v;
      sum += v;
    }
    for (double& v : w[o]) v /= sum;
  }
  return w;
}

Weights nearest_weights(int64_t in, int64_t out, double r0, double r1, bool corner) {
  Weights w(out, std::vector<double>(in, 0.0));
  for (int64_t o = 0; o < out; o++) {
    // OpenCV's INTER_NEAREST steps by 1 / (out / in), computed in that order.
    double x = corner ? r0 + o * (1.0 / (double(out) / (r1 - r0)))
                      : r0 + (o + 0.5) * (r1 - r0) / out;
    int64_t j = static_cast<int64_t>(std::floor(x));
    w[o][std::min(std::max<int64_t>(j, 0), in - 1)] = 1;
  }
  return w;
}

// OpenCV's INTER_LINEAR: sx = floor((o + 0.5) * s - 0.5), clamped at the edges.
Weights opencv_linear_weights(int64_t in, int64_t out) {
  const double s = double(in) / out;
  Weights w(out, std::vector<double>(in, 0.0));
  for (int64_t o = 0; o < out; o++) {
    double fx = (o + 0.5) * s - 0.5;
    int64_t sx = static_cast<int64_t>(std::floor(fx));
    fx -= sx;
    if (sx < 0) {
      fx = 0;
      sx = 0;
    }
    if (sx >= in - 1) {
      fx = 0;
      sx = in - 1;
    }
    w[o][sx] += 1 - fx;
    if (fx > 0) w[o][sx + 1] += fx;
  }
  return w;
}

// OpenCV's INTER_CUBIC: four taps sx-1 .. sx+2 with A = -0.75, indices replicated at the edges.
Weights opencv_cubic_weights(int64_t in, int64_t out) {
  const double s = double(in) / out, A = -0.75;
  Weights w(out, std::vector<double>(in, 0.0));
  for (int64_t o = 0; o < out; o++) {
    double fx = (o + 0.5) * s - 0.5;
    int64_t sx = static_cast<int64_t>(std::floor(fx));
    fx -= sx;
    double c[4];
    c[0] = ((A * (fx + 1) - 5 * A) * (fx + 1) + 8 * A) * (fx + 1) - 4 * A;
    c[1] = ((A + 2) * fx - (A + 3)) * fx * fx + 1;
    c[2] = ((A + 2) * (1 - fx) - (A + 3)) * (1 - fx) * (1 - fx) + 1;
    c[3] = 1 - c[0] - c[1] - c[2];
    for (int k = 0; k < 4; k++) w[o][std::min(std::max<int64_t>(sx - 1 + k, 0), in - 1)] += c[k];
  }
  return w;
}

// out[y][x] = sum_i sum_j wy[y][i] wx[x][j] in[i][j], in double.
template <typename In>
std::vector<double> apply(const Image<In>& in, const Weights& wy, const Weights& wx) {
  const int64_t oh = wy.size(), ow = wx.size(), C = in.c;
  std::vector<double> tmp(in.h * ow * C, 0.0), out(oh * ow * C, 0.0);
  for (int64_t i = 0; i < in.h; i++)
    for (int64_t x = 0; x < ow; x++)
      for (int64_t j = 0; j < in.w; j++)
        if (wx[x][j] != 0)
          for (int64_t c = 0; c < C; c++) tmp[(i * ow + x) * C + c] += wx[x][j] * in.at(i, j, c);
  for (int64_t y = 0; y < oh; y++)
    for (int64_t i = 0; i < in.h; i++)
      if (wy[y][i] != 0)
        for (int64_t k = 0; k < ow * C; k++) out[y * ow * C + k] += wy[y][i] * tmp[i * ow * C + k];
  return out;
}

template <typename T>
double saturate(double v) {
  if (std::is_floating_point<T>::value) return v;
  double r = std::floor(v + 0.5);
  return std::min(std::max(r, double(std::numeric_limits<T>::lowest())),
                  double(std::numeric_limits<T>::max()));
}

struct Stats {
  double max_err = 0, mean_err = 0;
};

template <typename Out>
Stats compare(const Image<Out>& got, const std::vector<double>& ref) {
  Stats s;
  EXPECT_EQ(got.data.size(), ref.size());
  for (size_t i = 0; i < ref.size(); i++) {
    double e = std::fabs(double(got.data[i]) - saturate<Out>(ref[i]));
    s.max_err = std::max(s.max_err, e);
    s.mean_err += e;
  }
  s.mean_err /= std::max<size_t>(ref.size(), 1);
  return s;
}

template <typename Out, typename In>
Image<Out> run(const Image<In>& in, int64_t oh, int64_t ow, const ResampleParams& p) {
  Image<Out> out(oh, ow, in.c);
  // Scratch full of garbage: results must not depend on it.
  size_t bytes = resample_scratch_bytes(oh, ow, in.h, in.w, in.c, p);
  std::vector<float> scratch(bytes / sizeof(float) + 1, std::numeric_limits<float>::quiet_NaN());
  resample(out.view(), in.cview(), p, scratch.data(), bytes);
  return out;
}

// A reference for params p on one axis.
Weights axis_weights(int64_t in, int64_t out, double r0, double r1, const ResampleParams& p) {
  const bool shrinks = out < std::fabs(r1 - r0);
  Filter f = shrinks ? p.min_filter : p.mag_filter;
  if (f == Filter::kNearest)
    return nearest_weights(in, out, r0, r1, p.nearest == NearestMode::kCorner);
  bool widen = f == Filter::kGaussian || f == Filter::kTriangular || p.antialias;
  return filter_weights(in, out, r0, r1, f, widen, p.border, p.cubic_a);
}

template <typename Out, typename In>
Stats check(const Image<In>& in, int64_t oh, int64_t ow, const ResampleParams& p) {
  double y0 = 0, x0 = 0, y1 = in.h, x1 = in.w;
  if (p.roi) {
    y0 = p.roi->y0;
    x0 = p.roi->x0;
    y1 = p.roi->y1;
    x1 = p.roi->x1;
  }
  auto ref = apply(in, axis_weights(in.h, oh, y0, y1, p), axis_weights(in.w, ow, x0, x1, p));
  return compare(run<Out>(in, oh, ow, p), ref);
}

ResampleParams with(Filter f, bool antialias, ResampleBorder border) {
  ResampleParams p;
  p.min_filter = p.mag_filter = f;
  p.antialias = antialias;
  p.border = border;
  return p;
}

struct Size {
  int64_t ih, iw, oh, ow;
};
const Size kSizes[] = {
    {1, 1, 1, 1},     {1, 1, 5, 3},     {5, 3, 1, 1},    {1, 17, 1, 9},   {17, 1, 9, 1},
    {1, 9, 3, 40},    {3, 500, 7, 123}, {75, 100, 44, 45}, {37, 53, 101, 77},
    {64, 48, 32, 24}, {29, 31, 29, 31}, {40, 30, 17, 71}, {9, 200, 31, 13},
};

std::string name(const Size& s, int64_t c) {
  return std::to_string(s.ih) + "x" + std::to_string(s.iw) + "x" + std::to_string(c) + " -> " +
         std::to_string(s.oh) + "x" + std::to_string(s.ow);
}

// ---------------------------------------------------------------------------------------------
// Tests

TEST(Resample, FiltersMatchReferenceUint8) {
  const Filter filters[] = {Filter::kNearest, Filter::kLinear, Filter::kCubic,
                            Filter::kLanczos3, Filter::kGaussian, Filter::kTriangular};
  for (const Size& s : kSizes)
    for (int64_t c : {1, 3, 4}) {
      auto in = make_image<uint8_t>(s.ih, s.iw, c, 17 + c);
      for (Filter f : filters)
        for (bool aa : {false, true})
          for (auto border : {ResampleBorder::kClamp, ResampleBorder::kRenormalize}) {
            Stats st = check<uint8_t>(in, s.oh, s.ow, with(f, aa, border));
            EXPECT_LE(st.max_err, 1) << name(s, c) << " filter " << int(f) << " aa " << aa
                                     << " border " << int(border);
          }
    }
}

TEST(Resample, FloatOutputIsPrecise) {
  for (const Size& s : kSizes)
    for (int64_t c : {1, 2, 3, 5}) {
      auto in = make_image<uint8_t>(s.ih, s.iw, c, 5);
      auto inf = make_image<float>(s.ih, s.iw, c, 6, -1, 1);
      for (Filter f : {Filter::kLinear, Filter::kCubic, Filter::kLanczos3}) {
        auto p = with(f, true, ResampleBorder::kClamp);
        EXPECT_LE((check<float>(in, s.oh, s.ow, p).max_err), 2e-3) << name(s, c);
        EXPECT_LE((check<float>(inf, s.oh, s.ow, p).max_err), 1e-5) << name(s, c);
      }
    }
}

TEST(Resample, Int16AndUint16) {
  for (const Size& s : {Size{37, 53, 101, 77}, Size{150, 200, 64, 90}, Size{1, 9, 3, 40}}) {
    auto a = make_image<int16_t>(s.ih, s.iw, 3, 1, -30000, 30000);
    auto b = make_image<uint16_t>(s.ih, s.iw, 3, 2, 0, 65535);
    auto p = with(Filter::kCubic, true, ResampleBorder::kClamp);  // overshoots: saturates
    EXPECT_LE((check<int16_t>(a, s.oh, s.ow, p).max_err), 1) << name(s, 3);
    EXPECT_LE((check<uint16_t>(b, s.oh, s.ow, p).max_err), 1) << name(s, 3);
    EXPECT_LE((check<float>(a, s.oh, s.ow, p).max_err), 0.1) << name(s, 3);
    EXPECT_LE((check<uint8_t>(make_image<float>(s.ih, s.iw, 3, 3, -20, 280), s.oh, s.ow, p)
                   .max_err),
              1);
  }
}

TEST(Resample, PilPresetMatchesPilFormulas) {
  for (const Size& s : kSizes)
    for (Filter f : {Filter::kLinear, Filter::kCubic, Filter::kLanczos3}) {
      auto in = make_image<uint8_t>(s.ih, s.iw, 3, 99);
      auto p = ResampleParams::pil(f);
      // PIL's own order: horizontal, round to 8 bits, vertical.
      Weights wy = axis_weights(s.ih, s.oh, 0, s.ih, p), wx = axis_weights(s.iw, s.ow, 0, s.iw, p);
      Image<uint8_t> h(s.ih, s.ow, 3);
      {
        Weights id(s.ih, std::vector<double>(s.ih, 0.0));
        for (int64_t i = 0; i < s.ih; i++) id[i][i] = 1;
        auto hr = apply(in, id, wx);
        for (size_t i = 0; i < hr.size(); i++) h.data[i] = uint8_t(saturate<uint8_t>(hr[i]));
      }
      Weights id_x(s.ow, std::vector<double>(s.ow, 0.0));
      for (int64_t i = 0; i < s.ow; i++) id_x[i][i] = 1;
      auto ref = apply(h, wy, id_x);
      Stats st = compare(run<uint8_t>(in, s.oh, s.ow, p), ref);
      EXPECT_LE(st.max_err, 1) << name(s, 3) << " filter " << int(f);
      EXPECT_LE(st.mean_err, 0.01) << name(s, 3) << " filter " << int(f);
    }
}

TEST(Resample, PhotoSizedShrink) {
  // The common case at its real size: 500x375 RGB to 224x224.
  auto in = make_image<uint8_t>(375, 500, 3, 2024);
  ResampleParams dali;
  Stats st = check<uint8_t>(in, 224, 224, dali);
  EXPECT_LE(st.max_err, 1);
  EXPECT_LE(st.mean_err, 0.01);
  ResampleParams pil = ResampleParams::pil(Filter::kLinear);
  pil.pil_rounding = false;
  st = check<uint8_t>(in, 224, 224, pil);
  EXPECT_LE(st.max_err, 1);
  EXPECT_LE(st.mean_err, 0.01);
}

TEST(Resample, PilNearestAccumulatesLikePil) {
  // PIL steps the sample position by adding the scale in double; where a sample lands within
  // rounding of a pixel edge that picks the other neighbour than the exact formula would.
  for (const Size& s : kSizes) {
    auto in = make_image<uint8_t>(s.ih, s.iw, 1, 3);
    auto out = run<uint8_t>(in, s.oh, s.ow, ResampleParams::pil(Filter::kNearest));
    std::vector<int64_t> xs(s.ow), ys(s.oh);
    double v = double(s.iw) / s.ow * 0.5;
    for (auto& x : xs) {
      x = std::min<int64_t>(static_cast<int64_t>(v), s.iw - 1);
      v += double(s.iw) / s.ow;
    }
    v = double(s.ih) / s.oh * 0.5;
    for (auto& y : ys) {
      y = std::min<int64_t>(static_cast<int64_t>(v), s.ih - 1);
      v += double(s.ih) / s.oh;
    }
    for (int64_t y = 0; y < s.oh; y++)
      for (int64_t x = 0; x < s.ow; x++)
        ASSERT_EQ(out.at(y, x, 0), in.at(ys[y], xs[x], 0)) << name(s, 1) << " at " << y << "," << x;
  }
}

TEST(Resample, OpenCvPresetMatchesOpenCvFormulas) {
  for (const Size& s : kSizes)
    for (int64_t c : {1, 3}) {
      auto in = make_image<uint8_t>(s.ih, s.iw, c, 7);
      auto lin = apply(in, opencv_linear_weights(s.ih, s.oh), opencv_linear_weights(s.iw, s.ow));
      EXPECT_LE(compare(run<uint8_t>(in, s.oh, s.ow, ResampleParams::opencv(Filter::kLinear)), lin)
                    .max_err,
                1)
          << name(s, c);
      auto cub = apply(in, opencv_cubic_weights(s.ih, s.oh), opencv_cubic_weights(s.iw, s.ow));
      EXPECT_LE(compare(run<uint8_t>(in, s.oh, s.ow, ResampleParams::opencv(Filter::kCubic)), cub)
                    .max_err,
                1)
          << name(s, c);
      auto nn = apply(in, nearest_weights(s.ih, s.oh, 0, s.ih, true),
                      nearest_weights(s.iw, s.ow, 0, s.iw, true));
      EXPECT_EQ(compare(run<uint8_t>(in, s.oh, s.ow, ResampleParams::opencv(Filter::kNearest)), nn)
                    .max_err,
                0)
          << name(s, c);
    }
}

TEST(Resample, LinearUpscaleKeepsRampsExact) {
  // A linear ramp stays a ramp under linear and cubic (a = -0.5) interpolation, away from edges.
  Image<float> in(1, 40, 1);
  for (int64_t x = 0; x < 40; x++) in.at(0, x, 0) = float(x);
  for (Filter f : {Filter::kLinear, Filter::kCubic}) {
    auto out = run<float>(in, 1, 100, with(f, true, ResampleBorder::kClamp));
    for (int64_t x = 10; x < 90; x++)
      EXPECT_NEAR(out.at(0, x, 0), (x + 0.5) * 0.4 - 0.5, 1e-4) << "filter " << int(f);
  }
}

TEST(Resample, IdentityAndConstant) {
  auto in = make_image<uint8_t>(31, 47, 3, 11);
  for (Filter f : {Filter::kNearest, Filter::kLinear, Filter::kCubic, Filter::kLanczos3}) {
    auto out = run<uint8_t>(in, 31, 47, with(f, true, ResampleBorder::kClamp));
    EXPECT_EQ(out.data, in.data) << "filter " << int(f);
  }
  Image<uint8_t> flat(23, 19, 4);
  std::fill(flat.data.begin(), flat.data.end(), 201);
  for (Filter f : {Filter::kLinear, Filter::kCubic, Filter::kLanczos3, Filter::kGaussian})
    for (Size s : {Size{23, 19, 7, 5}, Size{23, 19, 70, 50}}) {
      auto out = run<uint8_t>(flat, s.oh, s.ow, with(f, true, ResampleBorder::kRenormalize));
      for (uint8_t v : out.data) ASSERT_EQ(v, 201);
    }
}

TEST(Resample, RoiFlipsAndOutsideImage) {
  auto in = make_image<uint8_t>(45, 61, 3, 23);
  const ResampleRoi rois[] = {
      {3.25, 7.5, 40.75, 50.125},  // crop
      {45, 0, 0, 61},              // vertical flip
      {0, 61, 45, 0},              // horizontal flip
      {40.5, 55, 2.25, 3},         // crop, both flipped
      {-5, -8.5, 50, 70},          // reaches outside
      {10, 10, 10.001, 10.001},    // nearly a point
  };
  for (const ResampleRoi& r : rois)
    for (Filter f : {Filter::kNearest, Filter::kLinear, Filter::kCubic, Filter::kLanczos3})
      for (auto border : {ResampleBorder::kClamp, ResampleBorder::kRenormalize})
        for (Size s : {Size{45, 61, 17, 23}, Size{45, 61, 90, 71}}) {
          auto p = with(f, true, border);
          p.roi = r;
          EXPECT_LE((check<uint8_t>(in, s.oh, s.ow, p).max_err), 1)
              << "roi " << r.y0 << "," << r.x0 << "," << r.y1 << "," << r.x1 << " filter "
              << int(f) << " border " << int(border) << " out " << s.oh << "x" << s.ow;
        }
  // A flip of the whole image with nearest is an exact mirror.
  auto p = with(Filter::kNearest, false, ResampleBorder::kClamp);
  p.roi = ResampleRoi{0, 61, 45, 0};
  auto out = run<uint8_t>(in, 45, 61, p);
  for (int64_t y = 0; y < 45; y++)
    for (int64_t x = 0; x < 61; x++)
      for (int64_t c = 0; c < 3; c++) ASSERT_EQ(out.at(y, x, c), in.at(y, 60 - x, c));
}

TEST(Resample, MinAndMagFiltersPerAxis) {
  // Shrinks in y, grows in x: y uses min_filter, x mag_filter.
  auto in = make_image<uint8_t>(90, 20, 3, 31);
  ResampleParams p;
  p.min_filter = Filter::kLanczos3;
  p.mag_filter = Filter::kNearest;
  EXPECT_LE((check<uint8_t>(in, 30, 50, p).max_err), 1);
  p.min_filter = Filter::kTriangular;  // always widened, even without antialias
  p.mag_filter = Filter::kCubic;
  p.antialias = false;
  EXPECT_LE((check<uint8_t>(in, 30, 50, p).max_err), 1);
}

TEST(Resample, StridedViews) {
  // Input: channels 1..3 of a 5-channel image; output: into a larger canvas with 4-channel
  // pixels. Compared with the same resample of packed copies.
  const int64_t H = 33, W = 41;
  auto big = make_image<uint8_t>(H, W, 5, 41);
  Image<uint8_t> packed(H, W, 3);
  for (int64_t y = 0; y < H; y++)
    for (int64_t x = 0; x < W; x++)
      for (int64_t c = 0; c < 3; c++) packed.at(y, x, c) = big.at(y, x, c + 1);
  ImageView<const uint8_t> in_view;
  in_view.data = big.data.data() + 1;
  in_view.height = H;
  in_view.width = W;
  in_view.channels = 3;
  in_view.row_stride = W * 5;
  in_view.pixel_stride = 5;
  for (Size s : {Size{H, W, 15, 19}, Size{H, W, 70, 90}, Size{H, W, 15, 90}, Size{H, W, 70, 19}})
    for (bool pil : {false, true}) {
      ResampleParams p = pil ? ResampleParams::pil(Filter::kCubic) : ResampleParams();
      auto expect = run<uint8_t>(packed, s.oh, s.ow, p);
      Image<uint8_t> canvas(s.oh + 2, s.ow + 3, 4);
      std::fill(canvas.data.begin(), canvas.data.end(), 7);
      ImageView<uint8_t> out_view;
      out_view.data = canvas.data.data() + (1 * canvas.w + 2) * 4;
      out_view.height = s.oh;
      out_view.width = s.ow;
      out_view.channels = 3;
      out_view.row_stride = canvas.w * 4;
      out_view.pixel_stride = 4;
      resample(out_view, in_view, p);
      for (int64_t y = 0; y < canvas.h; y++)
        for (int64_t x = 0; x < canvas.w; x++)
          for (int64_t c = 0; c < 4; c++) {
            bool inside = y >= 1 && y < s.oh + 1 && x >= 2 && x < s.ow + 2 && c < 3;
            uint8_t want = inside ? expect.at(y - 1, x - 2, c) : 7;
            ASSERT_EQ(canvas.at(y, x, c), want) << y << "," << x << "," << c << " pil " << pil;
          }
    }
}

TEST(Resample, BothPassOrders) {
  // Shapes that make the planner pick each order (and PIL rounding, which forces horizontal
  // first); all must agree with the reference.
  for (Size s : {Size{200, 300, 20, 30}, Size{20, 30, 200, 300}, Size{200, 30, 20, 300},
                 Size{20, 300, 200, 30}, Size{1000, 10, 3, 10}, Size{10, 1000, 10, 3}}) {
    auto in = make_image<uint8_t>(s.ih, s.iw, 3, 8);
    for (bool pil_rounding : {false, true}) {
      auto p = with(Filter::kLinear, true, ResampleBorder::kClamp);
      p.pil_rounding = pil_rounding;
      EXPECT_LE((check<uint8_t>(in, s.oh, s.ow, p).max_err), 1) << name(s, 3);
    }
  }
}

TEST(Resample, ScratchSizeIsEnough) {
  // resample must stay inside the bytes it asked for: a canary after them survives.
  for (const Size& s : kSizes)
    for (Filter f : {Filter::kNearest, Filter::kLinear, Filter::kLanczos3}) {
      auto in = make_image<uint8_t>(s.ih, s.iw, 3, 1);
      Image<uint8_t> out(s.oh, s.ow, 3);
      auto p = with(f, true, ResampleBorder::kClamp);
      p.roi = ResampleRoi{-2.5, 1.5, s.ih + 3.0, s.iw * 0.5 + 2};
      size_t bytes = resample_scratch_bytes(s.oh, s.ow, s.ih, s.iw, 3, p);
      std::vector<unsigned char> scratch(bytes + 256, 0xAB);
      resample(out.view(), in.cview(), p, scratch.data(), bytes);
      for (size_t i = bytes; i < scratch.size(); i++) ASSERT_EQ(scratch[i], 0xAB) << name(s, 3);
    }
}

TEST(Resample, Errors) {
  auto in = make_image<uint8_t>(10, 10, 3, 1);
  Image<uint8_t> out4(5, 5, 4);
  try {
    resample(out4.view(), in.cview(), ResampleParams());
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("output has 4 channels and the input 3"),
              std::string::npos)
        << e.what();
  }
  Image<uint8_t> out(5, 5, 3);
  Image<uint8_t> empty(0, 10, 3);
  try {
    resample(out.view(), empty.cview(), ResampleParams());
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("empty input of shape (0, 10, 3)"), std::string::npos)
        << e.what();
  }
  ResampleParams p;
  p.roi = ResampleRoi{0, 0, 0, 5};
  EXPECT_THROW(resample(out.view(), in.cview(), p), Error);
  p.roi = ResampleRoi{0, 0, std::nan(""), 5};
  EXPECT_THROW(resample(out.view(), in.cview(), p), Error);
  std::vector<char> small(16);
  try {
    resample(out.view(), in.cview(), ResampleParams(), small.data(), small.size());
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInternal);
  }
  // An empty output is not an error, and touches nothing.
  Image<uint8_t> none(0, 5, 3);
  EXPECT_NO_THROW(resample(none.view(), in.cview(), ResampleParams()));
}

}  // namespace
}  // namespace kernels
}  // namespace stoker
