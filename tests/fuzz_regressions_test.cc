// Replays the fuzzer's seed corpus and every input that ever crashed or hung
// it (tests/fuzz/regressions/) through the fuzzer's body, so each bug the
// fuzzer found stays fixed in every build, the sanitizer build included.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz/trace_fuzz_body.h"
#include "test_util.h"

namespace irt {
namespace {

namespace fs = std::filesystem;

// The fuzzer's body with standard output (its printers') sent to /dev/null.
void RunQuietly(const uint8_t* data, size_t size) {
  std::fflush(stdout);
  int saved = dup(STDOUT_FILENO);
  int null = open("/dev/null", O_WRONLY);
  ASSERT_GE(saved, 0);
  ASSERT_GE(null, 0);
  dup2(null, STDOUT_FILENO);
  fuzz::RunOne(data, size);
  std::fflush(stdout);
  dup2(saved, STDOUT_FILENO);
  close(null);
  close(saved);
}

TEST(FuzzRegressionsTest, SeedCorpus) {
  testing::ReplayInputs(fs::path(IRT_SOURCE_DIR) / "tests/fuzz/corpus", 1, RunQuietly);
}

TEST(FuzzRegressionsTest, Regressions) {
  testing::ReplayInputs(fs::path(IRT_SOURCE_DIR) / "tests/fuzz/regressions", 0, RunQuietly);
}

}  // namespace
}  // namespace irt
