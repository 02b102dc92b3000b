// Helpers for the unit tests that trace testdata/ir programs with the IR
// adapter; they build only with it (tests/CMakeLists.txt).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "irt/ir/interpreter.h"
#include "irt/output.h"
#include "test_util.h"

namespace irt::testing {

// Traces function `fn` of testdata/ir/`file` at `args` (and the random
// values `rand`, if given) into a temporary file named after `prefix` and
// `file`; returns its path.
inline std::string TraceTestdata(const std::string& prefix, const std::string& file,
                                 const std::string& fn, std::vector<std::string> args,
                                 std::optional<std::string> rand = std::nullopt) {
  ir::TraceRequest req;
  req.module_path = std::string(IRT_SOURCE_DIR) + "/testdata/ir/" + file;
  req.function = fn;
  req.args = std::move(args);
  req.rand_values = std::move(rand);
  auto job = ir::TraceJob::Prepare(req);
  EXPECT_TRUE(job.ok()) << job.status().message();
  std::string path = TempPath(prefix + "-" + file + ".fb");
  if (!job.ok()) return path;
  auto out = Output::Open(path);
  EXPECT_TRUE(out.ok());
  if (!out.ok()) return path;
  EXPECT_TRUE(job->Run(**out).ok());
  EXPECT_TRUE((*out)->Commit().ok());
  return path;
}

}  // namespace irt::testing
