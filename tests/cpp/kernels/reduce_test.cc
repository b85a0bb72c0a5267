#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/cpu/geometry/normalize.h"
#include "kernels/cpu/math/reduce.h"

using namespace stoker;
using namespace stoker::kernels;

namespace {

// Brute force: the output index of every input element, from its multi-index.
std::vector<int64_t> output_index(const Shape& shape, const std::vector<bool>& reduced) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<int64_t> r(n);
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t j = 0; j < n; ++j) {
    int64_t o = 0;
    for (size_t d = 0; d < shape.size(); ++d)
      if (!reduced[d]) o = o * shape[d] + idx[d];
    r[j] = o;
    for (size_t d = shape.size(); d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return r;
}

const std::vector<std::vector<bool>> kAxisSets = {
    {false, false, false}, {true, false, false}, {false, true, false}, {false, false, true},
    {true, false, true},   {true, true, false},  {false, true, true},  {true, true, true}};

}  // namespace

TEST(ReduceKernel, MinMaxSumOfEveryAxisSetMatchBruteForce) {
  const Shape shape{3, 4, 5};
  std::vector<int16_t> in(60);
  for (int k = 0; k < 60; ++k) in[k] = static_cast<int16_t>((k * 7919) % 201 - 100);
  for (const auto& red : kAxisSets) {
    const int64_t m = volume(reduced_shape(shape, red));
    std::vector<int16_t> mn(m), mx(m);
    std::vector<int64_t> sum(m);
    reduce_min(mn.data(), in.data(), shape, red);
    reduce_max(mx.data(), in.data(), shape, red);
    reduce_sum(sum.data(), in.data(), shape, red);
    std::vector<int16_t> emn(m, std::numeric_limits<int16_t>::max()), emx(m, std::numeric_limits<int16_t>::lowest());
    std::vector<int64_t> esum(m, 0);
    std::vector<int64_t> oi = output_index(shape, red);
    for (int k = 0; k < 60; ++k) {
      emn[oi[k]] = std::min(emn[oi[k]], in[k]);
      emx[oi[k]] = std::max(emx[oi[k]], in[k]);
      esum[oi[k]] += in[k];
    }
    EXPECT_EQ(mn, emn);
    EXPECT_EQ(mx, emx);
    EXPECT_EQ(sum, esum);
  }
}

TEST(ReduceKernel, IntegerSumsDoNotOverflowTheInputType) {
  const Shape shape{1000, 3};
  std::vector<uint8_t> in(3000, 255);
  std::vector<uint64_t> sum(3);
  reduce_sum(sum.data(), in.data(), shape, {true, false});
  EXPECT_EQ(sum, (std::vector<uint64_t>{255000, 255000, 255000}));
  std::vector<int32_t> big(4, std::numeric_limits<int32_t>::max());
  std::vector<int64_t> s(1);
  reduce_sum(s.data(), big.data(), Shape{4}, {true});
  EXPECT_EQ(s[0], 4LL * std::numeric_limits<int32_t>::max());
}

TEST(ReduceKernel, MomentsMatchTwoPassReference) {
  const Shape shape{3, 4, 5};
  std::vector<float> in(60);
  for (int k = 0; k < 60; ++k) in[k] = std::sin(k * 0.37f) * 100.0f + 3.0f;
  for (const auto& red : kAxisSets) {
    const int64_t m = volume(reduced_shape(shape, red));
    std::vector<int64_t> oi = output_index(shape, red);
    std::vector<double> esum(m, 0), esq(m, 0), ecount(m, 0), edev(m, 0);
    for (int k = 0; k < 60; ++k) {
      esum[oi[k]] += in[k];
      esq[oi[k]] += static_cast<double>(in[k]) * in[k];
      ecount[oi[k]] += 1;
    }
    std::vector<double> emean(m);
    for (int64_t o = 0; o < m; ++o) emean[o] = esum[o] / ecount[o];
    for (int k = 0; k < 60; ++k) edev[oi[k]] += (in[k] - emean[oi[k]]) * (in[k] - emean[oi[k]]);
    std::vector<double> mean(m), ms(m), var(m), var1(m);
    reduce_moment(mean.data(), in.data(), shape, red, Moment::kMean);
    reduce_moment(ms.data(), in.data(), shape, red, Moment::kMeanSquare);
    reduce_moment(var.data(), in.data(), shape, red, Moment::kVariance, mean.data());
    reduce_moment(var1.data(), in.data(), shape, red, Moment::kVariance, mean.data(), 1);
    for (int64_t o = 0; o < m; ++o) {
      EXPECT_NEAR(mean[o], emean[o], 1e-9);
      EXPECT_NEAR(ms[o], esq[o] / ecount[o], 1e-6);
      EXPECT_NEAR(var[o], edev[o] / ecount[o], 1e-6);
      if (ecount[o] > 1) EXPECT_NEAR(var1[o], edev[o] / (ecount[o] - 1), 1e-6);
      else EXPECT_TRUE(std::isinf(var1[o]) || std::isnan(var1[o]));
    }
  }
}

TEST(ReduceKernel, EmptyReductionsGiveNeutralValuesAndNaN) {
  const Shape shape{0, 3};
  std::vector<float> mn(3), mx(3);
  std::vector<double> sum(3), mean(3);
  reduce_min(mn.data(), static_cast<const float*>(nullptr), shape, {true, false});
  reduce_max(mx.data(), static_cast<const float*>(nullptr), shape, {true, false});
  reduce_sum(sum.data(), static_cast<const float*>(nullptr), shape, {true, false});
  reduce_moment(mean.data(), static_cast<const float*>(nullptr), shape, {true, false}, Moment::kMean);
  for (int c = 0; c < 3; ++c) {
    EXPECT_EQ(mn[c], std::numeric_limits<float>::max());
    EXPECT_EQ(mx[c], std::numeric_limits<float>::lowest());
    EXPECT_EQ(sum[c], 0.0);
    EXPECT_TRUE(std::isnan(mean[c]));
  }
}

TEST(ReduceKernel, NaNIsSkippedByMinAndMax) {
  std::vector<float> in{1.0f, std::nanf(""), 3.0f, std::nanf("")};
  float mn, mx;
  reduce_min(&mn, in.data(), Shape{4}, {true});
  reduce_max(&mx, in.data(), Shape{4}, {true});
  EXPECT_EQ(mn, 1.0f);
  EXPECT_EQ(mx, 3.0f);
}
