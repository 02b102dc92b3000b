// TraceWriter (irt/writer.h): chunking, what it refuses (values every
// reader would refuse, references forward, misuse of calls), and the
// complete chunks a writer that dies leaves behind.
#include "irt/writer.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "irt/check.h"
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

// AppendScalar writes the same bytes as Append: a loop x_{k+1} = x_k * 2
// with its counter and comparison, across chunk boundaries, once through
// each path.
TEST(WriterTest, AppendScalarWritesWhatAppendWrites) {
  auto body = [](bool fast) {
    return [fast](TraceWriter& w) {
      ClassSpec root{.kind = NodeKind::kCall, .op = "p"};
      ClassSpec arg{.kind = NodeKind::kArgument, .block = 1, .pos = 1};
      ClassSpec mul{.kind = NodeKind::kPrimitive, .op = "*", .block = 2, .pos = 3};
      mul.operands = {OperandSpec::Ref(), OperandSpec::Literal(Value::F64(2.0))};
      ClassSpec lt{.kind = NodeKind::kPrimitive, .op = "<", .block = 2, .pos = 4};
      lt.operands = {OperandSpec::Ref(), OperandSpec::Ref()};
      ClassSpec ret{.kind = NodeKind::kReturn, .block = 2, .pos = 1};
      ret.operands = {OperandSpec::Ref()};
      ClassId cr = w.DefineClass(root), ca = w.DefineClass(arg), cm = w.DefineClass(mul),
              cl = w.DefineClass(lt), ct = w.DefineClass(ret);
      w.Append(cr, Value(), {});
      NodeId x = w.Append(ca, Value::F64(1.0), {});
      NodeId lim = w.Append(ca, Value::F64(1e300), {});
      double v = 1.0;
      for (int k = 0; k < 100; ++k) {
        v *= 2.0;
        NodeId y, c;
        if (fast) {
          y = w.AppendScalar(cm, VKind::kF64, Value::F64(v).bits(), {x});
          c = w.AppendScalar(cl, VKind::kBool, 1, {y, lim});
        } else {
          y = w.Append(cm, Value::F64(v), std::vector<NodeId>{x});
          c = w.Append(cl, Value::Bool(true), std::vector<NodeId>{y, lim});
        }
        EXPECT_EQ(c, y + 1);
        x = y;
      }
      w.Append(ct, Value::F64(v), std::vector<NodeId>{x});
    };
  };
  WriterOptions opts;
  opts.chunk_nodes = 7;
  std::string slow = testing::WriteTrace("slow.fb", body(false), opts);
  std::string fast = testing::WriteTrace("fast.fb", body(true), opts);
  EXPECT_EQ(testing::ReadFile(slow), testing::ReadFile(fast));
  auto t = Trace::Open(fast);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->size(), 204u);
  EXPECT_GT(t->chunks().size(), 20u);
}

