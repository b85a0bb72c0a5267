#include "core/batch.h"

namespace stoker {

void Batch::allocate(MemoryPool& pool, DType dtype, const std::vector<Shape>& shapes,
                     const std::string& layout) {
  dtype_ = dtype;
  layout_ = layout;
  memory_ = pool.kind();
  size_t elem = dtype_size(dtype);
  size_t total = 0;
  for (const Shape& s : shapes) total += volume(s) * elem;
  std::shared_ptr<void> owner = pool.allocate(total);
  samples_.assign(shapes.size(), Sample{});
  auto* base = static_cast<uint8_t*>(owner.get());
  size_t off = 0;
  for (size_t i = 0; i < shapes.size(); ++i) {
    samples_[i].owner = owner;
    samples_[i].data = base + off;
    samples_[i].shape = shapes[i];
    off += volume(shapes[i]) * elem;
  }
}

void Batch::push_back(Sample s) { samples_.push_back(std::move(s)); }

std::vector<Shape> Batch::shapes() const {
  std::vector<Shape> r;
  r.reserve(samples_.size());
  for (const Sample& s : samples_) r.push_back(s.shape);
  return r;
}

size_t Batch::total_bytes() const {
  size_t t = 0;
  for (size_t i = 0; i < samples_.size(); ++i) t += sample_bytes(i);
  return t;
}

bool Batch::is_uniform() const {
  for (size_t i = 1; i < samples_.size(); ++i)
    if (samples_[i].shape != samples_[0].shape) return false;
  return true;
}

bool Batch::is_contiguous() const {
  for (size_t i = 1; i < samples_.size(); ++i)
    if (static_cast<uint8_t*>(samples_[i - 1].data) + sample_bytes(i - 1) != samples_[i].data)
      return false;
  return true;
}

}  // namespace stoker
