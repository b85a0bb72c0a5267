// readers.numpy: .npy files, whole or a region of interest read straight from the file.
#include <algorithm>
#include <cmath>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "ops/io/file_selection.h"
#include "ops/io/reader_base.h"
#include "readers/npy.h"
#include "readers/random_access_file.h"

namespace stoker {
namespace {

namespace npy = readers::npy;

enum class OutOfBounds { kError, kPad, kTrim };

const char* const kRoiArgs[] = {"roi_start", "rel_roi_start", "roi_end", "rel_roi_end",
                                "roi_shape", "rel_roi_shape"};

class NumpyReader : public SampleReader {
 public:
  explicit NumpyReader(const OpSpec& spec) : SampleReader(spec) {
    paths_ = select_files(spec);
    const std::string pol = spec.get<std::string>("out_of_bounds_policy");
    policy_ = pol == "pad" ? OutOfBounds::kPad : pol == "trim_to_shape" ? OutOfBounds::kTrim
                                                                       : OutOfBounds::kError;
    fill_value_ = spec.get<double>("fill_value");
    axes_ = spec.get<std::vector<int64_t>>("roi_axes");
    for (const char* a : kRoiArgs) has_roi_ |= spec.has(a) || spec.is_tensor_arg(a);
    if ((spec.has("roi_start") || spec.is_tensor_arg("roi_start")) &&
        (spec.has("rel_roi_start") || spec.is_tensor_arg("rel_roi_start")))
      spec.arg_error("roi_start", "and rel_roi_start cannot both be given");
    int ends = 0;
    for (const char* a : {"roi_end", "rel_roi_end", "roi_shape", "rel_roi_shape"})
      ends += spec.has(a) || spec.is_tensor_arg(a);
    if (ends > 1)
      spec.arg_error("roi_end", "roi_end, rel_roi_end, roi_shape and rel_roi_shape: give at most one");
    cache_headers_ = spec.get<bool>("cache_header_information");
    init_order(static_cast<int64_t>(paths_.size()));
  }

  void run_batch(Workspace& ws) override {
    const auto& picks = this->picks();
    const int64_t n = static_cast<int64_t>(picks.size());
    struct Plan {
      npy::Header h;
      std::unique_ptr<readers::RandomAccessFile> file;
      Shape start, end;      // the ROI, in array coordinates (may lie outside with pad)
      Shape out_shape;
      bool bad = false;
    };
    std::vector<Plan> plans(n);
    ws.thread_pool->parallel_for(n, [&](int64_t i, int) {
      const std::string& path = paths_[picks[i].index];
      Plan& p = plans[i];
      try {
        p.file = std::make_unique<readers::RandomAccessFile>(path);
        p.h = header(*p.file);
        roi(ws, i, p.h.shape, path, p.start, p.end);
        p.out_shape.resize(p.h.shape.size());
        for (size_t a = 0; a < p.h.shape.size(); ++a) p.out_shape[a] = p.end[a] - p.start[a];
      } catch (const Error& e) {
        if (!ws.report_bad_sample(i, path, e.what()))
          throw e.with_context("sample " + std::to_string(i));
        p.bad = true;
      }
    });
    // One dtype and one number of dimensions per batch.
    int64_t first = -1;
    for (int64_t i = 0; i < n; ++i)
      if (!plans[i].bad) {
        first = i;
        break;
      }
    DType dtype = first >= 0 ? plans[first].h.dtype : DType::kUInt8;
    const size_t ndim = first >= 0 ? plans[first].h.shape.size() : 1;
    std::vector<Shape> shapes(n);
    for (int64_t i = 0; i < n; ++i) {
      const Plan& p = plans[i];
      if (p.bad) {
        shapes[i] = Shape(ndim, 0);
        continue;
      }
      if (p.h.dtype != dtype || p.h.shape.size() != ndim)
        fail(ErrorKind::kInvalidArgument,
             spec_.display_name() + ": the arrays of a batch must have one dtype and one number "
                                    "of dimensions, but '" + paths_[picks[i].index] + "' is " +
                 dtype_name(p.h.dtype) + " " + to_string(p.h.shape) + " and '" +
                 paths_[picks[first].index] + "' is " + dtype_name(dtype) + " " +
                 to_string(plans[first].h.shape));
      shapes[i] = p.out_shape;
    }
    ws.outputs.assign(1, Batch());
    Batch& out = ws.outputs[0];
    out.allocate(*ws.host_pool, dtype, shapes, "");
    for (int64_t i = 0; i < n; ++i) out[i].source = paths_[picks[i].index];
    ws.thread_pool->parallel_for(n, [&](int64_t i, int) {
      Plan& p = plans[i];
      if (p.bad) return;
      try {
        read_roi(p.h, *p.file, p.start, p.end, out[i].data, out.shape(i));
      } catch (const Error& e) {
        if (!ws.report_bad_sample(i, p.file->path(), e.what()))
          throw e.with_context("sample " + std::to_string(i));
      }
      p.file.reset();
    });
  }

