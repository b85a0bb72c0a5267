// experimental.readers.fits: image HDUs of FITS files (readers/fits.h), one output per entry of
// hdu_indices, as DALI 2.4's. Files are chosen as readers.numpy chooses them
// (ops/io/file_selection.h; file_filter '*.fits').
//
// As DALI: each output holds the HDU's values in their own (equivalent) type; `dtypes` is
// checked (a supported type per output) but converts nothing, as in DALI. Where stoker differs:
// tile-compressed images are refused by name (DALI reads them through cfitsio, and RICE-coded
// ones on the GPU), and the GPU backend is not there yet.
#include <memory>
#include <string>
#include <vector>

#include "ops/io/file_selection.h"
#include "ops/io/reader_base.h"
#include "readers/fits.h"
#include "readers/random_access_file.h"

namespace stoker {
namespace {

namespace fits = readers::fits;

class FitsReader : public SampleReader {
 public:
  explicit FitsReader(const OpSpec& spec) : SampleReader(spec) {
    paths_ = select_files(spec);
    for (int64_t h : spec.get<std::vector<int64_t>>("hdu_indices")) {
      if (h < 1)
        spec.arg_error("hdu_indices", "counts HDUs from 1 (the primary HDU; 2 is the first "
                                      "extension), got " + std::to_string(h));
      hdus_.push_back(static_cast<int>(h));
    }
    if (hdus_.empty()) spec.arg_error("hdu_indices", "is empty; name at least one HDU");
    if (spec.has("dtypes")) {
      const auto dtypes = spec.get<std::vector<int64_t>>("dtypes");
      if (dtypes.size() != hdus_.size())
        spec.arg_error("dtypes", "has " + std::to_string(dtypes.size()) + " types for " +
                                     std::to_string(hdus_.size()) + " hdu_indices; give one per HDU");
      for (int64_t t : dtypes) {
        const DType d = static_cast<DType>(t);
        if (d == DType::kBool || d == DType::kNone)
          spec.arg_error("dtypes", std::string("holds ") + dtype_name(d) +
                                       ", which a FITS image cannot hold");
      }
    }
    if (spec.num_outputs != static_cast<int>(hdus_.size()))
      throw Error(ErrorKind::kInvalidArgument,
                  spec.display_name() + ": hdu_indices names " + std::to_string(hdus_.size()) +
                      " HDUs, so it has as many outputs, but the call expects " +
                      std::to_string(spec.num_outputs));
    init_order(static_cast<int64_t>(paths_.size()));
  }

  void run_batch(Workspace& ws) override {
    const auto& picks = this->picks();
    const int64_t n = static_cast<int64_t>(picks.size());
    const size_t k = hdus_.size();
    struct Plan {
      std::unique_ptr<readers::RandomAccessFile> file;
      std::vector<fits::Image> images;
      bool bad = false;
    };
    std::vector<Plan> plans(n);
    ws.thread_pool->parallel_for(n, [&](int64_t i, int) {
      const std::string& path = paths_[picks[i].index];
      Plan& p = plans[i];
      try {
        p.file = std::make_unique<readers::RandomAccessFile>(path);
        for (int h : hdus_) p.images.push_back(fits::find_image(*p.file, h));
      } catch (const Error& e) {
        if (!ws.report_bad_sample(i, path, e.what()))
          throw Error(e.kind(), spec_.display_name() + ": " + e.what()).with_context("sample " + std::to_string(i));
        p.bad = true;
      }
    });
    // One type and number of dimensions per output and batch.
    int64_t first = -1;
    for (int64_t i = 0; i < n && first < 0; ++i)
      if (!plans[i].bad) first = i;
    ws.outputs.assign(k, Batch());
    for (size_t o = 0; o < k; ++o) {
      const DType dtype = first >= 0 ? plans[first].images[o].dtype : DType::kUInt8;
      const size_t ndim = first >= 0 ? plans[first].images[o].shape.size() : 1;
      std::vector<Shape> shapes(n);
      for (int64_t i = 0; i < n; ++i) {
        const Plan& p = plans[i];
        if (p.bad) {
          shapes[i] = Shape(ndim, 0);
          continue;
        }
        const fits::Image& im = p.images[o];
        if (im.dtype != dtype || im.shape.size() != ndim)
          fail(ErrorKind::kInvalidArgument,
               spec_.display_name() + ": the images of HDU " + std::to_string(hdus_[o]) +
                   " in a batch must have one type and one number of dimensions, but '" +
                   paths_[picks[i].index] + "' holds " + dtype_name(im.dtype) + " " +
                   to_string(im.shape) + " and '" + paths_[picks[first].index] + "' " +
                   dtype_name(dtype) + " " + to_string(plans[first].images[o].shape));
        shapes[i] = im.shape;
      }
      ws.outputs[o].allocate(*ws.host_pool, dtype, shapes, "");
      for (int64_t i = 0; i < n; ++i) ws.outputs[o][i].source = paths_[picks[i].index];
    }
    ws.thread_pool->parallel_for(n, [&](int64_t i, int) {
      Plan& p = plans[i];
      if (p.bad) return;
      try {
        for (size_t o = 0; o < k; ++o) fits::read_image(*p.file, p.images[o], ws.outputs[o][i].data);
      } catch (const Error& e) {
        if (!ws.report_bad_sample(i, p.file->path(), e.what()))
          throw Error(e.kind(), spec_.display_name() + ": " + e.what()).with_context("sample " + std::to_string(i));
      }
      p.file.reset();
    });
  }

 private:
  std::vector<std::string> paths_;
  std::vector<int> hdus_;
};

}  // namespace

STOKER_REGISTER_OP_NAMED(experimental_readers_fits, "experimental.readers.fits") {
  add_reader_args(schema);
  add_file_selection_args(schema, "*.fits");
  schema.doc("Reads image HDUs of FITS files: all files under file_root that match file_filter "
             "(in sorted order), the paths in file_list, or files; one output per entry of "
             "hdu_indices (1 is the primary HDU, 2 the first extension). Each image comes in "
             "NumPy's axis order (NAXISn reversed) and its values' own type, BZERO/BSCALE "
             "applied as cfitsio applies them (BITPIX 16 with BZERO 32768 is uint16).")
      .inputs(0, 0).outputs(1)
      .arg({.name = "hdu_indices", .type = ArgType::kIntList, .default_value = std::vector<int64_t>{2},
            .doc = "The HDUs to read, one output each, counted from 1 (the primary HDU)."})
      .arg({.name = "dtypes", .type = ArgType::kIntList, .optional = true,
            .doc = "Accepted for DALI compatibility: a type per output, checked; the outputs keep "
                   "the images' own types."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<FitsReader>(s); });
  add_on_error_arg(schema, /*can_replace=*/false);
}

}  // namespace stoker
