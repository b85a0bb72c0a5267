#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <random>
#include <vector>

#include "core/convert.h"
#include "kernels/cpu/geometry/slice.h"
#include "kernels/cpu/geometry/strided_row.h"

using namespace stoker;
using namespace stoker::kernels;

namespace {

// Element by element, straight from the definition.
template <typename Out, typename In>
std::vector<Out> reference(const std::vector<In>& in, const SliceArgs& a) {
  const int nd = static_cast<int>(a.in_shape.size());
  Shape out_shape = slice_output_shape(a);
  std::vector<Out> out(volume(out_shape));
  std::vector<int64_t> idx(nd, 0), in_stride(nd, 1);
  for (int d = nd - 2; d >= 0; --d) in_stride[d] = in_stride[d + 1] * a.in_shape[d + 1];
  for (size_t flat = 0; flat < out.size(); ++flat) {
    int64_t r = flat;
    for (int k = nd - 1; k >= 0; --k) {
      idx[k] = r % out_shape[k];
      r /= out_shape[k];
    }
    bool inside = true;
    int64_t off = 0, c = 0;
    for (int k = 0; k < nd; ++k) {
      int d = a.perm.empty() ? k : a.perm[k];
      int64_t o = idx[k];
      if (d == a.channel_dim) c = o;
      int64_t coord = (!a.flip.empty() && a.flip[d]) ? a.anchor[d] + a.shape[d] - 1 - o : a.anchor[d] + o;
      if (coord < 0 || coord >= a.in_shape[d]) inside = false;
      off += coord * in_stride[d];
    }
    if (!inside) {
      double f = a.fill.empty() ? 0 : a.fill.size() == 1 ? a.fill[0] : c < (int64_t)a.fill.size() ? a.fill[c] : 0;
      out[flat] = convert_sat<Out>(f);
    } else if (a.mul.empty()) {
      out[flat] = convert_sat<Out>(in[off]);
    } else {
      size_t k = a.mul.size() == 1 ? 0 : c;
      out[flat] = convert_sat<Out>(static_cast<float>(in[off]) * a.mul[k] + a.add[k]);
    }
  }
  return out;
}

template <typename T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  // memcmp must not see the null data() of an empty vector (UB, which UBSan reports).
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}

template <typename Out, typename In>
void check_random_cases(uint32_t seed, bool normalize) {
  std::mt19937 rng(seed);
  auto uni = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int iter = 0; iter < 300; ++iter) {
    int nd = uni(1, 4);
    SliceArgs a;
    for (int d = 0; d < nd; ++d) a.in_shape.push_back(uni(1, 7));
    for (int d = 0; d < nd; ++d) {
      a.shape.push_back(uni(0, 9));
      a.anchor.push_back(uni(-3, static_cast<int>(a.in_shape[d])));
      a.flip.push_back(uni(0, 1));
    }
    if (uni(0, 1)) {
      a.perm.resize(nd);
      for (int d = 0; d < nd; ++d) a.perm[d] = d;
      std::shuffle(a.perm.begin(), a.perm.end(), rng);
    }
    a.channel_dim = uni(-1, nd - 1);
    int nch = a.channel_dim >= 0 ? static_cast<int>(a.shape[a.channel_dim]) : 1;
    for (int c = 0; c < std::max(nch, 1); ++c) {
      a.fill.push_back(uni(-5, 300));
      if (normalize) {
        a.mul.push_back(uni(1, 40) / 7.0f);
        a.add.push_back(uni(-100, 100) / 3.0f);
      }
    }
    std::vector<In> in(volume(a.in_shape));
    for (auto& v : in) v = static_cast<In>(uni(0, 255));
    std::vector<Out> out(volume(slice_output_shape(a)));
    slice_flip_normalize<Out, In>(out.data(), in.data(), a);
    ASSERT_TRUE(same_bits(out, reference<Out, In>(in, a))) << "seed " << seed << " iteration " << iter;
  }
}

}  // namespace

TEST(GeometrySlice, MatchesDefinitionOnRandomWindows) {
  check_random_cases<uint8_t, uint8_t>(1, false);
  check_random_cases<int16_t, int16_t>(2, false);
  check_random_cases<float, uint8_t>(3, true);
  check_random_cases<float16, uint8_t>(4, true);
  check_random_cases<uint8_t, float>(5, true);
  check_random_cases<int8_t, int16_t>(6, true);
  check_random_cases<float, float>(7, false);
}

TEST(GeometrySlice, CropMirrorNormalizeHwcToChw) {
  SliceArgs a;
  a.in_shape = {37, 53, 3};
  a.anchor = {5, 7, 0};
  a.shape = {20, 40, 4};  // the fourth channel is padding
  a.flip = {false, true, false};
  a.perm = {2, 0, 1};
  a.channel_dim = 2;
  a.fill = {0, 0, 0, 9};
  a.mul = {0.0171f, 0.0175f, 0.0174f};
  a.add = {-2.1f, -2.03f, -1.8f};
  std::vector<uint8_t> in(volume(a.in_shape));
  std::mt19937 rng(7);
  for (auto& v : in) v = rng() & 255;
  std::vector<float16> out(volume(slice_output_shape(a)));
  slice_flip_normalize<float16, uint8_t>(out.data(), in.data(), a);
  EXPECT_TRUE(same_bits(out, reference<float16, uint8_t>(in, a)));
  EXPECT_EQ(slice_output_shape(a), (Shape{4, 20, 40}));
}

