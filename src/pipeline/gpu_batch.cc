#include "pipeline/gpu_batch.h"

#include "pipeline/gpu_context.h"

namespace stoker {

Batch allocate_device_batch(Workspace& ws, DType dtype, const std::vector<Shape>& shapes,
                            const std::string& layout) {
  STOKER_ASSERT(ws.gpu, "a GPU operator ran without a GPU context");
  Batch::bytes_for(shapes, dtype);  // throws where the sizes overflow: the offsets below then fit
  const size_t elem = dtype_size(dtype);
  std::vector<size_t> offsets(shapes.size() + 1, 0);
  for (size_t i = 0; i < shapes.size(); ++i) {
    size_t bytes = static_cast<size_t>(volume(shapes[i])) * elem;
    offsets[i + 1] = offsets[i] + bytes;  // back to back: a uniform batch exports as one tensor
  }
  std::shared_ptr<void> block = ws.gpu->allocate_device(std::max<size_t>(offsets.back(), 1));
  Batch out(dtype, layout, MemoryKind::kDevice, ws.gpu->device());
  out.resize(shapes.size());
  auto* base = static_cast<char*>(block.get());
  const Batch* in = ws.inputs.empty() ? nullptr : ws.inputs[0];
  for (size_t i = 0; i < shapes.size(); ++i) {
    out[i].owner = block;
    out[i].data = base + offsets[i];
    out[i].shape = shapes[i];
    if (in && i < in->size()) out[i].source = (*in)[i].source;
  }
  auto record = ws.gpu->stream_recorder();
  void* start = block.get();
  out.on_export = [record, start](const void*, void* stream) { record(start, stream); };
  return out;
}

Batch allocate_pinned_batch(Workspace& ws, DType dtype, const std::vector<Shape>& shapes,
                            const std::string& layout) {
  STOKER_ASSERT(ws.gpu, "a GPU operator ran without a GPU context");
  const size_t total = Batch::bytes_for(shapes, dtype);
  std::shared_ptr<void> block = ws.gpu->allocate_pinned(std::max<size_t>(total, 1));
  Batch out(dtype, layout, MemoryKind::kHost);
  out.resize(shapes.size());
  auto* base = static_cast<char*>(block.get());
  const size_t elem = dtype_size(dtype);
  size_t off = 0;
  const Batch* in = ws.inputs.empty() ? nullptr : ws.inputs[0];
  for (size_t i = 0; i < shapes.size(); ++i) {
    out[i].owner = block;
    out[i].data = base + off;
    out[i].shape = shapes[i];
    if (in && i < in->size()) out[i].source = (*in)[i].source;
    off += static_cast<size_t>(volume(shapes[i])) * elem;
  }
  return out;
}

Batch upload_pinned_batch(Workspace& ws, const Batch& pinned) {
  Batch out = allocate_device_batch(ws, pinned.dtype(), pinned.shapes(), pinned.layout());
  size_t total = 0;
  for (size_t i = 0; i < pinned.size(); ++i) {
    out[i].source = pinned[i].source;
    total += pinned.sample_bytes(i);
  }
  // Both batches lie back to back in one block each: one copy. The pinned block's pool waits
  // for the stream before reusing it, so it may go when `pinned` does.
  if (total) ws.gpu->copy_async(out[0].data, pinned[0].data, total);
  return out;
}

DeviceParams::DeviceParams(Workspace& ws) : ws_(ws) {
  STOKER_ASSERT(ws.gpu, "a GPU operator ran without a GPU context");
}

void DeviceParams::upload() {
  size_t n = std::max<size_t>(host_.size(), 16);
  pinned_ = ws_.gpu->allocate_pinned(n);
  dev_ = ws_.gpu->allocate_device(n);
  std::memcpy(pinned_.get(), host_.data(), host_.size());
  ws_.gpu->copy_async(dev_.get(), pinned_.get(), host_.size());
}

}  // namespace stoker
