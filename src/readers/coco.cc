#include "readers/coco.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <numeric>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "readers/file_list.h"

namespace stoker::readers::coco {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

// Polygon vertices further out than this are refused when masks are rasterised: the boundary is
// traced point by point on a 5x grid in int, so far-away vertices would cost memory and overflow.
constexpr double kMaxCoordinate = 1e6;

struct RawImage {
  std::string file_name;
  int32_t id = 0, width = 0, height = 0;
  int64_t index = 0;  // position in "images"
};

struct RawAnnotation {
  int32_t image_id = 0, category_id = 0;
  std::array<float, 4> box{};
  std::vector<int64_t> poly_ends;  // end of each polygon in coords (in numbers, not vertices)
  std::vector<double> coords;
  bool has_rle = false;
  Rle rle;
  int64_t index = 0;  // position in "annotations"
  std::string id;     // its "id", for messages ("" when it has none)
};

class Parser {
 public:
  explicit Parser(const Options& o) : o_(o), file_(o.annotations_file) {}

  Dataset run() {
    if (!fs::exists(file_))
      fail(ErrorKind::kNotFound, "annotations_file '" + file_ + "' does not exist; give the path "
                                 "of a COCO instances JSON file");
    std::ifstream in(file_, std::ios::binary);
    if (!in) fail(ErrorKind::kIO, "cannot open annotations_file '" + file_ + "'");
    json root;
    try {
      // Each entry of images / annotations / categories is taken as soon as it is parsed and
      // then dropped (the callback returns false), so a 450 MB instances file never sits in
      // memory as a JSON tree: only the compact records below are kept.
      root = json::parse(in, [this](int depth, json::parse_event_t ev, json& v) {
        return on_event(depth, ev, v);
      });
    } catch (const json::exception& e) {
      fail(ErrorKind::kInvalidArgument, "annotations_file '" + file_ + "' is not valid JSON: " +
                                            e.what());
    }
    if (!root.is_object())
      fail(ErrorKind::kInvalidArgument, "annotations_file '" + file_ + "' must hold a JSON object "
                                        "with 'images', 'annotations' and 'categories', got " +
                                        std::string(root.type_name()));
    for (const char* key : {"images", "annotations", "categories"}) {
      if (!root.contains(key)) continue;
      const json& a = root[key];
      if (!a.is_array())
        fail(ErrorKind::kInvalidArgument, "annotations_file '" + file_ + "': '" + key +
                                              "' must be a list, got " + a.type_name());
      if (!a.empty())  // objects were taken and dropped; anything left is not an object
        fail(ErrorKind::kInvalidArgument, "annotations_file '" + file_ + "': '" + key +
                                              "' holds " + a[0].dump().substr(0, 80) +
                                              ", which is not an object");
    }
    if (!root.contains("images"))
      fail(ErrorKind::kInvalidArgument, "annotations_file '" + file_ + "' has no 'images' list; "
                                        "a COCO file lists its images with their ids and file names");
    return build();
  }

 private:
  bool on_event(int depth, json::parse_event_t ev, json& v) {
    using E = json::parse_event_t;
    if (ev == E::key && depth == 1) {
      section_ = v.get<std::string>();
      return true;
    }
    if (ev != E::object_end || depth != 2) return true;
    if (section_ == "images") {
      add_image(v);
    } else if (section_ == "annotations") {
      add_annotation(v);
    } else if (section_ == "categories") {
      add_category(v);
    } else {
      return true;  // other sections ("info", "licenses") are kept as parsed, and ignored
    }
    return false;
  }

  std::string entry(const char* section, int64_t index, const std::string& id = "") const {
    std::string s = "annotations_file '" + file_ + "': " + section + "[" + std::to_string(index) + "]";
    if (!id.empty()) s += " (id " + id + ")";
    return s;
  }

  [[noreturn]] void bad(const std::string& where, const std::string& what) const {
    fail(ErrorKind::kInvalidArgument, where + ": " + what);
  }

  int32_t get_int(const json& obj, const char* key, const std::string& where) const {
    auto it = obj.find(key);
    if (it == obj.end()) bad(where, std::string("has no '") + key + "'");
    return to_int(*it, key, where);
  }

