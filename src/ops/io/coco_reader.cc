// readers.coco: the images of a COCO data set as encoded bytes, with their boxes, labels and,
// on request, polygon or pixel-wise masks and image ids (src/readers/coco.h has the semantics).
#include <algorithm>
#include <memory>

#include "ops/io/reader_base.h"
#include "readers/coco.h"
#include "readers/file_list.h"

namespace stoker {
namespace {

namespace coco = readers::coco;

class CocoReader : public SampleReader {
 public:
  explicit CocoReader(const OpSpec& spec) : SampleReader(spec) {
    legacy_polygons_ = flag("masks");
    polygons_ = flag("polygon_masks") || legacy_polygons_;
    pixelwise_ = flag("pixelwise_masks");
    image_ids_ = flag_or_alias("image_ids", "save_img_ids");
    if (polygons_ && pixelwise_)
      spec.arg_error("pixelwise_masks", "cannot be combined with polygon_masks (or masks): "
                                        "choose polygons and vertices, or a pixel-wise mask");
    if (spec.get<bool>("skip_cached_images"))
      spec.arg_error("skip_cached_images", "is not supported by readers.coco (as in DALI); "
                                           "leave it False");
    const int want = 3 + 2 * polygons_ + pixelwise_ + image_ids_;
    if (spec.num_outputs != want)
      fail(ErrorKind::kInternal, spec.display_name() + ": " + std::to_string(spec.num_outputs) +
                                     " outputs recorded where the arguments give " +
                                     std::to_string(want) + " (the Python adapter must count them)");
    if (!spec.has("file_root") || spec.get<std::string>("file_root").empty())
      spec.arg_error("file_root", "is required: the folder the annotations' file_name entries "
                                  "are relative to");
    file_root_ = spec.get<std::string>("file_root");

    const std::string preprocessed = string_or_alias("preprocessed_annotations", "meta_files_path");
    const bool save = flag_or_alias("save_preprocessed_annotations", "dump_meta_files");
    const std::string save_dir =
        string_or_alias("save_preprocessed_annotations_dir", "dump_meta_files_path");
    if (save && save_dir.empty())
      spec.arg_error("save_preprocessed_annotations_dir",
                     "is required with save_preprocessed_annotations=True: the directory to write "
                     "the preprocessed annotations to");
    if (!save && !save_dir.empty())
      spec.arg_error("save_preprocessed_annotations_dir",
                     "is given, but save_preprocessed_annotations is False; set it to True to "
                     "save, or leave the directory out");
    coco::Options o;
    if (!preprocessed.empty()) {
      refuse_with_preprocessed(save);
    } else {
      o.annotations_file = spec.get<std::string>("annotations_file");
      if (o.annotations_file.empty())
        spec.arg_error("annotations_file", "is required (or preprocessed_annotations): the "
                                           "path of the COCO instances JSON file");
      if (spec.has("images")) o.images = spec.get<std::vector<std::string>>("images");
      o.ltrb = spec.get<bool>("ltrb");
      o.ratio = spec.get<bool>("ratio");
      o.skip_empty = spec.get<bool>("skip_empty");
      o.include_iscrowd = spec.get<bool>("include_iscrowd");
      o.avoid_class_remapping = spec.get<bool>("avoid_class_remapping");
      o.size_threshold = spec.get<float>("size_threshold");
      o.polygons = polygons_ || pixelwise_;
      o.rles = pixelwise_;
    }
    try {
      if (!preprocessed.empty()) {
        data_ = coco::load_preprocessed(preprocessed, polygons_, pixelwise_, image_ids_);
      } else {
        data_ = coco::parse_annotations(o);
        if (data_.images.empty())
          fail(ErrorKind::kInvalidArgument,
               "annotations_file '" + o.annotations_file + "' gives no image to read" +
                   (o.skip_empty ? " (skip_empty=True dropped the images without annotations)"
                                 : "") + "; check the file and the images argument");
      }
      if (save) coco::save_preprocessed(data_, save_dir, polygons_, pixelwise_, image_ids_);
    } catch (const Error& e) {
      throw e.with_context(spec.display_name());
    }
    init_order(static_cast<int64_t>(data_.images.size()));
  }

