// The C++ recording front end (irt/record.h): what it records for the
// cases the seed's programs do not cover (golden cases in
// tests/golden/record): memory output, Float32, metadata hooks, values
// from other calls, literals that change, tensors and their errors,
// chunks, deep recursion, and operations outside any recording.
#include "irt/record.h"

#include <gtest/gtest.h>
#include <pthread.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "irt/check.h"
#include "irt/eval.h"
#include "irt/trace.h"
#include "test_util.h"

namespace irt::rec {
namespace {

using testing::TempPath;

// Checks the trace of `r` with the one checker every tool uses; returns
// the trace (over r's bytes, which must outlive it).
Trace Checked(const Recorder& r, const std::string& name) {
  std::string path = TempPath(name);
  {
    std::ofstream out(path, std::ios::binary);
    out.write(r.bytes().data(), static_cast<std::streamsize>(r.bytes().size()));
  }
  Result<CheckSummary> s = CheckTrace(path);
  EXPECT_TRUE(s.ok()) << s.status().message();
  auto t =
      Trace::FromBytes(reinterpret_cast<const uint8_t*>(r.bytes().data()), r.bytes().size(), name);
  EXPECT_TRUE(t.ok()) << t.status().message();
  return std::move(t).value();
}

// The operations of a trace's primitives, sorted: C++ leaves the order in
// which operands are evaluated to the compiler.
std::vector<std::string> Ops(const Trace& t) {
  std::vector<std::string> out;
  for (NodeId i = 0; i < t.size(); ++i) {
    auto n = t.node(i);
    if (n.ok() && n->kind() == NodeKind::kPrimitive) out.push_back(std::string(n->op()));
  }
  std::sort(out.begin(), out.end());
  return out;
}

Real32 Scale(Real32 x) {
  IRT_FUNCTION(scale, x);
  return IRT_RETURN(x * 2.5f + exp(x));
}

TEST(RecordTest, InMemoryFloat32) {
  auto rec = Recorder::InMemory();
  Real32 y = rec->Run(Scale, 0.5f);
  ASSERT_TRUE(rec->Finish().ok());
  EXPECT_EQ(y.value(), 0.5f * 2.5f + std::exp(0.5f));
  Trace t = Checked(*rec, "f32.fb");
  auto ret = t.node(t.size() - 1);
  ASSERT_TRUE(ret.ok());
  EXPECT_EQ(ret->kind(), NodeKind::kReturn);
  EXPECT_EQ(ret->vkind(), VKind::kF32);
  EXPECT_EQ(ret->value().as_f32(), y.value());
  EXPECT_EQ(Ops(t), (std::vector<std::string>{"*", "+", "exp"}));
}

// A context that tags every multiplication with its source line.
class LineTags : public Context {
 public:
  bool WantsNodes() const override { return true; }
  void OnNode(const NodeInfo& node, TraceWriter& w) override {
    if (node.op == "*") w.AddMeta("line", Value::I64(node.line));
  }
};

TEST(RecordTest, OnNodeAttachesMetadata) {
  LineTags ctx;
  RecorderOptions opts;
  opts.context = &ctx;
  auto rec = Recorder::InMemory(opts);
  rec->Run(Scale, 1.0f);
  ASSERT_TRUE(rec->Finish().ok());
  Trace t = Checked(*rec, "meta.fb");
  int tagged = 0;
  for (NodeId i = 0; i < t.size(); ++i) {
    auto n = t.node(i);
    ASSERT_TRUE(n.ok());
    std::optional<Value> line = n->meta("line");
    if (n->op() == "*") {
      ASSERT_TRUE(line.has_value());
      EXPECT_EQ(line->as_i64(), n->location().line);
      EXPECT_GT(line->as_i64(), 0);
      ++tagged;
    } else {
      EXPECT_FALSE(line.has_value());
    }
  }
  EXPECT_EQ(tagged, 1);
}

// A value of the caller used inside a callee without being its argument
// (a global here) becomes a Constant of the callee: references never leave
// their call.
Real g_offset;

Real AddOffset(Real x) {
  IRT_FUNCTION(add_offset, x);
  return IRT_RETURN(x + g_offset);
}

Real Outer(Real x) {
  IRT_FUNCTION(outer, x);
  g_offset = sin(x);
  Real a = AddOffset(x);
  Real b = AddOffset(a);
  return IRT_RETURN(a * b);
}

TEST(RecordTest, ValuesOfOtherCallsBecomeConstants) {
  auto rec = Recorder::InMemory();
  Real y = rec->Run(Outer, 0.25);
  ASSERT_TRUE(rec->Finish().ok());
  double s = std::sin(0.25);
  EXPECT_EQ(y.value(), (0.25 + s) * (0.25 + s + s));
  Trace t = Checked(*rec, "foreign.fb");
  int constants = 0;
  for (NodeId i = 0; i < t.size(); ++i) {
    auto n = t.node(i);
    ASSERT_TRUE(n.ok());
    if (n->kind() == NodeKind::kConstant) {
      EXPECT_EQ(n->value().as_f64(), s);
      ++constants;
    }
  }
  EXPECT_EQ(constants, 2);  // once in each call of add_offset
}

// A plain number that changes between runs of one statement cannot stay
// a literal of its class: the statement's later runs reference Constants.
Real Weighted(Real x, Int n) {
  IRT_FUNCTION(weighted, x, n);
  Real r = 0.0;
  Int i = 0;
  double w = 1.0;
  while (IRT_WHILE(i, r)(i < n)) {
    r = r + x * w;
    w = w * 0.5;
    i = i + 1;
  }
  return IRT_RETURN(r);
}

TEST(RecordTest, ChangingLiteralsBecomeConstants) {
  auto rec = Recorder::InMemory();
  Real y = rec->Run(Weighted, 2.0, int64_t{4});
  ASSERT_TRUE(rec->Finish().ok());
  EXPECT_EQ(y.value(), 2.0 * (1 + 0.5 + 0.25 + 0.125));
  Trace t = Checked(*rec, "varying.fb");
  std::vector<double> weights;
  for (NodeId i = 0; i < t.size(); ++i) {
    auto n = t.node(i);
    ASSERT_TRUE(n.ok());
    if (n->op() != "*") continue;
    // The weight: a literal operand, or the Constant it references.
    for (size_t k = 0; k < n->num_operands(); ++k) {
      Operand o = n->operand(k);
      if (!o.is_ref) {
        weights.push_back(o.literal.as_f64());
      } else if (auto c = t.node(o.ref); c.ok() && c->kind() == NodeKind::kConstant) {
        weights.push_back(c->value().as_f64());
      }
    }
  }
  EXPECT_EQ(weights, (std::vector<double>{1.0, 0.5, 0.25, 0.125}));
}

Real Loss(Tensor X, Tensor W) {
  IRT_FUNCTION(loss, X, W);
  Tensor h = tanh(matmul(X, W));
  return IRT_RETURN(sum(h * h) + getindex(W, Int(2)));
}

TEST(RecordTest, TensorsRecordWhatLibtraceComputes) {
  Tensor X({2, 3}, {1, 2, 3, 4, 5, 6});
  Eigen::MatrixXd w(3, 2);
  w << 0.1, -0.2, 0.3, 0.05, -0.1, 0.2;
  Tensor W = Tensor::FromEigen(w);
  EXPECT_EQ(W.matrix()(0, 1), -0.2);
  auto rec = Recorder::InMemory();
  Real y = rec->Run(Loss, X, W);
  ASSERT_TRUE(rec->Finish().ok());
  Eigen::MatrixXd h = (X.matrix() * w).array().tanh();
  EXPECT_NEAR(y.value(), h.array().square().sum() + (-0.2), 1e-15);
  Trace t = Checked(*rec, "tensor.fb");
  EXPECT_EQ(Ops(t), (std::vector<std::string>{"*", "+", "getindex", "matmul", "sum", "tanh"}));
  for (NodeId i = 0; i < t.size(); ++i) {
    auto n = t.node(i);
    ASSERT_TRUE(n.ok());
    if (n->op() != "matmul") continue;
    EXPECT_EQ(n->value().tensor().shape, (std::vector<int64_t>{2, 2}));
    EXPECT_EQ(n->value().tensor().f64()[1], (X.matrix() * w)(0, 1));
  }
}

Real Element(Tensor X, Int i, Int j) {
  IRT_FUNCTION(element, X, i, j);
  Real a = getindex(X, i);
  Real b = getindex(X, i, j);
  return IRT_RETURN(a * 10.0 + b);
}

// getindex reads a Float64 element directly; its value, its errors and the
// Float32 case must be libtrace's own getindex's.
TEST(RecordTest, GetindexIsLibtracesGetindex) {
  Tensor X({2, 3}, {1.5, -2, 3, 4, 5.25, 6});
  auto ref = [&](std::vector<Value> idx) {
    idx.insert(idx.begin(), X.value());
    return ApplyPrimitive("getindex", idx);
  };
  for (int64_t i = 1; i <= 2; ++i) {
    for (int64_t j = 1; j <= 3; ++j) {
      auto rec = Recorder::InMemory();
      Real y = rec->Run(Element, X, Int(i), Int(j));
      ASSERT_TRUE(rec->Finish().ok());
      auto lin = ref({Value::I64(i)});
      auto ij = ref({Value::I64(i), Value::I64(j)});
      ASSERT_TRUE(lin.ok() && ij.ok());
      EXPECT_EQ(y.value(), lin->as_f64() * 10.0 + ij->as_f64()) << i << "," << j;
      Trace t = Checked(*rec, "element.fb");
      std::vector<double> got;
      for (NodeId n = 0; n < t.size(); ++n) {
        auto v = t.node(n);
        ASSERT_TRUE(v.ok());
        if (v->op() == "getindex") got.push_back(v->value().as_f64());
      }
      EXPECT_EQ(got, (std::vector<double>{lin->as_f64(), ij->as_f64()}));
    }
  }
  for (auto [i, j] : {std::pair<int64_t, int64_t>{0, 1}, {7, 1}, {3, 1}, {1, 4}}) {
    auto rec = Recorder::InMemory();
    auto want = i == 7 || i == 0 ? ref({Value::I64(i)}) : ref({Value::I64(i), Value::I64(j)});
    ASSERT_FALSE(want.ok());
    try {
      rec->Run(Element, X, Int(i), Int(j));
      ADD_FAILURE() << "no error for " << i << "," << j;
    } catch (const OpError& e) {
      EXPECT_EQ(std::string(e.what()), want.status().message()) << i << "," << j;
    }
    ASSERT_TRUE(rec->Finish().ok());
  }
  // Float32: not read directly, the same element all the same.
  irt::Tensor f;
  f.dtype = DType::kF32;
  f.shape = {2, 3};
  const float fv[] = {1.5f, -2, 3, 4, 5.25f, 6};
  f.data.assign(reinterpret_cast<const uint8_t*>(fv), reinterpret_cast<const uint8_t*>(fv) + 24);
  Tensor F(Value::MakeTensor(f));
  auto rec = Recorder::InMemory();
  EXPECT_THROW(rec->Run(Element, F, Int(2), Int(2)), OpError);  // a Float32 result is no Real
  ASSERT_TRUE(rec->Finish().ok());
}

Real BadShapes(Tensor X) {
  IRT_FUNCTION(bad_shapes, X);
  return IRT_RETURN(sum(matmul(X, X)));
}

// x[i] in a loop: an index that is a node, one that is a literal, and a
// tensor that is no node (made inside the call, a Constant each time).
Real IndexLoop(Tensor x, Int n) {
  IRT_FUNCTION(index_loop, x, n);
  Tensor local({3}, {0.5, 0.25, 0.125});
  Real r = 0.0;
  Int i = 1;
  while (IRT_WHILE(i, r)(i < n)) {
    r = r + getindex(x, i) * getindex(x, Int(2)) + getindex(local, Int(3));
    i = i + 1;
  }
  return IRT_RETURN(r);
}

// A context that watches every node: the recorder then takes its general
// path for every statement, never the inline one.
class Watcher : public Context {
 public:
  bool WantsNodes() const override { return true; }
  void OnNode(const NodeInfo&, TraceWriter&) override { ++nodes; }
  uint64_t nodes = 0;
};

// The inline path of getindex (a statement seen before) writes what the
// general path writes.
TEST(RecordTest, GetindexInLoopsTakesTheInlinePathToTheSameTrace) {
  Tensor x({5}, {1.0, 2.0, 3.0, 4.0, 5.0});
  auto record = [&](Context* ctx) {
    RecorderOptions opts;
    opts.context = ctx;
    auto rec = Recorder::InMemory(opts);
    EXPECT_EQ(rec->Run(IndexLoop, x, Int(5)).value(), (1.0 + 2 + 3 + 4) * 2.0 + 4 * 0.125);
    EXPECT_TRUE(rec->Finish().ok());
    return rec->bytes();
  };
  Watcher watcher;
  const std::string general = record(&watcher);
  EXPECT_EQ(watcher.nodes, 4 * 8 + 1u);  // <, 3 getindex, *, +, +, +1; the last <
  const std::string inline_path = record(nullptr);
  EXPECT_EQ(inline_path, general);
  auto rec = Recorder::InMemory();
  rec->Run(IndexLoop, x, Int(5));
  ASSERT_TRUE(rec->Finish().ok());
  Trace t = Checked(*rec, "index_loop.fb");
  std::vector<std::string> ops = Ops(t);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "getindex"), 12);
}