  int32_t to_int(const json& v, const char* key, const std::string& where) const {
    double d = 0;
    if (v.is_number_integer()) {
      int64_t i = v.get<int64_t>();
      if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) i = INT64_MAX;
      d = static_cast<double>(i);
    } else if (v.is_number_float()) {
      d = v.get<double>();
    } else {
      bad(where, std::string("'") + key + "' must be an integer, got " + v.dump().substr(0, 40));
    }
    if (d != std::floor(d) || d < std::numeric_limits<int32_t>::min() ||
        d > std::numeric_limits<int32_t>::max())
      bad(where, std::string("'") + key + "' must be an integer that fits 32 bits, got " +
                     v.dump().substr(0, 40));
    return static_cast<int32_t>(d);
  }

  double to_number(const json& v, const std::string& what, const std::string& where) const {
    if (!v.is_number()) bad(where, what + " must be a number, got " + v.dump().substr(0, 40));
    double d = v.get<double>();
    if (!std::isfinite(d)) bad(where, what + " must be finite, got " + v.dump());
    return d;
  }

  void add_image(const json& v) {
    const int64_t index = static_cast<int64_t>(raw_images_.size());
    const std::string where = entry("images", index, v.contains("id") ? v["id"].dump() : "");
    RawImage im;
    im.index = index;
    im.id = get_int(v, "id", where);
    auto fn = v.find("file_name");
    if (fn == v.end() || !fn->is_string() || fn->get<std::string>().empty())
      bad(where, "'file_name' must be a non-empty string");
    im.file_name = fn->get<std::string>();
    // The size only matters for ratio and pixel-wise masks (DALI reads it always).
    const bool need_size = o_.ratio || o_.rles;
    if (need_size || v.contains("width")) im.width = get_int(v, "width", where);
    if (need_size || v.contains("height")) im.height = get_int(v, "height", where);
    if (need_size && (im.width <= 0 || im.height <= 0))
      bad(where, "has the size " + std::to_string(im.width) + "x" + std::to_string(im.height) +
                     "; ratio and pixelwise_masks need a positive width and height");
    if (o_.rles && static_cast<int64_t>(im.width) * im.height > kMaxMaskPixels)
      bad(where, "is " + std::to_string(im.width) + "x" + std::to_string(im.height) +
                     ", more pixels than the " + std::to_string(kMaxMaskPixels) +
                     " a pixel-wise mask may have");
    raw_images_.push_back(std::move(im));
  }

  void add_category(const json& v) {
    const int64_t index = category_count_++;
    const std::string where = entry("categories", index);
    const int32_t id = get_int(v, "id", where);
    // DALI numbers categories 1, 2, ... in the order they are listed.
    if (!categories_.emplace(id, static_cast<int32_t>(index + 1)).second)
      bad(where, "repeats the category id " + std::to_string(id));
  }

  void add_annotation(const json& v) {
    RawAnnotation a;
    a.index = annotation_count_++;
    if (v.contains("id")) a.id = v["id"].dump();
    const std::string where = entry("annotations", a.index, a.id);
    a.image_id = get_int(v, "image_id", where);
    a.category_id = get_int(v, "category_id", where);
    auto bb = v.find("bbox");
    if (bb == v.end() || !bb->is_array() || bb->size() != 4)
      bad(where, "'bbox' must be a list of 4 numbers [x, y, width, height], got " +
                     (bb == v.end() ? std::string("nothing") : bb->dump().substr(0, 80)));
    for (int k = 0; k < 4; ++k)
      a.box[k] = static_cast<float>(to_number((*bb)[k], "'bbox' entry " + std::to_string(k), where));
    bool crowd = false;
    if (v.contains("iscrowd")) crowd = get_int(v, "iscrowd", where) != 0;
    auto seg = v.find("segmentation");
    if (o_.polygons && seg != v.end()) {
      if (seg->is_array()) {
        for (size_t p = 0; p < seg->size(); ++p) {
          const json& poly = (*seg)[p];
          const std::string what = "'segmentation' polygon " + std::to_string(p);
          if (!poly.is_array())
            bad(where, what + " must be a list of numbers x0, y0, x1, y1, ..., got " +
                           poly.dump().substr(0, 80));
          if (poly.size() % 2)
            bad(where, what + " has " + std::to_string(poly.size()) +
                           " numbers; polygons are x, y pairs");
          for (const json& c : poly) {
            const double d = to_number(c, what + " coordinate", where);
            if (o_.rles && std::abs(d) > kMaxCoordinate)
              bad(where, what + " has the coordinate " + c.dump() + ", beyond +-1e6 pixels; "
                             "pixelwise_masks cannot rasterise it");
            a.coords.push_back(d);
          }
          a.poly_ends.push_back(static_cast<int64_t>(a.coords.size()));
        }
      } else if (seg->is_object()) {
        if (o_.rles) parse_rle(*seg, where, a);
        // Without pixel-wise masks an RLE mask has no polygon to give, as in DALI.
      } else {
        bad(where, "'segmentation' must be a list of polygons or an RLE object "
                   "{\"size\": [h, w], \"counts\": ...}, got " + seg->dump().substr(0, 80));
      }
    }
    if (a.box[2] < o_.size_threshold || a.box[3] < o_.size_threshold) return;
    if (crowd && !o_.include_iscrowd) return;
    if (o_.ltrb) {
      a.box[2] += a.box[0];
      a.box[3] += a.box[1];
    }
    raw_annotations_.push_back(std::move(a));
  }

