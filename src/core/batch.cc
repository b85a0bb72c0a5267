#include "core/batch.h"

#include <algorithm>
#include <cstdio>

namespace stoker {

size_t Batch::bytes_for(const std::vector<Shape>& shapes, DType dtype) {
  int64_t total = 0;
  bool fits = true;
  for (size_t i = 0; i < shapes.size(); ++i) {
    for (int64_t d : shapes[i])
      if (d < 0)
        fail(ErrorKind::kInvalidArgument, "output sample " + std::to_string(i) +
                                              " would have the shape " + to_string(shapes[i]) +
                                              ", with a negative extent");
    int64_t bytes = 0;
    const int64_t n = checked_volume(shapes[i]);
    fits = fits && n >= 0 && checked_mul(n, static_cast<int64_t>(dtype_size(dtype)), &bytes) &&
           !__builtin_add_overflow(total, bytes, &total);
  }
  if (!fits || static_cast<uint64_t>(total) > MemoryPool::kMaxBytes)
    fail(ErrorKind::kInvalidArgument, "the output would be " + describe_bytes(shapes, dtype) +
                                          ", more than any machine can address");
  return static_cast<size_t>(total);
}

namespace {

// Decimal digits of an unsigned 128-bit number (printf has no conversion for it).
std::string to_decimal(unsigned __int128 v) {
  std::string s;
  do {
    s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
    v /= 10;
  } while (v);
  return s;
}

}  // namespace

std::string Batch::describe_bytes(const std::vector<Shape>& shapes, DType dtype) {
  // Exact in 128 bits where the total fits (every size a 64-bit shape can ask for, up to a
  // few dimensions); beyond, rounded.
  long double approx = 0, most = -1;
  unsigned __int128 exact = 0;
  bool fits = true;
  size_t largest = 0;
  for (size_t i = 0; i < shapes.size(); ++i) {
    long double v = dtype_size(dtype);
    unsigned __int128 e = dtype_size(dtype);
    const bool empty = std::find(shapes[i].begin(), shapes[i].end(), 0) != shapes[i].end();
    for (int64_t d : shapes[i]) {
      v *= static_cast<long double>(d);
      fits = fits && (empty || !__builtin_mul_overflow(e, static_cast<unsigned __int128>(d), &e));
    }
    if (empty) e = 0;
    approx += v;
    fits = fits && !__builtin_add_overflow(exact, e, &exact);
    if (v > most) most = v, largest = i;
  }
  char n[64];
  snprintf(n, sizeof(n), "%.3Le", approx);
  std::string d = (fits ? to_decimal(exact) : std::string(n)) + " bytes (" +
                  format_bytes(static_cast<double>(approx)) + ": " + std::to_string(shapes.size()) +
                  (shapes.size() == 1 ? " sample" : " samples");
  if (!shapes.empty()) {
    const bool same = std::all_of(shapes.begin(), shapes.end(),
                                  [&](const Shape& s) { return s == shapes[0]; });
    d += (same ? " of shape " : ", the largest of shape ") + to_string(shapes[largest]);
  }
  return d + ", " + dtype_name(dtype) + ")";
}

void Batch::allocate(MemoryPool& pool, DType dtype, const std::vector<Shape>& shapes,
                     const std::string& layout) {
  const size_t total = bytes_for(shapes, dtype);
  std::shared_ptr<void> owner;
  try {
    owner = pool.allocate(total);
  } catch (const Error& e) {
    if (e.kind() != ErrorKind::kOutOfMemory) throw;
    throw Error(e.kind(), "the output would be " + describe_bytes(shapes, dtype) + ": " + e.what());
  }
  dtype_ = dtype;
  layout_ = layout;
  memory_ = pool.kind();
  const size_t elem = dtype_size(dtype);
  samples_.assign(shapes.size(), Sample{});
  auto* base = static_cast<uint8_t*>(owner.get());
  size_t off = 0;
  for (size_t i = 0; i < shapes.size(); ++i) {
    samples_[i].owner = owner;
    samples_[i].data = base + off;
    samples_[i].shape = shapes[i];
    off += static_cast<size_t>(volume(shapes[i])) * elem;
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