TEST(RecordTest, AnOperationErrorFailsTheRunWithAValidTrace) {
  Tensor X({2, 3}, {1, 2, 3, 4, 5, 6});
  auto rec = Recorder::InMemory();
  EXPECT_THROW(rec->Run(BadShapes, X), OpError);
  ASSERT_TRUE(rec->Finish().ok());
  Trace t = Checked(*rec, "opfail.fb");
  auto last = t.node(t.size() - 1);
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->kind(), NodeKind::kError);
  std::string status;
  for (const MetaEntry& m : t.trace_meta()) {
    if (m.key == "status") status = m.value.str();
  }
  EXPECT_EQ(status, "failed");
}

TEST(RecordTest, SmallChunksStayValid) {
  RecorderOptions opts;
  opts.writer.chunk_nodes = 5;
  auto rec = Recorder::InMemory(opts);
  Real y = rec->Run(Weighted, 1.5, int64_t{30});
  ASSERT_TRUE(rec->Finish().ok());
  Trace t = Checked(*rec, "chunks.fb");
  EXPECT_GT(t.chunks().size(), 40u);
  auto ret = t.node(t.size() - 1);
  ASSERT_TRUE(ret.ok());
  EXPECT_EQ(ret->value().as_f64(), y.value());
}

Int Depth(Int d) {
  IRT_FUNCTION(depth, d);
  if (IRT_IF(d == 0)) return IRT_RETURN(d);
  return IRT_RETURN(Depth(d - 1) + 1);
}