// The same for calls: call markers, Returns (which close the call they
// end) and a Function-valued %1 shared by every call, across chunk
// boundaries; the trace is one the checker accepts.
TEST(WriterTest, AppendScalarWritesWhatAppendWritesForCalls) {
  auto body = [](bool fast) {
    return [fast](TraceWriter& w) {
      const testing::CallClasses c = testing::DefineCallClasses(w);
      ClassId c_root = c.root, c_fn = c.fn, c_x = c.x, c_call = c.call, c_y = c.y, c_mul = c.mul,
              c_ret = c.ret;
      const Value g = Value::Function("g");
      w.Append(c_root, Value(), {});
      w.Append(c_fn, Value::Function("main"), {});
      NodeId xv = w.Append(c_x, Value::F64(3.0), {});
      NodeId last = xv;
      for (int k = 0; k < 40; ++k) {
        NodeId m, r;
        if (fast) {
          w.AppendScalar(c_call, VKind::kNone, 0, {xv});
          w.Append(c_fn, g, {});
          NodeId yv = w.AppendScalar(c_y, VKind::kF64, Value::F64(3.0).bits(), {xv});
          m = w.AppendScalar(c_mul, VKind::kF64, Value::F64(9.0).bits(), {yv, yv});
          r = w.AppendScalar(c_ret, VKind::kF64, Value::F64(9.0).bits(), {m});
        } else {
          w.Append(c_call, Value(), std::vector<NodeId>{xv});
          w.Append(c_fn, Value::Function("g"), {});
          NodeId yv = w.Append(c_y, Value::F64(3.0), std::vector<NodeId>{xv});
          m = w.Append(c_mul, Value::F64(9.0), std::vector<NodeId>{yv, yv});
          r = w.Append(c_ret, Value::F64(9.0), std::vector<NodeId>{m});
        }
        EXPECT_EQ(r, m + 1);
        last = r;
      }
      w.Append(c_ret, Value::F64(9.0), std::vector<NodeId>{last});
    };
  };
  WriterOptions opts;
  opts.chunk_nodes = 7;
  std::string slow = testing::WriteTrace("calls_slow.fb", body(false), opts);
  std::string fast = testing::WriteTrace("calls_fast.fb", body(true), opts);
  EXPECT_EQ(testing::ReadFile(slow), testing::ReadFile(fast));
  auto sum = CheckTrace(fast);
  ASSERT_TRUE(sum.ok()) << sum.status().message();
  auto t = Trace::Open(fast);
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->size(), 3u + 40u * 5u + 1u);
  EXPECT_GT(t->chunks().size(), 20u);
}

// A String or Function value that its class's last node in the chunk had
// is appended without encoding it again; every node still reads back its
// own value and kind, whatever the repeats, the changes, a string and a
// function of the same name in one class, and the chunk boundaries.
TEST(WriterTest, RepeatedStringsReadBackAsWritten) {
  std::vector<Value> values;
  const char* names[] = {"f", "f", "g", "f", "f", "f", "", "", "g"};
  for (int round = 0; round < 4; ++round) {
    for (const char* n : names) {
      values.push_back(Value::String(n));
      values.push_back(Value::Function(n));
      values.push_back(values.back());  // the same heap object again
    }
  }
  WriterOptions opts;
  opts.chunk_nodes = 5;
  std::string path = testing::WriteTrace(
      "strings.fb",
      [&](TraceWriter& w) {
        const testing::ConstantClasses c = testing::DefineConstantClasses(w);
        w.Append(c.root, Value(), {});
        NodeId last = 0;
        for (const Value& v : values) last = w.Append(c.constant, v, {});
        w.Append(c.ret, Value::I64(0), std::vector<NodeId>{last});
      },
      opts);
  auto t = Trace::Open(path);
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->size(), values.size() + 2);
  for (size_t i = 0; i < values.size(); ++i) {
    auto n = t->node(i + 1);
    ASSERT_TRUE(n.ok()) << n.status().message();
    EXPECT_EQ(n->value().kind(), values[i].kind()) << "node " << i + 1;
    EXPECT_EQ(n->value().str(), values[i].str()) << "node " << i + 1;
  }
}

// A writer whose root p has opened, with the classes of a call of q and
// of a Return whose operand is the literal `ret`.
struct CallingWriter {
  std::unique_ptr<Output> out;
  std::unique_ptr<TraceWriter> w;
  ClassId root = 0, call = 0, ret = 0;
};
CallingWriter OpenCallingWriter(const std::string& name, const Value& ret_value) {
  CallingWriter c;
  auto out = Output::Open(TempPath(name));
  EXPECT_TRUE(out.ok());
  c.out = std::move(out).value();
  c.w = std::make_unique<TraceWriter>(c.out.get(), WriterOptions{});
  ClassSpec root{.kind = NodeKind::kCall, .op = "p"};
  ClassSpec call{.kind = NodeKind::kCall, .op = "q", .block = 1, .pos = 1};
  ClassSpec ret{.kind = NodeKind::kReturn, .block = 1, .pos = 1};
  ret.operands = {OperandSpec::Literal(ret_value)};
  c.root = c.w->DefineClass(root);
  c.call = c.w->DefineClass(call);
  c.ret = c.w->DefineClass(ret);
  c.w->Append(c.root, Value(), {});
  return c;
}

