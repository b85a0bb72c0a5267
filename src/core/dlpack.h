// Batches handed out through DLPack: what Python's __dlpack__ and the C API both give.
#pragma once
#include <dlpack/dlpack.h>

#include <cstdint>

#include "core/batch.h"

namespace stoker {

DLDataType dl_dtype(DType t);
// The DType of a DLPack element type; DType::kNone where stoker has no such type. (Booleans
// travel as 8-bit unsigned integers, as dl_dtype writes them: DLPack 0.6 has no bool code.)
DType dtype_from_dl(DLDataType t);

// Throws Error(kInvalidArgument), starting with `what`, unless the samples have one shape.
void check_dense(const Batch& b, const char* what);

// The batch as one tensor (N, sample shape...) without a copy, or with `sample` >= 0 that
// sample alone. The tensor keeps the memory alive until its deleter runs. A whole batch must be
// dense and contiguous (Error(kInvalidArgument), starting with `what`, otherwise).
DLManagedTensor* to_dlpack(const Batch& b, int64_t sample, const char* what);

// Device batches: makes the consumer's `stream` (DLPack's convention: 1 the legacy default
// stream, 2 the per-thread default stream, -1 no ordering, else a cudaStream_t) wait until the
// batch is ready, and keeps the memory from being reused before that stream's work is done.
void order_for_consumer(const Batch& b, int64_t stream);

}  // namespace stoker
