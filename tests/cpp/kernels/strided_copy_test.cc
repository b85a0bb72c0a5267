#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "kernels/cpu/geometry/strided_copy.h"

using namespace stoker;
using namespace stoker::kernels;

namespace {

// Element by element, straight from the definition.
template <typename T>
std::vector<T> reference(const std::vector<T>& in, const Shape& in_shape, const std::vector<int64_t>& start,
                         const std::vector<int64_t>& step, const Shape& count) {
  const int nd = static_cast<int>(in_shape.size());
  std::vector<T> out(volume(count));
  std::vector<int64_t> stride(nd, 1);
  for (int d = nd - 2; d >= 0; --d) stride[d] = stride[d + 1] * in_shape[d + 1];
  for (size_t flat = 0; flat < out.size(); ++flat) {
    int64_t r = static_cast<int64_t>(flat), off = 0;
    for (int k = nd - 1; k >= 0; --k) {
      off += (start[k] + (r % count[k]) * step[k]) * stride[k];
      r /= count[k];
    }
    out[flat] = in[off];
  }
  return out;
}

template <typename T>
void check_random(std::mt19937& rng, int nd) {
  Shape shape(nd);
  std::uniform_int_distribution<int64_t> ext(1, 6), stepd(1, 3), coin(0, 1);
  for (auto& e : shape) e = ext(rng);
  std::vector<T> in(volume(shape));
  for (size_t k = 0; k < in.size(); ++k) in[k] = static_cast<T>(k * 7 + 1);
  std::vector<int64_t> start(nd), step(nd);
  Shape count(nd);
  for (int d = 0; d < nd; ++d) {
    step[d] = stepd(rng) * (coin(rng) ? -1 : 1);
    start[d] = std::uniform_int_distribution<int64_t>(0, shape[d] - 1)(rng);
    int64_t room = step[d] > 0 ? (shape[d] - 1 - start[d]) / step[d] : start[d] / -step[d];
    count[d] = std::uniform_int_distribution<int64_t>(0, room + 1)(rng);
  }
  std::vector<T> out(volume(count), T(0));
  strided_copy(out.data(), in.data(), shape, start, step, count, sizeof(T));
  ASSERT_EQ(out, reference(in, shape, start, step, count)) << "nd " << nd;
}

}  // namespace

TEST(StridedCopy, MatchesTheDefinitionForAnyStepsAndElementSizes) {
  std::mt19937 rng(7);
  for (int it = 0; it < 200; ++it) {
    for (int nd = 1; nd <= 4; ++nd) {
      check_random<uint8_t>(rng, nd);
      check_random<uint16_t>(rng, nd);
      check_random<float>(rng, nd);
      check_random<double>(rng, nd);
    }
  }
}

TEST(StridedCopy, ZeroDimensionsCopiesTheOneElement) {
  int32_t in = 42, out = 0;
  strided_copy(&out, &in, Shape{}, {}, {}, Shape{}, sizeof(in));
  EXPECT_EQ(out, 42);
}

TEST(StridedCopy, ReversedRowsAndContiguousRows) {
  // 2x3: [[0 1 2] [3 4 5]], read as x[::-1, 1:]
  std::vector<int16_t> in = {0, 1, 2, 3, 4, 5}, out(4);
  strided_copy(out.data(), in.data(), Shape{2, 3}, {1, 1}, {-1, 1}, Shape{2, 2}, sizeof(int16_t));
  EXPECT_EQ(out, (std::vector<int16_t>{4, 5, 1, 2}));
}