  void parse_rle(const json& seg, const std::string& where, RawAnnotation& a) const {
    auto size = seg.find("size");
    if (size == seg.end() || !size->is_array() || size->size() != 2)
      bad(where, "the RLE 'segmentation' must have 'size': [height, width]");
    const int32_t h = to_int((*size)[0], "size", where), w = to_int((*size)[1], "size", where);
    if (h <= 0 || w <= 0)
      bad(where, "the RLE 'segmentation' has the size " + std::to_string(h) + "x" +
                     std::to_string(w) + "; it must be positive");
    auto counts = seg.find("counts");
    if (counts == seg.end()) bad(where, "the RLE 'segmentation' has no 'counts'");
    if (counts->is_array()) {
      a.rle.h = h;
      a.rle.w = w;
      for (const json& c : *counts) {
        const int32_t n = to_int(c, "counts", where);
        if (n < 0) bad(where, "the RLE 'counts' holds the negative run " + std::to_string(n));
        a.rle.counts.push_back(static_cast<uint32_t>(n));
      }
    } else if (!counts->is_string()) {
      bad(where, "the RLE 'counts' must be a string (compressed) or a list of run lengths");
    }
    try {
      if (counts->is_string()) a.rle = rle_from_string(counts->get<std::string>(), h, w);
      check_rle(a.rle);
    } catch (const Error& e) {
      bad(where, std::string("the RLE 'segmentation' is invalid: ") + e.what());
    }
    a.has_rle = true;
  }

