#include "kernels/cpu/geometry/slice.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

#include "core/convert.h"
#include "core/error.h"
#include "kernels/cpu/geometry/strided_row.h"

namespace stoker {
namespace kernels {
namespace {

[[noreturn]] void bad_args(const std::string& what) {
  fail(ErrorKind::kInternal, "slice kernel: " + what);
}

// One output axis after merging: what index o along it reads.
struct Axis {
  int64_t n = 0;           // output extent
  int64_t out_stride = 0;  // in output elements
  int64_t step = 0;        // input offset per +1 along the output (negative when flipped)
  int64_t first = 0;       // input offset of o = 0 (meaningful only inside [lo, hi))
  int64_t lo = 0, hi = 0;  // [lo, hi) lies inside the input; the rest is filled
  bool channel = false;
};

// An input axis as the window sees it, in output order, before it becomes an Axis.
struct Span {
  int64_t extent, anchor, window, stride;
  bool flip, channel;
};

struct Plan {
  std::vector<Axis> axes;
  bool empty = false;
};

bool channel_matters(const SliceArgs& a) {
  auto varies = [](const auto& v) {
    return v.size() > 1 && std::any_of(v.begin(), v.end(), [&](auto x) { return x != v[0]; });
  };
  return a.channel_dim >= 0 && (varies(a.fill) || varies(a.mul) || varies(a.add));
}

void check(const SliceArgs& a) {
  size_t nd = a.in_shape.size();
  if (a.anchor.size() != nd || a.shape.size() != nd)
    bad_args("anchor and shape need one value per input axis");
  if (!a.flip.empty() && a.flip.size() != nd) bad_args("flip needs one flag per axis");
  if (!a.perm.empty()) {
    if (a.perm.size() != nd) bad_args("perm needs one entry per axis");
    std::vector<bool> seen(nd, false);
    for (int p : a.perm) {
      if (p < 0 || p >= static_cast<int>(nd) || seen[p]) bad_args("perm is not a permutation");
      seen[p] = true;
    }
  }
  for (size_t d = 0; d < nd; ++d)
    if (a.shape[d] < 0) bad_args("negative window extent");
  if (a.channel_dim >= static_cast<int>(nd)) bad_args("channel_dim out of range");
  if (a.mul.size() != a.add.size()) bad_args("mul and add differ in length");
}

Plan make_plan(const SliceArgs& a) {
  const int nd = static_cast<int>(a.in_shape.size());
  std::vector<int64_t> in_stride(nd, 1);
  for (int d = nd - 2; d >= 0; --d) in_stride[d] = in_stride[d + 1] * a.in_shape[d + 1];
  const bool ch = channel_matters(a);

  std::vector<Span> spans;
  Plan plan;
  for (int k = 0; k < nd; ++k) {
    int d = a.perm.empty() ? k : a.perm[k];
    if (a.shape[d] == 0) plan.empty = true;
    spans.push_back({a.in_shape[d], a.anchor[d], a.shape[d], in_stride[d],
                     !a.flip.empty() && a.flip[d], ch && d == a.channel_dim});
  }
  if (plan.empty) return plan;
  // Merge an axis into the next one where the pair reads contiguous input the same way; a
  // plain crop of HWC then copies whole W*C rows and a full-width one whole images.
  std::vector<Span> merged;
  for (const Span& s : spans) {
    if (!merged.empty()) {
      Span& p = merged.back();
      bool inner_full = s.anchor == 0 && s.window == s.extent;
      if (!p.flip && !s.flip && !p.channel && !s.channel && inner_full &&
          p.stride == s.extent * s.stride) {
        p = {p.extent * s.extent, p.anchor * s.extent, p.window * s.extent, s.stride, false, false};
        continue;
      }
    }
    merged.push_back(s);
  }
  plan.axes.resize(merged.size());
  int64_t out_stride = 1;
  for (int k = static_cast<int>(merged.size()) - 1; k >= 0; --k) {
    const Span& s = merged[k];
    Axis& ax = plan.axes[k];
    ax.n = s.window;
    ax.out_stride = out_stride;
    out_stride *= s.window;
    ax.channel = s.channel;
    if (!s.flip) {
      ax.step = s.stride;
      ax.first = s.anchor * s.stride;
      ax.lo = std::clamp<int64_t>(-s.anchor, 0, s.window);
      ax.hi = std::clamp<int64_t>(s.extent - s.anchor, ax.lo, s.window);
    } else {
      // o reads input index anchor + window - 1 - o.
      ax.step = -s.stride;
      ax.first = (s.anchor + s.window - 1) * s.stride;
      ax.lo = std::clamp<int64_t>(s.anchor + s.window - s.extent, 0, s.window);
      ax.hi = std::clamp<int64_t>(s.anchor + s.window, ax.lo, s.window);
    }
  }
  return plan;
}

template <typename Out, typename In, bool Norm>
class Runner {
 public:
  Runner(Out* out, const In* in, const SliceArgs& a, const Plan& plan)
      : out_(out), in_(in), ax_(plan.axes), nd_(static_cast<int>(plan.axes.size())) {
    in_volume_ = volume(a.in_shape);
    int64_t nch = 1;
    if (a.channel_dim >= 0) nch = std::max<int64_t>(a.shape[a.channel_dim], 1);
    nch = std::max<int64_t>({nch, static_cast<int64_t>(a.fill.size()),
                             static_cast<int64_t>(a.mul.size())});
    fill_.resize(nch);
    mul_.resize(nch, 1.0f);
    add_.resize(nch, 0.0f);
    for (int64_t c = 0; c < nch; ++c) {
      double f = a.fill.empty() ? 0.0 : a.fill.size() == 1 ? a.fill[0]
                 : c < static_cast<int64_t>(a.fill.size()) ? a.fill[c] : 0.0;
      fill_[c] = convert_sat<Out>(f);
      if (!a.mul.empty()) {
        size_t k = a.mul.size() == 1 ? 0 : std::min<size_t>(c, a.mul.size() - 1);
        mul_[c] = a.mul[k];
        add_[c] = a.add[k];
      }
    }
    chan_below_.assign(nd_ + 1, false);
    for (int k = nd_ - 1; k >= 0; --k) chan_below_[k] = chan_below_[k + 1] || ax_[k].channel;
    if constexpr (Norm && std::is_same_v<In, uint8_t> &&
                  (std::is_same_v<Out, float> || std::is_same_v<Out, float16>)) {
      if (nd_ >= 3) {
        const Axis &c = ax_[nd_ - 3], &y = ax_[nd_ - 2], &x = ax_[nd_ - 1];
        rgb_planes_ = c.channel && c.n == 3 && c.lo == 0 && c.hi == 3 && c.step == 1 && !y.channel &&
                      !x.channel && (x.step == 3 || x.step == -3);
      }
    }
  }

