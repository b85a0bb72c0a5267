#include "ops/image/random_crop_attr.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "pipeline/operator.h"

namespace stoker {

CropWindow2D random_crop_window(int64_t height, int64_t width, const RandomCropArgs& args,
                                Philox& rng) {
  CropWindow2D c;
  if (height <= 0 || width <= 0) return c;
  // int like DALI: image sizes are far below 2^31 (the decoders' pixel limit sees to it).
  const int H = static_cast<int>(height), W = static_cast<int>(width);
  const float min_wh = args.aspect_min, max_wh = args.aspect_max;
  const float max_hw = 1.0f / args.aspect_min;
  const float min_area = static_cast<float>(int64_t{W} * H) * args.area_min;
  const int max_w = std::max(1, static_cast<int>(static_cast<float>(H) * max_wh));
  const int max_h = std::max(1, static_cast<int>(static_cast<float>(W) * max_hw));
  const float log_lo = std::log(args.aspect_min), log_hi = std::log(args.aspect_max);

  int h = 0, w = 0;
  if (static_cast<float>(H) * max_w < min_area) {         // too wide for any allowed window
    h = H;
    w = max_w;
  } else if (static_cast<float>(W) * max_h < min_area) {  // too tall
    h = max_h;
    w = W;
  } else {
    int left = args.num_attempts;
    for (; left > 0; --left) {
      const float target = rng.uniform(args.area_min, args.area_max) * static_cast<float>(int64_t{W} * H);
      float ratio = std::exp(rng.uniform(log_lo, log_hi));
      w = std::max(1, static_cast<int>(std::roundf(std::sqrt(target * ratio))));
      h = std::max(1, static_cast<int>(std::roundf(std::sqrt(target / ratio))));
      ratio = static_cast<float>(w) / static_cast<float>(h);
      if (w <= W && h <= H && ratio >= min_wh && ratio <= max_wh) break;
    }
    if (left <= 0) {
      const float max_area = args.area_max * static_cast<float>(int64_t{W} * H);
      const float ratio = static_cast<float>(W) / static_cast<float>(H);
      if (ratio > max_wh) {
        h = H;
        w = max_w;
      } else if (ratio < min_wh) {
        h = max_h;
        w = W;
      } else {
        h = H;
        w = W;
      }
      const float scale = std::min(1.0f, max_area / static_cast<float>(int64_t{h} * w));
      const float s = std::sqrt(scale);
      h = std::max(1, static_cast<int>(static_cast<float>(h) * s));
      w = std::max(1, static_cast<int>(static_cast<float>(w) * s));
    }
  }
  c.h = h;
  c.w = w;
  c.y = rng.below(static_cast<uint32_t>(H - h + 1));
  c.x = rng.below(static_cast<uint32_t>(W - w + 1));
  return c;
}

void add_random_crop_args(OpSchema& schema) {
  schema.random()
      .arg({.name = "random_area", .type = ArgType::kFloatList,
            .default_value = std::vector<double>{0.08, 1.0},
            .doc = "Range [min, max] of the window's area as a fraction of the image's; one value "
                   "means exactly that fraction.",
            .min = 0.0, .list_min = 1, .list_max = 2})
      .arg({.name = "random_aspect_ratio", .type = ArgType::kFloatList,
            .default_value = std::vector<double>{3.0 / 4.0, 4.0 / 3.0},
            .doc = "Range [min, max] of the window's aspect ratio (width / height), drawn "
                   "log-uniformly; one value means exactly that ratio.",
            .list_min = 1, .list_max = 2})
      .arg({.name = "num_attempts", .type = ArgType::kInt, .default_value = int64_t{10},
            .doc = "Draws of area and aspect ratio before falling back to the whole image (its "
                   "aspect ratio clamped into range, shrunk to at most the maximum area).",
            .min = 0})
      .arg({.name = "seed", .type = ArgType::kInt, .default_value = int64_t{-1},
            .doc = "Random seed; -1 takes it from the pipeline's seed and this operator's place "
                   "in the graph."});
}

RandomCropArgs random_crop_args(const OpSpec& spec) {
  auto range = [&](const char* name) {
    std::vector<double> v = spec.get<std::vector<double>>(name);
    if (v.size() == 1) v.push_back(v[0]);
    if (!(v[0] <= v[1]))
      spec.arg_error(name, "must be a range [min, max] with min <= max, got [" +
                               std::to_string(v[0]) + ", " + std::to_string(v[1]) + "].");
    return v;
  };
  RandomCropArgs a;
  std::vector<double> area = range("random_area");
  if (!(area[1] > 0))
    spec.arg_error("random_area", "must allow a window larger than 0, got max " +
                                      std::to_string(area[1]) + ".");
  std::vector<double> aspect = range("random_aspect_ratio");
  if (!(aspect[0] > 0))
    spec.arg_error("random_aspect_ratio", "must be > 0 (width / height), got min " +
                                              std::to_string(aspect[0]) + ".");
  a.area_min = static_cast<float>(area[0]);
  a.area_max = static_cast<float>(area[1]);
  a.aspect_min = static_cast<float>(aspect[0]);
  a.aspect_max = static_cast<float>(aspect[1]);
  a.num_attempts = spec.get<int>("num_attempts");
  return a;
}

}  // namespace stoker
