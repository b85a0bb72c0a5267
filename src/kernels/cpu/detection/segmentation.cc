#include "kernels/cpu/detection/segmentation.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <type_traits>
#include <unordered_map>

namespace stoker {
namespace kernels {

int64_t Blobs::box_volume(int64_t b) const {
  int64_t v = 1;
  for (int d = 0; d < ndim; ++d) v *= hi(b)[d] - lo(b)[d];
  return v;
}

namespace {

template <typename T>
int64_t as_int(T v) {
  return static_cast<int64_t>(v);
}

// Disjoint sets of runs whose representative is the smallest run of each set: runs are in C
// order, so numbering the sets by representative numbers the blobs by their first element.
struct RunSets {
  std::vector<int64_t> parent;
  explicit RunSets(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), int64_t{0}); }
  int64_t find(int64_t x) {
    while (parent[x] != x) {
      parent[x] = parent[parent[x]];
      x = parent[x];
    }
    return x;
  }
  void unite(int64_t a, int64_t b) {
    a = find(a);
    b = find(b);
    if (a < b) parent[b] = a;
    else if (b < a) parent[a] = b;
  }
};

struct Run {
  int64_t start, end;  // along the last axis, [start, end)
};

}  // namespace

// Works on runs of equal foreground values along the last axis: each row's runs are joined
// with the overlapping runs of equal value of the rows one step back along every other axis.
template <typename T>
Blobs find_blobs(const T* in, const int64_t* shape, int ndim, int64_t background,
                 int64_t* labels) {
  Blobs out;
  out.ndim = ndim;
  int64_t vol = 1;
  for (int d = 0; d < ndim; ++d) vol *= shape[d];
  if (vol == 0) return out;
  const int64_t width = shape[ndim - 1];
  const int64_t rows = vol / width;

  std::vector<Run> runs;
  std::vector<int64_t> row_first(rows + 1);
  for (int64_t r = 0; r < rows; ++r) {
    row_first[r] = static_cast<int64_t>(runs.size());
    const T* p = in + r * width;
    int64_t x = 0;
    while (x < width) {
      if (as_int(p[x]) == background) {
        ++x;
        continue;
      }
      const int64_t s = x;
      while (x < width && p[x] == p[s]) ++x;
      runs.push_back({s, x});
    }
  }
  row_first[rows] = static_cast<int64_t>(runs.size());

  RunSets sets(runs.size());
  auto join_rows = [&](int64_t ra, int64_t rb) {
    int64_t i = row_first[ra], iend = row_first[ra + 1];
    int64_t j = row_first[rb], jend = row_first[rb + 1];
    const T* pa = in + ra * width;
    const T* pb = in + rb * width;
    while (i < iend && j < jend) {
      const Run& a = runs[i];
      const Run& b = runs[j];
      if (a.start < b.end && b.start < a.end && pa[a.start] == pb[b.start]) sets.unite(i, j);
      if (a.end < b.end) ++i;
      else if (b.end < a.end) ++j;
      else { ++i; ++j; }
    }
  };

  // Rows are indexed by the positions along the first ndim - 1 axes.
  const int outer = ndim - 1;
  std::vector<int64_t> row_stride(std::max(outer, 1), 1), pos(std::max(outer, 1), 0);
  for (int d = outer - 2; d >= 0; --d) row_stride[d] = row_stride[d + 1] * shape[d + 1];
  auto advance = [&]() {
    for (int d = outer - 1; d >= 0; --d) {
      if (++pos[d] < shape[d]) return;
      pos[d] = 0;
    }
  };
  for (int64_t r = 0; r < rows; ++r) {
    for (int d = 0; d < outer; ++d)
      if (pos[d] > 0) join_rows(r - row_stride[d], r);
    advance();
  }

  std::vector<int64_t> blob_of(runs.size());
  std::fill(pos.begin(), pos.end(), 0);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t k = row_first[r]; k < row_first[r + 1]; ++k) {
      const int64_t root = sets.find(k);
      int64_t b;
      if (root == k) {
        b = out.size();
        out.values.push_back(as_int(in[r * width + runs[k].start]));
        out.boxes.insert(out.boxes.end(), ndim, std::numeric_limits<int64_t>::max());
        out.boxes.insert(out.boxes.end(), ndim, std::numeric_limits<int64_t>::min());
      } else {
        b = blob_of[root];  // root < k: numbered already
      }
      blob_of[k] = b;
      int64_t* lo = out.boxes.data() + 2 * ndim * b;
      int64_t* hi = lo + ndim;
      for (int d = 0; d < outer; ++d) {
        lo[d] = std::min(lo[d], pos[d]);
        hi[d] = std::max(hi[d], pos[d] + 1);
      }
      lo[ndim - 1] = std::min(lo[ndim - 1], runs[k].start);
      hi[ndim - 1] = std::max(hi[ndim - 1], runs[k].end);
    }
    advance();
  }

  if (labels) {
    std::fill(labels, labels + vol, int64_t{-1});
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t k = row_first[r]; k < row_first[r + 1]; ++k)
        std::fill(labels + r * width + runs[k].start, labels + r * width + runs[k].end,
                  blob_of[k]);
  }
  return out;
}

