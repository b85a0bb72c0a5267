// A COCO data set as readers.coco delivers it: the annotations JSON (or DALI's preprocessed
// annotation files) turned into per-image boxes, labels, polygons and RLE masks.
//
// Semantics are DALI's CocoLoader (dali/operators/reader/loader/coco_loader.cc):
//  - images are taken in the order of their ids (or the order of `images`, duplicates kept);
//  - an annotation is kept when its box is at least size_threshold wide and high (before ltrb)
//    and, unless include_iscrowd, when it is not a crowd;
//  - labels are remapped to 1..N in the order the categories are listed, unless
//    avoid_class_remapping (then category ids are returned as they are);
//  - ltrb turns [x, y, w, h] into [l, t, r, b]; ratio divides x by the image width and y by its
//    height (boxes and vertices), in float as DALI does;
//  - polygons are [mask index, first vertex, end vertex) with vertices counted per image; the
//    mask index is the annotation's position among the image's kept annotations;
//  - skip_empty drops images left with no annotation.
// Where stoker refuses what DALI lets through: a malformed file (a missing or mistyped field, a
// duplicate image id or file name, an annotation of an unknown category when labels are
// remapped, an `images` entry that is not in the file) raises an error naming the file, the entry
// and what is wrong, instead of reading garbage or skipping silently.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "readers/coco_mask.h"

namespace stoker::readers::coco {

struct Options {
  std::string annotations_file;
  std::optional<std::vector<std::string>> images;  // file names as in the annotations
  bool ltrb = false;
  bool ratio = false;
  bool skip_empty = false;
  bool include_iscrowd = true;
  bool avoid_class_remapping = false;
  float size_threshold = 0.1f;
  bool polygons = false;  // read polygon segmentations (polygon_masks or pixelwise_masks)
  bool rles = false;      // read RLE segmentations too, and keep what pixel-wise masks need
};

struct Polygon {
  int32_t mask_idx, begin, end;  // vertices [begin, end) of the image's vertices
};

struct Image {
  std::string file_name;  // as in the annotations (relative to file_root)
  int32_t id = 0;
  int32_t width = 0, height = 0;
  int64_t box_begin = 0, box_count = 0;    // objects: into boxes (4 each) and labels
  int64_t poly_begin = 0, poly_count = 0;  // into polygons
  int64_t vert_begin = 0, vert_count = 0;  // into vertices (2 each)
  int64_t rle_begin = 0, rle_count = 0;    // into rles and rle_mask_idx
};

struct Dataset {
  std::vector<Image> images;
  std::vector<float> boxes;
  std::vector<int32_t> labels;
  std::vector<Polygon> polygons;
  std::vector<float> vertices;  // as output: divided by width/height with ratio
  // The vertices in pixels, for rasterising (kept with `rles`: the output ones may be ratios).
  std::vector<double> raster_vertices;
  std::vector<Rle> rles;
  std::vector<int32_t> rle_mask_idx;
};

// Parses the annotations JSON. Errors: kNotFound when the file is missing, kInvalidArgument
// naming the file and the entry for malformed content.
Dataset parse_annotations(const Options& o);

// DALI's preprocessed annotations (save_preprocessed_annotations / preprocessed_annotations):
// one binary file per array in `dir`, each a uint32 element count and the elements (int32, float,
// int64 as DALI's CocoLoader keeps them; RLEs as three uint64 h, w, m and m uint32 counts) and
// filenames.dat with one file name a line. The ltrb, ratio, size_threshold and skip_empty choices
// are baked in when saving.
void save_preprocessed(const Dataset& d, const std::string& dir, bool masks, bool pixelwise,
                       bool image_ids);
// Loads them back, checking every offset and count against the arrays (kInvalidArgument naming
// the directory and file). Polygons rasterise from the stored vertices.
Dataset load_preprocessed(const std::string& dir, bool masks, bool pixelwise, bool image_ids);

// The pixel-wise label mask of image `i` (row-major height x width): each annotation's polygons
// and RLE painted with its label, in increasing label order, so where masks of two classes
// overlap the higher label wins (as DALI's merge ends up doing); 0 is background.
void pixelwise_mask(const Dataset& d, int64_t i, int32_t* out);

// Largest height * width of a pixel-wise mask (4 bytes a pixel), as the decoders' pixel limit.
constexpr int64_t kMaxMaskPixels = 128'000'000;

}  // namespace stoker::readers::coco
