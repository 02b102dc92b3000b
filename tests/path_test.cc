// Node paths (graph/path.h): the three ways LocatePath walks a call's body
// find the same nodes and report the same errors.
#include "graph/path.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir_test_util.h"
#include "irt/graph.h"
#include "irt/trace.h"
#include "irt/writer.h"

namespace irt {
namespace {

using internal::LocatePath;
using internal::PathOf;
using internal::PathWalk;
using testing::TempPath;
using testing::TraceTestdata;

// kEnds gives what kBodies gives (node, ends, chain, position), and kScan
// the same node; an error is the same error.
void ExpectSameEverywhere(const Trace& t, const std::string& path) {
  SCOPED_TRACE(path);
  auto bodies = LocatePath(t, path, PathWalk::kBodies);
  auto ends = LocatePath(t, path, PathWalk::kEnds);
  auto scan = LocatePath(t, path, PathWalk::kScan);
  ASSERT_EQ(bodies.ok(), ends.ok());
  ASSERT_EQ(bodies.ok(), scan.ok());
  if (!bodies.ok()) {
    EXPECT_EQ(bodies.status().code(), ends.status().code());
    EXPECT_EQ(bodies.status().message(), ends.status().message());
    EXPECT_EQ(bodies.status().message(), scan.status().message());
    return;
  }
  EXPECT_EQ(bodies->node.id, ends->node.id);
  EXPECT_EQ(bodies->node.end, ends->node.end);
  EXPECT_EQ(bodies->pos, ends->pos);
  ASSERT_EQ(bodies->chain.size(), ends->chain.size());
  for (size_t i = 0; i < bodies->chain.size(); ++i) {
    EXPECT_EQ(bodies->chain[i].id, ends->chain[i].id);
    EXPECT_EQ(bodies->chain[i].end, ends->chain[i].end);
  }
  EXPECT_FALSE(ends->body.has_value());
  EXPECT_EQ(bodies->node.id, scan->node.id);
}

// Every node's path, a child one past the last of the call that holds it,
// and a step below it.
void ExpectSameForEveryNode(const Trace& t) {
  for (NodeId id = 0; id < t.size(); ++id) {
    auto path = PathOf(t, id);
    ASSERT_TRUE(path.ok()) << path.status().message();
    ExpectSameEverywhere(t, *path);
    ExpectSameEverywhere(t, (*path == "@" ? std::string() : *path + "/") + "@1");
    size_t slash = path->rfind('/');
    std::string holder = slash == std::string::npos ? "" : path->substr(0, slash + 1);
    ExpectSameEverywhere(t, holder + "@" + std::to_string(t.size() + 1));
  }
}

TEST(PathTest, EveryWalkFindsTheSameNodes) {
  struct Program {
    const char* file;
    const char* fn;
    std::vector<std::string> args;
  };
  // Calls near the start of a long body (found forward, their ends too)
  // and near its end (found back from the end).
  for (const Program& p :
       {Program{"siblings.ir", "sib", {"0.5", "3"}}, Program{"siblings.ir", "sib", {"0.5", "40"}},
        Program{"recloop.ir", "tri", {"5"}}, Program{"looprec.ir", "looprec", {"1.01", "6"}},
        Program{"h.ir", "h", {"2.0", "4"}}}) {
    SCOPED_TRACE(p.file);
    auto t = Trace::Open(TraceTestdata("path", p.file, p.fn, p.args));
    ASSERT_TRUE(t.ok()) << t.status().message();
    ExpectSameForEveryNode(*t);
  }
}

// A trace cut short inside nested calls that never close: the walk back
// from a call's end has nothing to start from, and the ends found are
// kNoNode where the trace stops first.
TEST(PathTest, EveryWalkFindsTheSameNodesInAPartialTrace) {
  std::string path = TempPath("path-partial.fb");
  {
    auto out = Output::Open(path);
    ASSERT_TRUE(out.ok());
    WriterOptions opts;
    opts.chunk_nodes = 4;
    opts.write_behind = false;
    TraceWriter w(out->get(), opts);
    ClassId call = w.DefineClass({.kind = NodeKind::kCall, .op = "p"});
    ClassId inner = w.DefineClass({.kind = NodeKind::kCall, .op = "q", .block = 1, .pos = 3});
    ClassId c = w.DefineClass({.kind = NodeKind::kConstant, .block = 1, .pos = 2});
    ClassId ret = w.DefineClass(
        {.kind = NodeKind::kReturn, .block = 1, .pos = 1, .operands = {OperandSpec::Ref()}});
    w.Append(call, Value(), {});
    w.Append(c, Value::I64(1), {});
    NodeId q = w.Append(inner, Value(), {});  // a call that returns
    NodeId v = w.Append(c, Value::I64(2), {});
    const NodeId refs[] = {v};
    w.Append(ret, Value::I64(2), refs);
    (void)q;
    w.Append(c, Value::I64(3), {});
    w.Append(inner, Value(), {});  // two calls that never return
    w.Append(c, Value::I64(4), {});
    w.Append(inner, Value(), {});
    for (int i = 0; i < 9; ++i) w.Append(c, Value::I64(5 + i), {});
    // No Finish: the full chunks are what is left.
    ASSERT_TRUE((*out)->Commit().ok());
  }
  auto t = Trace::Open(path, {.allow_partial = true});
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_GT(t->size(), 12u);
  ExpectSameForEveryNode(*t);
}

}  // namespace
}  // namespace irt
