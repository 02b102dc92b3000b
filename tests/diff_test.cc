// irt-diff's library: the node notation is irt-print's, the alignment is a
// shortest edit script (checked against an LCS computed independently),
// divergences, tolerances, ignored metadata, producers, tensors and deep
// recursion.
#include "irt/diff.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "irt/graph.h"
#include "irt/ir/interpreter.h"
#include "irt/print.h"
#include "irt/writer.h"
#include "test_util.h"

namespace irt {
namespace {

namespace fs = std::filesystem;

class DiffScratch {
 public:
  DiffScratch() {
    std::string t = (fs::temp_directory_path() / "irt-diff-test-XXXXXX").string();
    dir_ = mkdtemp(t.data());
  }
  ~DiffScratch() { fs::remove_all(dir_); }
  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

 private:
  std::string dir_;
};

std::string Src(const std::string& rel) { return std::string(IRT_SOURCE_DIR) + "/" + rel; }

Status Trace1(const std::string& module, const std::string& function,
              const std::vector<std::string>& args, const std::string& out,
              const std::string& rand_values = "") {
  ir::TraceRequest r;
  r.module_path = module;
  r.function = function;
  r.args = args;
  if (!rand_values.empty()) r.rand_values = rand_values;
  IRT_ASSIGN_OR_RETURN(ir::TraceJob job, ir::TraceJob::Prepare(r));
  IRT_ASSIGN_OR_RETURN(auto o, Output::Open(out));
  Status s = job.Run(*o);
  if (!s.ok() && s.code() != Code::kRuntimeError) return s;
  return o->Commit();
}

// Runs the diff into a file and returns (summary, text).
std::pair<DiffSummary, std::string> RunDiff(const DiffScratch& s, const std::string& a,
                                            const std::string& b, DiffOptions o = {}) {
  Trace ta = testing::OpenTrace(a), tb = testing::OpenTrace(b);
  auto out = Output::Open(s.Path("diff.out"));
  EXPECT_TRUE(out.ok());
  auto r = DiffTraces(ta, tb, o, **out);
  EXPECT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE((*out)->Commit().ok());
  std::ifstream in(s.Path("diff.out"));
  std::stringstream ss;
  ss << in.rdbuf();
  return {r.ok() ? *r : DiffSummary{}, ss.str()};
}

// Every node line of a full-context text diff is the line irt-print prints
// for the same node: ' ' and '-' lines in a's numbering, '+' lines in b's.
void ExpectIrtPrintNotation(const std::string& a, const std::string& b) {
  DiffScratch s;
  DiffOptions o;
  o.context = 1000000;
  auto [sum, text] = RunDiff(s, a, b, o);
  Trace ta = testing::OpenTrace(a), tb = testing::OpenTrace(b);
  std::istringstream in(text);
  std::string line, pa, pb;
  bool in_hunks = false;
  int checked = 0;
  while (std::getline(in, line)) {
    if (line.rfind("@@ -", 0) == 0) {
      in_hunks = true;
      std::istringstream h(line.substr(4));
      h >> pa >> pb;
      pb = pb.substr(1);
      continue;
    }
    if (!in_hunks || line.empty() || line[0] == '\\') continue;
    char side = line[0];
    std::string node = line.substr(1);
    auto sub = node.find("  (subtree of ");
    if (sub != std::string::npos) node = node.substr(0, sub);
    const Trace& t = side == '+' ? tb : ta;
    std::string path = side == '+' ? pb : pa;
    auto colon = node.find(':');
    size_t pos = std::stoul(node.substr(1, colon - 1));
    auto call = ResolvePath(t, path);
    ASSERT_TRUE(call.ok()) << path;
    auto body = CallBody::Load(t, *call);
    ASSERT_TRUE(body.ok());
    auto want = FormatNode(t, *body, pos - 1, PrintOptions{});
    ASSERT_TRUE(want.ok());
    EXPECT_EQ(node, *want) << "in " << path;
    ++checked;
  }
  EXPECT_GT(checked, 5);
}

TEST(DiffTest, NodeNotationIsIrtPrints) {
  DiffScratch s;
  std::string h = Src("testdata/ir/h.ir"), g = Src("testdata/ir/geom.ir");
  ASSERT_TRUE(Trace1(h, "h", {"2.0", "2"}, s.Path("h2.fb")).ok());
  ASSERT_TRUE(Trace1(h, "h", {"2.0", "5"}, s.Path("h5.fb")).ok());
  ASSERT_TRUE(Trace1(g, "geom", {"1", "0.5"}, s.Path("g1.fb"), "0.9,0.3").ok());
  ASSERT_TRUE(Trace1(g, "geom", {"1", "0.5"}, s.Path("g2.fb"), "0.9,0.8,0.7,0.1").ok());
  ExpectIrtPrintNotation(s.Path("h2.fb"), s.Path("h5.fb"));
  ExpectIrtPrintNotation(s.Path("h5.fb"), s.Path("h2.fb"));
  ExpectIrtPrintNotation(s.Path("g1.fb"), s.Path("g2.fb"));
  ExpectIrtPrintNotation(s.Path("g2.fb"), s.Path("g1.fb"));
  // A body of 2400 children, a nested call in each iteration: positions of
  // far references and of call results, past several checkpoints.
  std::string m = s.Path("m.ir");
  std::ofstream(m) << "function m\n1: (%1, %2, %3)\n  br 2 (0, 0.0)\n2: (%4, %5)\n"
                      "  %6 = %4 < %3\n  br 4 unless %6\n  br 3\n3:\n  %7 = Main.sq(%2, %4)\n"
                      "  %8 = %5 + %7\n  %9 = %4 + 1\n  br 2 (%9, %8)\n4:\n  return %5\nend\n"
                      "function sq\n1: (%1, %2, %3)\n  %4 = %2 * %3\n  return %4\nend\n";
  ASSERT_TRUE(Trace1(m, "m", {"1.5", "300"}, s.Path("m1.fb")).ok());
  ASSERT_TRUE(Trace1(m, "m", {"2.5", "301"}, s.Path("m2.fb")).ok());
  ExpectIrtPrintNotation(s.Path("m1.fb"), s.Path("m2.fb"));
}

TEST(DiffTest, SelfIsSameInEveryFormat) {
  DiffScratch s;
  ASSERT_TRUE(
      Trace1(Src("testdata/ir/geom.ir"), "geom", {"1", "0.5"}, s.Path("g.fb"), "0.9,0.8,0.1").ok());
  for (DiffFormat f : {DiffFormat::kText, DiffFormat::kStat, DiffFormat::kJson}) {
    DiffOptions o;
    o.format = f;
    auto [sum, text] = RunDiff(s, s.Path("g.fb"), s.Path("g.fb"), o);
    EXPECT_TRUE(sum.same());
    EXPECT_FALSE(sum.divergence);
    EXPECT_EQ(sum.matched, sum.nodes_a);
    if (f == DiffFormat::kText) {
      EXPECT_EQ(text, "");
    }
  }
}

TEST(DiffTest, LoopWithOneMoreIteration) {
  DiffScratch s;
  std::string h = Src("testdata/ir/h.ir");
  ASSERT_TRUE(Trace1(h, "h", {"2.0", "2"}, s.Path("a.fb")).ok());
  ASSERT_TRUE(Trace1(h, "h", {"2.0", "3"}, s.Path("b.fb")).ok());
  auto [sum, text] = RunDiff(s, s.Path("a.fb"), s.Path("b.fb"));
  // One iteration is 8 nodes; nothing of a is lost.
  EXPECT_EQ(sum.only_b_nodes, 8u);
  EXPECT_EQ(sum.only_a_nodes, 0u);
  EXPECT_EQ(sum.only_b_calls, 0u);
  // n, the last comparison and the result.
  EXPECT_EQ(sum.changed_values, 3u);
  ASSERT_TRUE(sum.divergence);
  EXPECT_EQ(sum.divergence->path_a, "@25");
  EXPECT_TRUE(sum.divergence->has_condition);
  EXPECT_EQ(sum.divergence->cond_path_a, "@24");
  EXPECT_EQ(FormatValue(sum.divergence->cond_a), "false");
  EXPECT_EQ(FormatValue(sum.divergence->cond_b), "true");
}

TEST(DiffTest, RandomDrawCrossingTheThreshold) {
  DiffScratch s;
  std::string g = Src("testdata/ir/geom.ir");
  ASSERT_TRUE(Trace1(g, "geom", {"1", "0.5"}, s.Path("a.fb"), "0.9,0.3").ok());
  ASSERT_TRUE(Trace1(g, "geom", {"1", "0.5"}, s.Path("b.fb"), "0.9,0.8,0.1").ok());
  auto [sum, text] = RunDiff(s, s.Path("a.fb"), s.Path("b.fb"));
  ASSERT_TRUE(sum.divergence);
  EXPECT_EQ(sum.divergence->path_a, "@8/@6");
  EXPECT_EQ(sum.divergence->cond_path_a, "@8/@5");
  EXPECT_EQ(FormatValue(sum.divergence->cond_a), "true");
  EXPECT_EQ(FormatValue(sum.divergence->cond_b), "false");
  EXPECT_EQ(sum.only_b_calls, 1u);     // the third call of geom
  EXPECT_EQ(sum.only_a_children, 1u);  // a's return at @8/@6
  EXPECT_EQ(sum.changed_operands, 0u);
}

// A flat trace: a root call whose body is one primitive per op name (the
// location is the op's index in `alphabet`, so equal names are equal keys),
// then a return.
void WriteFlat(const std::string& path, const std::vector<int>& ops,
               const std::vector<double>& values = {}, std::string producer = "test",
               uint32_t chunk_nodes = 1u << 16) {
  auto out = Output::Open(path);
  ASSERT_TRUE(out.ok());
  WriterOptions wo;
  wo.producer_name = producer;
  wo.producer_version = "1";
  wo.chunk_nodes = chunk_nodes;
  TraceWriter w(out->get(), wo);
  ClassSpec root;
  root.kind = NodeKind::kCall;
  root.op = "main";
  root.block = 1;
  w.Append(w.DefineClass(root), Value(), {});
  std::vector<ClassId> cls;
  for (int k = 0; k < 8; ++k) {
    ClassSpec c;
    c.kind = NodeKind::kPrimitive;
    c.op = std::string(1, static_cast<char>('a' + k));
    c.block = 1;
    c.pos = static_cast<uint32_t>(k + 2);
    cls.push_back(w.DefineClass(c));
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    double v = i < values.size() ? values[i] : 1.0;
    w.Append(cls[ops[i]], Value::F64(v), {});
  }
  ClassSpec ret;
  ret.kind = NodeKind::kReturn;
  ret.block = 1;
  ret.pos = 1;
  ret.operands.push_back(OperandSpec::Literal(Value::I64(0)));
  w.Append(w.DefineClass(ret), Value::I64(0), {});
  ASSERT_TRUE(w.Finish().ok());
  ASSERT_TRUE((*out)->Commit().ok());
}

// The length of a longest common subsequence: the textbook dynamic program,
// two rows at a time (a whole table of long sequences is 200 MB), through
// plain pointers and not instrumented: it is the test's reference, and the
// sanitizer build made it most of the test's time.
__attribute__((no_sanitize("address", "undefined"))) size_t Lcs(const std::vector<int>& a,
                                                                const std::vector<int>& b) {
  std::vector<size_t> rows(2 * (b.size() + 1), 0);
  size_t* prev = rows.data();
  size_t* cur = prev + b.size() + 1;
  const int* pb = b.data();
  const size_t nb = b.size();
  for (int x : a) {
    for (size_t j = 1; j <= nb; ++j) {
      size_t up = prev[j], left = cur[j - 1];
      cur[j] = x == pb[j - 1] ? prev[j - 1] + 1 : (up > left ? up : left);
    }
    std::swap(prev, cur);
  }
  return prev[nb];
}

// Short sequences (shorter than the run of agreement the aligner waits for)
// are aligned globally: the edit script is a shortest one.
TEST(DiffAlignTest, ShortestEditScriptOnShortSequences) {
  DiffScratch s;
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    int alpha = 1 + trial % 4;
    auto gen = [&] {
      std::vector<int> v(std::uniform_int_distribution<int>(0, 24)(rng));
      for (int& x : v) x = std::uniform_int_distribution<int>(0, alpha - 1)(rng);
      return v;
    };
    std::vector<int> a = gen(), b = gen();
    WriteFlat(s.Path("a.fb"), a);
    WriteFlat(s.Path("b.fb"), b);
    DiffOptions o;
    o.format = DiffFormat::kStat;
    auto [sum, text] = RunDiff(s, s.Path("a.fb"), s.Path("b.fb"), o);
    size_t lcs = Lcs(a, b);
    EXPECT_EQ(sum.only_a_children, a.size() - lcs) << "trial " << trial;
    EXPECT_EQ(sum.only_b_children, b.size() - lcs) << "trial " << trial;
    EXPECT_EQ(sum.matched, lcs + 2) << "trial " << trial;  // + root and return
  }
}

// Long sequences with scattered edits: every child is accounted for once,
// and the edits found are no more than the edits made.
TEST(DiffAlignTest, ScatteredEditsInLongSequences) {
  DiffScratch s;
  std::mt19937 rng(11);
  for (int trial = 0; trial < 20; ++trial) {
    std::vector<int> a(5000);
    for (int& x : a) x = std::uniform_int_distribution<int>(0, 7)(rng);
    std::vector<int> b = a;
    size_t edits = 0;
    for (int e = 0; e < 30; ++e) {
      size_t at = std::uniform_int_distribution<size_t>(0, b.size() - 1)(rng);
      int kind = std::uniform_int_distribution<int>(0, 2)(rng);
      if (kind == 0) {
        b.erase(b.begin() + static_cast<long>(at));
        edits += 1;
      } else if (kind == 1) {
        b.insert(b.begin() + static_cast<long>(at), std::uniform_int_distribution<int>(0, 7)(rng));
        edits += 1;
      } else {
        b[at] = (b[at] + 1) % 8;
        edits += 2;
      }
    }
    WriteFlat(s.Path("a.fb"), a, {}, "test", 997);
    WriteFlat(s.Path("b.fb"), b, {}, "test", 1009);
    DiffOptions o;
    o.format = DiffFormat::kStat;
    auto [sum, text] = RunDiff(s, s.Path("a.fb"), s.Path("b.fb"), o);
    EXPECT_EQ(sum.matched - 2 + sum.only_a_children, a.size());
    EXPECT_EQ(sum.matched - 2 + sum.only_b_children, b.size());
    EXPECT_LE(sum.only_a_children + sum.only_b_children, edits) << "trial " << trial;
    EXPECT_GE(sum.only_a_children + sum.only_b_children, a.size() + b.size() - 2 * Lcs(a, b));
    EXPECT_EQ(sum.unaligned_regions, 0u);
  }
}

// Regions too long to align within the budget are reported as replaced
// wholesale: every child is still accounted for, and the work stays bounded.
TEST(DiffAlignTest, GivesUpOnHugeRegions) {
  DiffScratch s;
  std::mt19937 rng(3);
  std::vector<int> a(3000), b(3000);
  for (int& x : a) x = std::uniform_int_distribution<int>(0, 3)(rng);
  for (int& x : b) x = std::uniform_int_distribution<int>(4, 7)(rng);
  WriteFlat(s.Path("a.fb"), a);
  WriteFlat(s.Path("b.fb"), b);
  DiffOptions o;
  o.format = DiffFormat::kStat;
  auto [sum, text] = RunDiff(s, s.Path("a.fb"), s.Path("b.fb"), o);
  EXPECT_EQ(sum.unaligned_regions, 1u);
  EXPECT_EQ(sum.matched, 1u);  // the root call
  EXPECT_EQ(sum.only_a_children, a.size() + 1);
  EXPECT_EQ(sum.only_b_children, b.size() + 1);
  // Within the budget (2000 edits) the same kind of region is aligned exactly.
  a.resize(900);
  b.resize(900);
  WriteFlat(s.Path("a.fb"), a);
  WriteFlat(s.Path("b.fb"), b);
  auto [sum2, text2] = RunDiff(s, s.Path("a.fb"), s.Path("b.fb"), o);
  EXPECT_EQ(sum2.unaligned_regions, 0u);
  EXPECT_EQ(sum2.matched, 2u);  // and the returns
  EXPECT_EQ(sum2.only_a_children, a.size());
}

TEST(DiffTest, TolerancesAndIgnoredMetadata) {
  DiffScratch s;
  WriteFlat(s.Path("a.fb"), {0, 1, 2}, {1.0, 2.0, 3.0});
  WriteFlat(s.Path("b.fb"), {0, 1, 2}, {1.0, 2.0 + 1e-12, 3.0});
  auto [exact, t1] = RunDiff(s, s.Path("a.fb"), s.Path("b.fb"));
  EXPECT_EQ(exact.changed_values, 1u);
  EXPECT_NE(t1.find("-@2: [§1:%3] ⟨b⟩() → 2.0::Float64"), std::string::npos) << t1;
  DiffOptions o;
  o.rtol = 1e-9;
  auto [tol, t2] = RunDiff(s, s.Path("a.fb"), s.Path("b.fb"), o);
  EXPECT_TRUE(tol.same());
  o = {};
  o.atol = 1e-13;
  auto [tight, t3] = RunDiff(s, s.Path("a.fb"), s.Path("b.fb"), o);
  EXPECT_FALSE(tight.same());
}

TEST(DiffTest, ProducersAreReportedNotCompared) {
  DiffScratch s;
  WriteFlat(s.Path("a.fb"), {0, 1, 2}, {}, "one-producer");
  WriteFlat(s.Path("b.fb"), {0, 1, 2}, {}, "another");
  auto [sum, text] = RunDiff(s, s.Path("a.fb"), s.Path("b.fb"));
  EXPECT_TRUE(sum.same());
  EXPECT_EQ(sum.producer_a, "one-producer 1");
  EXPECT_EQ(sum.producer_b, "another 1");
  EXPECT_NE(text.find("# producers differ: one-producer 1 in a, another 1 in b"), std::string::npos)
      << text;
}

TEST(DiffTest, TensorsComparedElementwise) {
  DiffScratch s;
  auto write = [&](const std::string& path, std::vector<double> data) {
    auto out = Output::Open(path);
    TraceWriter w(out->get(), WriterOptions{});
    ClassSpec root;
    root.kind = NodeKind::kCall;
    root.op = "main";
    root.block = 1;
    w.Append(w.DefineClass(root), Value(), {});
    ClassSpec c;
    c.kind = NodeKind::kArgument;
    c.block = 1;
    c.pos = 2;
    NodeId x = w.Append(w.DefineClass(c), Value::MakeTensor(Tensor::FromF64({2, 3}, data)), {});
    ClassSpec ret;
    ret.kind = NodeKind::kReturn;
    ret.block = 1;
    ret.pos = 1;
    ret.operands.push_back(OperandSpec::Ref());
    NodeId refs[] = {x};
    w.Append(w.DefineClass(ret), Value::MakeTensor(Tensor::FromF64({2, 3}, data)), refs);
    ASSERT_TRUE(w.Finish().ok());
    ASSERT_TRUE((*out)->Commit().ok());
  };
  write(s.Path("a.fb"), {1, 2, 3, 4, 5, 6});
  write(s.Path("b.fb"), {1, 2, 3.5, 4, 5, 5});
  auto [sum, text] = RunDiff(s, s.Path("a.fb"), s.Path("b.fb"));
  EXPECT_EQ(sum.changed_values, 2u);
  EXPECT_EQ(sum.max_abs_diff, 1.0);
  EXPECT_NE(text.find("\\ 2 of 6 elements differ; largest |a - b| = 1.0 at [2, 3]"),
            std::string::npos)
      << text;
}

// A tensor that many nodes share is stored once per chunk and compared
// once per pair of chunks: a verdict is not carried into the next chunk,
// where index 0 of the tensor table is another tensor.
TEST(DiffTest, SharedTensorsComparedPerChunk) {
  DiffScratch s;
  auto write = [&](const std::string& path, double last) {
    auto out = Output::Open(path);
    WriterOptions wo;
    wo.chunk_nodes = 3;
    TraceWriter w(out->get(), wo);
    ClassSpec root;
    root.kind = NodeKind::kCall;
    root.op = "main";
    root.block = 1;
    w.Append(w.DefineClass(root), Value(), {});
    ClassSpec c;
    c.kind = NodeKind::kPrimitive;
    c.op = "f";
    c.block = 1;
    c.pos = 2;
    const ClassId f = w.DefineClass(c);
    const std::vector<double> ud = {1, 2}, vd = {3, last};
    const Value u = Value::MakeTensor(Tensor::FromF64({2}, ud));
    const Value v = Value::MakeTensor(Tensor::FromF64({2}, vd));
    // Chunks [main, u, u], [v, v, v], [return]: u and then v at index 0.
    for (const Value* x : {&u, &u, &v, &v, &v}) w.Append(f, *x, {});
    ClassSpec ret;
    ret.kind = NodeKind::kReturn;
    ret.block = 1;
    ret.pos = 1;
    ret.operands.push_back(OperandSpec::Literal(Value::I64(0)));
    w.Append(w.DefineClass(ret), Value::I64(0), {});
    ASSERT_TRUE(w.Finish().ok());
    ASSERT_TRUE((*out)->Commit().ok());
  };
  write(s.Path("a.fb"), 4);
  write(s.Path("b.fb"), 5);
  auto a = Trace::Open(s.Path("a.fb"));
  ASSERT_TRUE(a.ok());
  ASSERT_EQ(a->chunks().size(), 3u);
  auto [sum, text] = RunDiff(s, s.Path("a.fb"), s.Path("b.fb"));
  EXPECT_EQ(sum.changed_values, 3u) << text;
  EXPECT_EQ(sum.max_abs_diff, 1.0);
}

// Tuples whose items share tuples (2^20 leaves from 21 tuples): a pair of
// shared tuples is compared once, and a leaf that differs is still found.
TEST(DiffTest, SharedTuplesComparedOnce) {
  DiffScratch s;
  auto write = [&](const std::string& path, double bottom, double leaf) {
    auto out = Output::Open(path);
    TraceWriter w(out->get(), WriterOptions{});
    ClassSpec root;
    root.kind = NodeKind::kCall;
    root.op = "main";
    root.block = 1;
    w.Append(w.DefineClass(root), Value(), {});
    Value t = Value::F64(bottom);
    for (int d = 0; d < 20; ++d) t = Value::MakeTuple({t, t});
    t = Value::MakeTuple({t, Value::F64(leaf)});
    ClassSpec c;
    c.kind = NodeKind::kPrimitive;
    c.op = "f";
    c.block = 1;
    c.pos = 2;
    w.Append(w.DefineClass(c), t, {});
    ClassSpec ret;
    ret.kind = NodeKind::kReturn;
    ret.block = 1;
    ret.pos = 1;
    ret.operands.push_back(OperandSpec::Literal(Value::I64(0)));
    w.Append(w.DefineClass(ret), Value::I64(0), {});
    ASSERT_TRUE(w.Finish().ok());
    ASSERT_TRUE((*out)->Commit().ok());
  };
  write(s.Path("a.fb"), 1.0, 2.0);
  write(s.Path("b.fb"), 1.0, 2.0);
  write(s.Path("c.fb"), 1.0, 3.0);
  write(s.Path("d.fb"), 1.5, 2.0);
  EXPECT_EQ(RunDiff(s, s.Path("a.fb"), s.Path("b.fb")).first.changed_values, 0u);
  EXPECT_EQ(RunDiff(s, s.Path("a.fb"), s.Path("c.fb")).first.changed_values, 1u);
  EXPECT_EQ(RunDiff(s, s.Path("a.fb"), s.Path("d.fb")).first.changed_values, 1u);
}

// Two traces 10^5 calls deep that differ at the bottom: no recursion, and
// the divergence is found with its full path.
TEST(DiffTest, DeepRecursion) {
  DiffScratch s;
  auto write = [&](const std::string& path, double bottom) {
    auto out = Output::Open(path);
    TraceWriter w(out->get(), WriterOptions{});
    ClassSpec call;
    call.kind = NodeKind::kCall;
    call.op = "down";
    call.block = 1;
    call.pos = 3;
    ClassId c = w.DefineClass(call);
    ClassSpec leaf;
    leaf.kind = NodeKind::kPrimitive;
    leaf.op = "rand";
    leaf.block = 1;
    leaf.pos = 2;
    ClassId l = w.DefineClass(leaf);
    ClassSpec ret;
    ret.kind = NodeKind::kReturn;
    ret.block = 1;
    ret.pos = 1;
    ret.operands.push_back(OperandSpec::Ref());
    ClassId r = w.DefineClass(ret);
    const int depth = 100000;
    for (int i = 0; i < depth; ++i) w.Append(c, Value(), {});
    NodeId last = w.Append(l, Value::F64(bottom), {});
    for (int i = 0; i < depth; ++i) {
      NodeId refs[] = {last};
      last = w.Append(r, Value::F64(bottom), refs);
    }
    ASSERT_TRUE(w.Finish().ok());
    ASSERT_TRUE((*out)->Commit().ok());
  };
  write(s.Path("a.fb"), 0.25);
  write(s.Path("b.fb"), 0.5);
  DiffOptions o;
  o.format = DiffFormat::kStat;
  auto [sum, text] = RunDiff(s, s.Path("a.fb"), s.Path("b.fb"), o);
  EXPECT_EQ(sum.changed_values, 100001u);  // the draw and every return above it
  EXPECT_EQ(sum.matched, sum.nodes_a);
  auto [same, t2] = RunDiff(s, s.Path("a.fb"), s.Path("a.fb"), o);
  EXPECT_TRUE(same.same());
}

// The walk gives back the decoded columns of the chunks it has left and
// reads a chunk again when it needs it (a call's marker, a referenced
// value, the context lines before a change): the report of traces written
// in chunks of 7 nodes is the report of the same traces in one chunk.
TEST(DiffTest, ReportDoesNotDependOnChunks) {
  struct Program {
    const char* file;
    const char* fn;
    std::vector<Value> a, b;
  };
  const Program programs[] = {
      {"siblings.ir", "sib", {Value::F64(0.5), Value::I64(30)}, {Value::F64(0.25), Value::I64(31)}},
      {"recloop.ir", "tri", {Value::I64(12)}, {Value::I64(13)}},
      {"looprec.ir",
       "looprec",
       {Value::F64(1.01), Value::I64(20)},
       {Value::F64(1.5), Value::I64(20)}},
  };
  for (const Program& p : programs) {
    SCOPED_TRACE(p.file);
    auto m = ir::Module::Load(Src(std::string("testdata/ir/") + p.file));
    ASSERT_TRUE(m.ok()) << m.status().message();
    std::string reports[2][3];
    for (int chunked = 0; chunked < 2; ++chunked) {
      DiffScratch s;
      for (const char* side : {"a", "b"}) {
        ir::TrackingContext ctx;
        ir::RandomSource rs = ir::RandomSource::Seeded(1);
        ir::Interpreter interp(*m, ctx, rs);
        auto out = Output::Open(s.Path(std::string(side) + ".fb"));
        ASSERT_TRUE(out.ok());
        WriterOptions wo;
        if (chunked) wo.chunk_nodes = 7;
        TraceWriter w(out->get(), wo);
        const std::vector<Value>& args = side[0] == 'a' ? p.a : p.b;
        ASSERT_TRUE(interp.Trace(p.fn, args, w).ok());
        ASSERT_TRUE((*out)->Commit().ok());
      }
      int k = 0;
      for (DiffFormat f : {DiffFormat::kText, DiffFormat::kStat, DiffFormat::kJson}) {
        DiffOptions o;
        o.format = f;
        o.context = 3;
        auto [sum, text] = RunDiff(s, s.Path("a.fb"), s.Path("b.fb"), o);
        EXPECT_FALSE(sum.same());
        // The files' names differ by their directories only.
        std::string dir = s.Path("");
        for (size_t at; (at = text.find(dir)) != std::string::npos;)
          text.replace(at, dir.size(), "");
        reports[chunked][k++] = text;
      }
    }
    for (int k = 0; k < 3; ++k) {
      EXPECT_FALSE(reports[0][k].empty());
      EXPECT_EQ(reports[0][k], reports[1][k]) << "format " << k;
    }
  }
}

TEST(DiffTest, BadOptions) {
  DiffScratch s;
  WriteFlat(s.Path("a.fb"), {0});
  Trace t = testing::OpenTrace(s.Path("a.fb"));
  auto out = Output::Open(s.Path("o"));
  DiffOptions o;
  o.rtol = -1;
  EXPECT_EQ(DiffTraces(t, t, o, **out).status().code(), Code::kUsage);
}

}  // namespace
}  // namespace irt
