// Output: a file is written next to its destination and renamed into place
// on Commit, replacing what was there.
#include "irt/output.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "test_util.h"

namespace irt {
namespace {

std::vector<std::string> Entries(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") out.push_back(n);
  }
  closedir(d);
  return out;
}

// Replacing a large file (held open across the rename and closed beside
// the caller): the destination holds the new bytes, a reader that opened
// the old file still reads all of the old ones (the old file is replaced
// by a rename, never rewritten), and no other name is left in the
// directory.
TEST(OutputTest, ReplacingALargeFileLeavesReadersTheOldOne) {
  std::string dir = testing::TempPath("replace_dir");
  ASSERT_TRUE(mkdir(dir.c_str(), 0755) == 0 || errno == EEXIST);
  std::string path = dir + "/t.fb";
  const std::string old_bytes(3 << 20, 'o'), new_bytes(2 << 20, 'n');
  {
    std::ofstream f(path, std::ios::binary);
    f << old_bytes;
  }
  std::ifstream reader(path, std::ios::binary);
  ASSERT_TRUE(reader.good());
  for (int round = 0; round < 3; ++round) {
    auto out = Output::Open(path);
    ASSERT_TRUE(out.ok()) << out.status().message();
    (*out)->Write(new_bytes.data(), new_bytes.size());
    ASSERT_TRUE((*out)->Commit().ok());
    EXPECT_EQ(Entries(dir), std::vector<std::string>{"t.fb"});
    EXPECT_EQ(testing::ReadFile(path), new_bytes);
  }
  std::ostringstream seen;
  seen << reader.rdbuf();
  EXPECT_EQ(seen.str(), old_bytes);
  unlink(path.c_str());
  rmdir(dir.c_str());
}

}  // namespace
}  // namespace irt