 private:
  npy::Header header(const readers::RandomAccessFile& f) {
    if (!cache_headers_) return npy::read_header(f);
    {
      std::lock_guard<std::mutex> g(cache_mu_);
      auto it = cache_.find(f.path());
      if (it != cache_.end()) return it->second;
    }
    npy::Header h = npy::read_header(f);
    std::lock_guard<std::mutex> g(cache_mu_);
    cache_[f.path()] = h;
    return h;
  }

  // The region of interest of sample i for an array of `shape`, after out_of_bounds_policy.
  void roi(const Workspace& ws, int64_t i, const Shape& shape, const std::string& path,
           Shape& start, Shape& end) const {
    const int nd = static_cast<int>(shape.size());
    start.assign(nd, 0);
    end = shape;
    if (!has_roi_) return;
    std::vector<int64_t> axes = axes_;
    if (axes.empty())
      for (int a = 0; a < nd; ++a) axes.push_back(a);
    for (int64_t& a : axes) {
      if (a < -nd || a >= nd)
        spec_.arg_error("roi_axes", "holds axis " + std::to_string(a) + ", but '" + path +
                                        "' has " + std::to_string(nd) + " dimensions");
      if (a < 0) a += nd;
    }
    auto get = [&](const char* name) -> std::optional<std::vector<double>> {
      if (!ws.has_arg(name)) return std::nullopt;
      std::vector<double> v = ws.list_arg(name, i);
      if (v.size() != axes.size())
        spec_.arg_error(name, "has " + std::to_string(v.size()) + " values for " +
                                  std::to_string(axes.size()) + " axes (" +
                                  (axes_.empty() ? "all axes of '" + path + "'" : std::string("roi_axes")) +
                                  "); give one value per axis");
      return v;
    };
    auto rs = get("roi_start"), rrs = get("rel_roi_start"), re = get("roi_end"),
         rre = get("rel_roi_end"), rsh = get("roi_shape"), rrsh = get("rel_roi_shape");
    for (size_t k = 0; k < axes.size(); ++k) {
      const int a = static_cast<int>(axes[k]);
      const double extent = static_cast<double>(shape[a]);
      double s = 0, e = extent;
      if (rs) s = (*rs)[k];
      if (rrs) s = (*rrs)[k] * extent;
      if (re) e = (*re)[k];
      if (rre) e = (*rre)[k] * extent;
      if (rsh) e = s + (*rsh)[k];
      if (rrsh) e = s + (*rrsh)[k] * extent;
      int64_t si = std::llround(s), ei = std::llround(e);
      if (ei < si)
        fail(ErrorKind::kInvalidArgument,
             spec_.display_name() + ": the region of interest of '" + path + "' ends before it "
                                    "starts on axis " + std::to_string(a) + " (start " +
                 std::to_string(si) + ", end " + std::to_string(ei) + ")");
      if (si < 0 || ei > shape[a]) {
        if (policy_ == OutOfBounds::kError)
          fail(ErrorKind::kInvalidArgument,
               spec_.display_name() + ": the region of interest [" + std::to_string(si) + ", " +
                   std::to_string(ei) + ") on axis " + std::to_string(a) + " lies outside '" +
                   path + "' (shape " + to_string(shape) + "); set out_of_bounds_policy to "
                   "'trim_to_shape' or 'pad' to accept it");
        if (policy_ == OutOfBounds::kTrim) {
          si = std::clamp<int64_t>(si, 0, shape[a]);
          ei = std::clamp<int64_t>(ei, si, shape[a]);
        }
      }
      start[a] = si;
      end[a] = ei;
    }
  }

