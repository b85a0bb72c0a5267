// _to_gpu: what DataNode.gpu() inserts. Copies a CPU batch to the pipeline's GPU, through a
// pinned staging buffer, queued on the pipeline's stream; the batch comes out contiguous.
#include <cstring>

#include "pipeline/gpu_context.h"
#include "pipeline/operator.h"

namespace stoker {
namespace {

class ToGpu : public Operator {
 public:
  explicit ToGpu(const OpSpec& spec) : Operator(spec) {}
  bool sample_wise() const override { return false; }

  void run_batch(Workspace& ws) override {
    STOKER_ASSERT(ws.gpu, "_to_gpu without a GPU context");
    const Batch& in = ws.input(0);
    size_t total = in.total_bytes();
    std::shared_ptr<void> staging = ws.gpu->allocate_pinned(total);
    std::shared_ptr<void> dev = ws.gpu->allocate_device(total);
    std::vector<size_t> offsets(in.size() + 1, 0);
    for (size_t i = 0; i < in.size(); ++i) offsets[i + 1] = offsets[i] + in.sample_bytes(i);
    auto* stage = static_cast<uint8_t*>(staging.get());
    ws.thread_pool->parallel_for(static_cast<int64_t>(in.size()), [&](int64_t i, int) {
      std::memcpy(stage + offsets[i], in[i].data, in.sample_bytes(i));
    });
    ws.gpu->copy_async(dev.get(), staging.get(), total);

    ws.outputs.assign(1, Batch(in.dtype(), in.layout(), MemoryKind::kDevice, ws.gpu->device()));
    Batch& out = ws.outputs[0];
    out.resize(in.size());
    auto* base = static_cast<uint8_t*>(dev.get());
    for (size_t i = 0; i < in.size(); ++i) {
      out[i].owner = dev;
      out[i].data = base + offsets[i];
      out[i].shape = in.shape(i);
      out[i].source = in[i].source;
    }
    auto record = ws.gpu->stream_recorder();
    void* block = dev.get();
    out.on_export = [record, block](const void*, void* stream) { record(block, stream); };
  }
};

}  // namespace

STOKER_REGISTER_OP_NAMED(to_gpu, "_to_gpu") {
  schema.doc("Copies a CPU batch to the GPU (what DataNode.gpu() inserts).")
      .inputs(1, 1, {"input"}).outputs(1)
      .arg({.name = "_display_name", .type = ArgType::kString, .optional = true,
            .doc = "How messages name it (\".gpu()\")."})
      .backend(Backend::kMixed, [](const OpSpec& s) { return std::make_unique<ToGpu>(s); });
}

}  // namespace stoker
