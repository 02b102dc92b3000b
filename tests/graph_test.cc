// IRTracker's graph API (irt/graph.h) on traces built through the writer:
// the seed README's queries on f(x) = sin(x) + x, node paths, and the
// children, segments and parents of nested calls.
#include "irt/graph.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "irt/check.h"
#include "irt/trace.h"
#include "irt/writer.h"
#include "test_util.h"

namespace irt {
namespace {

using testing::TempPath;
using testing::WriteAndOpen;
using testing::WriteSeedF;

TEST(GraphTest, SeedQueriesOnF) {
  Trace t = WriteAndOpen("f.fb", WriteSeedF);
  ASSERT_EQ(t.size(), 6u);
  auto root = RootCall(t);
  ASSERT_TRUE(root.ok());
  auto body = CallBody::Load(t, *root);
  ASSERT_TRUE(body.ok()) << body.status().message();
  ASSERT_EQ(body->size(), 5u);  // @1..@5
  // referenced(node[5]) = [@4]
  EXPECT_EQ(*body->Referenced(4), (std::vector<size_t>{3}));
  // backward(node[5]) = [@4, @3, @2]
  EXPECT_EQ(*body->Backward(4), (std::vector<size_t>{3, 2, 1}));
  // referenced(node[4], numbered = true) = [2 => @3, 3 => @2]
  EXPECT_EQ(*body->ReferencedNumbered(3), (std::vector<std::pair<int, size_t>>{{2, 2}, {3, 1}}));
  // referenced(node[5], numbered = true) = [1 => @4]
  EXPECT_EQ(*body->ReferencedNumbered(4), (std::vector<std::pair<int, size_t>>{{1, 3}}));
  // dependents(node[2]) = [@3, @4]
  EXPECT_EQ(*body->Dependents(1), (std::vector<size_t>{2, 3}));
  // forward(node[2]) = [@3, @4, @5]
  EXPECT_EQ(*body->Forward(1), (std::vector<size_t>{2, 3, 4}));
  // getparent(node[4]) === node
  EXPECT_EQ(*Parent(t, (*body)[3].id), 0u);
  auto n4 = t.node((*body)[3].id);
  ASSERT_TRUE(n4.ok());
  EXPECT_EQ(n4->op(), "+");
  EXPECT_EQ(n4->location().block, 1u);
  EXPECT_EQ(n4->location().pos, 4u);
  EXPECT_EQ(n4->value().as_f64(), std::sin(1.0) + 1.0);
  auto ir = t.FunctionIR("f", 0);
  ASSERT_TRUE(ir.has_value());
  EXPECT_NE(ir->find("Main.sin(%2)"), std::string_view::npos);
  auto sum = CheckTrace(TempPath("f.fb"));
  ASSERT_TRUE(sum.ok()) << sum.status().message();
  EXPECT_EQ(sum->nodes, 6u);
  EXPECT_EQ(sum->max_depth, 1u);
  EXPECT_TRUE(sum->complete);
}

TEST(GraphTest, ParseNodePath) {
  EXPECT_EQ(*ParseNodePath(""), std::vector<uint64_t>{});
  EXPECT_EQ(*ParseNodePath("@"), std::vector<uint64_t>{});
  EXPECT_EQ(*ParseNodePath("@8/@4"), (std::vector<uint64_t>{8, 4}));
  for (const char* bad : {"@0", "8x", "@8/", "@8//@4", "@-1", "x"}) {
    auto r = ParseNodePath(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), Code::kUsage) << bad;
  }
}

// main(x) = g(x) + g(x) where g(y) = y * y: two nested calls in the root's
// body, each with its own arguments and return.
void WriteTwoCalls(TraceWriter& w) {
  const testing::CallClasses c = testing::DefineCallClasses(w);
  ClassSpec add{.kind = NodeKind::kPrimitive, .op = "+", .block = 1, .pos = 5};
  add.operands = {OperandSpec::Ref(), OperandSpec::Ref()};
  ClassId c_root = c.root, c_fn = c.fn, c_x = c.x, c_call = c.call, c_y = c.y, c_mul = c.mul,
          c_ret = c.ret, c_add = w.DefineClass(add);
  w.Append(c_root, Value(), {});                   // 0
  w.Append(c_fn, Value::Function("main"), {});     // 1  @1
  NodeId xv = w.Append(c_x, Value::F64(3.0), {});  // 2  @2
  NodeId results[2];
  for (NodeId& r : results) {
    w.Append(c_call, Value(), std::vector<NodeId>{xv});  // 3, 7  @3, @4
    NodeId yv = w.Append(c_y, Value::F64(3.0), std::vector<NodeId>{xv});
    NodeId m = w.Append(c_mul, Value::F64(9.0), std::vector<NodeId>{yv, yv});
    r = w.Append(c_ret, Value::F64(9.0), std::vector<NodeId>{m});  // 6, 10
  }
  NodeId s = w.Append(c_add, Value::F64(18.0), std::vector<NodeId>{results[0], results[1]});
  w.Append(c_ret, Value::F64(18.0), std::vector<NodeId>{s});  // 12
}

TEST(GraphTest, NestedCallsChildrenSegmentsAndParents) {
  Trace t = WriteAndOpen("calls.fb", WriteTwoCalls);
  ASSERT_EQ(t.size(), 13u);
  auto root = RootCall(t);
  ASSERT_TRUE(root.ok());
  EXPECT_EQ(root->id, 0u);
  EXPECT_EQ(root->end, 12u);
  auto kids = Children(t, *root);
  ASSERT_TRUE(kids.ok()) << kids.status().message();
  ASSERT_EQ(kids->size(), 6u);  // @1 @2, two calls, +, return
  EXPECT_TRUE((*kids)[2].is_call());
  EXPECT_EQ((*kids)[2].id, 3u);
  EXPECT_EQ((*kids)[2].end, 6u);
  EXPECT_EQ((*kids)[3].id, 7u);
  EXPECT_FALSE((*kids)[4].is_call());
  // Segments: the run @1-@2, each call, then the run @5-@6.
  auto segs = BodySegments(t, *root);
  ASSERT_TRUE(segs.ok());
  ASSERT_EQ(segs->size(), 4u);
  EXPECT_FALSE((*segs)[0].call);
  EXPECT_EQ((*segs)[0].children(), 2u);
  EXPECT_TRUE((*segs)[1].call);
  EXPECT_TRUE((*segs)[2].call);
  EXPECT_EQ((*segs)[3].first, 11u);
  EXPECT_EQ((*segs)[3].last, 12u);
  // The body of the root: a call's result is referenced through the call.
  auto body = CallBody::Load(t, *root);
  ASSERT_TRUE(body.ok());
  EXPECT_EQ(body->PositionOf(7), 3);
  EXPECT_EQ(body->PositionOf(10), 3);  // the Return closing the second call
  EXPECT_EQ(body->PositionOf(5), -1);  // inside a nested call
  EXPECT_EQ(*body->Referenced(4), (std::vector<size_t>{2, 3}));
  EXPECT_EQ(*body->Dependents(1), (std::vector<size_t>{2, 3}));
  EXPECT_EQ(*body->Forward(1), (std::vector<size_t>{2, 3, 4, 5}));
  // Parents, and paths into a nested body.
  EXPECT_EQ(*Parent(t, 5), 3u);
  EXPECT_EQ(*Parent(t, 7), 0u);
  EXPECT_EQ(*Parent(t, 0), kNoNode);
  auto inner = ResolvePath(t, "@4/@2");
  ASSERT_TRUE(inner.ok()) << inner.status().message();
  EXPECT_EQ(inner->id, 9u);
  auto missing = ResolvePath(t, "@7");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Code::kNotFound);
}

}  // namespace
}  // namespace irt
