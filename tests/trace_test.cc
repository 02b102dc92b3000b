// Writer -> reader round trips, chunking, and IRTracker's graph queries on
// the seed README's f(x) = sin(x) + x trace, built through the writer API.
#include "irt/trace.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>

#include "irt/check.h"
#include "irt/graph.h"
#include "irt/output.h"
#include "irt/writer.h"
#include "test_util.h"

namespace irt {
namespace {

std::string TempPath(const std::string& name) { return irt::testing::TempPath(name); }

// Writes f(x) = sin(x) + x at x = 1.0 as IRTracker records it.
void WriteF(TraceWriter& w) {
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

Trace WriteAndOpen(const std::string& name, const std::function<void(TraceWriter&)>& body,
                   WriterOptions opts = {}) {
  std::string path = TempPath(name);
  auto out = Output::Open(path);
  EXPECT_TRUE(out.ok());
  {
    TraceWriter w(out->get(), opts);
    body(w);
    EXPECT_TRUE(w.Finish().ok()) << w.status().message();
  }
  EXPECT_TRUE((*out)->Commit().ok());
  auto t = Trace::Open(path);
  EXPECT_TRUE(t.ok()) << t.status().message();
  return std::move(t).value();
}

TEST(TraceTest, SeedQueriesOnF) {
  Trace t = WriteAndOpen("f.fb", WriteF);
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

// A recursion 10^5 calls deep with tiny chunks: navigation, parents and
// checks work across chunk boundaries and never recurse.
TEST(TraceTest, DeepRecursionAcrossChunks) {
  constexpr int kDepth = 100000;
  WriterOptions opts;
  opts.chunk_nodes = 1000;
  Trace t = WriteAndOpen(
      "deep.fb",
      [&](TraceWriter& w) {
        ClassSpec call{.kind = NodeKind::kCall, .op = "g", .block = 1, .pos = 3};
        call.operands = {OperandSpec::Ref()};
        ClassSpec arg{.kind = NodeKind::kArgument, .block = 1, .pos = 2};
        arg.operands = {OperandSpec::Ref()};
        ClassSpec ret{.kind = NodeKind::kReturn, .block = 1, .pos = 1};
        ret.operands = {OperandSpec::Ref()};
        ClassSpec root{.kind = NodeKind::kCall, .op = "g"};
        root.operands = {OperandSpec::Literal(Value::I64(0))};
        ClassSpec arg0{.kind = NodeKind::kArgument, .block = 1, .pos = 2};
        ClassId c_call = w.DefineClass(call), c_arg = w.DefineClass(arg),
                c_ret = w.DefineClass(ret), c_root = w.DefineClass(root),
                c_arg0 = w.DefineClass(arg0);
        w.Append(c_root, Value(), {});
        NodeId a = w.Append(c_arg0, Value::I64(0), {});
        for (int d = 1; d < kDepth; ++d) {
          w.Append(c_call, Value(), std::vector<NodeId>{a});
          a = w.Append(c_arg, Value::I64(d), std::vector<NodeId>{a});
        }
        NodeId r = a;
        for (int d = 0; d < kDepth; ++d) {
          r = w.Append(c_ret, Value::I64(kDepth - 1), std::vector<NodeId>{r});
        }
      },
      opts);
  EXPECT_EQ(t.chunks().size(), 300u);  // 300,000 nodes in chunks of 1,000
  auto root = RootCall(t);
  ASSERT_TRUE(root.ok());
  auto kids = Children(t, *root);
  ASSERT_TRUE(kids.ok());
  ASSERT_EQ(kids->size(), 3u);  // arg, nested call, return
  EXPECT_TRUE((*kids)[1].is_call());
  auto deep = ResolvePath(t, "@2/@2/@2/@1");
  ASSERT_TRUE(deep.ok()) << deep.status().message();
  auto v = t.node(deep->id);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->value().as_i64(), 3);
  auto sum = CheckTrace(TempPath("deep.fb"));
  ASSERT_TRUE(sum.ok()) << sum.status().message();
  EXPECT_EQ(sum->max_depth, static_cast<uint64_t>(kDepth));
  EXPECT_EQ(sum->chunks, t.chunks().size());
}

TEST(TraceTest, ValuesRoundTripExactly) {
  std::vector<Value> values = {
      Value::F64(0.1),
      Value::F64(-0.0),
      Value::F64(std::nan("")),
      Value::F64(5e-324),
      Value::F32(1.5f),
      Value::I64(-9007199254740993LL),
      Value::Bool(true),
      Value::Nothing(),
      Value::String("β \"quoted\""),
      Value::MakeTensor(Tensor::FromF64({2, 3}, std::vector<double>{1, 2, 3, 4, 5, 6.25})),
      Value::MakeTuple({Value::I64(1), Value::MakeTuple({Value::F64(2.0), Value::String("x")})})};
  Trace t = WriteAndOpen("values.fb", [&](TraceWriter& w) {
    ClassSpec root{.kind = NodeKind::kCall, .op = "v"};
    ClassSpec c{.kind = NodeKind::kConstant, .block = 1, .pos = 2};
    ClassSpec ret{.kind = NodeKind::kReturn, .block = 1, .pos = 1};
    ret.operands = {OperandSpec::Literal(Value::Nothing())};
    ClassId cr = w.DefineClass(root), cc = w.DefineClass(c), ct = w.DefineClass(ret);
    w.Append(cr, Value(), {});
    for (const Value& v : values) {
      w.Append(cc, v, {});
      w.AddMeta("copy", v);
    }
    w.Append(ct, Value::Nothing(), {});
    w.AddTraceMeta("status", Value::String("ok"));
  });
  for (size_t i = 0; i < values.size(); ++i) {
    auto n = t.node(1 + i);
    ASSERT_TRUE(n.ok());
    EXPECT_TRUE(BitEqual(n->value(), values[i])) << i;
    auto m = n->meta("copy");
    ASSERT_TRUE(m.has_value());
    EXPECT_TRUE(BitEqual(*m, values[i])) << i;
  }
  auto tm = t.trace_meta();
  ASSERT_EQ(tm.size(), 1u);
  EXPECT_EQ(tm[0].key, "status");
  EXPECT_EQ(tm[0].value.str(), "ok");
}

// The writer refuses what every reader would refuse, naming the node: a
// tensor of more than kMaxTensorDims dimensions, and a tuple whose shared
// items decode to more than the readers' cap (2^30 leaves in 31 tuples here;
// the check must stop early rather than walk them all).
TEST(TraceTest, WriterRefusesValuesReadersRefuse) {
  Tensor deep;
  deep.shape.assign(kMaxTensorDims + 1, 1);
  deep.data.assign(8, 0);
  Value bomb = Value::F64(1.0);
  for (int i = 0; i < 30; ++i) bomb = Value::MakeTuple({bomb, bomb});
  for (const Value& v : {Value::MakeTensor(deep), bomb}) {
    auto out = Output::Open(TempPath("refused.fb"));
    ASSERT_TRUE(out.ok());
    TraceWriter w(out->get(), {});
    ClassSpec root{.kind = NodeKind::kCall, .op = "v"};
    ClassSpec c{.kind = NodeKind::kConstant, .block = 1, .pos = 2};
    ClassId cr = w.DefineClass(root), cc = w.DefineClass(c);
    w.Append(cr, Value(), {});
    w.Append(cc, v, {});
    ASSERT_FALSE(w.status().ok());
    EXPECT_EQ(w.status().message().rfind("node 1: ", 0), 0u) << w.status().message();
  }
}

TEST(TraceTest, PartialTraceKeepsCompleteChunks) {
  std::string path = TempPath("partial.fb");
  {
    auto out = Output::Open(path);
    ASSERT_TRUE(out.ok());
    WriterOptions opts;
    opts.chunk_nodes = 10;
    TraceWriter w(out->get(), opts);
    ClassSpec root{.kind = NodeKind::kCall, .op = "p"};
    ClassSpec c{.kind = NodeKind::kConstant, .block = 1, .pos = 2};
    ClassId cr = w.DefineClass(root), cc = w.DefineClass(c);
    w.Append(cr, Value(), {});
    for (int i = 0; i < 35; ++i) w.Append(cc, Value::I64(i), {});
    // The writer "dies": no Finish().
    ASSERT_TRUE((*out)->Commit().ok());
  }
  auto strict = Trace::Open(path);
  ASSERT_FALSE(strict.ok());
  EXPECT_NE(strict.error().message().find("incomplete"), std::string::npos);
  auto t = Trace::Open(path, {.allow_partial = true});
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->size(), 30u);
  auto root = RootCall(*t);
  ASSERT_TRUE(root.ok());
  auto kids = Children(*t, *root);
  ASSERT_TRUE(kids.ok());
  EXPECT_EQ(kids->size(), 29u);
}

}  // namespace
}  // namespace irt