  Dataset build() {
    Dataset d;
    std::unordered_map<std::string, const RawImage*> by_name;
    std::unordered_map<int32_t, const RawImage*> by_id;
    for (const RawImage& im : raw_images_) {
      auto [it, fresh] = by_name.emplace(im.file_name, &im);
      if (!fresh)
        bad(entry("images", im.index), "repeats the file_name '" + im.file_name + "' of images[" +
                                           std::to_string(it->second->index) + "]");
      auto [jt, fresh_id] = by_id.emplace(im.id, &im);
      if (!fresh_id)
        bad(entry("images", im.index), "repeats the id " + std::to_string(im.id) + " of images[" +
                                           std::to_string(jt->second->index) + "]");
    }
    std::vector<const RawImage*> order;
    if (o_.images) {
      for (size_t k = 0; k < o_.images->size(); ++k) {
        auto it = by_name.find((*o_.images)[k]);
        if (it == by_name.end())
          fail(ErrorKind::kInvalidArgument,
               "argument 'images' entry " + std::to_string(k) + " '" + (*o_.images)[k] +
                   "' is not a file_name of annotations_file '" + file_ + "'; give names exactly "
                   "as the file lists them (relative to file_root)");
        order.push_back(it->second);
      }
    } else {
      for (const RawImage& im : raw_images_) order.push_back(&im);
      std::stable_sort(order.begin(), order.end(),
                       [](const RawImage* a, const RawImage* b) { return a->id < b->id; });
    }
    std::unordered_map<int32_t, std::vector<const RawAnnotation*>> per_image;
    for (const RawAnnotation& a : raw_annotations_)
      if (by_id.count(a.image_id)) per_image[a.image_id].push_back(&a);

    const bool remap = !o_.avoid_class_remapping;
    for (const RawImage* im : order) {
      Image out;
      out.file_name = im->file_name;
      out.id = im->id;
      out.width = im->width;
      out.height = im->height;
      out.box_begin = static_cast<int64_t>(d.labels.size());
      out.poly_begin = static_cast<int64_t>(d.polygons.size());
      out.vert_begin = static_cast<int64_t>(d.vertices.size() / 2);
      out.rle_begin = static_cast<int64_t>(d.rles.size());
      const size_t box_mark = d.boxes.size(), poly_mark = d.polygons.size(),
                   vert_mark = d.vertices.size(), raster_mark = d.raster_vertices.size(),
                   rle_mark = d.rles.size();
      auto it = per_image.find(im->id);
      int32_t object = 0;
      if (it != per_image.end()) {
        for (const RawAnnotation* a : it->second) {
          int32_t label = a->category_id;
          if (remap) {
            auto c = categories_.find(a->category_id);
            if (c == categories_.end())
              bad(entry("annotations", a->index, a->id),
                  "has the category_id " + std::to_string(a->category_id) + ", which 'categories' "
                  "does not list; add it there, or pass avoid_class_remapping=True to get "
                  "category ids as they are");
            label = c->second;
          }
          d.labels.push_back(label);
          for (int k = 0; k < 4; ++k) {
            float b = a->box[k];
            if (o_.ratio) b /= static_cast<float>(k % 2 == 0 ? im->width : im->height);
            d.boxes.push_back(b);
          }
          int64_t start = 0;
          for (int64_t end : a->poly_ends) {
            const int64_t first = static_cast<int64_t>(d.vertices.size() / 2) - out.vert_begin;
            for (int64_t c = start; c < end; c += 2) {
              float x = static_cast<float>(a->coords[c]), y = static_cast<float>(a->coords[c + 1]);
              if (o_.ratio) {
                x /= static_cast<float>(im->width);
                y /= static_cast<float>(im->height);
              }
              d.vertices.push_back(x);
              d.vertices.push_back(y);
              if (o_.rles) {
                d.raster_vertices.push_back(a->coords[c]);
                d.raster_vertices.push_back(a->coords[c + 1]);
              }
            }
            const int64_t last = static_cast<int64_t>(d.vertices.size() / 2) - out.vert_begin;
            if (last > std::numeric_limits<int32_t>::max())
              bad(entry("images", im->index), "has more than 2^31 polygon vertices");
            d.polygons.push_back({object, static_cast<int32_t>(first), static_cast<int32_t>(last)});
            start = end;
          }
          if (a->has_rle) {
            if (a->rle.h != im->height || a->rle.w != im->width)
              bad(entry("annotations", a->index, a->id),
                  "has an RLE mask of size " + std::to_string(a->rle.h) + "x" +
                      std::to_string(a->rle.w) + " for image '" + im->file_name + "' of size " +
                      std::to_string(im->height) + "x" + std::to_string(im->width) +
                      " (height x width)");
            d.rles.push_back(a->rle);
            d.rle_mask_idx.push_back(object);
          }
          ++object;
        }
      }
      if (o_.skip_empty && object == 0) {
        d.boxes.resize(box_mark);
        d.labels.resize(box_mark / 4);
        d.polygons.resize(poly_mark);
        d.vertices.resize(vert_mark);
        d.raster_vertices.resize(raster_mark);
        d.rles.resize(rle_mark);
        d.rle_mask_idx.resize(rle_mark);
        continue;
      }
      out.box_count = object;
      out.poly_count = static_cast<int64_t>(d.polygons.size()) - out.poly_begin;
      out.vert_count = static_cast<int64_t>(d.vertices.size() / 2) - out.vert_begin;
      out.rle_count = static_cast<int64_t>(d.rles.size()) - out.rle_begin;
      d.images.push_back(std::move(out));
    }
    return d;
  }

  const Options& o_;
  std::string file_;
  std::string section_;
  std::vector<RawImage> raw_images_;
  std::vector<RawAnnotation> raw_annotations_;
  std::map<int32_t, int32_t> categories_;  // category id -> label 1..N
  int64_t category_count_ = 0, annotation_count_ = 0;
};

// ---- DALI's preprocessed annotation files

