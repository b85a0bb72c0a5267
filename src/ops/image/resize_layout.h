// How resize walks a sample: as `planes` images of h x w pixels with c interleaved channels
// (volumes: `planes` volumes of d such slices). HWC / FHWC / DHWC / FDHWC are interleaved
// (c = the last extent); CHW / FCHW / CFHW / CDHW / FCDHW / CFDHW are planar, resized one
// channel plane (or channel volume) at a time (c = 1), as DALI takes them.
#pragma once
#include <cstdint>
#include <string>

#include "core/shape.h"

namespace stoker {

struct ResizePlanes {
  int d_axis = -1, h_axis = 0, w_axis = 1;  // d_axis: -1 for images
  int64_t planes = 1, d = 1, h = 0, w = 0, c = 1;
  bool volume() const { return d_axis >= 0; }
};

// The layouts resize takes ("" with 3 dimensions is HWC).
inline bool resize_layout_supported(const std::string& layout, int ndim) {
  return layout == "HWC" || layout == "FHWC" || layout == "CHW" || layout == "FCHW" ||
         layout == "CFHW" || layout == "DHWC" || layout == "FDHWC" || layout == "CDHW" ||
         layout == "FCDHW" || layout == "CFDHW" || (layout.empty() && ndim == 3);
}

inline ResizePlanes resize_planes(const std::string& layout, const Shape& s) {
  ResizePlanes p;
  const int nd = static_cast<int>(s.size());
  const bool planar = layout.size() >= 2 && layout.compare(layout.size() - 2, 2, "HW") == 0;
  p.h_axis = planar ? nd - 2 : nd - 3;
  p.w_axis = p.h_axis + 1;
  p.h = s[p.h_axis];
  p.w = s[p.w_axis];
  p.c = planar ? 1 : s[nd - 1];
  if (layout.find('D') != std::string::npos) {  // the supported volume layouts put D before H
    p.d_axis = p.h_axis - 1;
    p.d = s[p.d_axis];
  }
  for (int d = 0; d < (p.volume() ? p.d_axis : p.h_axis); ++d) p.planes *= s[d];
  return p;
}

}  // namespace stoker