// A Return on the fast path keeps Append's check that a call is open.
TEST(WriterTest, AppendScalarReturnWithoutOpenCallIsRefused) {
  CallingWriter c = OpenCallingWriter("fastclose.fb", Value::F64(1.0));
  TraceWriter& w = *c.w;
  ClassId cc = c.call, ct = c.ret;
  w.AppendScalar(cc, VKind::kNone, 0, nullptr, 0);
  w.AppendScalar(ct, VKind::kF64, Value::F64(1.0).bits(), nullptr, 0);  // staged: now fast
  w.AppendScalar(cc, VKind::kNone, 0, nullptr, 0);                      // fast: opens
  EXPECT_EQ(w.depth(), 2u);
  w.AppendScalar(ct, VKind::kF64, Value::F64(1.0).bits(), nullptr, 0);  // fast: closes q
  w.AppendScalar(ct, VKind::kF64, Value::F64(1.0).bits(), nullptr, 0);  // closes the root
  ASSERT_TRUE(w.status().ok()) << w.status().message();
  EXPECT_EQ(w.depth(), 0u);
  w.AppendScalar(ct, VKind::kF64, Value::F64(1.0).bits(), nullptr, 0);
  ASSERT_FALSE(w.status().ok());
  EXPECT_NE(w.status().message().find("closes a call but none is open"), std::string::npos)
      << w.status().message();
}

// A Bool's bits are checked on the fast path too: for a comparison and for
// a call's Return.
TEST(WriterTest, AppendScalarReturnOfABoolKeepsItsCheck) {
  CallingWriter c = OpenCallingWriter("fastbool.fb", Value::Bool(true));
  TraceWriter& w = *c.w;
  ClassId cc = c.call, ct = c.ret;
  w.AppendScalar(cc, VKind::kNone, 0, nullptr, 0);
  w.AppendScalar(ct, VKind::kBool, 1, nullptr, 0);  // staged: now fast
  w.AppendScalar(cc, VKind::kNone, 0, nullptr, 0);
  ASSERT_TRUE(w.status().ok()) << w.status().message();
  w.AppendScalar(ct, VKind::kBool, 2, nullptr, 0);
  ASSERT_FALSE(w.status().ok());
  EXPECT_NE(w.status().message().find("a Bool's bits must be 0 or 1"), std::string::npos)
      << w.status().message();

  auto out2 = Output::Open(TempPath("fastbool2.fb"));
  ASSERT_TRUE(out2.ok());
  TraceWriter w2(out2->get(), {});
  ClassSpec lt{.kind = NodeKind::kPrimitive, .op = "<", .block = 1, .pos = 1};
  lt.operands = {OperandSpec::Literal(Value::F64(1.0)), OperandSpec::Literal(Value::F64(2.0))};
  ClassSpec root{.kind = NodeKind::kCall, .op = "p"};
  ClassId cr2 = w2.DefineClass(root), cl = w2.DefineClass(lt);
  w2.Append(cr2, Value(), {});
  w2.AppendScalar(cl, VKind::kBool, 1, nullptr, 0);  // staged: now fast
  ASSERT_TRUE(w2.status().ok());
  w2.AppendScalar(cl, VKind::kBool, 2, nullptr, 0);
  ASSERT_FALSE(w2.status().ok());
  EXPECT_NE(w2.status().message().find("a Bool's bits must be 0 or 1"), std::string::npos)
      << w2.status().message();
}