// The SIMD paths of uint8 images: HWC -> CHW planes and HWC kept, 3 or 4 channels, mirrored or
// not, with windows reaching outside the image.
TEST(GeometrySlice, ImageFastPathsMatchDefinition) {
  std::mt19937 rng(11);
  for (int iter = 0; iter < 400; ++iter) {
    SliceArgs a;
    int64_t C = 3 + iter % 2, h = 1 + rng() % 40, w = 1 + rng() % 70;
    a.in_shape = {h, w, C};
    a.shape = {1 + static_cast<int64_t>(rng() % 45), 1 + static_cast<int64_t>(rng() % 75), C};
    a.anchor = {static_cast<int64_t>(rng() % (h + 6)) - 3, static_cast<int64_t>(rng() % (w + 6)) - 3, 0};
    a.flip = {false, (rng() & 1) != 0, false};
    if ((iter / 2) % 2) a.perm = {2, 0, 1};
    a.channel_dim = 2;
    a.fill = {1, 2, 3, 4};
    a.mul = {0.0171f, 0.0175f, 0.0174f, 0.5f};
    a.add = {-2.1f, -2.03f, -1.8f, 7.0f};
    a.fill.resize(C);
    a.mul.resize(C);
    a.add.resize(C);
    std::vector<uint8_t> in(volume(a.in_shape));
    for (auto& v : in) v = rng() & 255;
    std::vector<float16> h16(volume(slice_output_shape(a)));
    std::vector<float> f32(h16.size());
    slice_flip_normalize<float16, uint8_t>(h16.data(), in.data(), a);
    slice_flip_normalize<float, uint8_t>(f32.data(), in.data(), a);
    ASSERT_TRUE(same_bits(h16, reference<float16, uint8_t>(in, a))) << "iteration " << iter;
    ASSERT_TRUE(same_bits(f32, reference<float, uint8_t>(in, a))) << "iteration " << iter;
  }
}

TEST(GeometrySlice, StridedRowSimdMatchesScalarAtBufferEdges) {
  std::vector<uint8_t> buf(3 * 101 + 1);
  std::mt19937 rng(3);
  for (auto& v : buf) v = rng() & 255;
  const uint8_t* lo = buf.data();
  const uint8_t* hi = buf.data() + buf.size();
  for (int64_t step : {1, -1, 3, -3, 4, -4}) {
    int64_t s = step < 0 ? -step : step;
    int64_t max_n = static_cast<int64_t>(buf.size() - 1) / s + 1;
    for (int64_t n : {int64_t{1}, int64_t{15}, int64_t{16}, int64_t{17}, int64_t{33}, max_n}) {
      for (int64_t start_pos : {int64_t{0}, int64_t{1}, int64_t{2}}) {
        // first element read at src; all n elements inside the buffer
        int64_t first = step > 0 ? start_pos : static_cast<int64_t>(buf.size()) - 1 - start_pos;
        int64_t last = first + (n - 1) * step;
        if (last < 0 || last >= static_cast<int64_t>(buf.size())) continue;
        std::vector<float> f(n);
        std::vector<float16> h(n);
        strided_row_u8(f.data(), lo + first, n, step, 0.37f, -11.5f, lo, hi);
        strided_row_u8(h.data(), lo + first, n, step, 0.37f, -11.5f, lo, hi);
        for (int64_t i = 0; i < n; ++i) {
          float expect = static_cast<float>(buf[first + i * step]) * 0.37f + -11.5f;
          ASSERT_EQ(f[i], expect) << "step " << step << " n " << n << " i " << i;
          ASSERT_EQ(h[i].bits, float16(expect).bits) << "step " << step << " n " << n << " i " << i;
        }
      }
    }
  }
}

// Not a pass/fail test: prints the cost of the hot case (500x375 RGB -> 224x224 CHW) per image.
TEST(GeometrySlice, CropMirrorNormalizeTiming) {
  SliceArgs a;
  a.in_shape = {375, 500, 3};
  a.anchor = {76, 138, 0};
  a.shape = {224, 224, 3};
  a.perm = {2, 0, 1};
  a.channel_dim = 2;
  a.mul = {1 / 58.395f, 1 / 57.12f, 1 / 57.375f};
  a.add = {-2.1179f, -2.0357f, -1.8044f};
  std::vector<uint8_t> in(volume(a.in_shape));
  std::mt19937 rng(1);
  for (auto& v : in) v = rng() & 255;
  std::vector<float16> h(3 * 224 * 224);
  std::vector<float> f(3 * 224 * 224);
  for (bool mirror : {false, true}) {
    a.flip = {false, mirror, false};
    for (int kind = 0; kind < 2; ++kind) {
      const int iters = 300;
      timespec c0, c1;
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
      auto t0 = std::chrono::steady_clock::now();
      for (int it = 0; it < iters; ++it) {
        if (kind == 0) slice_flip_normalize<float16, uint8_t>(h.data(), in.data(), a);
        else slice_flip_normalize<float, uint8_t>(f.data(), in.data(), a);
      }
      double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / iters;
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
      double cpu_us = ((c1.tv_sec - c0.tv_sec) * 1e9 + (c1.tv_nsec - c0.tv_nsec)) / 1e3 / iters;
      std::printf("[ timing ] crop_mirror_normalize 500x375 -> 224x224 CHW %s%s: %.1f us wall, %.1f us cpu (simd %d)\n",
                  kind == 0 ? "float16" : "float32", mirror ? " mirrored" : "", us, cpu_us,
                  static_cast<int>(slice_simd_available()));
    }
  }
}