  void run_batch(Workspace& ws) override {
    const auto& picks = this->picks();
    const int64_t n = static_cast<int64_t>(picks.size());
    std::vector<Shape> boxes(n), labels(n), polys(n), verts(n), masks(n), ids(n, Shape{1});
    for (int64_t i = 0; i < n; ++i) {
      const coco::Image& im = data_.images[picks[i].index];
      boxes[i] = {im.box_count, 4};
      labels[i] = {im.box_count};
      polys[i] = {im.poly_count, 3};
      verts[i] = {im.vert_count, 2};
      masks[i] = {im.height, im.width, 1};
    }
    ws.outputs.assign(spec_.num_outputs, Batch());
    Batch& images = ws.outputs[0];
    images = Batch(DType::kUInt8, "");
    images.resize(n);
    ws.outputs[1].allocate(*ws.host_pool, DType::kFloat32, boxes, "");
    ws.outputs[2].allocate(*ws.host_pool, DType::kInt32, labels, "");
    int o = 3;
    Batch* out_polys = nullptr;
    Batch* out_verts = nullptr;
    Batch* out_masks = nullptr;
    Batch* out_ids = nullptr;
    if (polygons_) {
      out_polys = &ws.outputs[o++];
      out_verts = &ws.outputs[o++];
      out_polys->allocate(*ws.host_pool, DType::kInt32, polys, "");
      out_verts->allocate(*ws.host_pool, DType::kFloat32, verts, "");
    }
    if (pixelwise_) {
      out_masks = &ws.outputs[o++];
      out_masks->allocate(*ws.host_pool, DType::kInt32, masks, "HWC");
    }
    if (image_ids_) {
      out_ids = &ws.outputs[o++];
      out_ids->allocate(*ws.host_pool, DType::kInt32, ids, "");
    }
    ws.thread_pool->parallel_for(n, [&](int64_t i, int) {
      const int64_t idx = picks[i].index;
      const coco::Image& im = data_.images[idx];
      const std::string path = readers::join_path(file_root_, im.file_name);
      for (Batch& b : ws.outputs) b[i].source = path;
      Sample& s = images[i];
      try {
        const int64_t size = readers::file_size(path);
        s.owner = ws.host_pool->allocate(static_cast<size_t>(size));
        s.data = s.owner.get();
        s.shape = {size};
        readers::read_file_into(path, s.data, static_cast<size_t>(size));
      } catch (const Error& e) {
        if (!ws.report_bad_sample(i, path, e.what()))
          throw e.with_context("sample " + std::to_string(i));
        s.owner = ws.host_pool->allocate(0);
        s.data = s.owner.get();
        s.shape = {0};
      }
      std::copy_n(data_.boxes.data() + 4 * im.box_begin, 4 * im.box_count,
                  ws.outputs[1].data<float>(i));
      std::copy_n(data_.labels.data() + im.box_begin, im.box_count, ws.outputs[2].data<int32_t>(i));
      if (out_polys) {
        int32_t* p = out_polys->data<int32_t>(i);
        // The legacy `masks` format counts coordinates, not vertices (DALI: start, end * 2).
        const int32_t scale = legacy_polygons_ ? 2 : 1;
        for (int64_t k = 0; k < im.poly_count; ++k) {
          const coco::Polygon& poly = data_.polygons[im.poly_begin + k];
          p[3 * k] = poly.mask_idx;
          p[3 * k + 1] = poly.begin * scale;
          p[3 * k + 2] = poly.end * scale;
        }
        std::copy_n(data_.vertices.data() + 2 * im.vert_begin, 2 * im.vert_count,
                    out_verts->data<float>(i));
      }
      if (out_masks) coco::pixelwise_mask(data_, idx, out_masks->data<int32_t>(i));
      if (out_ids) *out_ids->data<int32_t>(i) = im.id;
    });
  }

 private:
  bool flag(const char* name) const { return spec_.has(name) && spec_.get<bool>(name); }

  // DALI's arguments renamed in 0.28 are still accepted under their old names.
  bool flag_or_alias(const char* name, const char* old) const {
    if (spec_.has(old) && spec_.get<bool>(name))
      spec_.arg_error(old, std::string("is the old name of '") + name + "'; give only one of them");
    return flag(name) || flag(old);
  }
  std::string string_or_alias(const char* name, const char* old) const {
    std::string v = spec_.has(name) ? spec_.get<std::string>(name) : "";
    if (spec_.has(old)) {
      if (!v.empty())
        spec_.arg_error(old, std::string("is the old name of '") + name + "'; give only one of them");
      v = spec_.get<std::string>(old);
    }
    return v;
  }

  // Preprocessed annotations were filtered and converted when they were saved; an argument that
  // would change that cannot be honoured (DALI refuses the same ones).
  void refuse_with_preprocessed(bool save) const {
    auto refuse = [&](const char* arg, bool set) {
      if (set)
        spec_.arg_error(arg, "cannot be used with preprocessed_annotations: it was applied when "
                             "they were saved; save them again with the value you want");
    };
    refuse("annotations_file", !spec_.get<std::string>("annotations_file").empty());
    refuse("images", spec_.has("images"));
    refuse("ltrb", spec_.get<bool>("ltrb"));
    refuse("ratio", spec_.get<bool>("ratio"));
    refuse("skip_empty", spec_.get<bool>("skip_empty"));
    refuse("size_threshold", spec_.get<double>("size_threshold") != 0.1);
    refuse("include_iscrowd", !spec_.get<bool>("include_iscrowd"));
    refuse("avoid_class_remapping", spec_.get<bool>("avoid_class_remapping"));
    refuse("save_preprocessed_annotations", save);
  }

