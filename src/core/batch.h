// A batch: N samples of one dtype, one number of dimensions and one layout, each with its own
// shape and source (file path or record). Samples are contiguous in one buffer when the batch
// was allocated at once; otherwise each sample points into its own buffer.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/error.h"
#include "core/memory.h"
#include "core/shape.h"

namespace stoker {

struct Sample {
  std::shared_ptr<void> owner;  // keeps the memory alive
  void* data = nullptr;
  Shape shape;
  std::string source;  // file path, "file.tfrecord@1234", ... ; empty when made by an operator
};

class Batch {
 public:
  Batch() = default;
  Batch(DType dtype, std::string layout, MemoryKind memory = MemoryKind::kHost, int device = -1)
      : dtype_(dtype), layout_(std::move(layout)), memory_(memory), device_(device) {}

  // Allocates all samples in one contiguous buffer from `pool`. Sources are kept empty.
  // Too many bytes for any machine (the sizes checked as they are multiplied) throws
  // Error(kInvalidArgument), too many for the pool's cap or the system Error(kOutOfMemory),
  // both starting "the output would be N bytes (...)".
  void allocate(MemoryPool& pool, DType dtype, const std::vector<Shape>& shapes,
                const std::string& layout);
  // Bytes of samples of these shapes back to back, checked as they are multiplied and added:
  // more than MemoryPool::kMaxBytes (or 64 bits), or a negative extent, throws
  // Error(kInvalidArgument, "the output would be N bytes (...), more than any machine can
  // address").
  static size_t bytes_for(const std::vector<Shape>& shapes, DType dtype);
  // "N bytes (4.0 MiB: 2 samples of shape (1024, 512), float32)", for messages; exact for any
  // shapes.
  static std::string describe_bytes(const std::vector<Shape>& shapes, DType dtype);
  // Appends a sample that owns (or shares) its memory.
  void push_back(Sample s);
  void resize(size_t n) { samples_.resize(n); }

  size_t size() const { return samples_.size(); }
  bool empty() const { return samples_.empty(); }
  DType dtype() const { return dtype_; }
  const std::string& layout() const { return layout_; }
  void set_layout(std::string l) { layout_ = std::move(l); }
  void set_dtype(DType t) { dtype_ = t; }
  void set_memory(MemoryKind m, int device) { memory_ = m; device_ = device; }
  MemoryKind memory() const { return memory_; }
  int device() const { return device_; }
  int ndim() const { return samples_.empty() ? static_cast<int>(layout_.size()) : static_cast<int>(samples_[0].shape.size()); }

  Sample& operator[](size_t i) { return samples_[i]; }
  const Sample& operator[](size_t i) const { return samples_[i]; }
  const Shape& shape(size_t i) const { return samples_[i].shape; }
  std::vector<Shape> shapes() const;
  template <typename T> T* data(size_t i) const { return static_cast<T*>(samples_[i].data); }
  size_t sample_bytes(size_t i) const { return volume(samples_[i].shape) * dtype_size(dtype_); }
  size_t total_bytes() const;

  // Device batches: the CUDA event (an opaque cudaEvent_t, kept alive by its owner) after which
  // the data is ready. A consumer's stream waits on it; nobody waits on the host.
  void set_ready_event(std::shared_ptr<void> owner, void* event) {
    ready_owner_ = std::move(owner);
    ready_event_ = event;
  }
  void* ready_event() const { return ready_event_; }
  // Device batches: called with a consumer's stream when the memory is handed to a framework,
  // so that the memory is not reused before that stream's work on it is done.
  std::function<void(const void* ptr, void* stream)> on_export;

  // True when all samples have the same shape and lie back to back in memory.
  bool is_uniform() const;
  bool is_contiguous() const;

 private:
  DType dtype_ = DType::kNone;
  std::string layout_;
  MemoryKind memory_ = MemoryKind::kHost;
  int device_ = -1;
  std::vector<Sample> samples_;
  std::shared_ptr<void> ready_owner_;
  void* ready_event_ = nullptr;
};

}  // namespace stoker
