// decoders.inflate: LZ4-compressed bytes (1-D uint8 samples) in, tensors of the given shape and
// dtype out, as DALI 2.4's (which runs on the GPU only, through nvCOMP). A sample is one LZ4 block
// (no frame header), or several (chunk_offsets / chunk_sizes) that inflate to the same shape and
// are stacked along a new outer axis (sequence_axis_name in the layout). On the CPU each block
// is inflated by liblz4; on the GPU by our kernel (kernels/cuda/lz4_gpu.h), one warp per block.
//
// Where stoker differs: DALI has no CPU backend. A block must inflate to exactly the bytes the
// shape and dtype ask for; a damaged block, or one of another size, is an error naming the
// sample and chunk (DALI checks sizes only with check_output_size=True).
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "ops/generic/gpu_twin.h"
#include "pipeline/operator.h"
#ifdef STOKER_WITH_LZ4
#include <lz4.h>
#endif
#ifdef STOKER_WITH_CUDA
#include "kernels/cuda/lz4_gpu.h"
#include "pipeline/gpu_batch.h"
#endif

namespace stoker {
namespace {

// Where sample i's chunks lie in its input bytes, and the shape one chunk inflates to.
struct SamplePlan {
  std::vector<int64_t> offsets, sizes;
  Shape chunk;
};

class Inflate : public Operator {
 public:
  Inflate(const OpSpec& spec, bool on_gpu) : Operator(spec), on_gpu_(on_gpu) {
    std::string algorithm = spec.get<std::string>("algorithm");
    std::transform(algorithm.begin(), algorithm.end(), algorithm.begin(), ::toupper);
    if (algorithm != "LZ4")
      spec.arg_error("algorithm", "must be 'LZ4' (the only algorithm DALI 2.4 has), got '" +
                                      spec.get<std::string>("algorithm") + "'");
    if (!spec.has("shape") && !spec.is_tensor_arg("shape"))
      spec.arg_error("shape", "must be given: the shape of an inflated sample (or chunk)");
    dtype_ = static_cast<DType>(spec.get<int64_t>("dtype"));
    chunked_ = spec.has("chunk_offsets") || spec.is_tensor_arg("chunk_offsets") ||
               spec.has("chunk_sizes") || spec.is_tensor_arg("chunk_sizes");
    layout_ = spec.get<std::string>("layout");
    if (chunked_ && !layout_.empty()) layout_ = spec.get<std::string>("sequence_axis_name") + layout_;
#ifndef STOKER_WITH_LZ4
    if (!on_gpu_)
      throw Error(ErrorKind::kUnsupported,
                  spec.display_name() + ": stoker was built without liblz4, so it inflates on the "
                                        "GPU only; install liblz4-dev and rebuild, or run it with "
                                        "device='gpu'");
#endif
  }

  bool sample_wise() const override { return false; }