// 10^4 nested calls (the recorder keeps its frames on the heap; the
// program's own frames need a thread with room for them).
TEST(RecordTest, DeepRecursion) {
  struct Job {
    std::string bytes;
    int64_t result = -1;
  } job;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, size_t{256} << 20);
  pthread_t th;
  auto body = [](void* p) -> void* {
    Job& j = *static_cast<Job*>(p);
    auto rec = Recorder::InMemory();
    j.result = rec->Run(Depth, int64_t{10000}).value();
    if (rec->Finish().ok()) j.bytes = rec->bytes();
    return nullptr;
  };
  ASSERT_EQ(pthread_create(&th, &attr, body, &job), 0);
  pthread_join(th, nullptr);
  EXPECT_EQ(job.result, 10000);
  ASSERT_FALSE(job.bytes.empty());
  std::string path = TempPath("deep.fb");
  std::ofstream(path, std::ios::binary) << job.bytes;
  Result<CheckSummary> s = CheckTrace(path);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->max_depth, 10001u);
  EXPECT_EQ(s->calls, 10001u);
}

// A thread's recorders reuse the stacks of the last one: recording again,
// deeper, shallower, or while another recorder is alive, writes the same
// bytes as a first recording does.
TEST(RecordTest, RecordingAgainWritesTheSameTrace) {
  auto record = [](int64_t depth) {
    auto rec = Recorder::InMemory();
    EXPECT_EQ(rec->Run(Depth, depth).value(), depth);
    EXPECT_TRUE(rec->Finish().ok());
    return rec->bytes();
  };
  const std::string first = record(300);
  EXPECT_EQ(record(300), first);
  const std::string deeper = record(1000);
  EXPECT_EQ(record(300), first);
  EXPECT_EQ(record(1000), deeper);
  auto alive = Recorder::InMemory();  // holds the spare stacks, unused
  EXPECT_EQ(record(300), first);
  alive.reset();
  EXPECT_EQ(record(300), first);
  std::string path = TempPath("again.fb");
  std::ofstream(path, std::ios::binary) << deeper;
  Result<CheckSummary> s = CheckTrace(path);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->max_depth, 1001u);
}

