// Replays the fuzzer's seed corpus and every input that ever crashed or hung
// it (tests/fuzz/regressions/) through the fuzzer's body, so each bug the
// fuzzer found stays fixed in every build, the sanitizer build included.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
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

// Runs every file of `dir` with standard output sent to /dev/null.
void Replay(const std::string& dir, size_t min_files) {
  std::vector<fs::path> files = testing::FilesIn(fs::path(IRT_SOURCE_DIR) / dir);
  EXPECT_GE(files.size(), min_files) << dir;
  std::fflush(stdout);
  int saved = dup(STDOUT_FILENO);
  int null = open("/dev/null", O_WRONLY);
  ASSERT_GE(saved, 0);
  ASSERT_GE(null, 0);
  for (const fs::path& f : files) {
    const std::string bytes = testing::ReadFile(f.string());
    dup2(null, STDOUT_FILENO);
    auto start = std::chrono::steady_clock::now();
    fuzz::RunOne(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    dup2(saved, STDOUT_FILENO);
    // A hang found by the fuzzer must stay fixed too: seconds, not the
    // minutes it took. Generous, as no test may depend on the machine's
    // speed: the slowest input (a tuple of 2^24 shared leaves, exported as
    // text) takes 6.5 s in a release build and 14 s under the sanitizers
    // on a 2-core virtual machine whose page faults cost 13 us each.
    EXPECT_LT(s, 45.0) << f.filename();
  }
  close(null);
  close(saved);
}

TEST(FuzzRegressionsTest, SeedCorpus) { Replay("tests/fuzz/corpus", 1); }

TEST(FuzzRegressionsTest, Regressions) { Replay("tests/fuzz/regressions", 0); }

}  // namespace
}  // namespace irt