template <typename T>
void put(std::ofstream& f, const T& v) {
  f.write(reinterpret_cast<const char*>(&v), sizeof(T));
}

class Writer {
 public:
  explicit Writer(std::string dir) : dir_(std::move(dir)) {}

  // DALI writes nothing for an empty array; loading a missing file gives an empty one.
  template <typename T>
  void array(const char* name, const std::vector<T>& v) {
    if (v.empty()) return;
    std::ofstream f = open(name);
    put(f, static_cast<uint32_t>(v.size()));
    f.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(T)));
    close(f, name);
  }

  void rles(const char* name, const std::vector<Rle>& v) {
    if (v.empty()) return;
    std::ofstream f = open(name);
    put(f, static_cast<uint32_t>(v.size()));
    for (const Rle& r : v) {
      put(f, static_cast<uint64_t>(r.h));
      put(f, static_cast<uint64_t>(r.w));
      put(f, static_cast<uint64_t>(r.counts.size()));
      f.write(reinterpret_cast<const char*>(r.counts.data()),
              static_cast<std::streamsize>(r.counts.size() * sizeof(uint32_t)));
    }
    close(f, name);
  }

  void names(const char* name, const std::vector<Image>& images) {
    std::ofstream f = open(name);
    for (const Image& im : images) {
      if (im.file_name.find('\n') != std::string::npos)
        fail(ErrorKind::kInvalidArgument, "cannot save the file name '" + im.file_name +
                                              "' to preprocessed annotations: it holds a newline");
      f << im.file_name << '\n';
    }
    close(f, name);
  }

 private:
  std::ofstream open(const char* name) {
    std::ofstream f(dir_ + "/" + name, std::ios::binary | std::ios::trunc);
    if (!f) fail(ErrorKind::kIO, "cannot write '" + dir_ + "/" + name + "'");
    return f;
  }
  void close(std::ofstream& f, const char* name) {
    f.close();
    if (!f) fail(ErrorKind::kIO, "writing '" + dir_ + "/" + name + "' failed (disk full?)");
  }
  std::string dir_;
};

class Reader {
 public:
  explicit Reader(std::string dir) : dir_(std::move(dir)) {}

  bool exists(const char* name) const { return fs::exists(dir_ + "/" + name); }

  template <typename T>
  std::vector<T> array(const char* name) const {
    std::vector<T> out;
    if (!exists(name)) return out;
    std::vector<uint8_t> bytes = read_file(dir_ + "/" + name);
    uint32_t n = 0;
    if (bytes.size() < sizeof(n)) bad(name, "is shorter than its 4-byte element count");
    std::memcpy(&n, bytes.data(), sizeof(n));
    const uint64_t want = sizeof(n) + static_cast<uint64_t>(n) * sizeof(T);
    if (bytes.size() != want)
      bad(name, "has " + std::to_string(bytes.size()) + " bytes, but its count of " +
                    std::to_string(n) + " elements of " + std::to_string(sizeof(T)) +
                    " bytes needs " + std::to_string(want));
    out.resize(n);
    if (n) std::memcpy(out.data(), bytes.data() + sizeof(n), static_cast<size_t>(n) * sizeof(T));
    return out;
  }

  std::vector<Rle> rles(const char* name) const {
    std::vector<Rle> out;
    if (!exists(name)) return out;
    std::vector<uint8_t> bytes = read_file(dir_ + "/" + name);
    size_t p = 0;
    auto take = [&](void* dst, size_t n) {
      if (bytes.size() - p < n) bad(name, "is truncated at byte " + std::to_string(p));
      std::memcpy(dst, bytes.data() + p, n);
      p += n;
    };
    uint32_t n = 0;
    take(&n, sizeof(n));
    for (uint32_t i = 0; i < n; ++i) {
      uint64_t dims[3];
      take(dims, sizeof(dims));
      if (dims[0] == 0 || dims[1] == 0 || dims[0] * dims[1] > kMaxMaskPixels ||
          dims[2] > dims[0] * dims[1] + 1)
        bad(name, "mask " + std::to_string(i) + " has the size " + std::to_string(dims[0]) + "x" +
                      std::to_string(dims[1]) + " with " + std::to_string(dims[2]) + " runs");
      Rle r;
      r.h = static_cast<int64_t>(dims[0]);
      r.w = static_cast<int64_t>(dims[1]);
      r.counts.resize(dims[2]);
      take(r.counts.data(), r.counts.size() * sizeof(uint32_t));
      try {
        check_rle(r);
      } catch (const Error& e) {
        bad(name, "mask " + std::to_string(i) + ": " + e.what());
      }
      out.push_back(std::move(r));
    }
    if (p != bytes.size()) bad(name, "has " + std::to_string(bytes.size() - p) + " bytes after its masks");
    return out;
  }

