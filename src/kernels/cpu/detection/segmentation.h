// The arithmetic of the segmentation operators (DALI's segmentation.*): connected blobs of a
// label mask and the random choice of one (random_object_bbox), foreground pixels of a mask
// (random_mask_pixel), and the selection of polygons by mask id (select_masks). Masks are N-D
// arrays in C order.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/random.h"

namespace stoker {
namespace kernels {

// ---- connected blobs

// The connected blobs of equal value of a mask. Two elements touch when their positions differ
// by one along one axis (2 * ndim neighbours: 4 in 2-D, 6 in 3-D; diagonal neighbours do not
// touch), as DALI's labelling has it. Blobs are numbered in the order of their first element in
// C order.
struct Blobs {
  int ndim = 0;
  std::vector<int64_t> values;  // per blob: the value of its elements
  std::vector<int64_t> boxes;   // per blob: start[ndim] (inclusive), then end[ndim] (exclusive)

  int64_t size() const { return static_cast<int64_t>(values.size()); }
  const int64_t* lo(int64_t b) const { return boxes.data() + 2 * ndim * b; }
  const int64_t* hi(int64_t b) const { return lo(b) + ndim; }
  // The volume of blob b's bounding box (not its count of elements).
  int64_t box_volume(int64_t b) const;
};

// The blobs of `in` (shape[ndim], ndim >= 1, C order). Elements whose value (as an integer) is
// `background` belong to no blob; every other value makes blobs of its own. `labels`, when not
// null, gets one entry per element: its blob's number, or -1 for background. Defined for bool
// and the integer types up to 32 bits.
template <typename T>
Blobs find_blobs(const T* in, const int64_t* shape, int ndim, int64_t background,
                 int64_t* labels = nullptr);

// ---- random_object_bbox's choice

// The classes one sample chooses from. `classes` empty with `from_labels`: every value present
// but the background, in increasing order, each of weight 1 (DALI without classes and
// class_weights); otherwise the classes given (weights >= 0, one per class; classes absent from
// the mask get weight 0).
struct ObjectChoiceArgs {
  int64_t background = 0;
  bool ignore_class = false;  // choose among all blobs, whatever their value
  bool from_labels = true;
  std::vector<int64_t> classes;
  std::vector<double> weights;
  int64_t k_largest = -1;               // -1: every blob; else the k with the largest boxes
  std::vector<int64_t> threshold;       // empty, or the smallest box extent per axis
};

struct ObjectChoice {
  int64_t blob = -1;       // -1: no blob qualified (the whole input is the box)
  int64_t class_label = 0; // the chosen blob's class; the background where blob == -1 (and with
                           // ignore_class)
};

// With the classes weighted, draws a class among those present; among its blobs whose box
// reaches `threshold` on every axis (the k_largest largest boxes of them, ties to the earlier
// blob), draws one uniformly. A class without such a blob is dropped and another drawn; with
// ignore_class the blob is drawn among all blobs. Draws from `rng` only.
ObjectChoice choose_object(const Blobs& blobs, const ObjectChoiceArgs& args, Philox& rng);

// ---- random_mask_pixel

// Which elements of a mask are foreground: those equal to `value` (as numbers: a value the
// element type cannot hold matches none) or, without by_value, those above `threshold` (the
// element converted to float32 first, as DALI compares).
struct ForegroundTest {
  bool by_value = false;
  int64_t value = 0;
  float threshold = 0.0f;
};

// How many of the n elements are foreground; the flat index of the k-th of them (k < count).
// Defined for bool, the integer types and float32.
template <typename T>
int64_t count_foreground(const T* in, int64_t n, const ForegroundTest& test);
template <typename T>
int64_t find_foreground(const T* in, int64_t n, const ForegroundTest& test, int64_t k);

// A uniform integer in [0, n), n > 0, without bias, from `rng`.
int64_t uniform_index(Philox& rng, int64_t n);

// ---- select_masks

// What select_masks does with one sample, or the first thing wrong with it (checked in DALI's
// order: mask_ids from the start, then the selected polygons in input order, then the ids of
// no polygon).
enum class SelectFault {
  kNone,
  kDuplicateId,  // mask_ids[fault_index] appeared before in mask_ids
  kOutOfRange,   // polygon fault_index's vertex range is not inside [0, nvertices)
  kReversed,     // polygon fault_index ends before it starts
  kMissingId,    // mask_ids[fault_index] is the mask id of no polygon
};

struct SelectPlan {
  SelectFault fault = SelectFault::kNone;
  int64_t fault_index = -1;
  std::vector<int64_t> polygons;  // input polygons in output order: by position of their mask
                                  // in mask_ids, then in input order
  std::vector<int32_t> new_ids;   // per output polygon, its mask id (or position with reindex)
  int64_t nvertices = 0;          // output vertices
};

// polygons: npolygons rows of (mask_id, start_vertex, end_vertex).
SelectPlan plan_select_masks(const int32_t* mask_ids, int64_t nids, const int32_t* polygons,
                             int64_t npolygons, int64_t nvertices, bool reindex);

// Writes the output polygons (rows of 3 int32) and their vertices (each vertex_bytes long, of
// any type) back to back in output order.
void select_masks(int32_t* out_polygons, void* out_vertices, const SelectPlan& plan,
                  const int32_t* polygons, const void* vertices, size_t vertex_bytes);

}  // namespace kernels
}  // namespace stoker
