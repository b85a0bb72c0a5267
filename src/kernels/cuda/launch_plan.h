// The block layout of one batched launch (cuda_common.cuh: sample_of_block): each job (a sample,
// or a frame of one) gets ceil(work / per_block) consecutive blocks. Host code, no CUDA headers.
#pragma once
#include <cstdint>
#include <vector>

#include "core/error.h"

namespace stoker::kernels::cuda {

class LaunchPlan {
 public:
  explicit LaunchPlan(int64_t per_block) : per_block_(per_block) {}
  // Adds a job of `work` items (zero is fine: it gets no block); returns its index.
  int add(int64_t work) {
    STOKER_ASSERT(work >= 0, "LaunchPlan: negative work");
    block_start_.push_back(static_cast<int>(blocks_));
    blocks_ += (work + per_block_ - 1) / per_block_;
    STOKER_ASSERT(blocks_ < (int64_t(1) << 31), "batch too large for one launch");
    return static_cast<int>(block_start_.size()) - 1;
  }
  int64_t blocks() const { return blocks_; }
  int jobs() const { return static_cast<int>(block_start_.size()); }
  const std::vector<int>& block_start() const { return block_start_; }

 private:
  int64_t per_block_;
  int64_t blocks_ = 0;
  std::vector<int> block_start_;
};

}  // namespace stoker::kernels::cuda