// A `for` loop records like a while loop: the increment belongs to the body.
Real ForSum(Real x, Int n) {
  IRT_FUNCTION(for_sum, x, n);
  Real r = 0.0;
  for (Int i = 0; IRT_WHILE(i, r)(i < n); i = i + 1) r = r + x;
  return IRT_RETURN(r);
}

// Calls named in the context's primitives are one Primitive node each,
// computed as usual.
Real Twice(Real x) {
  IRT_FUNCTION(twice, x);
  return IRT_RETURN(x + x);
}
Real CallsTwice(Real x) {
  IRT_FUNCTION(calls_twice, x);
  return IRT_RETURN(Twice(x) * Twice(x + 1.0));
}

TEST(RecordTest, ForLoopsAndPrimitiveCalls) {
  Context ctx;
  ctx.primitives.insert("twice");
  RecorderOptions opts;
  opts.context = &ctx;
  auto rec = Recorder::InMemory(opts);
  Real y = rec->Run(CallsTwice, 1.5);
  ASSERT_TRUE(rec->Finish().ok());
  EXPECT_EQ(y.value(), 3.0 * 5.0);
  Trace t = Checked(*rec, "prims.fb");
  EXPECT_EQ(Ops(t), (std::vector<std::string>{"*", "+", "twice", "twice"}));
  auto rec2 = Recorder::InMemory();
  Real z = rec2->Run(ForSum, 0.25, int64_t{3});
  ASSERT_TRUE(rec2->Finish().ok());
  EXPECT_EQ(z.value(), 0.75);
  Trace t2 = Checked(*rec2, "for.fb");
  int jumps = 0;
  for (NodeId i = 0; i < t2.size(); ++i) {
    auto n = t2.node(i);
    ASSERT_TRUE(n.ok());
    jumps += n->kind() == NodeKind::kJump ? 1 : 0;
  }
  EXPECT_EQ(jumps, 1 + 3 * 2 + 1);  // entry, per round (test, back edge), exit
}

