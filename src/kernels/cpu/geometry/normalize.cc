#include "kernels/cpu/geometry/normalize.h"

#include "core/convert.h"
#include "core/dtype.h"
#include "kernels/cpu/math/reduce_rows.h"

namespace stoker {
namespace kernels {

Shape reduced_shape(const Shape& shape, const std::vector<bool>& reduce) {
  Shape r = shape;
  for (size_t d = 0; d < r.size(); ++d)
    if (reduce[d]) r[d] = 1;
  return r;
}

template <typename In>
void add_sums(double* sum, const In* in, const Shape& shape, const std::vector<bool>& reduce) {
  for_rows(shape, reduce, [&](int64_t off, int64_t n, int64_t so, int64_t step) {
    const In* p = in + off;
    if (step == 0) {
      double acc = 0;
      for (int64_t i = 0; i < n; ++i) acc += static_cast<double>(p[i]);
      sum[so] += acc;
    } else {
      for (int64_t i = 0; i < n; ++i) sum[so + i] += static_cast<double>(p[i]);
    }
  });
}

template <typename In>
void add_squared_deviations(double* sq, const In* in, const Shape& shape,
                            const std::vector<bool>& reduce, const double* mean) {
  for_rows(shape, reduce, [&](int64_t off, int64_t n, int64_t so, int64_t step) {
    const In* p = in + off;
    if (step == 0) {
      double acc = 0, m = mean[so];
      for (int64_t i = 0; i < n; ++i) {
        double v = static_cast<double>(p[i]) - m;
        acc += v * v;
      }
      sq[so] += acc;
    } else {
      for (int64_t i = 0; i < n; ++i) {
        double v = static_cast<double>(p[i]) - mean[so + i];
        sq[so + i] += v * v;
      }
    }
  });
}

template <typename Out, typename In>
void normalize_apply(Out* out, const In* in, const Shape& shape, const std::vector<bool>& reduce,
                     const float* mean, const float* factor, float shift) {
  for_rows(shape, reduce, [&](int64_t off, int64_t n, int64_t so, int64_t step) {
    const In* p = in + off;
    Out* o = out + off;
    if (step == 0) {
      const float m = mean[so], f = factor[so];
      for (int64_t i = 0; i < n; ++i) o[i] = convert_sat<Out>((static_cast<float>(p[i]) - m) * f + shift);
    } else {
      for (int64_t i = 0; i < n; ++i)
        o[i] = convert_sat<Out>((static_cast<float>(p[i]) - mean[so + i]) * factor[so + i] + shift);
    }
  });
}

#define STOKER_NORMALIZE_IN(T)                                                                   \
  template void add_sums<T>(double*, const T*, const Shape&, const std::vector<bool>&);          \
  template void add_squared_deviations<T>(double*, const T*, const Shape&,                       \
                                          const std::vector<bool>&, const double*);              \
  STOKER_NORMALIZE_OUT(float, T) STOKER_NORMALIZE_OUT(float16, T) STOKER_NORMALIZE_OUT(double, T) \
  STOKER_NORMALIZE_OUT(uint8_t, T) STOKER_NORMALIZE_OUT(int8_t, T)                               \
  STOKER_NORMALIZE_OUT(uint16_t, T) STOKER_NORMALIZE_OUT(int16_t, T)                             \
  STOKER_NORMALIZE_OUT(uint32_t, T) STOKER_NORMALIZE_OUT(int32_t, T)                             \
  STOKER_NORMALIZE_OUT(uint64_t, T) STOKER_NORMALIZE_OUT(int64_t, T)
#define STOKER_NORMALIZE_OUT(O, T)                                                               \
  template void normalize_apply<O, T>(O*, const T*, const Shape&, const std::vector<bool>&,      \
                                      const float*, const float*, float);
STOKER_NORMALIZE_IN(uint8_t)
STOKER_NORMALIZE_IN(uint16_t)
STOKER_NORMALIZE_IN(uint32_t)
STOKER_NORMALIZE_IN(uint64_t)
STOKER_NORMALIZE_IN(int8_t)
STOKER_NORMALIZE_IN(int16_t)
STOKER_NORMALIZE_IN(int32_t)
STOKER_NORMALIZE_IN(int64_t)
STOKER_NORMALIZE_IN(float16)
STOKER_NORMALIZE_IN(float)
STOKER_NORMALIZE_IN(double)

}  // namespace kernels
}  // namespace stoker
