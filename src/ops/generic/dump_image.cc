// dump_image: writes each image of a batch to a PPM file in the working folder, for debugging,
// and passes the batch on untouched (its output is a view of the input: nothing is copied), as
// DALI 2.4's: sample i goes to "<i>-<suffix>-0.ppm", overwritten by every batch; ASCII PPM, P3
// for 3 channels and P2 (greyscale) for 1; uint8 images only.
//
// Where stoker differs: DALI takes input_layout="HWC" only ("CHW not supported yet"); stoker
// also writes CHW images. DALI writes the file in place, so that one read while the pipeline
// works ahead can be empty or cut; stoker replaces it whole (a rename). The GPU backend copies
// each image to the host first.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "ops/generic/gpu_twin.h"
#include "ops/generic/shared_view.h"
#include "pipeline/operator.h"
#ifdef STOKER_WITH_CUDA
#include "core/cuda/cuda_util.h"
#include "pipeline/gpu_context.h"
#endif

namespace stoker {
namespace {

class DumpImage : public Operator {
 public:
  DumpImage(const OpSpec& spec, bool on_gpu) : Operator(spec), on_gpu_(on_gpu) {
    layout_ = spec.get<std::string>("input_layout");
    if (layout_ != "HWC" && layout_ != "CHW")
      spec.arg_error("input_layout", "must be \"HWC\" or \"CHW\", got \"" + layout_ + "\"");
    suffix_ = spec.get<std::string>("suffix");
  }

  bool sample_wise() const override { return false; }

  void run_batch(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const std::string op = spec_.display_name();
    if (on_gpu_) require_device_input(ws);
    if (in.dtype() != DType::kUInt8)
      fail(ErrorKind::kTypeMismatch, op + ": writes uint8 images, got " + dtype_name(in.dtype()) +
                                         "; convert with fn.cast(..., dtype=types.UINT8) first");
    const bool chw = layout_ == "CHW";
    const int64_t n = static_cast<int64_t>(in.size());
    for (int64_t i = 0; i < n; ++i) {
      const Shape& s = in.shape(i);
      const int64_t c = s.size() == 3 ? s[chw ? 0 : 2] : 0;
      if (s.size() != 3 || (c != 1 && c != 3))
        fail(ErrorKind::kInvalidArgument,
             op + ": sample " + std::to_string(i) + " has shape " + to_string(s) + "; it writes " +
                 layout_ + " images of 1 or 3 channels (input_layout=\"" + layout_ + "\")");
    }
    // The images on the host: the input's own memory, or (GPU) a copy of it.
    std::vector<std::vector<uint8_t>> host;
#ifdef STOKER_WITH_CUDA
    if (on_gpu_) {
      host.resize(n);
      for (int64_t i = 0; i < n; ++i) {
        host[i].resize(in.sample_bytes(i));
        cuda_memcpy_async(host[i].data(), in[i].data, host[i].size(), ws.gpu->stream());
      }
      cuda_stream_synchronize(ws.gpu->stream());
    }
#endif
    ws.thread_pool->parallel_for(n, [&](int64_t i, int) {
      const uint8_t* px = on_gpu_ ? host[i].data() : in.data<uint8_t>(i);
      write(in.shape(i), chw, px, std::to_string(i) + "-" + suffix_ + "-0.ppm");
    });
    ws.outputs.assign(1, view_of(in, in.dtype(), in.layout()));
  }

 private:
  void write(const Shape& s, bool chw, const uint8_t* px, const std::string& path) const {
    const int64_t h = s[chw ? 1 : 0], w = s[chw ? 2 : 1], c = s[chw ? 0 : 2];
    std::string text = std::string(c == 3 ? "P3" : "P2") + "\n" + std::to_string(w) + " " +
                       std::to_string(h) + "\n255\n";
    text.reserve(text.size() + static_cast<size_t>(h * w * c) * 4 + static_cast<size_t>(h));
    char num[8];
    for (int64_t y = 0; y < h; ++y) {
      for (int64_t x = 0; x < w; ++x)
        for (int64_t k = 0; k < c; ++k) {
          const uint8_t v = chw ? px[(k * h + y) * w + x] : px[(y * w + x) * c + k];
          const int len = std::snprintf(num, sizeof num, "%d ", v);
          text.append(num, static_cast<size_t>(len));
        }
      text += '\n';
    }
    // Written beside, then renamed over the last batch's file: the pipeline runs batches ahead,
    // and whoever looks at a file sees a whole image, never one being written.
    const std::string tmp = path + ".part";
    FILE* f = std::fopen(tmp.c_str(), "wb");
    bool ok = f && std::fwrite(text.data(), 1, text.size(), f) == text.size();
    int err = errno;
    if (f && std::fclose(f) != 0 && ok) ok = false, err = errno;
    if (ok && std::rename(tmp.c_str(), path.c_str()) != 0) ok = false, err = errno;
    if (!ok) {
      if (f) std::remove(tmp.c_str());
      fail(ErrorKind::kIO, spec_.display_name() + ": cannot write '" + path + "' in the working "
                           "folder: " + std::strerror(err));
    }
  }

  const bool on_gpu_;
  std::string layout_, suffix_;
};

}  // namespace

STOKER_REGISTER_OP_NAMED(dump_image, "dump_image") {
  schema.doc("Writes each image of the batch to a PPM file in the working folder, for debugging: "
             "sample i to '<i>-<suffix>-0.ppm' (ASCII P3 for 3 channels, P2 for 1), rewritten "
             "by every batch; the output is the input, untouched. uint8 HWC images (CHW too, "
             "which DALI refuses).")
      .inputs(1, 1, {"input"}).outputs(1)
      .arg({.name = "input_layout", .type = ArgType::kString, .default_value = std::string("HWC"),
            .doc = "Layout of the images: \"HWC\" or \"CHW\"."})
      .arg({.name = "suffix", .type = ArgType::kString, .default_value = std::string(),
            .doc = "Put into the file names: '<i>-<suffix>-0.ppm'."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<DumpImage>(s, false); })
#ifdef STOKER_WITH_CUDA
      .backend(Backend::kGPU, [](const OpSpec& s) { return std::make_unique<DumpImage>(s, true); })
#endif
      ;
}

}  // namespace stoker