// An if/else in a loop, with an if nested in the else branch: the jumps
// to each join block leave from the block each branch ends in, which
// changes from round to round.
Real Branchy(Real x, Int n) {
  IRT_FUNCTION(branchy, x, n);
  Real r = 0.0;
  Int i = 0;
  while (IRT_WHILE(i, r)(i < n)) {
    if (IRT_IF(i > 1)) {
      if (IRT_IF(i == 3)) r = r * x;
      r = r - 1.0;
    } else {
      r = r + x;
    }
    i = i + 1;
  }
  return IRT_RETURN(r);
}

TEST(RecordTest, EveryNodeIsInTheBlockItsJumpsLeadTo) {
  auto rec = Recorder::InMemory();
  Real y = rec->Run(Branchy, 2.0, int64_t{7});
  ASSERT_TRUE(rec->Finish().ok());
  double r = 0.0;
  for (int i = 0; i < 7; ++i) {
    if (i > 1) {
      if (i == 3) r *= 2.0;
      r -= 1.0;
    } else {
      r += 2.0;
    }
  }
  EXPECT_EQ(y.value(), r);
  Trace t = Checked(*rec, "branchy.fb");
  // No nested calls: nodes 1 .. size - 1 are the root's body, in order.
  uint32_t block = 1, jumps = 0;
  for (NodeId i = 1; i < t.size(); ++i) {
    auto n = t.node(i);
    ASSERT_TRUE(n.ok());
    EXPECT_EQ(n->location().block, block) << "node " << i;
    if (n->kind() == NodeKind::kJump) {
      block = n->jump_target();
      ++jumps;
    }
  }
  // Entry and exit; per round the test, the back edge, the if's branch and
  // the jump to its join, plus the nested if's two on rounds 2-6.
  EXPECT_EQ(jumps, 2u + 7u * 4u + 5u * 2u);
}