#define STOKER_FIND_BLOBS(T) \
  template Blobs find_blobs<T>(const T*, const int64_t*, int, int64_t, int64_t*);
STOKER_FIND_BLOBS(bool)
STOKER_FIND_BLOBS(uint8_t)
STOKER_FIND_BLOBS(int8_t)
STOKER_FIND_BLOBS(uint16_t)
STOKER_FIND_BLOBS(int16_t)
STOKER_FIND_BLOBS(uint32_t)
STOKER_FIND_BLOBS(int32_t)
#undef STOKER_FIND_BLOBS

int64_t uniform_index(Philox& rng, int64_t n) {
  if (n <= static_cast<int64_t>(std::numeric_limits<uint32_t>::max()))
    return rng.below(static_cast<uint32_t>(n));
  const uint64_t un = static_cast<uint64_t>(n);
  const uint64_t limit = std::numeric_limits<uint64_t>::max() -
                         std::numeric_limits<uint64_t>::max() % un;
  uint64_t x;
  do {
    x = rng.next_u64();
  } while (x >= limit);
  return static_cast<int64_t>(x % un);
}

ObjectChoice choose_object(const Blobs& blobs, const ObjectChoiceArgs& a, Philox& rng) {
  const int nd = blobs.ndim;
  auto qualifies = [&](int64_t b) {
    if (a.threshold.empty()) return true;
    for (int d = 0; d < nd; ++d)
      if (blobs.hi(b)[d] - blobs.lo(b)[d] < a.threshold[d]) return false;
    return true;
  };
  // One of the candidates (blob numbers, increasing), or -1.
  auto pick = [&](std::vector<int64_t>& cand) -> int64_t {
    int64_t n = static_cast<int64_t>(cand.size());
    if (n == 0) return -1;
    if (a.k_largest > 0 && a.k_largest < n) {
      std::stable_sort(cand.begin(), cand.end(), [&](int64_t x, int64_t y) {
        return blobs.box_volume(x) > blobs.box_volume(y);
      });
      n = a.k_largest;
    }
    return cand[uniform_index(rng, n)];
  };

  ObjectChoice none;
  none.class_label = a.background;
  std::vector<int64_t> cand;
  if (a.ignore_class) {
    for (int64_t b = 0; b < blobs.size(); ++b)
      if (qualifies(b)) cand.push_back(b);
    none.blob = pick(cand);
    return none;
  }

  std::vector<int64_t> present(blobs.values);
  std::sort(present.begin(), present.end());
  present.erase(std::unique(present.begin(), present.end()), present.end());
  std::vector<int64_t> classes;
  std::vector<double> weights;
  if (a.from_labels) {
    classes = present;
    weights.assign(classes.size(), 1.0);
  } else {
    classes = a.classes;
    weights = a.weights;
    for (size_t c = 0; c < classes.size(); ++c)
      if (!std::binary_search(present.begin(), present.end(), classes[c])) weights[c] = 0;
  }

  for (;;) {
    double total = 0;
    for (double w : weights) total += w;
    if (!(total > 0)) return none;
    const double u = rng.uniform_double() * total;
    size_t idx = classes.size();
    double cum = 0;
    for (size_t c = 0; c < classes.size(); ++c) {
      if (weights[c] <= 0) continue;
      idx = c;  // the last class of nonzero weight, should rounding leave u past the sum
      cum += weights[c];
      if (u < cum) break;
    }
    const int64_t cls = classes[idx];
    cand.clear();
    for (int64_t b = 0; b < blobs.size(); ++b)
      if (blobs.values[b] == cls && qualifies(b)) cand.push_back(b);
    const int64_t b = pick(cand);
    if (b >= 0) return {b, cls};
    for (size_t c = 0; c < classes.size(); ++c)  // no blob of this class will do
      if (classes[c] == cls) weights[c] = 0;
  }
}

