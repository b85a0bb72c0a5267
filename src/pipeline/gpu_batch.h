// What GPU operators need from the pipeline beyond GpuContext: device output batches and the
// per-sample parameters of a batched launch. No CUDA headers (GpuContext hides them), so the
// operators that use this stay plain C++ and their kernels live in src/kernels/cuda.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "pipeline/operator.h"

namespace stoker {

// A device batch of these shapes in one contiguous block from the pipeline's stream-ordered
// pool, sources copied from input 0 (when there is one), ready to be exported (DLPack).
Batch allocate_device_batch(Workspace& ws, DType dtype, const std::vector<Shape>& shapes,
                            const std::string& layout);

// A host batch in one pinned block, laid out as allocate_device_batch lays out the same shapes
// (memory kHost: CPU code fills it), and its device copy, queued as one copy on the pipeline's
// stream: what the GPU twins whose outputs are computed on the CPU (constants, shapes, random
// numbers) upload.
Batch allocate_pinned_batch(Workspace& ws, DType dtype, const std::vector<Shape>& shapes,
                            const std::string& layout);
Batch upload_pinned_batch(Workspace& ws, const Batch& pinned);

// The per-sample parameters of one launch, packed into one pinned staging block and sent with
// one copy on the pipeline's stream:
//   DeviceParams p(ws);
//   size_t descs = p.add(host_descs);            // offsets, before upload
//   p.upload();
//   launch(p.device<Desc>(descs), ...);
// Both blocks go back to the pools when `p` is destroyed; the pools wait for the stream before
// reusing them, so destroying `p` right after queuing the launch is safe.
class DeviceParams {
 public:
  explicit DeviceParams(Workspace& ws);
  template <typename T>
  size_t add(const T* data, size_t n) {
    size_t off = (host_.size() + 15) & ~size_t(15);
    host_.resize(off + n * sizeof(T));
    if (n) std::memcpy(host_.data() + off, data, n * sizeof(T));
    return off;
  }
  template <typename T>
  size_t add(const std::vector<T>& v) { return add(v.data(), v.size()); }
  void upload();
  template <typename T>
  T* device(size_t offset) const { return reinterpret_cast<T*>(static_cast<char*>(dev_.get()) + offset); }

 private:
  Workspace& ws_;
  std::vector<char> host_;
  std::shared_ptr<void> pinned_, dev_;
};

}  // namespace stoker
