// cuFFT's loader, everywhere (it needs no GPU): what it says when the library is missing or is
// not cuFFT, and that the functions resolve where cuFFT is installed.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "kernels/cuda/cufft_loader.h"

namespace stoker::cufft {
namespace {

TEST(CufftLoader, MissingLibraryIsAClearMessage) {
  Api api;
  std::string why;
  EXPECT_FALSE(detail::load({"libcufft_stoker_missing.so.99"}, &api, &why));
  const std::string start =
      "cuFFT (libcufft_stoker_missing.so.99) was not found: install the CUDA toolkit's cuFFT (or "
      "`pip install nvidia-cufft`) or run the operator on the CPU (device='cpu'). A library "
      "outside the loader's search path is found through LD_LIBRARY_PATH or "
      "STOKER_CUFFT_LIBRARY=/path/to/libcufft.so.12. (Tried libcufft_stoker_missing.so.99; ";
  EXPECT_EQ(why.substr(0, start.size()), start) << why;
  EXPECT_EQ(api.cufftCreate, nullptr);
}

TEST(CufftLoader, ALibraryThatIsNotCufftIsRefused) {
  Api api;
  std::string why;
  EXPECT_FALSE(detail::load({"libm.so.6"}, &api, &why));
  EXPECT_NE(why.find("cuFFT at "), std::string::npos) << why;
  EXPECT_NE(why.find(" lacks cufftGetVersion, cufftCreate"), std::string::npos) << why;
  EXPECT_NE(why.find(": it is older than stoker needs. Install the cuFFT of CUDA 12 or later"),
            std::string::npos)
      << why;
}

TEST(CufftLoader, AvailabilityIsReportedWithoutCrashing) {
  std::string why;
  if (!cufft_available(&why)) {
    EXPECT_FALSE(why.empty());
    try {
      cufft_api("fn.spectrogram");
      ADD_FAILURE() << "cufft_api() did not throw";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kUnsupported);
      EXPECT_EQ(std::string(e.what()), "fn.spectrogram: device='gpu' needs cuFFT. " + why + ".");
    }
    return;
  }
  EXPECT_TRUE(why.empty());
  const Api& api = cufft_api("fn.spectrogram");
  EXPECT_FALSE(api.path.empty());
  EXPECT_GE(api.version, 10000) << api.path;
#define STOKER_EXPECT_RESOLVED(name, params) EXPECT_NE(api.name, nullptr) << #name;
  STOKER_CUFFT_FUNCTIONS(STOKER_EXPECT_RESOLVED)
#undef STOKER_EXPECT_RESOLVED
  RecordProperty("cufft", api.path + " " + std::to_string(api.version));
}

}  // namespace
}  // namespace stoker::cufft
