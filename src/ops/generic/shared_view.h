// Operators that change only what a batch says about its memory (shape, dtype, layout, order)
// hand out views of their input: the samples keep the input's buffers alive through their
// owners, so no pixel is copied. Such operators are batch operators (run_batch), because the
// executor allocates fresh outputs for sample-wise ones.
#pragma once
#include <string>
#include <utility>

#include "core/batch.h"

namespace stoker {

// A batch with `in`'s samples (memory, shapes, sources), typed `dtype` and laid out `layout`.
inline Batch view_of(const Batch& in, DType dtype, std::string layout) {
  Batch out(dtype, std::move(layout), in.memory(), in.device());
  out.resize(in.size());
  for (size_t i = 0; i < in.size(); ++i) out[i] = in[i];
  out.on_export = in.on_export;  // device memory: a consumer's stream still holds its reuse back
  return out;
}

}  // namespace stoker