  void run_batch(Workspace& ws) override {
    const Batch& in = ws.input(0);
    const std::string op = spec_.display_name();
    if (on_gpu_) require_device_input(ws);
    if (in.dtype() != DType::kUInt8 || in.ndim() != 1)
      fail(ErrorKind::kTypeMismatch,
           op + ": the input must be 1-D uint8 samples of compressed bytes, got " +
               std::to_string(in.ndim()) + "-D " + dtype_name(in.dtype()));
    const int64_t n = static_cast<int64_t>(in.size());
    std::vector<SamplePlan> plans(n);
    std::vector<Shape> shapes(n);
    for (int64_t i = 0; i < n; ++i) {
      try {
        plans[i] = plan(ws, i, in.shape(i)[0]);
      } catch (const Error& e) {
        throw e.with_context(op + ", sample " + std::to_string(i));
      }
      shapes[i] = plans[i].chunk;
      if (chunked_) shapes[i].insert(shapes[i].begin(), static_cast<int64_t>(plans[i].sizes.size()));
      if (!layout_.empty() && layout_.size() != shapes[i].size())
        spec_.arg_error("layout", "'" + layout_ + "' has " + std::to_string(layout_.size()) +
                                      " axes, but the output of sample " + std::to_string(i) +
                                      " has " + std::to_string(shapes[i].size()));
    }
    const int64_t elem = static_cast<int64_t>(dtype_size(dtype_));
    ws.outputs.assign(1, Batch());
    Batch& out = ws.outputs[0];
#ifdef STOKER_WITH_CUDA
    if (on_gpu_) {
      out = allocate_device_batch(ws, dtype_, shapes, layout_);
      std::vector<kernels::cuda::Lz4Chunk> chunks;
      std::vector<std::pair<int64_t, size_t>> where;  // (sample, chunk) of each
      for (int64_t i = 0; i < n; ++i) {
        const int64_t bytes = volume(plans[i].chunk) * elem;
        for (size_t k = 0; k < plans[i].sizes.size(); ++k) {
          chunks.push_back({static_cast<const uint8_t*>(in[i].data) + plans[i].offsets[k],
                            plans[i].sizes[k], static_cast<uint8_t*>(out[i].data) + k * bytes, bytes});
          where.push_back({i, k});
        }
      }
      const std::vector<int64_t> done = kernels::cuda::lz4_inflate_gpu(ws, chunks);
      for (size_t c = 0; c < chunks.size(); ++c)
        check(done[c], chunks[c].out_size, where[c].first, where[c].second, in);
      return;
    }
#endif
    out.allocate(*ws.host_pool, dtype_, shapes, layout_);
#ifdef STOKER_WITH_LZ4
    ws.thread_pool->parallel_for(n, [&](int64_t i, int) {
      out[i].source = in[i].source;
      const int64_t bytes = volume(plans[i].chunk) * elem;
      const char* src = static_cast<const char*>(in[i].data);
      char* dst = static_cast<char*>(out[i].data);
      for (size_t k = 0; k < plans[i].sizes.size(); ++k) {
        // liblz4 takes int sizes: larger blocks are refused by plan().
        const int got = LZ4_decompress_safe(src + plans[i].offsets[k], dst + k * bytes,
                                            static_cast<int>(plans[i].sizes[k]),
                                            static_cast<int>(bytes));
        check(got < 0 ? -1 : got, bytes, i, k, in);
      }
    });
#endif
  }

 private:
  SamplePlan plan(Workspace& ws, int64_t i, int64_t size) const {
    SamplePlan p;
    for (double d : ws.list_arg("shape", i)) {
      if (d < 0 || d != static_cast<double>(static_cast<int64_t>(d)))
        fail(ErrorKind::kInvalidArgument, "argument 'shape' must hold whole extents >= 0, got " +
                                              std::to_string(d));
      p.chunk.push_back(static_cast<int64_t>(d));
    }
    auto ints = [&](const char* name) {
      std::vector<int64_t> v;
      if (!ws.has_arg(name)) return v;
      for (double d : ws.list_arg(name, i)) v.push_back(static_cast<int64_t>(d));
      return v;
    };
    p.offsets = ints("chunk_offsets");
    p.sizes = ints("chunk_sizes");
    if (!chunked_) {
      p.offsets = {0};
      p.sizes = {size};
    } else if (p.sizes.empty()) {  // offsets only: each chunk runs to the next (the last to the end)
      for (size_t k = 0; k < p.offsets.size(); ++k)
        p.sizes.push_back((k + 1 < p.offsets.size() ? p.offsets[k + 1] : size) - p.offsets[k]);
    } else if (p.offsets.empty()) {  // sizes only: densely packed from the start
      int64_t at = 0;
      for (int64_t s : p.sizes) {
        p.offsets.push_back(at);
        at += s;
      }
    } else if (p.offsets.size() != p.sizes.size()) {
      fail(ErrorKind::kInvalidArgument,
           "chunk_offsets has " + std::to_string(p.offsets.size()) + " values and chunk_sizes " +
               std::to_string(p.sizes.size()) + "; give one of each per chunk");
    }
    for (size_t k = 0; k < p.sizes.size(); ++k) {
      if (p.offsets[k] < 0 || p.sizes[k] < 0 || p.offsets[k] + p.sizes[k] > size)
        fail(ErrorKind::kInvalidArgument,
             "chunk " + std::to_string(k) + " (offset " + std::to_string(p.offsets[k]) +
                 ", size " + std::to_string(p.sizes[k]) + ") reaches outside the sample's " +
                 std::to_string(size) + " bytes");
    }
    const int64_t bytes = volume(p.chunk) * static_cast<int64_t>(dtype_size(dtype_));
    if (!on_gpu_ && (bytes > 0x7fffffff || size > 0x7fffffff))
      fail(ErrorKind::kInvalidArgument,
           "an inflated chunk of " + std::to_string(bytes) + " bytes from " +
               std::to_string(size) + " compressed ones is more than liblz4 takes (2 GiB); "
               "split the data into chunks (chunk_offsets, chunk_sizes)");
    return p;
  }