// The fast path keeps Append's checks: a reference to a later node, the
// wrong number of references and a value kind that is not a scalar are
// refused with Append's messages, and nothing is appended after an error.
TEST(WriterTest, AppendScalarRefusesMisuse) {
  struct Case {
    VKind vk;
    std::vector<NodeId> refs;
    const char* message;
  };
  for (const Case& c :
       {Case{VKind::kF64, {7}, "not an earlier node"}, Case{VKind::kF64, {}, "its class needs 1"},
        Case{VKind::kTensor, {1}, "is not a scalar"}}) {
    auto out = Output::Open(TempPath("fastmisuse.fb"));
    ASSERT_TRUE(out.ok());
    TraceWriter w(out->get(), {});
    ClassSpec root{.kind = NodeKind::kCall, .op = "p"};
    ClassSpec arg{.kind = NodeKind::kArgument, .block = 1, .pos = 1};
    ClassSpec sin{.kind = NodeKind::kPrimitive, .op = "sin", .block = 1, .pos = 2};
    sin.operands = {OperandSpec::Ref()};
    ClassId cr = w.DefineClass(root), ca = w.DefineClass(arg), cs = w.DefineClass(sin);
    w.Append(cr, Value(), {});
    NodeId x = w.AppendScalar(ca, VKind::kF64, Value::F64(0.5).bits(), {});
    w.AppendScalar(cs, VKind::kF64, 0, {x});  // the class is now on the fast path
    ASSERT_TRUE(w.status().ok());
    w.AppendScalar(cs, c.vk, 0, c.refs.data(), static_cast<uint32_t>(c.refs.size()));
    ASSERT_FALSE(w.status().ok());
    EXPECT_NE(w.status().message().find(c.message), std::string::npos) << w.status().message();
    NodeId next = w.next_id();
    w.AppendScalar(cs, VKind::kF64, 0, {x});
    EXPECT_EQ(w.next_id(), next);
  }
}

