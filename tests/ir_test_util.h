// Helpers for the unit tests that trace testdata/ir programs with the IR
// adapter; they build only with it (tests/CMakeLists.txt).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "irt/ir/interpreter.h"
#include "irt/output.h"
#include "irt/writer.h"
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

// Traces function(args) of `module` to `out` in chunks of `chunk_nodes`.
inline Status TraceInChunks(const std::string& module, const std::string& function,
                            const std::vector<Value>& args, uint32_t chunk_nodes,
                            const std::string& out) {
  IRT_ASSIGN_OR_RETURN(ir::Module m, ir::Module::Load(module));
  ir::TrackingContext ctx;
  ir::RandomSource rs = ir::RandomSource::Seeded(1);
  ir::Interpreter interp(m, ctx, rs);
  IRT_ASSIGN_OR_RETURN(auto o, Output::Open(out));
  WriterOptions wo;
  wo.chunk_nodes = chunk_nodes;
  TraceWriter w(o.get(), wo);
  auto traced = interp.Trace(function, args, w);
  if (!traced.ok()) return traced.status();
  return o->Commit();
}

}  // namespace irt::testing
