// Writer -> reader round trips: values bit for bit, metadata, and a deep
// recursion across many chunks (graph_test.cc queries the seed's trace,
// writer_test.cc covers what the writer refuses).
#include "irt/trace.h"

#include <gtest/gtest.h>

#include <algorithm>
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

using testing::TempPath;
using testing::WriteAndOpen;

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
  // A tensor is also read in place: its elements inside the chunk's bytes,
  // 8-aligned, equal to the decoded copy; any other value has no view.
  for (size_t i = 0; i < values.size(); ++i) {
    std::optional<TensorView> tv = t.node(1 + i)->tensor();
    ASSERT_EQ(tv.has_value(), values[i].kind() == VKind::kTensor) << i;
    if (!tv) continue;
    const Tensor& want = values[i].tensor();
    EXPECT_EQ(tv->dtype, want.dtype);
    EXPECT_EQ(tv->shape, want.shape);
    ASSERT_EQ(tv->data.size(), want.data.size());
    EXPECT_TRUE(std::equal(tv->data.begin(), tv->data.end(), want.data.begin()));
    std::span<const uint8_t> chunk = t.chunk_bytes(t.chunk_of(1 + i));
    EXPECT_GE(tv->data.data(), chunk.data());
    EXPECT_LE(tv->data.data() + tv->data.size(), chunk.data() + chunk.size());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(tv->data.data()) % 8, 0u);
  }
  auto tm = t.trace_meta();
  ASSERT_EQ(tm.size(), 1u);
  EXPECT_EQ(tm[0].key, "status");
  EXPECT_EQ(tm[0].value.str(), "ok");
}

}  // namespace
}  // namespace irt
