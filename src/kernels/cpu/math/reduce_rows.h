// The loop every reduction over a set of axes shares (normalize's statistics, fn.reductions).
#pragma once
#include <cstdint>
#include <vector>

#include "core/shape.h"

namespace stoker {
namespace kernels {

// Calls f(in_offset, n, out_offset, out_step) for every run of the innermost axis, after
// merging neighbouring axes that are both reduced or both kept (reducing all of HWC is then one
// run, reducing per channel is runs of C values with out_step 1). The output is indexed by the
// kept axes in row-major order. Nothing is called for an empty input.
template <typename F>
void for_rows(const Shape& shape, const std::vector<bool>& reduce, F&& f) {
  Shape ext;
  std::vector<bool> red;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0) return;
    if (!ext.empty() && red.back() == reduce[d]) {
      ext.back() *= shape[d];
    } else {
      ext.push_back(shape[d]);
      red.push_back(reduce[d]);
    }
  }
  if (ext.empty()) {
    f(0, 1, 0, 0);
    return;
  }
  const int nd = static_cast<int>(ext.size());
  std::vector<int64_t> sstride(nd, 0);
  int64_t s = 1;
  for (int d = nd - 1; d >= 0; --d)
    if (!red[d]) {
      sstride[d] = s;
      s *= ext[d];
    }
  const int64_t n = ext[nd - 1], step = sstride[nd - 1];
  std::vector<int64_t> idx(nd, 0);
  int64_t in_off = 0, st_off = 0;
  for (;;) {
    f(in_off, n, st_off, step);
    in_off += n;
    int d = nd - 2;
    for (; d >= 0; --d) {
      st_off += sstride[d];
      if (++idx[d] < ext[d]) break;
      st_off -= sstride[d] * ext[d];
      idx[d] = 0;
    }
    if (d < 0) return;
  }
}

}  // namespace kernels
}  // namespace stoker
