// Helpers shared by the unit tests. Nothing here needs an adapter: traces
// are built through TraceWriter directly (ir_test_util.h traces IR
// programs with the IR adapter).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "irt/output.h"
#include "irt/trace.h"
#include "irt/writer.h"

namespace irt::testing {

// Temporary file names. ctest runs every test case in its own process,
// several at once, so names carry the process id: two cases that write
// "out.fb" never share a file.
inline std::string TempPath(std::string_view name) {
  return ::testing::TempDir() + "/irt" + std::to_string(getpid()) + "-" + std::string(name);
}

// The trace at `path`, opened or the test fails (partial: a trace whose
// writer stopped before its footer).
inline Trace OpenTrace(const std::string& path, bool partial = false) {
  auto t = Trace::Open(path, {.allow_partial = partial});
  EXPECT_TRUE(t.ok()) << t.status().message();
  return std::move(t).value();
}

// The regular files of directory `d`, sorted, without hidden ones (none if
// there is no such directory): a fuzzer's corpus or regressions.
inline std::vector<std::filesystem::path> FilesIn(const std::filesystem::path& d) {
  namespace fs = std::filesystem;
  std::vector<fs::path> out;
  if (!fs::is_directory(d)) return out;
  for (const auto& e : fs::directory_iterator(d)) {
    if (e.is_regular_file() && e.path().filename().string()[0] != '.') out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The bytes of a file ("" if it cannot be read): one bulk copy (an
// istreambuf_iterator reads a byte per call, slow in a -O0 test build).
inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs a fuzzer's body on every file of `dir` (FilesIn; at least
// `min_files` of them): its seeds, or the inputs that once crashed or hung
// it. A hang must stay fixed too: seconds, not the minutes it took.
// Generous, as no test may depend on the machine's speed: the slowest
// input (a tuple of 2^24 shared leaves, exported as text) takes 6.5 s in a
// release build and 14 s under the sanitizers on a 2-core virtual machine
// whose page faults cost 13 us each.
inline void ReplayInputs(const std::filesystem::path& dir, size_t min_files,
                         void (*body)(const uint8_t* data, size_t size)) {
  std::vector<std::filesystem::path> files = FilesIn(dir);
  EXPECT_GE(files.size(), min_files) << dir;
  for (const std::filesystem::path& f : files) {
    const std::string bytes = ReadFile(f.string());
    auto start = std::chrono::steady_clock::now();
    body(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_LT(s, 45.0) << f.filename();
  }
}

// Writes f(x) = sin(x) + x at x = 1.0 as IRTracker records it (the seed
// README's example): @1 the function, @2 x, @3 sin, @4 +, @5 return.
inline void WriteSeedF(TraceWriter& w) {
  ClassSpec root{.kind = NodeKind::kCall, .op = "f"};
  root.operands = {OperandSpec::Literal(Value::F64(1.0))};
  ClassSpec a1{.kind = NodeKind::kArgument, .block = 1, .pos = 1};
  ClassSpec a2{.kind = NodeKind::kArgument, .block = 1, .pos = 2};
  ClassSpec sin{.kind = NodeKind::kPrimitive, .op = "sin", .block = 1, .pos = 3};
  sin.operands = {OperandSpec::Ref()};
  ClassSpec add{.kind = NodeKind::kPrimitive, .op = "+", .block = 1, .pos = 4};
  add.operands = {OperandSpec::Ref(), OperandSpec::Ref()};
  ClassSpec ret{.kind = NodeKind::kReturn, .block = 1, .pos = 1};
  ret.operands = {OperandSpec::Ref()};
  ClassId c_root = w.DefineClass(root), c_a1 = w.DefineClass(a1), c_a2 = w.DefineClass(a2),
          c_sin = w.DefineClass(sin), c_add = w.DefineClass(add), c_ret = w.DefineClass(ret);
  w.RegisterFunction("f", "1: (%1, %2)\n  %3 = Main.sin(%2)\n  %4 = %3 + %2\n  return %4\n");
  NodeId m = w.Append(c_root, Value(), {});
  w.Append(c_a1, Value::Function("f"), {});
  NodeId x = w.Append(c_a2, Value::F64(1.0), {});
  NodeId s = w.Append(c_sin, Value::F64(std::sin(1.0)), std::vector<NodeId>{x});
  NodeId y = w.Append(c_add, Value::F64(std::sin(1.0) + 1.0), std::vector<NodeId>{s, x});
  w.Append(c_ret, Value::F64(std::sin(1.0) + 1.0), std::vector<NodeId>{y});
  EXPECT_EQ(m, 0u);
}

// The classes of main(x) calling g(y) = y * y: the root (x = 3.0 as its
// literal), main's %1 and x, the call of g with x, g's y, y * y, and a
// Return of a reference (for either function).
// A root call p whose body is Constants (%2 of block 1) and a Return of
// one of them.
struct ConstantClasses {
  ClassId root, constant, ret;
};
inline ConstantClasses DefineConstantClasses(TraceWriter& w) {
  ClassSpec root{.kind = NodeKind::kCall, .op = "p"};
  ClassSpec c{.kind = NodeKind::kConstant, .block = 1, .pos = 2};
  ClassSpec ret{.kind = NodeKind::kReturn, .block = 1, .pos = 1};
  ret.operands = {OperandSpec::Ref()};
  return {w.DefineClass(root), w.DefineClass(c), w.DefineClass(ret)};
}

struct CallClasses {
  ClassId root, fn, x, call, y, mul, ret;
};
inline CallClasses DefineCallClasses(TraceWriter& w) {
  ClassSpec root{.kind = NodeKind::kCall, .op = "main"};
  root.operands = {OperandSpec::Literal(Value::F64(3.0))};
  ClassSpec fn{.kind = NodeKind::kArgument, .block = 1, .pos = 1};
  ClassSpec x{.kind = NodeKind::kArgument, .block = 1, .pos = 2};
  ClassSpec call{.kind = NodeKind::kCall, .op = "g", .block = 1, .pos = 3};
  call.operands = {OperandSpec::Ref()};
  ClassSpec y{.kind = NodeKind::kArgument, .block = 1, .pos = 2};
  y.operands = {OperandSpec::Ref()};
  ClassSpec mul{.kind = NodeKind::kPrimitive, .op = "*", .block = 1, .pos = 3};
  mul.operands = {OperandSpec::Ref(), OperandSpec::Ref()};
  ClassSpec ret{.kind = NodeKind::kReturn, .block = 1, .pos = 1};
  ret.operands = {OperandSpec::Ref()};
  return {w.DefineClass(root), w.DefineClass(fn),  w.DefineClass(x),  w.DefineClass(call),
          w.DefineClass(y),    w.DefineClass(mul), w.DefineClass(ret)};
}

// Writes a trace with `body` to the temporary file `name`; returns its path.
inline std::string WriteTrace(const std::string& name,
                              const std::function<void(TraceWriter&)>& body,
                              WriterOptions opts = {}) {
  std::string path = TempPath(name);
  auto out = Output::Open(path);
  EXPECT_TRUE(out.ok());
  if (!out.ok()) return path;
  {
    TraceWriter w(out->get(), opts);
    body(w);
    Status s = w.Finish();
    EXPECT_TRUE(s.ok()) << s.message();
  }
  EXPECT_TRUE((*out)->Commit().ok());
  return path;
}

// WriteTrace, then opens the trace.
inline Trace WriteAndOpen(const std::string& name, const std::function<void(TraceWriter&)>& body,
                          WriterOptions opts = {}) {
  auto t = Trace::Open(WriteTrace(name, body, opts));
  EXPECT_TRUE(t.ok()) << t.status().message();
  return std::move(t).value();
}

}  // namespace irt::testing