  void run() {
    int64_t base = 0;
    for (const Axis& ax : ax_) base += ax.first;
    rec(0, out_, base, 0);
  }

 private:
  Out convert(In v, int64_t c) const {
    if constexpr (Norm) {
      return convert_sat<Out>(static_cast<float>(v) * mul_[c] + add_[c]);
    } else {
      return convert_sat<Out>(v);
    }
  }

  void fill_block(int k, Out* o, int64_t c) {
    if (!chan_below_[k]) {
      int64_t n = k == 0 ? total() : ax_[k - 1].out_stride;
      std::fill_n(o, n, fill_[c]);
      return;
    }
    const Axis& ax = ax_[k];
    for (int64_t i = 0; i < ax.n; ++i) fill_block(k + 1, o + i * ax.out_stride, ax.channel ? i : c);
  }

  int64_t total() const { return ax_.empty() ? 1 : ax_[0].n * ax_[0].out_stride; }

  void rec(int k, Out* o, int64_t off, int64_t c) {
    if (nd_ == 0) {
      *o = convert(in_[off], 0);
      return;
    }
    const Axis& ax = ax_[k];
    if (k == nd_ - 1) {
      row(o, off, c);
      return;
    }
    if (k == nd_ - 3 && rgb_planes_) {
      planes3(o, off);
      return;
    }
    for (int64_t i = 0; i < ax.lo; ++i) fill_block(k + 1, o + i * ax.out_stride, ax.channel ? i : c);
    if (k == nd_ - 2 && small_inner()) {
      pixels(o, off, c);
    } else {
      for (int64_t i = ax.lo; i < ax.hi; ++i)
        rec(k + 1, o + i * ax.out_stride, off + i * ax.step, ax.channel ? i : c);
    }
    for (int64_t i = ax.hi; i < ax.n; ++i) fill_block(k + 1, o + i * ax.out_stride, ax.channel ? i : c);
  }