  std::vector<std::string> names(const char* name) const {
    if (!exists(name))
      fail(ErrorKind::kNotFound, "preprocessed_annotations '" + dir_ + "' has no " + name +
                                     "; give the directory save_preprocessed_annotations_dir wrote");
    std::ifstream f(dir_ + "/" + name);
    std::vector<std::string> out;
    std::string line;
    while (std::getline(f, line))
      if (!line.empty()) out.push_back(line);
    return out;
  }

  [[noreturn]] void bad(const std::string& name, const std::string& what) const {
    fail(ErrorKind::kInvalidArgument, "preprocessed_annotations '" + dir_ + "': " + name + " " + what);
  }

 private:
  std::string dir_;
};

struct Vec3i { int32_t a, b, c; };
struct Vec2f { float x, y; };

}  // namespace

Dataset parse_annotations(const Options& o) { return Parser(o).run(); }

void save_preprocessed(const Dataset& d, const std::string& dir, bool masks, bool pixelwise,
                       bool image_ids) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) fail(ErrorKind::kIO, "cannot make the directory '" + dir + "': " + ec.message());
  Writer w(dir);
  const size_t n = d.images.size();
  std::vector<int32_t> offsets(n), counts(n), heights(n), widths(n), ids(n);
  std::vector<int64_t> poly_off(n), poly_cnt(n), vert_off(n), vert_cnt(n), mask_off(n), mask_cnt(n);
  for (size_t i = 0; i < n; ++i) {
    const Image& im = d.images[i];
    offsets[i] = static_cast<int32_t>(im.box_begin);
    counts[i] = static_cast<int32_t>(im.box_count);
    poly_off[i] = im.poly_begin;
    poly_cnt[i] = im.poly_count;
    vert_off[i] = im.vert_begin;
    vert_cnt[i] = im.vert_count;
    mask_off[i] = im.rle_begin;
    mask_cnt[i] = im.rle_count;
    heights[i] = im.height;
    widths[i] = im.width;
    ids[i] = im.id;
  }
  w.array("offsets.dat", offsets);
  w.array("boxes.dat", d.boxes);
  w.array("labels.dat", d.labels);
  w.array("counts.dat", counts);
  w.names("filenames.dat", d.images);
  if (masks || pixelwise) {
    std::vector<Vec3i> polys;
    for (const Polygon& p : d.polygons) polys.push_back({p.mask_idx, p.begin, p.end});
    w.array("polygon_data.dat", polys);
    w.array("polygon_offset.dat", poly_off);
    w.array("polygons_count.dat", poly_cnt);
    std::vector<Vec2f> verts(d.vertices.size() / 2);  // counted in vertices, as DALI's vec2
    for (size_t k = 0; k < verts.size(); ++k) verts[k] = {d.vertices[2 * k], d.vertices[2 * k + 1]};
    w.array("vertices.dat", verts);
    w.array("vertices_offset.dat", vert_off);
    w.array("vertices_count.dat", vert_cnt);
  }
  if (pixelwise) {
    w.rles("masks_rles.dat", d.rles);
    w.array("masks_rles_idx.dat", d.rle_mask_idx);
    w.array("masks_offset.dat", mask_off);
    w.array("mask_count.dat", mask_cnt);
    w.array("heights.dat", heights);
    w.array("widths.dat", widths);
  }
  if (image_ids) w.array("original_ids.dat", ids);
}