  void read_roi(const npy::Header& h, const readers::RandomAccessFile& f, const Shape& start,
                const Shape& end, void* dst, const Shape& out_shape) const {
    const size_t nd = h.shape.size();
    Shape in_start(nd), in_count(nd), out_start(nd);
    bool padded = false, empty = false;
    for (size_t a = 0; a < nd; ++a) {
      int64_t s = std::max<int64_t>(start[a], 0), e = std::min<int64_t>(end[a], h.shape[a]);
      if (s != start[a] || e != end[a]) padded = true;
      if (e <= s) empty = true;
      in_start[a] = s;
      in_count[a] = std::max<int64_t>(e - s, 0);
      out_start[a] = s - start[a];
    }
    if (padded) npy::fill(dst, h.dtype, volume(out_shape), fill_value_);
    if (!empty) npy::read_box(f, h, in_start, in_count, dst, out_shape, out_start);
  }

  std::vector<std::string> paths_;
  OutOfBounds policy_ = OutOfBounds::kError;
  double fill_value_ = 0;
  std::vector<int64_t> axes_;
  bool has_roi_ = false;
  bool cache_headers_ = false;
  std::mutex cache_mu_;
  std::unordered_map<std::string, npy::Header> cache_;
};

}  // namespace

STOKER_REGISTER_OP_NAMED(readers_numpy, "readers.numpy") {
  add_reader_args(schema);
  add_file_selection_args(schema, "*.npy");
  schema.doc("Reads NumPy .npy files: all files under file_root that match file_filter (in "
             "sorted order), the paths in file_list, or files. Shape and dtype come from each "
             "file (C order; Fortran-order files are transposed). With a region of interest "
             "(roi_start/roi_end/roi_shape, absolute or rel_* relative, on roi_axes) only that "
             "region is read from the file.")
      .inputs(0, 0).outputs(1, {"data"})
      .arg({.name = "roi_start", .type = ArgType::kIntList, .optional = true,
            .doc = "Start of the region of interest (absolute), one value per roi axis.", .tensor = true})
      .arg({.name = "rel_roi_start", .type = ArgType::kFloatList, .optional = true,
            .doc = "Start of the region of interest as a fraction of the extent.", .tensor = true})
      .arg({.name = "roi_end", .type = ArgType::kIntList, .optional = true,
            .doc = "End (exclusive) of the region of interest (absolute).", .tensor = true})
      .arg({.name = "rel_roi_end", .type = ArgType::kFloatList, .optional = true,
            .doc = "End of the region of interest as a fraction of the extent.", .tensor = true})
      .arg({.name = "roi_shape", .type = ArgType::kIntList, .optional = true,
            .doc = "Shape of the region of interest (absolute).", .tensor = true})
      .arg({.name = "rel_roi_shape", .type = ArgType::kFloatList, .optional = true,
            .doc = "Shape of the region of interest as a fraction of the extent.", .tensor = true})
      .arg({.name = "roi_axes", .type = ArgType::kIntList, .default_value = std::vector<int64_t>{},
            .doc = "The axes the roi arguments refer to (default: all, in order)."})
      .arg({.name = "out_of_bounds_policy", .type = ArgType::kString,
            .default_value = std::string("error"),
            .doc = "A region of interest that reaches outside the array: 'error', "
                   "'trim_to_shape' (cut it to the array) or 'pad' (fill with fill_value).",
            .choices = {"error", "trim_to_shape", "pad"}})
      .arg({.name = "fill_value", .type = ArgType::kFloat, .default_value = 0.0,
            .doc = "The value of padded elements (out_of_bounds_policy='pad')."})
      .arg({.name = "cache_header_information", .type = ArgType::kBool, .default_value = false,
            .doc = "Parse each file's header once and keep it."})
      .arg({.name = "use_o_direct", .type = ArgType::kBool, .default_value = false,
            .doc = "Accepted for DALI compatibility; stoker reads with pread()."})
      .arg({.name = "register_buffers", .type = ArgType::kBool, .default_value = true,
            .doc = "Accepted for DALI compatibility (GPUDirect Storage only)."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<NumpyReader>(s); });
  add_on_error_arg(schema, /*can_replace=*/false);
}

}  // namespace stoker
