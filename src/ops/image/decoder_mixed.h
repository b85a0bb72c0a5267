// The 'mixed' twin of an image decoder: the decoder's own planning (headers, windows, random
// crops, the fused resize) and the choice of decoder per image in prepare() (a stage early when
// the pipeline is staged), then ImageDecoderBase::run_batch_mixed for the batch.
#pragma once
#include "ops/image/decoder.h"

namespace stoker {

template <class Decoder>
class MixedDecoder final : public Decoder {
 public:
  explicit MixedDecoder(const OpSpec& spec) : Decoder(spec) { this->prepare_mixed(); }
  bool sample_wise() const override { return false; }
  bool prepares_early() const override { return true; }
  std::shared_ptr<void> prepare(Workspace& ws) override { return this->prepare_batch_mixed(ws); }
  void run_batch(Workspace& ws) override { this->run_batch_mixed(ws); }
  std::vector<std::pair<std::string, int64_t>> counters() const override {
    return this->mixed_counters();
  }
};

}  // namespace stoker

// Chained after a decoder's CPU backend.
#ifdef STOKER_WITH_CUDA
#define STOKER_MIXED_DECODER_BACKEND(Decoder)                            \
  .backend(::stoker::Backend::kMixed, [](const ::stoker::OpSpec& s) {     \
    return std::make_unique<::stoker::MixedDecoder<Decoder>>(s);          \
  })
#else
#define STOKER_MIXED_DECODER_BACKEND(Decoder)
#endif