// A writer that dies without Finish leaves its full chunks readable. Writing
// behind, the last full chunk may still be in flight while the writer
// lives: it is written by the time the writer is gone.
TEST(WriterTest, PartialTraceKeepsCompleteChunks) {
  for (bool behind : {false, true}) {
    std::string path = TempPath("partial.fb");
    {
      auto out = Output::Open(path);
      ASSERT_TRUE(out.ok());
      {
        WriterOptions opts;
        opts.chunk_nodes = 10;
        opts.write_behind = behind;
        TraceWriter w(out->get(), opts);
        ClassSpec root{.kind = NodeKind::kCall, .op = "p"};
        ClassSpec c{.kind = NodeKind::kConstant, .block = 1, .pos = 2};
        ClassId cr = w.DefineClass(root), cc = w.DefineClass(c);
        w.Append(cr, Value(), {});
        for (int i = 0; i < 35; ++i) w.Append(cc, Value::I64(i), {});
        // The writer "dies": no Finish().
        if (!behind) {
          ASSERT_TRUE((*out)->Commit().ok());
        }
      }
      if (behind) {
        ASSERT_TRUE((*out)->Commit().ok());
      }
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
}

// Writing behind changes when chunks are written, not what: the same nodes,
// tensors, strings, metadata and function facts give the same bytes.
TEST(WriterTest, WritingBehindWritesTheSameBytes) {
  auto write = [](bool behind, uint16_t format) {
    std::string path = TempPath("behind.fb");
    auto out = Output::Open(path);
    EXPECT_TRUE(out.ok());
    {
      WriterOptions opts;
      opts.chunk_nodes = 7;
      opts.write_behind = behind;
      opts.format_major = format;
      TraceWriter w(out->get(), opts);
      w.RegisterFunction("p", "function p\nend\n");
      ClassSpec root{.kind = NodeKind::kCall, .op = "p"};
      ClassSpec c{.kind = NodeKind::kConstant, .block = 1, .pos = 2};
      ClassSpec add{.kind = NodeKind::kPrimitive,
                    .op = "+",
                    .block = 1,
                    .pos = 3,
                    .operands = {OperandSpec::Ref(), OperandSpec::Ref()}};
      ClassSpec ret{
          .kind = NodeKind::kReturn, .block = 1, .pos = 4, .operands = {OperandSpec::Ref()}};
      ClassId cr = w.DefineClass(root), cc = w.DefineClass(c), ca = w.DefineClass(add),
              ct = w.DefineClass(ret);
      NodeId m = w.Append(cr, Value(), {});
      NodeId acc = w.Append(cc, Value::F64(0.5), {});
      Value tensor = Value::MakeTensor(Tensor::Zeros(DType::kF64, {3}));
      for (int i = 0; i < 200; ++i) {
        NodeId k = w.Append(cc, i % 5 == 0 ? tensor : Value::F64(i * 0.25), {});
        NodeId two[] = {acc, k};
        if (i % 5 != 0) acc = w.Append(ca, Value::F64(i * 0.75), two);
        if (i % 17 == 0) w.AddMeta("step", Value::I64(i));
      }
      (void)m;
      NodeId one[] = {acc};
      w.Append(ct, Value::F64(1.5), one);
      w.AddTraceMeta("note", Value::String("behind"));
      EXPECT_TRUE(w.Finish().ok()) << w.status().message();
    }
    EXPECT_TRUE((*out)->Commit().ok());
    return testing::ReadFile(path);
  };
  for (uint16_t format : {uint16_t{1}, uint16_t{2}}) {
    std::string a = write(false, format), b = write(true, format);
    EXPECT_GT(a.size(), 1000u);
    EXPECT_EQ(a, b) << "format " << format;
  }
}

// A chunk whose references outgrow the staging buffer's first block
// (2^19 of them) keeps every reference, written behind or not.
TEST(WriterTest, ReferencesBeyondTheFirstBufferReadBack) {
  constexpr int kNodes = 80000;  // 8 references each: 640,000 in one chunk
  for (bool behind : {false, true}) {
    WriterOptions opts;
    opts.chunk_nodes = 1u << 20;
    opts.write_behind = behind;
    Trace t = WriteAndOpen(
        "refs.fb",
        [](TraceWriter& w) {
          ClassSpec root{.kind = NodeKind::kCall, .op = "p"};
          ClassSpec c{.kind = NodeKind::kConstant, .block = 1, .pos = 2};
          ClassSpec sum{.kind = NodeKind::kPrimitive, .op = "+", .block = 1, .pos = 3};
          sum.operands.assign(8, OperandSpec::Ref());
          ClassSpec ret{
              .kind = NodeKind::kReturn, .block = 1, .pos = 4, .operands = {OperandSpec::Ref()}};
          ClassId cr = w.DefineClass(root), cc = w.DefineClass(c), cs = w.DefineClass(sum),
                  ct = w.DefineClass(ret);
          w.Append(cr, Value(), {});
          std::vector<NodeId> last(8);
          for (int i = 0; i < 8; ++i) last[i] = w.Append(cc, Value::F64(i), {});
          for (int k = 0; k < kNodes; ++k) {
            NodeId n = w.Append(cs, Value::F64(k), last);
            std::rotate(last.begin(), last.begin() + 1, last.end());
            last.back() = n;
          }
          w.Append(ct, Value::F64(0), std::vector<NodeId>{last.back()});
        },
        opts);
    ASSERT_EQ(t.chunks().size(), 1u);
    // Node 9 + k references the 8 nodes before it.
    for (NodeId id : {NodeId{9}, NodeId{70000}, NodeId{8 + kNodes}}) {
      auto n = t.node(id);
      ASSERT_TRUE(n.ok());
      std::vector<NodeId> want;
      for (NodeId r = id - 8; r < id; ++r) want.push_back(r);
      EXPECT_EQ(n->refs(), want) << "node " << id << (behind ? ", written behind" : "");
    }
    auto checked = CheckTrace(TempPath("refs.fb"));
    EXPECT_TRUE(checked.ok()) << checked.status().message();
  }
}

}  // namespace
}  // namespace irt
