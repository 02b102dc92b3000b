// Temporary file names for unit tests. ctest runs every test case in its own
// process, several at once, so names carry the process id: two cases that
// write "out.fb" never share a file.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <string_view>

namespace irt::testing {

inline std::string TempPath(std::string_view name) {
  return ::testing::TempDir() + "/irt" + std::to_string(getpid()) + "-" + std::string(name);
}

}  // namespace irt::testing
