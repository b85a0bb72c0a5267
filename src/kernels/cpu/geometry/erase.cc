#include "kernels/cpu/geometry/erase.h"

#include <algorithm>
#include <cstring>

#include "core/dtype.h"

namespace stoker {
namespace kernels {
namespace {

template <typename T>
struct BoxFill {
  T* out;
  const Shape& shape;
  const EraseBox& box;
  int channel_dim;
  const std::vector<T>& fill;
  std::vector<int64_t> stride;

  void rec(int d, int64_t off, int64_t c) {
    const int nd = static_cast<int>(shape.size());
    if (d == nd - 1) {
      T* p = out + off;
      if (d == channel_dim && fill.size() > 1) {
        for (int64_t i = box.lo[d]; i < box.hi[d]; ++i) p[i] = fill[i];
      } else {
        std::fill(p + box.lo[d], p + box.hi[d], fill.size() > 1 ? fill[c] : fill[0]);
      }
      return;
    }
    for (int64_t i = box.lo[d]; i < box.hi[d]; ++i)
      rec(d + 1, off + i * stride[d], d == channel_dim ? i : c);
  }
};

}  // namespace

template <typename T>
void erase(T* out, const T* in, const Shape& shape, const std::vector<EraseBox>& boxes,
           int channel_dim, const std::vector<T>& fill) {
  const int64_t vol = volume(shape);
  if (out != in && vol > 0) std::memcpy(out, in, vol * sizeof(T));
  if (shape.empty() || vol == 0) return;
  std::vector<int64_t> stride(shape.size(), 1);
  for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d) stride[d] = stride[d + 1] * shape[d + 1];
  for (const EraseBox& b : boxes) {
    bool empty = false;
    for (size_t d = 0; d < shape.size(); ++d) empty = empty || b.hi[d] <= b.lo[d];
    if (empty) continue;
    BoxFill<T>{out, shape, b, channel_dim, fill, stride}.rec(0, 0, 0);
  }
}

#define STOKER_ERASE(T)                                                                    \
  template void erase<T>(T*, const T*, const Shape&, const std::vector<EraseBox>&, int,    \
                         const std::vector<T>&);
STOKER_ERASE(uint8_t)
STOKER_ERASE(uint16_t)
STOKER_ERASE(uint32_t)
STOKER_ERASE(uint64_t)
STOKER_ERASE(int8_t)
STOKER_ERASE(int16_t)
STOKER_ERASE(int32_t)
STOKER_ERASE(int64_t)
STOKER_ERASE(float16)
STOKER_ERASE(float)
STOKER_ERASE(double)
STOKER_ERASE(bool)

}  // namespace kernels
}  // namespace stoker