// Operations written in one returned expression or one condition keep
// their own positions: each is its own statement (SSA id), even when two
// apply the same operation.
Real Cube(Real x) {
  IRT_FUNCTION(cube, x);
  if (IRT_IF(x * x > x * 2.0)) return IRT_RETURN(x * x * x);
  return IRT_RETURN(x + x + x);
}

TEST(RecordTest, EveryOperationIsItsOwnStatement) {
  for (double x : {3.0, 0.5}) {
    auto rec = Recorder::InMemory();
    rec->Run(Cube, x);
    ASSERT_TRUE(rec->Finish().ok());
    Trace t = Checked(*rec, "cube.fb");
    std::vector<uint32_t> positions;
    for (NodeId i = 0; i < t.size(); ++i) {
      auto n = t.node(i);
      ASSERT_TRUE(n.ok());
      if (n->kind() != NodeKind::kPrimitive) continue;
      positions.push_back(n->location().pos);
      EXPECT_GT(n->location().col, 0u);
    }
    EXPECT_EQ(positions.size(), 5u);  // *, *, > and two of * or +
    EXPECT_EQ(std::set<uint32_t>(positions.begin(), positions.end()).size(), positions.size());
  }
}

// A value recorded by one recorder, used in another's run, is a Constant
// there, not a reference into the other trace.
Real g_kept;
Real Keep(Real x) {
  IRT_FUNCTION(keep, x);
  g_kept = x * 1.5;
  return IRT_RETURN(g_kept);
}
Real UseKept(Real x) {
  IRT_FUNCTION(use_kept, x);
  return IRT_RETURN(x + g_kept);
}

TEST(RecordTest, ValuesOfAnotherRecorderAreConstants) {
  auto first = Recorder::InMemory();
  first->Run(Keep, 2.0);
  ASSERT_TRUE(first->Finish().ok());
  ASSERT_TRUE(g_kept.recorded());
  auto second = Recorder::InMemory();
  Real b = second->Run(UseKept, 3.0);
  ASSERT_TRUE(second->Finish().ok());
  EXPECT_EQ(b.value(), 6.0);
  Trace t = Checked(*second, "two.fb");
  int constants = 0;
  for (NodeId i = 0; i < t.size(); ++i) {
    auto n = t.node(i);
    ASSERT_TRUE(n.ok());
    constants += n->kind() == NodeKind::kConstant ? 1 : 0;
  }
  EXPECT_EQ(constants, 1);
}

// Real with Int promotes to Float64; irt-replay's evaluation of the
// recorded operations gives the values the program computed.
Real Mixed(Real x, Int k) {
  IRT_FUNCTION(mixed, x, k);
  Real a = x * k + k / Int(4);
  if (IRT_IF(k < x)) return IRT_RETURN(a - k);
  return IRT_RETURN(a / k);
}

TEST(RecordTest, MixedRealAndInt) {
  auto rec = Recorder::InMemory();
  Real y = rec->Run(Mixed, 2.5, int64_t{3});
  ASSERT_TRUE(rec->Finish().ok());
  EXPECT_EQ(y.value(), (2.5 * 3 + 3 / 4.0) / 3);  // k < x is false
  Trace t = Checked(*rec, "mixed.fb");
  for (NodeId i = 0; i < t.size(); ++i) {
    auto n = t.node(i);
    ASSERT_TRUE(n.ok());
    if (n->kind() != NodeKind::kPrimitive) continue;
    std::vector<Value> args;
    for (size_t k = 0; k < n->num_operands(); ++k) {
      Operand o = n->operand(k);
      args.push_back(o.is_ref ? t.node(o.ref)->value() : o.literal);
    }
    Result<Value> v = ApplyPrimitive(n->op(), args);
    ASSERT_TRUE(v.ok()) << v.status().message();
    EXPECT_EQ(v->kind(), n->value().kind()) << n->op();
    EXPECT_EQ(v->bits(), n->value().bits()) << n->op();
  }
}

