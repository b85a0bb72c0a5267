// The layouts of the operators that take images plane by plane (HW, HWC, CHW) or sequences of
// them (FHWC, FCHW): experimental.warp_perspective, median_blur, erode, dilate.
#pragma once
#include <string>

#include "pipeline/operator.h"

namespace stoker {

// Input 0's layout (inferred from its number of dimensions when it has none), or an error
// naming the operator and what it takes.
inline std::string image_or_sequence_layout(const OpSpec& spec, const Batch& in) {
  std::string l = in.layout();
  const int nd = in.ndim();
  if (l.empty()) l = nd == 2 ? "HW" : nd == 3 ? "HWC" : nd == 4 ? "FHWC" : "";
  const bool ok = (nd == 2 && l == "HW") || (nd == 3 && (l == "HWC" || l == "CHW")) ||
                  (nd == 4 && (l == "FHWC" || l == "FCHW"));
  if (!ok)
    fail(ErrorKind::kInvalidArgument,
         spec.display_name() + ": input 0 must be images with layout HW, HWC or CHW, or sequences "
                               "with layout FHWC or FCHW, got layout '" + in.layout() + "' with " +
             std::to_string(nd) + " dimensions. Decode with fn.decoders.image (HWC), or give the "
                                  "layout to fn.external_source.");
  return l;
}

}  // namespace stoker