Dataset load_preprocessed(const std::string& dir, bool masks, bool pixelwise, bool image_ids) {
  if (!fs::is_directory(dir))
    fail(ErrorKind::kNotFound, "preprocessed_annotations '" + dir + "' is not a directory; give "
                               "the directory save_preprocessed_annotations_dir wrote");
  Reader r(dir);
  Dataset d;
  std::vector<std::string> names = r.names("filenames.dat");
  const size_t n = names.size();
  if (n == 0) r.bad("filenames.dat", "lists no images");
  auto per_image = [&](const char* file, size_t size, const char* saved_with) {
    if (size == n) return;
    if (size == 0)
      fail(ErrorKind::kInvalidArgument,
           "preprocessed_annotations '" + dir + "' has no " + file + ": they were saved without " +
               saved_with + "; save them again with it, or leave it out here");
    r.bad(file, "has " + std::to_string(size) + " entries for the " + std::to_string(n) +
                    " images of filenames.dat");
  };
  auto offsets = r.array<int32_t>("offsets.dat");
  auto counts = r.array<int32_t>("counts.dat");
  per_image("offsets.dat", offsets.size(), "any image");
  per_image("counts.dat", counts.size(), "any image");
  d.boxes = r.array<float>("boxes.dat");
  d.labels = r.array<int32_t>("labels.dat");
  if (d.boxes.size() != 4 * d.labels.size())
    r.bad("boxes.dat", "has " + std::to_string(d.boxes.size()) + " numbers for the " +
                           std::to_string(d.labels.size()) + " labels of labels.dat (4 each)");
  d.images.resize(n);
  for (size_t i = 0; i < n; ++i) {
    Image& im = d.images[i];
    im.file_name = names[i];
    im.box_begin = offsets[i];
    im.box_count = counts[i];
    if (offsets[i] < 0 || counts[i] < 0 ||
        static_cast<uint64_t>(offsets[i]) + static_cast<uint64_t>(counts[i]) > d.labels.size())
      r.bad("offsets.dat", "gives image " + std::to_string(i) + " the objects [" +
                               std::to_string(offsets[i]) + ", +" + std::to_string(counts[i]) +
                               ") of " + std::to_string(d.labels.size()));
  }
  auto range = [&](const char* file, size_t i, int64_t off, int64_t cnt, size_t total) {
    if (off < 0 || cnt < 0 || static_cast<uint64_t>(off) + static_cast<uint64_t>(cnt) > total)
      r.bad(file, "gives image " + std::to_string(i) + " the entries [" + std::to_string(off) +
                      ", +" + std::to_string(cnt) + ") of " + std::to_string(total));
  };
  if (masks || pixelwise) {
    const char* with = pixelwise ? "pixelwise_masks or polygon_masks" : "polygon_masks";
    auto polys = r.array<Vec3i>("polygon_data.dat");
    auto poly_off = r.array<int64_t>("polygon_offset.dat");
    auto poly_cnt = r.array<int64_t>("polygons_count.dat");
    auto verts = r.array<Vec2f>("vertices.dat");
    auto vert_off = r.array<int64_t>("vertices_offset.dat");
    auto vert_cnt = r.array<int64_t>("vertices_count.dat");
    per_image("polygon_offset.dat", poly_off.size(), with);
    per_image("polygons_count.dat", poly_cnt.size(), with);
    per_image("vertices_offset.dat", vert_off.size(), with);
    per_image("vertices_count.dat", vert_cnt.size(), with);
    for (const Vec3i& p : polys) d.polygons.push_back({p.a, p.b, p.c});
    for (const Vec2f& v : verts) {
      d.vertices.push_back(v.x);
      d.vertices.push_back(v.y);
    }
    for (size_t i = 0; i < n; ++i) {
      Image& im = d.images[i];
      range("polygon_offset.dat", i, poly_off[i], poly_cnt[i], d.polygons.size());
      range("vertices_offset.dat", i, vert_off[i], vert_cnt[i], d.vertices.size() / 2);
      im.poly_begin = poly_off[i];
      im.poly_count = poly_cnt[i];
      im.vert_begin = vert_off[i];
      im.vert_count = vert_cnt[i];
      for (int64_t k = 0; k < im.poly_count; ++k) {
        const Polygon& p = d.polygons[im.poly_begin + k];
        if (p.mask_idx < 0 || p.mask_idx >= im.box_count || p.begin < 0 || p.begin > p.end ||
            p.end > im.vert_count)
          r.bad("polygon_data.dat", "polygon " + std::to_string(im.poly_begin + k) + " [" +
                                        std::to_string(p.mask_idx) + ", " + std::to_string(p.begin) +
                                        ", " + std::to_string(p.end) + "] does not fit image " +
                                        std::to_string(i) + "'s " + std::to_string(im.box_count) +
                                        " objects and " + std::to_string(im.vert_count) + " vertices");
      }
    }
    if (pixelwise) d.raster_vertices.assign(d.vertices.begin(), d.vertices.end());
  }
  if (pixelwise) {
    d.rles = r.rles("masks_rles.dat");
    d.rle_mask_idx = r.array<int32_t>("masks_rles_idx.dat");
    if (d.rles.size() != d.rle_mask_idx.size())
      r.bad("masks_rles_idx.dat", "has " + std::to_string(d.rle_mask_idx.size()) +
                                      " entries for the " + std::to_string(d.rles.size()) +
                                      " masks of masks_rles.dat");
    auto mask_off = r.array<int64_t>("masks_offset.dat");
    auto mask_cnt = r.array<int64_t>("mask_count.dat");
    auto heights = r.array<int32_t>("heights.dat");
    auto widths = r.array<int32_t>("widths.dat");
    per_image("masks_offset.dat", mask_off.size(), "pixelwise_masks");
    per_image("mask_count.dat", mask_cnt.size(), "pixelwise_masks");
    per_image("heights.dat", heights.size(), "pixelwise_masks");
    per_image("widths.dat", widths.size(), "pixelwise_masks");
    for (size_t i = 0; i < n; ++i) {
      Image& im = d.images[i];
      range("masks_offset.dat", i, mask_off[i], mask_cnt[i], d.rles.size());
      im.rle_begin = mask_off[i];
      im.rle_count = mask_cnt[i];
      im.height = heights[i];
      im.width = widths[i];
      if (im.height <= 0 || im.width <= 0 ||
          static_cast<int64_t>(im.height) * im.width > kMaxMaskPixels)
        r.bad("heights.dat", "gives image " + std::to_string(i) + " the size " +
                                 std::to_string(im.height) + "x" + std::to_string(im.width));
      for (int64_t k = 0; k < im.rle_count; ++k) {
        const Rle& m = d.rles[im.rle_begin + k];
        const int32_t obj = d.rle_mask_idx[im.rle_begin + k];
        if (m.h != im.height || m.w != im.width || obj < 0 || obj >= im.box_count)
          r.bad("masks_rles.dat", "mask " + std::to_string(im.rle_begin + k) + " (" +
                                      std::to_string(m.h) + "x" + std::to_string(m.w) +
                                      ", object " + std::to_string(obj) + ") does not fit image " +
                                      std::to_string(i));
      }
    }
  }
  if (image_ids) {
    auto ids = r.array<int32_t>("original_ids.dat");
    per_image("original_ids.dat", ids.size(), "image_ids");
    for (size_t i = 0; i < n; ++i) d.images[i].id = ids[i];
  }
  return d;
}

