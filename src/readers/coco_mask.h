// COCO segmentation masks: run-length encodings (RLE), polygons rasterised the way the COCO API
// (pycocotools' maskApi) does it, and the pixel-wise label image readers.coco outputs.
//
// An RLE lists alternating runs of 0s and 1s over the image in column-major order (x outer, y
// inner), starting with a run of 0s (possibly empty) — the COCO format, so masks made here are
// pixel-for-pixel those pycocotools makes (tests/python/test_readers_coco.py checks it).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace stoker::readers::coco {

struct Rle {
  int64_t h = 0, w = 0;
  std::vector<uint32_t> counts;
};

// Decodes the compressed string form of `counts` ("size": [h, w], "counts": "...": 6-bit
// characters from '0', 5 data bits each, a continuation bit, counts after the second stored as
// differences). Throws Error(kInvalidArgument) saying what is wrong; the caller adds where.
Rle rle_from_string(const std::string& s, int64_t h, int64_t w);

// Checks that the runs cover exactly h*w pixels; throws Error(kInvalidArgument) otherwise.
void check_rle(const Rle& r);

// Rasterises a polygon of `k` vertices (x0, y0, x1, y1, ...) into an h x w RLE as the COCO API's
// rleFrPoly does: the boundary is traced on a 5x finer grid and a pixel is inside when its centre
// column crossing lies inside. Matching it (not a generic scan converter) keeps the masks equal
// to those of pycocotools and DALI.
Rle rle_from_polygon(const double* xy, int64_t k, int64_t h, int64_t w);

// Sets every pixel the RLE covers to `value` in a row-major h x w image.
void paint_rle(const Rle& r, int32_t value, int32_t* image);

}  // namespace stoker::readers::coco