  // The last axis is short (interleaved channels) and wholly inside the input.
  bool small_inner() const {
    const Axis& in = ax_[nd_ - 1];
    return in.n <= 4 && in.lo == 0 && in.hi == in.n;
  }

  // Rows of short pixels (the last two axes) without a call per pixel.
  void pixels(Out* o, int64_t off, int64_t c) {
    const Axis& outer = ax_[nd_ - 2];
    const Axis& inner = ax_[nd_ - 1];
    const int64_t n = inner.n, s = inner.step, os = outer.out_stride, is = outer.step;
    if constexpr (Norm && std::is_same_v<In, uint8_t> &&
                  (std::is_same_v<Out, float> || std::is_same_v<Out, float16>)) {
      // interleaved RGB(A) kept interleaved (HWC output), possibly mirrored
      if (inner.channel && s == 1 && os == n && (is == n || is == -n) && !outer.channel) {
        if (outer.hi > outer.lo)
          interleaved_row_u8(o + outer.lo * os, in_ + off + outer.lo * is, outer.hi - outer.lo,
                             static_cast<int>(n), is < 0, mul_.data(), add_.data());
        return;
      }
    }
    for (int64_t i = outer.lo; i < outer.hi; ++i) {
      Out* dst = o + i * os;
      const In* src = in_ + off + i * is;
      int64_t cc = outer.channel ? i : c;
      for (int64_t j = 0; j < n; ++j) dst[j] = convert(src[j * s], inner.channel ? j : cc);
    }
  }

  // HWC RGB to three planes (CHW), the hot case: each pixel's three bytes are read once.
  void planes3(Out* o, int64_t off) {
    const Axis &ch = ax_[nd_ - 3], &y = ax_[nd_ - 2], &x = ax_[nd_ - 1];
    for (int64_t yi = 0; yi < y.n; ++yi) {
      Out* d[3];
      for (int c = 0; c < 3; ++c) d[c] = o + c * ch.out_stride + yi * y.out_stride;
      if (yi < y.lo || yi >= y.hi) {
        for (int c = 0; c < 3; ++c) std::fill_n(d[c], x.n, fill_[c]);
        continue;
      }
      for (int c = 0; c < 3; ++c) {
        std::fill(d[c], d[c] + x.lo, fill_[c]);
        std::fill(d[c] + x.hi, d[c] + x.n, fill_[c]);
        d[c] += x.lo;
      }
      if (x.hi > x.lo) {
        if constexpr (Norm && std::is_same_v<In, uint8_t> &&
                      (std::is_same_v<Out, float> || std::is_same_v<Out, float16>))
          strided_rows3_u8(d, in_ + off + yi * y.step + x.lo * x.step, x.hi - x.lo, x.step,
                           mul_.data(), add_.data());
      }
    }
  }

