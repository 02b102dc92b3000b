// TraceWriter (irt/writer.h): chunking, what it refuses (values every
// reader would refuse, references forward, misuse of calls), and the
// complete chunks a writer that dies leaves behind.
#include "irt/writer.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "irt/graph.h"
#include "irt/output.h"
#include "irt/trace.h"
#include "test_util.h"

namespace irt {
namespace {

using testing::TempPath;
using testing::WriteAndOpen;

TEST(WriterTest, ChunksHoldAtMostChunkNodes) {
  WriterOptions opts;
  opts.chunk_nodes = 10;
  Trace t = WriteAndOpen(
      "chunks.fb",
      [](TraceWriter& w) {
        ClassSpec root{.kind = NodeKind::kCall, .op = "p"};
        ClassSpec c{.kind = NodeKind::kConstant, .block = 1, .pos = 2};
        ClassSpec ret{.kind = NodeKind::kReturn, .block = 1, .pos = 1};
        ret.operands = {OperandSpec::Ref()};
        ClassId cr = w.DefineClass(root), cc = w.DefineClass(c), ct = w.DefineClass(ret);
        EXPECT_EQ(w.depth(), 0u);
        w.Append(cr, Value(), {});
        EXPECT_EQ(w.depth(), 1u);
        EXPECT_EQ(w.innermost_call(), 0u);
        NodeId last = 0;
        for (int i = 0; i < 45; ++i) last = w.Append(cc, Value::I64(i), {});
        EXPECT_EQ(w.next_id(), 46u);
        w.Append(ct, Value::I64(44), std::vector<NodeId>{last});
        EXPECT_EQ(w.depth(), 0u);
      },
      opts);
  EXPECT_EQ(t.size(), 47u);
  EXPECT_EQ(t.chunks().size(), 5u);  // 10 + 10 + 10 + 10 + 7
  auto n = t.node(45);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n->value().as_i64(), 44);
}

TEST(WriterTest, RefusesForwardReferencesAndUnclosedCalls) {
  auto out = Output::Open(TempPath("misuse.fb"));
  ASSERT_TRUE(out.ok());
  {
    TraceWriter w(out->get(), {});
    ClassSpec root{.kind = NodeKind::kCall, .op = "p"};
    ClassSpec use{.kind = NodeKind::kPrimitive, .op = "sin", .block = 1, .pos = 2};
    use.operands = {OperandSpec::Ref()};
    ClassId cr = w.DefineClass(root), cu = w.DefineClass(use);
    w.Append(cr, Value(), {});
    w.Append(cu, Value::F64(0), std::vector<NodeId>{5});
    ASSERT_FALSE(w.status().ok());
    EXPECT_NE(w.status().message().find("not an earlier node"), std::string::npos)
        << w.status().message();
  }
  auto out2 = Output::Open(TempPath("unclosed.fb"));
  ASSERT_TRUE(out2.ok());
  {
    TraceWriter w(out2->get(), {});
    ClassSpec root{.kind = NodeKind::kCall, .op = "p"};
    w.Append(w.DefineClass(root), Value(), {});
    Status s = w.Finish();
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.message().find("still open"), std::string::npos) << s.message();
  }
}

// The writer refuses what every reader would refuse, naming the node: a
// tensor of more than kMaxTensorDims dimensions, and a tuple whose shared
// items decode to more than the readers' cap (2^30 leaves in 31 tuples here;
// the check must stop early rather than walk them all).
TEST(WriterTest, WriterRefusesValuesReadersRefuse) {
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

TEST(WriterTest, PartialTraceKeepsCompleteChunks) {
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
