// The GPU twin of a CPU operator whose setup() does all the per-sample work that is not pixel
// arithmetic (argument checks, output shapes, per-sample parameters, random choices): the twin
// runs that same setup, then the whole batch in batched kernel launches on the pipeline's stream.
//
// The operator provides `void run_gpu(Workspace& ws, const std::vector<OutputDesc>& descs)`,
// which allocates the device outputs (allocate_device_batch) and queues the kernels. It calls
// functions that exist only in CUDA builds (STOKER_CUDA_SOURCES); being an inline member that
// only GpuTwin<Op> calls, it is never emitted in a build without CUDA.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "pipeline/gpu_batch.h"
#include "pipeline/operator.h"

namespace stoker {

template <class Op>
class GpuTwin final : public Op {
 public:
  using Op::Op;
  bool sample_wise() const override { return false; }
  void run_batch(Workspace& ws) override {
    std::vector<OutputDesc> descs = this->setup(ws);
    this->run_gpu(ws, descs);
  }
};

// The check every GPU twin makes of its data input.
inline void require_device_input(const Workspace& ws, int input = 0) {
  if (ws.input(input).memory() != MemoryKind::kDevice)
    fail(ErrorKind::kInvalidArgument,
         ws.spec->display_name() + ": device='gpu' needs GPU input; move the input to the GPU with "
                                   ".gpu() or run the operator with device='cpu'.");
}

// The GPU backend of an operator whose outputs are views of its input (generic/shared_view.h:
// reshape, squeeze, per_frame, ...): the same code, which touches no element, on device input.
template <class Op>
class GpuView final : public Op {
 public:
  using Op::Op;
  void run_batch(Workspace& ws) override {
    require_device_input(ws);
    Op::run_batch(ws);
  }
};

// The GPU twin of a sample-wise operator whose outputs come from its arguments, its random
// stream and its inputs' shapes, never their data (constants, shapes, random numbers): the CPU
// operator fills pinned memory, one copy uploads it. The values are the CPU twin's, bit for bit.
template <class Op>
class HostGpuTwin final : public Op {
 public:
  using Op::Op;
  bool sample_wise() const override { return false; }
  void run_batch(Workspace& ws) override {
    for (size_t k = 0; k < ws.inputs.size(); ++k) require_device_input(ws, static_cast<int>(k));
    std::vector<OutputDesc> descs = this->setup(ws);
    ws.outputs.clear();
    for (const OutputDesc& d : descs)
      ws.outputs.push_back(allocate_pinned_batch(ws, d.dtype, d.shapes, d.layout));
    const int64_t n = descs.empty() ? 0 : static_cast<int64_t>(descs[0].shapes.size());
    ws.thread_pool->parallel_for(n, [&](int64_t i, int thread) { this->run_sample(ws, i, thread); });
    for (Batch& b : ws.outputs) b = upload_pinned_batch(ws, b);
  }
};

}  // namespace stoker

// Chained after the CPU backend: `.backend(Backend::kCPU, ...) STOKER_GPU_TWIN(Op)`; a lambda
// building the operator with extra constructor arguments goes to STOKER_GPU_TWIN_WITH.
// STOKER_GPU_VIEW and STOKER_GPU_HOST_TWIN register the two twins above.
#ifdef STOKER_WITH_CUDA
#define STOKER_GPU_TWIN(Op)                                                 \
  .backend(::stoker::Backend::kGPU, [](const ::stoker::OpSpec& s) {         \
    return std::make_unique<::stoker::GpuTwin<Op>>(s);                      \
  })
#define STOKER_GPU_TWIN_WITH(Op, ...)                                       \
  .backend(::stoker::Backend::kGPU, [=](const ::stoker::OpSpec& s) {        \
    return std::make_unique<::stoker::GpuTwin<Op>>(s, __VA_ARGS__);         \
  })
#define STOKER_GPU_VIEW(Op)                                                 \
  .backend(::stoker::Backend::kGPU, [](const ::stoker::OpSpec& s) {         \
    return std::make_unique<::stoker::GpuView<Op>>(s);                      \
  })
#define STOKER_GPU_HOST_TWIN(Op)                                            \
  .backend(::stoker::Backend::kGPU, [](const ::stoker::OpSpec& s) {         \
    return std::make_unique<::stoker::HostGpuTwin<Op>>(s);                  \
  })
#define STOKER_GPU_HOST_TWIN_WITH(Op, ...)                                  \
  .backend(::stoker::Backend::kGPU, [=](const ::stoker::OpSpec& s) {        \
    return std::make_unique<::stoker::HostGpuTwin<Op>>(s, __VA_ARGS__);     \
  })
#else
#define STOKER_GPU_TWIN(Op)
#define STOKER_GPU_TWIN_WITH(Op, ...)
#define STOKER_GPU_VIEW(Op)
#define STOKER_GPU_HOST_TWIN(Op)
#define STOKER_GPU_HOST_TWIN_WITH(Op, ...)
#endif