  // A chunk that did not inflate to exactly `want` bytes (`got` < 0: damaged).
  void check(int64_t got, int64_t want, int64_t i, size_t k, const Batch& in) const {
    if (got == want) return;
    const std::string& src = in[i].source;
    std::string where = spec_.display_name() + ", sample " + std::to_string(i) +
                        (src.empty() ? "" : " ('" + src + "')") +
                        (chunked_ ? ", chunk " + std::to_string(k) : "");
    if (got < 0)
      fail(ErrorKind::kDecode, where + ": not an LZ4 block that inflates to the " +
                                   std::to_string(want) + " bytes that shape and dtype ask for "
                                   "(damaged, or it inflates to more)");
    fail(ErrorKind::kDecode, where + ": the LZ4 block inflates to " + std::to_string(got) +
                                 " bytes, but shape and dtype ask for " + std::to_string(want));
  }

  const bool on_gpu_;
  bool chunked_ = false;
  DType dtype_ = DType::kUInt8;
  std::string layout_;
};

}  // namespace

STOKER_REGISTER_OP_NAMED(decoders_inflate, "decoders.inflate") {
  schema.doc("Inflates LZ4-compressed samples (1-D uint8: one LZ4 block each, or several with "
             "chunk_offsets / chunk_sizes) into tensors of the given shape and dtype; the chunks "
             "of a sample, each inflating to `shape`, are stacked along a new outer axis. On the "
             "CPU through liblz4, on the GPU by stoker's kernel. A block must inflate to exactly "
             "shape x dtype bytes.")
      .inputs(1, 1, {"input"}).outputs(1)
      .arg({.name = "shape", .type = ArgType::kIntList, .optional = true,
            .doc = "Shape of an inflated sample, or of one chunk (required).", .tensor = true})
      .arg({.name = "dtype", .type = ArgType::kDType, .default_value = static_cast<int64_t>(DType::kUInt8),
            .doc = "Type of the inflated data."})
      .arg({.name = "layout", .type = ArgType::kString, .default_value = std::string(""),
            .doc = "Layout of an inflated chunk; with chunks, sequence_axis_name is put in front."})
      .arg({.name = "chunk_offsets", .type = ArgType::kIntList, .optional = true,
            .doc = "Where each chunk starts in the sample (without chunk_sizes, each runs to the "
                   "next, the last to the sample's end).", .tensor = true})
      .arg({.name = "chunk_sizes", .type = ArgType::kIntList, .optional = true,
            .doc = "Compressed size of each chunk (without chunk_offsets, packed from the "
                   "sample's start).", .tensor = true})
      .arg({.name = "sequence_axis_name", .type = ArgType::kString, .default_value = std::string("F"),
            .doc = "Name of the chunks' axis in the layout (with chunks and a layout)."})
      .arg({.name = "algorithm", .type = ArgType::kString, .default_value = std::string("LZ4"),
            .doc = "The compression: 'LZ4' (blocks, as nvCOMP's LZ4)."})
      .arg({.name = "check_output_size", .type = ArgType::kBool, .default_value = false,
            .doc = "Accepted for DALI compatibility; stoker always checks the inflated sizes."})
      .backend(Backend::kCPU, [](const OpSpec& s) { return std::make_unique<Inflate>(s, false); })
#ifdef STOKER_WITH_CUDA
      .backend(Backend::kGPU, [](const OpSpec& s) { return std::make_unique<Inflate>(s, true); })
#endif
      ;
}

}  // namespace stoker
