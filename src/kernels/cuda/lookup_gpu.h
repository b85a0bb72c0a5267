// The GPU twins of one_hot and lookup_table: outputs picked from a few precomputed values by
// each input element (a class, a key), a whole batch per launch. The values come as bits of the
// output type, converted on the host as the CPU operators convert them.
#pragma once
#include <cstdint>
#include <vector>

#include "core/dtype.h"

namespace stoker {
class Workspace;
namespace kernels::cuda {

struct OneHotJob {
  const void* in = nullptr;  // outer x inner elements
  void* out = nullptr;       // outer x classes x inner elements
  int64_t outer = 0, inner = 0;
};
// A class is the input truncated toward zero; NaN and values outside [0, classes) set none.
void one_hot_gpu(Workspace& ws, DType in_type, size_t out_size, int64_t classes, uint64_t on_bits,
                 uint64_t off_bits, const std::vector<OneHotJob>& jobs);

struct LookupJob {
  const void* in = nullptr;
  void* out = nullptr;
  int64_t n = 0;
};
// out = table[key] for keys in [0, table size), else the default; `table` holds the output
// type's bits, out_size bytes per entry. Integer input types only.
void lookup_gpu(Workspace& ws, DType in_type, size_t out_size, const std::vector<uint64_t>& table,
                uint64_t default_bits, const std::vector<LookupJob>& jobs);

}  // namespace kernels::cuda
}  // namespace stoker