// Parameters of every kind, const ones too: each becomes an Argument node
// of its kind and value, and the body references that node, never the
// caller's (a const parameter is not rebound; the call maps it).
Real Choose(const Real x, const Bool neg, Real32 s, const Int k) {
  IRT_FUNCTION(choose, x, neg, s, k);
  if (IRT_IF(neg)) return IRT_RETURN(-(x * k));
  if (IRT_IF(s > 0.3f)) return IRT_RETURN(x + k);
  return IRT_RETURN(x * k);
}

Real CallsChoose(Real x) {
  IRT_FUNCTION(calls_choose, x);
  Real a = Choose(x, x < 0.0, Real32(0.5f), Int(3));
  Real b = Choose(x + 1.0, x > 0.0, Real32(0.25f), Int(2));
  return IRT_RETURN(a + b);
}

TEST(RecordTest, ParametersOfEveryKindAndConstness) {
  auto rec = Recorder::InMemory();
  Real y = rec->Run(CallsChoose, 1.5);
  ASSERT_TRUE(rec->Finish().ok());
  EXPECT_EQ(y.value(), (1.5 + 3) + -(2.5 * 2));
  Trace t = Checked(*rec, "params.fb");
  std::vector<NodeId> open;              // call markers
  std::vector<bool> in_choose;           // per open call
  std::vector<std::vector<Value>> args;  // of each call of choose
  for (NodeId i = 0; i < t.size(); ++i) {
    auto n = t.node(i);
    ASSERT_TRUE(n.ok());
    if (n->kind() == NodeKind::kCall) {
      open.push_back(i);
      in_choose.push_back(n->op() == "choose");
      if (in_choose.back()) args.emplace_back();
      continue;
    }
    if (n->kind() == NodeKind::kReturn) {
      open.pop_back();
      in_choose.pop_back();
      continue;
    }
    ASSERT_FALSE(open.empty());
    if (n->kind() == NodeKind::kArgument && in_choose.back() && n->vkind() != VKind::kFunction) {
      args.back().push_back(n->value());
    }
    if (n->kind() == NodeKind::kPrimitive) {
      for (NodeId r : n->refs()) EXPECT_GT(r, open.back()) << "node " << i;
    }
  }
  ASSERT_EQ(args.size(), 2u);
  for (const auto& a : args) {
    ASSERT_EQ(a.size(), 4u);
    EXPECT_EQ(a[0].kind(), VKind::kF64);
    EXPECT_EQ(a[1].kind(), VKind::kBool);
    EXPECT_EQ(a[2].kind(), VKind::kF32);
    EXPECT_EQ(a[3].kind(), VKind::kI64);
  }
  EXPECT_EQ(args[0][0].as_f64(), 1.5);
  EXPECT_EQ(args[1][0].as_f64(), 2.5);
  EXPECT_FALSE(args[0][1].as_bool());
  EXPECT_TRUE(args[1][1].as_bool());
  EXPECT_EQ(args[0][2].as_f32(), 0.5f);
  EXPECT_EQ(args[1][3].as_i64(), 2);
}

TEST(RecordTest, NothingIsRecordedOutsideRun) {
  Real x = 0.5;
  Real y = sin(x) * 2.0;
  EXPECT_EQ(y.value(), std::sin(0.5) * 2.0);
  EXPECT_FALSE(y.recorded());
  auto rec = Recorder::InMemory();
  Status s = rec->Finish();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("nothing was recorded"), std::string::npos) << s.message();
}

TEST(RecordTest, AnUnwritableFileIsAnError) {
  Recorder rec("/nonexistent-dir/t.fb");
  rec.Run(Scale, 1.0f);
  Status s = rec.Finish();
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("/nonexistent-dir/t.fb"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace irt::rec