  void row(Out* o, int64_t off, int64_t c) {
    const Axis& ax = ax_[nd_ - 1];
    if (ax.channel) {
      for (int64_t i = 0; i < ax.lo; ++i) o[i] = fill_[i];
      for (int64_t i = ax.lo; i < ax.hi; ++i) o[i] = convert(in_[off + i * ax.step], i);
      for (int64_t i = ax.hi; i < ax.n; ++i) o[i] = fill_[i];
      return;
    }
    std::fill(o, o + ax.lo, fill_[c]);
    std::fill(o + ax.hi, o + ax.n, fill_[c]);
    const int64_t m = ax.hi - ax.lo;
    if (m <= 0) return;
    const In* src = in_ + off + ax.lo * ax.step;
    Out* dst = o + ax.lo;
    const int64_t step = ax.step;
    if constexpr (Norm) {
      if constexpr (std::is_same_v<In, uint8_t> &&
                    (std::is_same_v<Out, float> || std::is_same_v<Out, float16>)) {
        strided_row_u8(dst, src, m, step, mul_[c], add_[c], in_, in_ + in_volume_);
      } else {
        const float mu = mul_[c], ad = add_[c];
        for (int64_t i = 0; i < m; ++i)
          dst[i] = convert_sat<Out>(static_cast<float>(src[i * step]) * mu + ad);
      }
    } else if constexpr (std::is_same_v<Out, In>) {
      if (step == 1) {
        std::memcpy(dst, src, m * sizeof(Out));
      } else {
        for (int64_t i = 0; i < m; ++i) dst[i] = src[i * step];
      }
    } else {
      for (int64_t i = 0; i < m; ++i) dst[i] = convert_sat<Out>(src[i * step]);
    }
  }

  Out* out_;
  const In* in_;
  const std::vector<Axis>& ax_;
  int nd_;
  int64_t in_volume_ = 0;
  std::vector<Out> fill_;
  std::vector<float> mul_, add_;
  std::vector<bool> chan_below_;
  bool rgb_planes_ = false;
};

}  // namespace

Shape slice_output_shape(const SliceArgs& a) {
  check(a);
  Shape s(a.in_shape.size());
  for (size_t k = 0; k < s.size(); ++k) s[k] = a.shape[a.perm.empty() ? k : a.perm[k]];
  return s;
}

bool slice_simd_available() { return strided_row_simd_available(); }

template <typename Out, typename In>
void slice_flip_normalize(Out* out, const In* in, const SliceArgs& a) {
  check(a);
  Plan plan = make_plan(a);
  if (plan.empty) return;
  if (!a.mul.empty()) {
    Runner<Out, In, true>(out, in, a, plan).run();
  } else {
    Runner<Out, In, false>(out, in, a, plan).run();
  }
}

#define STOKER_SLICE_SAME(T) template void slice_flip_normalize<T, T>(T*, const T*, const SliceArgs&);
#define STOKER_SLICE_TO(In)                                                                       \
  template void slice_flip_normalize<float, In>(float*, const In*, const SliceArgs&);             \
  template void slice_flip_normalize<float16, In>(float16*, const In*, const SliceArgs&);         \
  template void slice_flip_normalize<uint8_t, In>(uint8_t*, const In*, const SliceArgs&);         \
  template void slice_flip_normalize<int8_t, In>(int8_t*, const In*, const SliceArgs&);
STOKER_SLICE_SAME(uint16_t)
STOKER_SLICE_SAME(uint32_t)
STOKER_SLICE_SAME(uint64_t)
STOKER_SLICE_SAME(int16_t)
STOKER_SLICE_SAME(int32_t)
STOKER_SLICE_SAME(int64_t)
STOKER_SLICE_SAME(double)
STOKER_SLICE_SAME(bool)
STOKER_SLICE_TO(uint8_t)
STOKER_SLICE_TO(uint16_t)
STOKER_SLICE_TO(uint32_t)
STOKER_SLICE_TO(uint64_t)
STOKER_SLICE_TO(int8_t)
STOKER_SLICE_TO(int16_t)
STOKER_SLICE_TO(int32_t)
STOKER_SLICE_TO(int64_t)
STOKER_SLICE_TO(float16)
STOKER_SLICE_TO(float)
STOKER_SLICE_TO(double)
STOKER_SLICE_TO(bool)

}  // namespace kernels
}  // namespace stoker