  std::string file_root_;
  bool polygons_ = false, legacy_polygons_ = false, pixelwise_ = false, image_ids_ = false;
  coco::Dataset data_;
};

}  // namespace

STOKER_REGISTER_OP_NAMED(readers_coco, "readers.coco") {
  add_reader_args(schema);
  schema.doc("Reads a COCO data set: a folder of images and an instances JSON file. Outputs, in "
             "order: images (the encoded files' bytes), bboxes (float [M, 4]: [x, y, w, h], or "
             "[l, t, r, b] with ltrb), labels (int32 [M]); with polygon_masks: polygons (int32 "
             "[P, 3]: mask index, first vertex, end vertex) and vertices (float [V, 2]); with "
             "pixelwise_masks: a label mask (int32 [H, W, 1], HWC; polygons and RLE masks "
             "rasterised as pycocotools does, 0 background, the higher label where two overlap); "
             "with image_ids: the image's id (int32 [1]). Images come in the order of their ids "
             "(or of `images`); labels are the categories renumbered 1..N in the order the file "
             "lists them, unless avoid_class_remapping.")
      .inputs(0, 0).outputs(3)
      .arg({.name = "file_root", .type = ArgType::kString, .optional = true,
            .doc = "The folder the file names in the annotations are relative to (required)."})
      .arg({.name = "annotations_file", .type = ArgType::kString, .default_value = std::string(""),
            .doc = "The COCO instances JSON file (required unless preprocessed_annotations)."})
      .arg({.name = "images", .type = ArgType::kStringList, .optional = true,
            .doc = "The images to read, by their file_name in the annotations, in this order "
                   "(repeats give repeated samples). Default: every image, by id."})
      .arg({.name = "ltrb", .type = ArgType::kBool, .default_value = false,
            .doc = "Boxes as [left, top, right, bottom] instead of [x, y, width, height]."})
      .arg({.name = "ratio", .type = ArgType::kBool, .default_value = false,
            .doc = "Box and vertex coordinates relative to the image size (x / width, y / height)."})
      .arg({.name = "skip_empty", .type = ArgType::kBool, .default_value = false,
            .doc = "Leave out images with no (kept) annotation."})
      .arg({.name = "size_threshold", .type = ArgType::kFloat, .default_value = 0.1,
            .doc = "Annotations whose box is narrower or lower than this many pixels are left out."})
      .arg({.name = "include_iscrowd", .type = ArgType::kBool, .default_value = true,
            .doc = "Keep annotations marked iscrowd=1."})
      .arg({.name = "avoid_class_remapping", .type = ArgType::kBool, .default_value = false,
            .doc = "Labels are the category ids as in the file, instead of 1..N in the order of "
                   "'categories'."})
      .arg({.name = "polygon_masks", .type = ArgType::kBool, .default_value = false,
            .doc = "Also output the segmentation polygons (polygons, vertices). RLE masks have no "
                   "polygons and give none."})
      .arg({.name = "masks", .type = ArgType::kBool, .default_value = false,
            .doc = "Deprecated (use polygon_masks): polygons and vertices, with polygons' first "
                   "and end given in coordinates (2 per vertex), DALI's format before 0.28."})
      .arg({.name = "pixelwise_masks", .type = ArgType::kBool, .default_value = false,
            .doc = "Also output a pixel-wise label mask of the image's size."})
      .arg({.name = "image_ids", .type = ArgType::kBool, .default_value = false,
            .doc = "Also output each image's id from the annotations."})
      .arg({.name = "save_img_ids", .type = ArgType::kBool, .optional = true,
            .doc = "Old name of image_ids.", .deprecated_alias = true, .alias_of = "image_ids"})
      .arg({.name = "preprocessed_annotations", .type = ArgType::kString,
            .default_value = std::string(""),
            .doc = "A directory of annotations saved with save_preprocessed_annotations (DALI's "
                   "binary format), read instead of annotations_file."})
      .arg({.name = "meta_files_path", .type = ArgType::kString, .optional = true,
            .doc = "Old name of preprocessed_annotations.", .deprecated_alias = true,
            .alias_of = "preprocessed_annotations"})
      .arg({.name = "save_preprocessed_annotations", .type = ArgType::kBool, .default_value = false,
            .doc = "Save the parsed annotations to save_preprocessed_annotations_dir, for "
                   "preprocessed_annotations to load faster next time."})
      .arg({.name = "dump_meta_files", .type = ArgType::kBool, .optional = true,
            .doc = "Old name of save_preprocessed_annotations.", .deprecated_alias = true,
            .alias_of = "save_preprocessed_annotations"})
      .arg({.name = "save_preprocessed_annotations_dir", .type = ArgType::kString,
            .default_value = std::string(""),
            .doc = "Where save_preprocessed_annotations writes (made if missing)."})
      .arg({.name = "dump_meta_files_path", .type = ArgType::kString, .optional = true,
            .doc = "Old name of save_preprocessed_annotations_dir.", .deprecated_alias = true,
            .alias_of = "save_preprocessed_annotations_dir"})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<CocoReader>(s); });
  add_on_error_arg(schema, /*can_replace=*/false);
}

}  // namespace stoker
