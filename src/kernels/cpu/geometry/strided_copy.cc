#include "kernels/cpu/geometry/strided_copy.h"

#include <cstring>

namespace stoker {
namespace kernels {
namespace {

template <typename T>
void copy_row(T* out, const T* in, int64_t n, int64_t step) {
  for (int64_t j = 0; j < n; ++j) out[j] = in[j * step];
}

// One innermost row of `n` elements, `step` elements apart.
void row(char* out, const char* in, int64_t n, int64_t step, size_t elem) {
  if (step == 1) {
    std::memcpy(out, in, static_cast<size_t>(n) * elem);
    return;
  }
  switch (elem) {
    case 1: return copy_row(reinterpret_cast<uint8_t*>(out), reinterpret_cast<const uint8_t*>(in), n, step);
    case 2: return copy_row(reinterpret_cast<uint16_t*>(out), reinterpret_cast<const uint16_t*>(in), n, step);
    case 4: return copy_row(reinterpret_cast<uint32_t*>(out), reinterpret_cast<const uint32_t*>(in), n, step);
    case 8: return copy_row(reinterpret_cast<uint64_t*>(out), reinterpret_cast<const uint64_t*>(in), n, step);
    default:
      for (int64_t j = 0; j < n; ++j) std::memcpy(out + j * elem, in + j * step * static_cast<int64_t>(elem), elem);
  }
}

}  // namespace

void strided_copy(void* out, const void* in, const Shape& in_shape,
                  const std::vector<int64_t>& start, const std::vector<int64_t>& step,
                  const Shape& count, size_t elem_size) {
  const size_t nd = in_shape.size();
  for (int64_t c : count)
    if (c == 0) return;
  if (nd == 0) {
    std::memcpy(out, in, elem_size);
    return;
  }
  // Input strides in elements, and the offset of the window's first element.
  std::vector<int64_t> stride(nd);
  int64_t s = 1, base = 0;
  for (size_t k = nd; k-- > 0;) {
    stride[k] = s;
    s *= in_shape[k];
  }
  for (size_t k = 0; k < nd; ++k) base += start[k] * stride[k];
  const int64_t e = static_cast<int64_t>(elem_size);
  const int64_t n = count[nd - 1], inner_step = step[nd - 1];
  const char* src = static_cast<const char*>(in);
  char* dst = static_cast<char*>(out);
  // Walk the outer axes like an odometer; each position is one innermost row.
  std::vector<int64_t> idx(nd - 1, 0);
  int64_t pos = base;
  while (true) {
    row(dst, src + pos * e, n, inner_step, elem_size);
    dst += n * e;
    size_t k = nd - 1;
    while (k-- > 0) {
      pos += step[k] * stride[k];
      if (++idx[k] < count[k]) break;
      pos -= step[k] * stride[k] * count[k];
      idx[k] = 0;
    }
    if (k == static_cast<size_t>(-1)) return;
  }
}

}  // namespace kernels
}  // namespace stoker
