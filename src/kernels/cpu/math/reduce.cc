#include "kernels/cpu/math/reduce.h"

#include <limits>

#include "core/dtype.h"
#include "kernels/cpu/geometry/normalize.h"
#include "kernels/cpu/math/reduce_rows.h"

namespace stoker {
namespace kernels {
namespace {

int64_t out_volume(const Shape& shape, const std::vector<bool>& reduced) {
  return volume(reduced_shape(shape, reduced));
}

int64_t reduced_count(const Shape& shape, const std::vector<bool>& reduced) {
  int64_t n = 1;
  for (size_t d = 0; d < shape.size(); ++d)
    if (reduced[d]) n *= shape[d];
  return n;
}

template <typename T, typename Better>
void reduce_extreme(T* out, const T* in, const Shape& shape, const std::vector<bool>& reduced,
                    T neutral, Better better) {
  const int64_t m = out_volume(shape, reduced);
  for (int64_t o = 0; o < m; ++o) out[o] = neutral;
  for_rows(shape, reduced, [&](int64_t off, int64_t n, int64_t so, int64_t step) {
    const T* p = in + off;
    if (step == 0) {
      T acc = out[so];
      for (int64_t i = 0; i < n; ++i)
        if (better(p[i], acc)) acc = p[i];
      out[so] = acc;
    } else {
      for (int64_t i = 0; i < n; ++i)
        if (better(p[i], out[so + i])) out[so + i] = p[i];
    }
  });
}

}  // namespace

template <typename T>
void reduce_min(T* out, const T* in, const Shape& shape, const std::vector<bool>& reduced) {
  T neutral = std::numeric_limits<T>::max();
  if constexpr (std::is_same_v<T, float16>) neutral = float16(65504.0f);
  reduce_extreme(out, in, shape, reduced, neutral, [](T a, T b) { return a < b; });
}

template <typename T>
void reduce_max(T* out, const T* in, const Shape& shape, const std::vector<bool>& reduced) {
  T neutral = std::numeric_limits<T>::lowest();
  if constexpr (std::is_same_v<T, float16>) neutral = float16(-65504.0f);
  reduce_extreme(out, in, shape, reduced, neutral, [](T a, T b) { return b < a; });
}

template <typename Acc, typename T>
void reduce_sum(Acc* out, const T* in, const Shape& shape, const std::vector<bool>& reduced) {
  const int64_t m = out_volume(shape, reduced);
  for (int64_t o = 0; o < m; ++o) out[o] = 0;
  for_rows(shape, reduced, [&](int64_t off, int64_t n, int64_t so, int64_t step) {
    const T* p = in + off;
    if (step == 0) {
      Acc acc = 0;
      for (int64_t i = 0; i < n; ++i) acc += static_cast<Acc>(p[i]);
      out[so] += acc;
    } else {
      for (int64_t i = 0; i < n; ++i) out[so + i] += static_cast<Acc>(p[i]);
    }
  });
}

template <typename T>
void reduce_moment(double* out, const T* in, const Shape& shape, const std::vector<bool>& reduced,
                   Moment moment, const double* mean, int64_t ddof) {
  const int64_t m = out_volume(shape, reduced);
  const int64_t n = reduced_count(shape, reduced);
  for (int64_t o = 0; o < m; ++o) out[o] = 0;
  if (moment == Moment::kMean) {
    add_sums(out, in, shape, reduced);
  } else {
    std::vector<double> zeros;
    if (moment == Moment::kMeanSquare) {
      zeros.assign(m, 0.0);
      mean = zeros.data();
    }
    add_squared_deviations(out, in, shape, reduced, mean);
  }
  double divisor = static_cast<double>(moment == Moment::kVariance ? std::max<int64_t>(n - ddof, 0) : n);
  for (int64_t o = 0; o < m; ++o) out[o] /= divisor;
}

#define STOKER_REDUCE_MINMAX(T)                                                                  \
  template void reduce_min<T>(T*, const T*, const Shape&, const std::vector<bool>&);             \
  template void reduce_max<T>(T*, const T*, const Shape&, const std::vector<bool>&);
#define STOKER_REDUCE_T(T)                                                                       \
  STOKER_REDUCE_MINMAX(T)                                                                        \
  template void reduce_moment<T>(double*, const T*, const Shape&, const std::vector<bool>&,      \
                                 Moment, const double*, int64_t);
STOKER_REDUCE_T(uint8_t)
STOKER_REDUCE_T(uint16_t)
STOKER_REDUCE_T(uint32_t)
STOKER_REDUCE_T(uint64_t)
STOKER_REDUCE_T(int8_t)
STOKER_REDUCE_T(int16_t)
STOKER_REDUCE_T(int32_t)
STOKER_REDUCE_T(int64_t)
STOKER_REDUCE_T(float16)
STOKER_REDUCE_T(float)
STOKER_REDUCE_T(double)
STOKER_REDUCE_MINMAX(bool)
#undef STOKER_REDUCE_T
#undef STOKER_REDUCE_MINMAX

#define STOKER_REDUCE_SUM(A, T) \
  template void reduce_sum<A, T>(A*, const T*, const Shape&, const std::vector<bool>&);
STOKER_REDUCE_SUM(uint64_t, uint8_t)
STOKER_REDUCE_SUM(uint64_t, uint16_t)
STOKER_REDUCE_SUM(uint64_t, uint32_t)
STOKER_REDUCE_SUM(uint64_t, uint64_t)
STOKER_REDUCE_SUM(int64_t, int8_t)
STOKER_REDUCE_SUM(int64_t, int16_t)
STOKER_REDUCE_SUM(int64_t, int32_t)
STOKER_REDUCE_SUM(int64_t, int64_t)
STOKER_REDUCE_SUM(double, float16)
STOKER_REDUCE_SUM(double, float)
STOKER_REDUCE_SUM(double, double)
#undef STOKER_REDUCE_SUM

}  // namespace kernels
}  // namespace stoker
