#include "readers/coco_mask.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "core/error.h"

namespace stoker::readers::coco {

Rle rle_from_string(const std::string& s, int64_t h, int64_t w) {
  Rle r;
  r.h = h;
  r.w = w;
  size_t p = 0;
  while (p < s.size()) {
    int64_t x = 0;
    int k = 0;
    bool more = true;
    while (more) {
      if (p >= s.size())
        fail(ErrorKind::kInvalidArgument, "the RLE string ends inside a count (its last character "
                                          "has the continuation bit set)");
      const unsigned char ch = static_cast<unsigned char>(s[p]);
      int c = ch - 48;
      if (c < 0 || c > 63) {
        char shown[16];
        if (ch >= 32 && ch < 127) std::snprintf(shown, sizeof shown, "'%c'", ch);
        else std::snprintf(shown, sizeof shown, "byte 0x%02X", ch);  // keep the message UTF-8
        fail(ErrorKind::kInvalidArgument, std::string("the RLE string has the character ") +
                                              shown + " at position " + std::to_string(p) +
                                              "; COCO RLE strings use '0'..'o'");
      }
      if (k >= 7)
        fail(ErrorKind::kInvalidArgument, "the RLE string has a count longer than 7 characters at "
                                          "position " + std::to_string(p));
      x |= static_cast<int64_t>(c & 0x1f) << (5 * k);
      more = (c & 0x20) != 0;
      ++p;
      ++k;
      if (!more && (c & 0x10)) x |= static_cast<int64_t>(-1) * (int64_t{1} << (5 * k));  // sign
    }
    // From the fourth count on, counts are stored as differences to the count two before.
    if (r.counts.size() > 2) x += static_cast<int64_t>(r.counts[r.counts.size() - 2]);
    if (x < 0 || x > h * w)
      fail(ErrorKind::kInvalidArgument, "the RLE string decodes to the run length " +
                                            std::to_string(x) + " (count " +
                                            std::to_string(r.counts.size()) + "), outside 0.." +
                                            std::to_string(h * w));
    r.counts.push_back(static_cast<uint32_t>(x));
  }
  return r;
}

void check_rle(const Rle& r) {
  int64_t total = 0;
  for (uint32_t c : r.counts) total += c;
  if (total != r.h * r.w)
    fail(ErrorKind::kInvalidArgument,
         "the RLE runs cover " + std::to_string(total) + " pixels, but its size " +
             std::to_string(r.h) + "x" + std::to_string(r.w) + " has " + std::to_string(r.h * r.w));
}

Rle rle_from_polygon(const double* xy, int64_t k, int64_t h, int64_t w) {
  Rle r;
  r.h = h;
  r.w = w;
  constexpr double kScale = 5;
  // Vertices on the 5x grid, the polygon closed by repeating the first one.
  std::vector<int> x(k + 1), y(k + 1);
  for (int64_t j = 0; j < k; ++j) {
    x[j] = static_cast<int>(kScale * xy[2 * j] + .5);
    y[j] = static_cast<int>(kScale * xy[2 * j + 1] + .5);
  }
  if (k > 0) {
    x[k] = x[0];
    y[k] = y[0];
  }
  // Every grid point along each edge, stepping along its longer axis.
  int64_t m = 0;
  for (int64_t j = 0; j < k; ++j)
    m += std::max(std::abs(x[j] - x[j + 1]), std::abs(y[j] - y[j + 1])) + 1;
  std::vector<int> u, v;
  u.reserve(m);
  v.reserve(m);
  for (int64_t j = 0; j < k; ++j) {
    int xs = x[j], xe = x[j + 1], ys = y[j], ye = y[j + 1];
    const int dx = std::abs(xe - xs), dy = std::abs(ys - ye);
    const bool flip = (dx >= dy && xs > xe) || (dx < dy && ys > ye);
    if (flip) {
      std::swap(xs, xe);
      std::swap(ys, ye);
    }
    if (dx >= dy) {
      const double s = dx == 0 ? 0 : static_cast<double>(ye - ys) / dx;
      for (int d = 0; d <= dx; ++d) {
        const int t = flip ? dx - d : d;
        u.push_back(t + xs);
        v.push_back(static_cast<int>(ys + s * t + .5));
      }
    } else {
      const double s = static_cast<double>(xe - xs) / dy;
      for (int d = 0; d <= dy; ++d) {
        const int t = flip ? dy - d : d;
        v.push_back(t + ys);
        u.push_back(static_cast<int>(xs + s * t + .5));
      }
    }
  }
  // Where the boundary crosses a pixel column's centre, back on the pixel grid: each crossing
  // toggles the mask at (column, first row below the boundary).
  std::vector<uint32_t> a;
  for (size_t j = 1; j < u.size(); ++j) {
    if (u[j] == u[j - 1]) continue;
    double xd = static_cast<double>(u[j] < u[j - 1] ? u[j] : u[j] - 1);
    xd = (xd + .5) / kScale - .5;
    if (std::floor(xd) != xd || xd < 0 || xd > static_cast<double>(w - 1)) continue;
    double yd = static_cast<double>(v[j] < v[j - 1] ? v[j] : v[j - 1]);
    yd = (yd + .5) / kScale - .5;
    yd = std::ceil(std::clamp(yd, 0.0, static_cast<double>(h)));
    a.push_back(static_cast<uint32_t>(static_cast<int64_t>(xd) * h + static_cast<int64_t>(yd)));
  }
  a.push_back(static_cast<uint32_t>(h * w));
  std::sort(a.begin(), a.end());
  // Toggle positions to run lengths; two toggles at one position cancel, merging their runs.
  uint32_t prev = 0;
  for (uint32_t& t : a) {
    const uint32_t cur = t;
    t -= prev;
    prev = cur;
  }
  size_t j = 0;
  r.counts.push_back(a[j++]);
  while (j < a.size()) {
    if (a[j] > 0) {
      r.counts.push_back(a[j++]);
    } else {
      ++j;
      if (j < a.size()) r.counts.back() += a[j++];
    }
  }
  return r;
}

void paint_rle(const Rle& r, int32_t value, int32_t* image) {
  const int64_t h = r.h, w = r.w, total = h * w;
  int64_t pos = 0;
  for (size_t i = 0; i < r.counts.size() && pos < total; ++i) {
    const int64_t end = std::min<int64_t>(pos + r.counts[i], total);
    if (i % 2 == 1) {
      for (int64_t q = pos; q < end;) {
        const int64_t col = q / h, row = q % h;
        const int64_t n = std::min(h - row, end - q);
        int32_t* dst = image + row * w + col;
        for (int64_t t = 0; t < n; ++t) dst[t * w] = value;
        q += n;
      }
    }
    pos = end;
  }
}

}  // namespace stoker::readers::coco