namespace {

template <typename T>
bool is_foreground(T x, const ForegroundTest& t) {
  if (!t.by_value) return static_cast<float>(x) > t.threshold;
  if constexpr (std::is_floating_point_v<T>) {
    const double v = static_cast<double>(x);
    return v == std::floor(v) && v >= -9.2e18 && v <= 9.2e18 && static_cast<int64_t>(v) == t.value;
  } else if constexpr (std::is_same_v<T, uint64_t>) {
    return t.value >= 0 && x == static_cast<uint64_t>(t.value);
  } else {
    return static_cast<int64_t>(x) == t.value;
  }
}

}  // namespace

template <typename T>
int64_t count_foreground(const T* in, int64_t n, const ForegroundTest& test) {
  int64_t count = 0;
  for (int64_t i = 0; i < n; ++i) count += is_foreground(in[i], test);
  return count;
}

template <typename T>
int64_t find_foreground(const T* in, int64_t n, const ForegroundTest& test, int64_t k) {
  for (int64_t i = 0; i < n; ++i)
    if (is_foreground(in[i], test) && k-- == 0) return i;
  return -1;
}

#define STOKER_FOREGROUND(T)                                                               \
  template int64_t count_foreground<T>(const T*, int64_t, const ForegroundTest&);          \
  template int64_t find_foreground<T>(const T*, int64_t, const ForegroundTest&, int64_t);
STOKER_FOREGROUND(bool)
STOKER_FOREGROUND(uint8_t)
STOKER_FOREGROUND(int8_t)
STOKER_FOREGROUND(uint16_t)
STOKER_FOREGROUND(int16_t)
STOKER_FOREGROUND(uint32_t)
STOKER_FOREGROUND(int32_t)
STOKER_FOREGROUND(uint64_t)
STOKER_FOREGROUND(int64_t)
STOKER_FOREGROUND(float)
#undef STOKER_FOREGROUND

SelectPlan plan_select_masks(const int32_t* mask_ids, int64_t nids, const int32_t* polygons,
                             int64_t npolygons, int64_t nvertices, bool reindex) {
  SelectPlan plan;
  auto failed = [&](SelectFault f, int64_t at) {
    plan.fault = f;
    plan.fault_index = at;
    return plan;
  };
  std::unordered_map<int32_t, int64_t> position;
  for (int64_t k = 0; k < nids; ++k)
    if (!position.emplace(mask_ids[k], k).second) return failed(SelectFault::kDuplicateId, k);

  std::vector<std::vector<int64_t>> of_mask(nids);
  for (int64_t p = 0; p < npolygons; ++p) {
    const int32_t* row = polygons + 3 * p;
    auto it = position.find(row[0]);
    if (it == position.end()) continue;
    if (row[1] < 0 || row[2] > nvertices) return failed(SelectFault::kOutOfRange, p);
    if (row[2] < row[1]) return failed(SelectFault::kReversed, p);
    of_mask[it->second].push_back(p);
  }
  for (int64_t k = 0; k < nids; ++k)
    if (of_mask[k].empty()) return failed(SelectFault::kMissingId, k);

  for (int64_t k = 0; k < nids; ++k) {
    for (int64_t p : of_mask[k]) {
      plan.polygons.push_back(p);
      plan.new_ids.push_back(reindex ? static_cast<int32_t>(k) : mask_ids[k]);
      plan.nvertices += polygons[3 * p + 2] - polygons[3 * p + 1];
    }
  }
  return plan;
}

void select_masks(int32_t* out_polygons, void* out_vertices, const SelectPlan& plan,
                  const int32_t* polygons, const void* vertices, size_t vertex_bytes) {
  auto* dst = static_cast<unsigned char*>(out_vertices);
  const auto* src = static_cast<const unsigned char*>(vertices);
  int64_t at = 0;
  for (size_t k = 0; k < plan.polygons.size(); ++k) {
    const int32_t* row = polygons + 3 * plan.polygons[k];
    const int64_t n = row[2] - row[1];
    out_polygons[3 * k] = plan.new_ids[k];
    out_polygons[3 * k + 1] = static_cast<int32_t>(at);
    out_polygons[3 * k + 2] = static_cast<int32_t>(at + n);
    if (n > 0)
      std::memcpy(dst + at * vertex_bytes, src + static_cast<size_t>(row[1]) * vertex_bytes,
                  static_cast<size_t>(n) * vertex_bytes);
    at += n;
  }
}

}  // namespace kernels
}  // namespace stoker
