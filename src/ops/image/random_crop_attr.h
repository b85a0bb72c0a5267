// DALI's random crop window (its RandomCropGenerator), shared by decoders.image_random_crop,
// random_resized_crop and anything else that takes random_area / random_aspect_ratio /
// num_attempts. The window is a pure function of the image size, the arguments and a Philox
// stream, so the same seed gives the same windows whatever the thread count.
//
// How a window is drawn (DALI's rules, float32 arithmetic as there):
//  - an aspect ratio r (width / height) log-uniform in random_aspect_ratio and an area fraction
//    A uniform in random_area; w = round(sqrt(A * H * W * r)), h = round(sqrt(A * H * W / r)),
//    both at least 1. Accepted when it fits and the rounded w / h is still within the range;
//    otherwise drawn again, num_attempts times in all.
//  - images so wide (or tall) that no window of the minimum area can have an allowed aspect
//    ratio skip the attempts and take the full height (width) at the extreme ratio.
//  - when every attempt fails: the whole image with its aspect ratio clamped into the range,
//    shrunk (keeping that ratio) to at most the maximum area.
//  - the position is uniform over the places the window fits: y first, then x.
// Unlike torchvision, the fallback window is placed at random too, not centred.
#pragma once
#include <cstdint>

#include "core/random.h"

namespace stoker {

class OpSchema;
class OpSpec;

struct RandomCropArgs {
  float area_min = 0.08f, area_max = 1.0f;         // fraction of the image area
  float aspect_min = 3.0f / 4, aspect_max = 4.0f / 3;  // width / height
  int num_attempts = 10;
};

// A window in pixels: rows [y, y + h), columns [x, x + w).
struct CropWindow2D {
  int64_t y = 0, x = 0, h = 0, w = 0;
  bool operator==(const CropWindow2D&) const = default;
};

// One window for an H x W image, drawing from `rng`. An empty image gives an empty window.
CropWindow2D random_crop_window(int64_t height, int64_t width, const RandomCropArgs& args,
                                Philox& rng);

// ---- operator side: the schema arguments (random_area, random_aspect_ratio, num_attempts,
// seed, as DALI declares them) and reading them from a spec, with checks that name the argument.
void add_random_crop_args(OpSchema& schema);
RandomCropArgs random_crop_args(const OpSpec& spec);

}  // namespace stoker
