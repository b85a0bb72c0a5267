// Tiny kernels for the CUDA tests, behind plain launchers (no CUDA header needed to call them).
#pragma once
#include <cstddef>
#include <cstdint>

#include "core/cuda/cuda_util.h"

namespace stoker::testing {

// dst[i] = base + i for i in [0, n), on `stream`.
void launch_iota(uint32_t* dst, size_t n, uint32_t base, StreamHandle stream);
// dst[i] += 1 for i in [0, n), on `stream`.
void launch_increment(uint32_t* dst, size_t n, StreamHandle stream);
// Keeps `stream` busy for about `ms` milliseconds (one thread spinning on the GPU clock), so
// that a test can observe work that has been queued but has not finished.
void launch_spin(double ms, StreamHandle stream);

}  // namespace stoker::testing