void pixelwise_mask(const Dataset& d, int64_t i, int32_t* out) {
  const Image& im = d.images[i];
  const int64_t h = im.height, w = im.width;
  std::fill(out, out + h * w, 0);
  std::vector<int64_t> objects(im.box_count);
  std::iota(objects.begin(), objects.end(), 0);
  std::stable_sort(objects.begin(), objects.end(), [&](int64_t a, int64_t b) {
    return d.labels[im.box_begin + a] < d.labels[im.box_begin + b];
  });
  std::vector<std::vector<int64_t>> polys(im.box_count), rles(im.box_count);
  for (int64_t k = 0; k < im.poly_count; ++k)
    polys[d.polygons[im.poly_begin + k].mask_idx].push_back(im.poly_begin + k);
  for (int64_t k = 0; k < im.rle_count; ++k)
    rles[d.rle_mask_idx[im.rle_begin + k]].push_back(im.rle_begin + k);
  for (int64_t obj : objects) {
    const int32_t label = d.labels[im.box_begin + obj];
    for (int64_t p : polys[obj]) {
      const Polygon& poly = d.polygons[p];
      const double* xy = d.raster_vertices.data() + 2 * (im.vert_begin + poly.begin);
      paint_rle(rle_from_polygon(xy, poly.end - poly.begin, h, w), label, out);
    }
    for (int64_t r : rles[obj]) paint_rle(d.rles[r], label, out);
  }
}

}  // namespace stoker::readers::coco
