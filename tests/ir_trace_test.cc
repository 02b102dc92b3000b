// Tracing IR through the writer and reading the result back: the seed
// programs' node kinds, values, references and locations; contexts (depth
// limit, primitives, metadata); runtime errors that still leave a complete
// trace; deep recursion.
#include <gtest/gtest.h>

#include <optional>
#include <set>

#include "irt/check.h"
#include "irt/ir/interpreter.h"
#include "irt/output.h"
#include "irt/trace.h"
#include "irt/writer.h"
#include "test_util.h"

namespace irt::ir {
namespace {

std::string Testdata(const std::string& name) {
  return std::string(IRT_SOURCE_DIR) + "/testdata/ir/" + name;
}

struct Traced {
  Status status;  // of Interpreter::Trace
  Value result;
  std::string path;
  std::optional<irt::Trace> trace;
};

Traced TraceFile(const std::string& file, const std::string& fn, std::vector<Value> args,
                 ContextOptions copts = {}, RandomSource random = RandomSource::Seeded(0)) {
  Traced t;
  auto m = Module::Load(Testdata(file));
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return t;
  t.path = irt::testing::TempPath(file + "." + fn + ".fb");
  auto out = Output::Open(t.path);
  EXPECT_TRUE(out.ok());
  {
    TraceWriter writer(out->get(), WriterOptions{});
    StandardContext ctx(copts);
    Interpreter interp(*m, ctx, random);
    Result<Value> r = interp.Trace(fn, args, writer);
    t.status = r.status();
    if (r.ok()) t.result = *r;
  }
  EXPECT_TRUE((*out)->Commit().ok());
  auto tr = irt::Trace::Open(t.path);
  EXPECT_TRUE(tr.ok()) << tr.status().message();
  if (tr.ok()) t.trace.emplace(std::move(*tr));
  return t;
}

// One node, compactly: "Kind op [refs] = value" with refs as global ids.
std::string Describe(const irt::Trace& t, NodeId id) {
  auto v = t.node(id);
  if (!v.ok()) return v.status().message();
  std::string s(NodeKindName(v->kind()));
  if (!v->op().empty()) s += " " + std::string(v->op());
  s += " (";
  for (size_t i = 0; i < v->num_operands(); ++i) {
    irt::Operand o = v->operand(i);
    if (i > 0) s += ", ";
    s += o.is_ref ? "#" + std::to_string(o.ref) : "⟨" + FormatValue(o.literal) + "⟩";
  }
  s += ")";
  Value val = v->value();
  if (!val.is_none()) s += " = " + FormatValue(val) + "::" + TypeName(val);
  return s;
}

std::vector<std::string> DescribeAll(const irt::Trace& t) {
  std::vector<std::string> out;
  for (NodeId i = 0; i < t.size(); ++i) out.push_back(Describe(t, i));
  return out;
}

std::string Meta(const irt::Trace& t, std::string_view key) {
  for (const MetaEntry& m : t.trace_meta()) {
    if (m.key == key)
      return m.value.kind() == VKind::kString ? m.value.str() : FormatValue(m.value);
  }
  return "<none>";
}

TEST(IrTraceTest, F) {
  Traced t = TraceFile("f.ir", "f", {Value::F64(1.0)});
  ASSERT_TRUE(t.status.ok()) << t.status.message();
  ASSERT_TRUE(t.trace);
  EXPECT_EQ(DescribeAll(*t.trace), (std::vector<std::string>{
                                       "Call f (⟨1.0⟩)",
                                       "Argument () = f::typeof(f)",
                                       "Argument () = 1.0::Float64",
                                       "Primitive sin (#2) = 0.8414709848078965::Float64",
                                       "Primitive + (#3, #2) = 1.8414709848078965::Float64",
                                       "Return (#4) = 1.8414709848078965::Float64",
                                   }));
  auto ret = t.trace->node(5);
  ASSERT_TRUE(ret.ok());
  Location l = ret->location();
  EXPECT_EQ(l.block, 1u);
  EXPECT_EQ(l.pos, 1u);
  EXPECT_TRUE(l.is_branch);
  EXPECT_EQ(l.line, 6u);
  EXPECT_EQ(l.col, 3u);
  EXPECT_EQ(ret->closes(), 0u);
  auto sin = t.trace->node(3);
  EXPECT_EQ(sin->location().pos, 3u);
  EXPECT_EQ(sin->location().line, 4u);
  EXPECT_EQ(Meta(*t.trace, "status"), "ok");
  EXPECT_EQ(Meta(*t.trace, "function"), "f");
  EXPECT_EQ(t.trace->producer_name(), "irtrace");
  auto ir = t.trace->FunctionIR("f", 0);
  ASSERT_TRUE(ir);
  EXPECT_EQ(*ir, "1: (%1, %2)\n  %3 = Main.sin(%2)\n  %4 = %3 + %2\n  return %4");
}

TEST(IrTraceTest, HLoopMatchesTheSeed) {
  Traced t = TraceFile("h.ir", "h", {Value::F64(2.0), Value::I64(2)});
  ASSERT_TRUE(t.status.ok()) << t.status.message();
  ASSERT_TRUE(t.trace);
  ASSERT_EQ(t.trace->size(), 27u);  // the marker and @1..@26
  std::vector<std::string> d = DescribeAll(*t.trace);
  EXPECT_EQ(d[0], "Call h (⟨2.0⟩, ⟨2⟩)");
  EXPECT_EQ(d[4], "Primitive zero (#2) = 0.0::Float64");
  EXPECT_EQ(d[5], "Jump (⟨0⟩, #4)");
  EXPECT_EQ(d[6], "Argument (#5) = 0::Int64");
  EXPECT_EQ(d[7], "Argument (#5) = 0.0::Float64");
  EXPECT_EQ(d[8], "Primitive < (#6, #3) = true::Bool");
  EXPECT_EQ(d[9], "Jump ()");
  EXPECT_EQ(d[10], "Primitive ^ (#2, #6) = 1.0::Float64");
  EXPECT_EQ(d[12], "Primitive + (#6, ⟨1⟩) = 1::Int64");
  EXPECT_EQ(d[13], "Jump (#12, #11)");
  EXPECT_EQ(d[19], "Primitive + (#15, #18) = 3.0::Float64");
  EXPECT_EQ(d[24], "Primitive < (#22, #3) = false::Bool");
  EXPECT_EQ(d[25], "Jump (#24)");
  EXPECT_EQ(d[26], "Return (#23) = 3.0::Float64");
  auto j1 = t.trace->node(5);
  EXPECT_EQ(j1->jump_target(), 2u);
  EXPECT_FALSE(j1->has_condition());
  EXPECT_EQ(j1->location().pos, 1u);
  auto a = t.trace->node(7);
  EXPECT_EQ(a->block_arg_index(), 2u);
  EXPECT_EQ(a->location().block, 2u);
  EXPECT_EQ(a->location().pos, 6u);
  auto j2 = t.trace->node(9);
  EXPECT_EQ(j2->jump_target(), 3u);
  EXPECT_EQ(j2->location().pos, 2u);  // the second branch of block 2
  auto j3 = t.trace->node(25);
  EXPECT_EQ(j3->jump_target(), 4u);
  EXPECT_TRUE(j3->has_condition());
  EXPECT_FALSE(j3->taken_when());
  EXPECT_EQ(j3->location().pos, 1u);
  EXPECT_EQ(FormatValue(t.result), "3.0");
}

TEST(IrTraceTest, GeomRecursion) {
  Traced t = TraceFile("geom.ir", "geom", {Value::I64(1), Value::F64(0.5)}, {},
                       RandomSource::Replay({0.9, 0.8, 0.1}));
  ASSERT_TRUE(t.status.ok()) << t.status.message();
  ASSERT_TRUE(t.trace);
  EXPECT_EQ(FormatValue(t.result), "3");
  auto summary = CheckTrace(t.path);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_EQ(summary->calls, 3u);
  EXPECT_EQ(summary->max_depth, 3u);
  std::vector<std::string> d = DescribeAll(*t.trace);
  ASSERT_EQ(d.size(), 1u + 9 + 9 + 6);
  EXPECT_EQ(d[8], "Call geom (#7, #3)");  // @8 opens the nested call
  EXPECT_EQ(d[9], "Argument () = geom::typeof(geom)");
  EXPECT_EQ(d[10], "Argument (#7) = 2::Int64");  // the caller's actual argument
  EXPECT_EQ(d[11], "Argument (#3) = 0.5::Float64");
  // The innermost call returns at its second branch; its callers return its Return node.
  EXPECT_EQ(d[22], "Return (#18) = 3::Int64");
  EXPECT_EQ(d[23], "Return (#22) = 3::Int64");
  EXPECT_EQ(d[24], "Return (#23) = 3::Int64");
  EXPECT_EQ(t.trace->node(22)->location().pos, 2u);
}

TEST(IrTraceTest, GeomWithDepthLimitMatchesTheSeed) {
  ContextOptions c;
  c.max_depth = 2;
  Traced t = TraceFile("geom.ir", "geom", {Value::I64(1), Value::F64(0.5)}, c,
                       RandomSource::Replay({0.933407016129252, 0.7, 0.8, 0.1}));
  ASSERT_TRUE(t.status.ok()) << t.status.message();
  ASSERT_TRUE(t.trace);
  EXPECT_EQ(DescribeAll(*t.trace), (std::vector<std::string>{
                                       "Call geom (⟨1⟩, ⟨0.5⟩)",
                                       "Argument () = geom::typeof(geom)",
                                       "Argument () = 1::Int64",
                                       "Argument () = 0.5::Float64",
                                       "Primitive rand () = 0.933407016129252::Float64",
                                       "Primitive < (#4, #3) = false::Bool",
                                       "Jump (#5)",
                                       "Primitive + (#2, ⟨1⟩) = 2::Int64",
                                       "Primitive geom (#7, #3) = 4::Int64",
                                       "Return (#8) = 4::Int64",
                                   }));
}

TEST(IrTraceTest, PrimitiveFunctionsAndRandomTags) {
  ContextOptions c;
  c.primitives = {"geom"};
  c.tag_random = true;
  Traced t = TraceFile("geom.ir", "geom", {Value::I64(1), Value::F64(0.5)}, c,
                       RandomSource::Replay({0.9, 0.1}));
  ASSERT_TRUE(t.status.ok()) << t.status.message();
  ASSERT_TRUE(t.trace);
  EXPECT_EQ(t.trace->size(), 10u);
  EXPECT_EQ(Describe(*t.trace, 8), "Primitive geom (#7, #3) = 2::Int64");
  auto rand = t.trace->node(4);
  auto tag = rand->meta("random");
  ASSERT_TRUE(tag);
  EXPECT_EQ(tag->str(), "uniform");
  EXPECT_FALSE(t.trace->node(5)->meta("random"));
}

TEST(IrTraceTest, RuntimeErrorStillCompletesTheTrace) {
  Traced t = TraceFile("error.ir", "outer", {Value::I64(0)});
  EXPECT_EQ(t.status.code(), Code::kRuntimeError);
  EXPECT_EQ(t.status.message(),
            Testdata("error.ir") + ":19:3: DivideError: integer division error");
  ASSERT_TRUE(t.trace);
  EXPECT_TRUE(t.trace->complete());
  auto summary = CheckTrace(t.path);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_EQ(summary->calls, 3u);
  std::vector<std::string> d = DescribeAll(*t.trace);
  ASSERT_EQ(d.size(), 14u);
  EXPECT_EQ(d[7], "Call inner (#6, #5)");
  EXPECT_EQ(d[11], "Error div (#9, #10)");
  EXPECT_EQ(d[12], "Error inner (#6, #5)");
  EXPECT_EQ(d[13], "Error middle (#2)");
  auto e = t.trace->node(11);
  EXPECT_EQ(e->closes(), 7u);
  EXPECT_EQ(e->location().line, 19u);
  auto msg = e->meta("error");
  ASSERT_TRUE(msg);
  EXPECT_EQ(msg->str(), "DivideError: integer division error");
  EXPECT_EQ(t.trace->node(12)->closes(), 3u);
  EXPECT_FALSE(t.trace->node(12)->meta("error"));
  EXPECT_EQ(t.trace->node(13)->closes(), 0u);
  EXPECT_EQ(Meta(*t.trace, "status"), "failed");
  EXPECT_EQ(Meta(*t.trace, "error"), t.status.message());
}

TEST(IrTraceTest, ErrorInsideAnUntracedCall) {
  // With geom recorded as a primitive, running out of random values inside
  // it is reported at the call statement.
  ContextOptions c;
  c.max_depth = 2;
  Traced t = TraceFile("geom.ir", "geom", {Value::I64(1), Value::F64(0.5)}, c,
                       RandomSource::Replay({0.9, 0.9}));
  EXPECT_EQ(t.status.code(), Code::kRuntimeError);
  ASSERT_TRUE(t.trace);
  ASSERT_TRUE(CheckTrace(t.path).ok());
  EXPECT_EQ(t.trace->size(), 9u);
  EXPECT_EQ(Describe(*t.trace, 8), "Error geom (#7, #3)");
  EXPECT_EQ(t.trace->node(8)->meta("error")->str(),
            "no more random values: all 2 given values have been used");
}

TEST(IrTraceTest, LoopInsideRecursion) {
  Traced t = TraceFile("recloop.ir", "tri", {Value::I64(4)});
  ASSERT_TRUE(t.status.ok()) << t.status.message();
  EXPECT_EQ(FormatValue(t.result), "20");
  auto summary = CheckTrace(t.path);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_EQ(summary->calls, 5u);
  EXPECT_EQ(summary->max_depth, 5u);
  // Block 2 falls through to block 3: a Jump at branch position 2.
  auto j = t.trace->node(8);
  ASSERT_TRUE(j.ok());
  EXPECT_EQ(j->kind(), NodeKind::kJump);
  EXPECT_EQ(j->jump_target(), 3u);
  EXPECT_EQ(j->location().pos, 2u);
}

TEST(IrTraceTest, EveryPrimitive) {
  Traced t = TraceFile("prims.ir", "prims", {Value::F64(0.5), Value::I64(3)});
  ASSERT_TRUE(t.status.ok()) << t.status.message();
  ASSERT_TRUE(CheckTrace(t.path).ok());
  std::set<std::string> ops;
  for (NodeId i = 0; i < t.trace->size(); ++i) ops.insert(std::string(t.trace->node(i)->op()));
  for (const char* op : {"+",    "-",   "*",   "/",    "^",   "div",  "rem",  "<",
                         "<=",   ">",   ">=",  "==",   "!=",  "&",    "|",    "!",
                         "xor",  "sin", "cos", "tan",  "exp", "log",  "sqrt", "abs",
                         "tanh", "min", "max", "zero", "one", "rand", "randn"}) {
    EXPECT_TRUE(ops.count(op)) << op;
  }
}

TEST(IrTraceTest, DeepRecursionTrace) {
  // 10^5 nested calls through the writer and the checker (deep.ir does 10^6).
  auto m = Module::Parse(
      "function down\n1: (%1, %2)\n  %3 = %2 == 0\n  br 2 unless %3\n  return 0\n2:\n"
      "  %4 = %2 - 1\n  %5 = Main.down(%4)\n  %6 = %5 + 1\n  return %6\nend\n",
      "down.ir");
  ASSERT_TRUE(m.ok());
  std::string path = irt::testing::TempPath("down.fb");
  auto out = Output::Open(path);
  ASSERT_TRUE(out.ok());
  {
    TraceWriter writer(out->get(), WriterOptions{});
    TrackingContext ctx;
    RandomSource random = RandomSource::Seeded(0);
    Interpreter interp(*m, ctx, random);
    Value n = Value::I64(100000);
    auto r = interp.Trace("down", std::span(&n, 1), writer);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->as_i64(), 100000);
  }
  ASSERT_TRUE((*out)->Commit().ok());
  auto summary = CheckTrace(path);
  ASSERT_TRUE(summary.ok()) << summary.status().message();
  EXPECT_EQ(summary->max_depth, 100001u);
  EXPECT_TRUE(summary->complete);
}

TEST(IrTraceTest, TraceJobRecordsItsRequest) {
  TraceRequest req;
  req.module_path = Testdata("geom.ir");
  req.function = "geom";
  req.args = {"1", "0.5"};
  req.seed = 3;
  auto job = TraceJob::Prepare(req);
  ASSERT_TRUE(job.ok()) << job.status().message();
  std::string path = irt::testing::TempPath("job.fb");
  auto out = Output::Open(path);
  ASSERT_TRUE(out.ok());
  ASSERT_TRUE(job->Run(**out).ok());
  ASSERT_TRUE((*out)->Commit().ok());
  auto t = irt::Trace::Open(path);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->producer_name(), "irt-trace");
  EXPECT_EQ(Meta(*t, "status"), "ok");
  EXPECT_EQ(Meta(*t, "function"), "geom");
  EXPECT_EQ(Meta(*t, "module"), "geom.ir");
  EXPECT_EQ(Meta(*t, "args"), "1, 0.5");
  EXPECT_EQ(Meta(*t, "seed"), "3");

  req.function = "nope";
  EXPECT_EQ(TraceJob::Prepare(req).status().code(), Code::kUsage);
  req.function = "geom";
  req.args = {"1"};
  EXPECT_EQ(TraceJob::Prepare(req).status().code(), Code::kUsage);
  req.args = {"1", "[x]"};
  auto bad = TraceJob::Prepare(req);
  EXPECT_EQ(bad.status().code(), Code::kUsage);
  EXPECT_EQ(bad.status().message().rfind("argument 2: bad literal '[x]'", 0), 0u)
      << bad.status().message();
  req.args = {"1", "0.5"};
  req.context.primitives = {"nope"};
  EXPECT_EQ(TraceJob::Prepare(req).status().code(), Code::kUsage);
  req.context.primitives = {};
  req.module_path = Testdata("missing.ir");
  EXPECT_EQ(TraceJob::Prepare(req).status().code(), Code::kIoError);
}

}  // namespace
}  // namespace irt::ir
