// libFuzzer harness: JPEG decoding (libjpeg-turbo behind src/codecs), as the pipeline drives it.
// Input layout and checks: image_harness.h.
#include "image_harness.h"

namespace {

// Inputs that fuzzing found and that are fixed; each is made here, not stored as a file.
std::vector<stoker::fuzz::Regression> regressions() { return {}; }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Only JPEG bodies: other formats have their own harness.
  if (size < stoker::fuzz::kParamBytes ||
      stoker::codecs::detect_format(data + stoker::fuzz::kParamBytes,
                                    size - stoker::fuzz::kParamBytes) !=
          stoker::codecs::ImageFormat::kJpeg)
    return 0;
  return stoker::fuzz::fuzz_image(data, size);
}

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  stoker::fuzz::replay(regressions(), LLVMFuzzerTestOneInput);
  return 0;
}
