// The C++ tests read the shared test data (STOKER_TESTDATA, ../shared/testdata unless CMake is
// told otherwise). Where it is missing, the run stops before any test with one message that
// says so, instead of the tests that read it failing one by one or crashing on empty files.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace {

class TestdataEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    const std::filesystem::path root(STOKER_TESTDATA);
    if (!std::filesystem::is_directory(root / "images" / "jpeg"))
      GTEST_FAIL() << "the shared test data is missing: '" << (root / "images" / "jpeg").string()
                   << "' is not a folder. Clone stoker next to ../shared (it holds the test "
                      "data), or configure with -DSTOKER_TESTDATA=PATH.";
  }
};

// Registered before main() runs the tests; gtest owns the environment.
[[maybe_unused]] ::testing::Environment* const kTestdata =
    ::testing::AddGlobalTestEnvironment(new TestdataEnvironment);

}  // namespace
