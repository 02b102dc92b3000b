// The derivative engine on traced IR programs (rules_test.cc covers the
// rule files, ops_test.cc the operations they are made of): the seed's
// examples against analytic values, random programs (branches, loops,
// nested calls, tensors) where reverse mode, forward mode and central
// finite differences must agree, the dot-product test, the emitted backward trace (same gradient
// bit for bit, second derivatives against finite differences of the gradient), sparse accumulation,
// rules for module functions, errors, and deep recursion.
#include "irt/grad.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <functional>
#include <optional>
#include <random>
#include <set>

#include "irt/check.h"
#include "irt/ir/interpreter.h"
#include "irt/ir/module.h"
#include "irt/ops.h"
#include "irt/output.h"
#include "irt/rules.h"
#include "irt/trace.h"
#include "irt/writer.h"

namespace irt {
namespace {

std::string Source(const std::string& rel) { return std::string(IRT_SOURCE_DIR) + "/" + rel; }

const RuleSet& DefaultRules() {
  static const RuleSet* rules = [] {
    auto r = RuleSet::Load(Source("rules/default.rules"));
    EXPECT_TRUE(r.ok()) << r.status().message();
    return new RuleSet(r.ok() ? std::move(r).value() : RuleSet());
  }();
  return *rules;
}

// A new file name at each call (TraceIR writes one per program).
std::string UniqueTempPath(const std::string& name) {
  static int counter = 0;
  return ::testing::TempDir() + "/grad_test_" + std::to_string(getpid()) + "_" +
         std::to_string(counter++) + "_" + name;
}

// Traces function `fn` of the IR module `text` at `args` into a file.
std::string TraceIR(const std::string& text, const std::string& fn, const std::vector<Value>& args,
                    const WriterOptions& options = {}) {
  auto m = ir::Module::Parse(text, "test.ir");
  EXPECT_TRUE(m.ok()) << m.status().message();
  if (!m.ok()) return "";
  std::string path = UniqueTempPath(fn + ".fb");
  auto out = Output::Open(path);
  EXPECT_TRUE(out.ok());
  {
    TraceWriter w(out->get(), options);
    ir::StandardContext ctx({});
    ir::RandomSource random = ir::RandomSource::Seeded(7);
    ir::Interpreter interp(*m, ctx, random);
    auto r = interp.Trace(fn, args, w);
    EXPECT_TRUE(r.ok()) << r.status().message();
  }
  EXPECT_TRUE((*out)->Commit().ok());
  return path;
}

Value Evaluate(const std::string& text, const std::string& fn, const std::vector<Value>& args) {
  auto m = ir::Module::Parse(text, "test.ir");
  EXPECT_TRUE(m.ok()) << m.status().message();
  ir::StandardContext ctx({});
  ir::RandomSource random = ir::RandomSource::Seeded(7);
  ir::Interpreter interp(*m, ctx, random);
  auto r = interp.Evaluate(fn, args);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? *r : Value();
}

Result<GradResult> Grad(const std::string& path, GradOptions opts = {},
                        const RuleSet& rules = DefaultRules()) {
  IRT_ASSIGN_OR_RETURN(Trace t, Trace::Open(path));
  return Differentiate(t, rules, opts);
}

// Forward mode along the root's first argument (@2, tangent 1).
GradOptions ForwardAlong2() {
  GradOptions o;
  o.mode = GradMode::kForward;
  o.tangents = {{2, Value::F64(1.0)}};
  return o;
}

double Deriv(const GradResult& r, uint32_t pos) {
  for (const ArgumentDerivative& a : r.arguments) {
    if (a.pos == pos) return a.derivative.to_double();
  }
  ADD_FAILURE() << "no argument @" << pos;
  return std::nan("");
}

// Writes the backward pass of `path` and returns the emitted trace's path.
std::string Emit(const std::string& path, GradOptions opts = {}) {
  auto t = Trace::Open(path);
  EXPECT_TRUE(t.ok()) << t.status().message();
  std::string out_path = UniqueTempPath("emitted.fb");
  auto out = Output::Open(out_path);
  EXPECT_TRUE(out.ok());
  auto r = EmitGradientTrace(*t, DefaultRules(), opts, **out);
  EXPECT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE((*out)->Commit().ok());
  auto check = CheckTrace(out_path);
  EXPECT_TRUE(check.ok()) << check.status().message();
  return out_path;
}

// The derivative with respect to root argument @pos.
const Value& DerivativeAt(const GradResult& r, uint32_t pos) {
  for (const ArgumentDerivative& a : r.arguments) {
    if (a.pos == pos) return a.derivative;
  }
  ADD_FAILURE() << "no argument @" << pos;
  static const Value none;
  return none;
}

bool Close(double a, double b, double rtol, double atol = 0) {
  return std::fabs(a - b) <= atol + rtol * std::max(std::fabs(a), std::fabs(b));
}

// ---------------------------------------------------------------- engine: seeds

const char* kF = "function f\n1: (%1, %2)\n  %3 = Main.sin(%2)\n  %4 = %3 + %2\n  return %4\nend\n";
const char* kCosSin =
    "function cs\n1: (%1, %2)\n  %3 = Main.cos(%2)\n  %4 = Main.sin(%3)\n  %5 = %3 + %4\n"
    "  return %5\nend\n";

std::string ReadFile(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  std::string s;
  if (!f) return s;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  std::fclose(f);
  return s;
}

// With a budget too small for two chunks, the passes give back nearly
// every chunk they leave and decode it again when they come back (on the
// second thread too, behind the sweep): the derivatives are bit for bit
// those of a budget that holds the whole trace, of the default budget and
// of format 1, and the analytic value. looprec's references reach far back
// (x from every level, each level's sum across the recursion below it).
TEST(GradTest, ChunksGivenBackAndDecodedAgainGiveTheSameDerivatives) {
  std::string text = ReadFile(Source("testdata/ir/looprec.ir"));
  const double x = 1.01;
  const int64_t d = 40;
  std::vector<Value> args{Value::F64(x), Value::I64(d)};
  WriterOptions small;
  small.chunk_nodes = 16;
  std::string v2 = TraceIR(text, "looprec", args, small);
  small.format_major = 1;
  std::string v1 = TraceIR(text, "looprec", args, small);
  double want = 0;
  for (int64_t k = 1; k <= d; ++k) {
    for (int64_t i = 1; i <= k; ++i) want += static_cast<double>(i) * std::pow(x, i - 1);
  }
  for (GradMode mode : {GradMode::kReverse, GradMode::kForward}) {
    std::optional<double> first;
    for (uint64_t budget : {uint64_t{1}, uint64_t{0}, uint64_t{1} << 30}) {
      for (const std::string& path : {v2, v1}) {
        GradOptions o;
        o.mode = mode;
        o.column_budget = budget;
        if (mode == GradMode::kForward) o.tangents = {{2, Value::F64(1.0)}};
        auto r = Grad(path, o);
        ASSERT_TRUE(r.ok()) << r.status().message();
        double g = mode == GradMode::kReverse ? Deriv(*r, 2) : r->tangent.to_double();
        EXPECT_TRUE(Close(g, want, 1e-12)) << g << " vs " << want;
        if (!first) first = g;
        EXPECT_EQ(std::bit_cast<uint64_t>(g), std::bit_cast<uint64_t>(*first))
            << "budget " << budget << " " << path;
      }
    }
  }
}

// The sweep gives back each page of 2^16 adjoints once it is below it; a
// loop of 3 * 10^5 active nodes crosses several. Keeping every adjoint
// (annotation does) must give the same bits, and both the analytic value.
TEST(GradTest, AdjointPagesGivenBackGiveTheSameDerivatives) {
  std::string text = ReadFile(Source("testdata/ir/h.ir"));
  const double x = 0.99999;
  const int64_t n = 100000;
  std::string path = TraceIR(text, "h", {Value::F64(x), Value::I64(n)});
  double want = 0;
  for (int64_t i = 1; i < n; ++i) want += static_cast<double>(i) * std::pow(x, i - 1);
  GradOptions given_back;
  GradOptions kept;
  kept.keep_adjoints = true;
  auto a = Grad(path, given_back);
  auto b = Grad(path, kept);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_GT(a->stats.active_nodes, 4u << 16);
  EXPECT_TRUE(Close(Deriv(*a, 2), want, 1e-12)) << Deriv(*a, 2) << " vs " << want;
  EXPECT_EQ(std::bit_cast<uint64_t>(Deriv(*a, 2)), std::bit_cast<uint64_t>(Deriv(*b, 2)));
  GradOptions fw = ForwardAlong2();
  auto f = Grad(path, fw);
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(Close(f->tangent.to_double(), want, 1e-12));
}

// A NodeView taken between two gradients of the same trace reads its node
// after the second gave its chunk back: the chunk is decoded again.
TEST(GradTest, NodeViewsOutliveTheChunksAGradientGivesBack) {
  std::string text = ReadFile(Source("testdata/ir/looprec.ir"));
  WriterOptions small;
  small.chunk_nodes = 16;
  std::string path = TraceIR(text, "looprec", {Value::F64(1.01), Value::I64(30)}, small);
  auto t = Trace::Open(path);
  auto fresh = Trace::Open(path);
  ASSERT_TRUE(t.ok() && fresh.ok());
  GradOptions o;
  o.column_budget = 1;
  ASSERT_TRUE(Differentiate(*t, DefaultRules(), o).ok());
  std::vector<NodeView> views;
  for (NodeId id = 0; id < t->size(); id += 5) {
    auto v = t->node(id);
    ASSERT_TRUE(v.ok()) << v.status().message();
    views.push_back(*v);
  }
  auto again = Differentiate(*t, DefaultRules(), o);
  ASSERT_TRUE(again.ok()) << again.status().message();
  for (const NodeView& v : views) {
    auto w = fresh->node(v.id());
    ASSERT_TRUE(w.ok());
    EXPECT_EQ(v.kind(), w->kind()) << v.id();
    EXPECT_EQ(v.bits(), w->bits()) << v.id();
    EXPECT_EQ(v.refs(), w->refs()) << v.id();
  }
}

TEST(GradTest, SeedExamples) {
  auto f = Grad(TraceIR(kF, "f", {Value::F64(1.0)}));
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(Deriv(*f, 2), std::cos(1.0) + 1.0);
  std::string h = ReadFile(Source("testdata/ir/h.ir"));
  auto r = Grad(TraceIR(h, "h", {Value::F64(2.0), Value::I64(2)}));
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(Deriv(*r, 2), 1.0);
  EXPECT_FALSE(r->arguments[2].differentiable);  // n
  // c = cos(x); c + sin(c): nodes in descending position, not discovery order.
  auto cs = Grad(TraceIR(kCosSin, "cs", {Value::F64(0.7)}));
  ASSERT_TRUE(cs.ok());
  double c = std::cos(0.7);
  EXPECT_TRUE(Close(Deriv(*cs, 2), -std::sin(0.7) * (1 + std::cos(c)), 1e-15));
  EXPECT_TRUE(Close(Deriv(*cs, 2), -1.109015362660540, 1e-13));
}

TEST(GradTest, GeomThroughRecursionAndStochasticBranches) {
  std::string geom = ReadFile(Source("testdata/ir/geom.ir"));
  for (int seed = 0; seed < 5; ++seed) {
    auto m = ir::Module::Parse(geom, "geom.ir");
    ASSERT_TRUE(m.ok());
    std::string path = UniqueTempPath("geom.fb");
    auto out = Output::Open(path);
    {
      TraceWriter w(out->get(), WriterOptions{});
      ir::StandardContext ctx({});
      ir::RandomSource random = ir::RandomSource::Seeded(static_cast<uint64_t>(seed));
      ir::Interpreter interp(*m, ctx, random);
      ASSERT_TRUE(
          interp.Trace("geom", std::vector<Value>{Value::F64(1.5), Value::F64(0.3)}, w).ok());
    }
    ASSERT_TRUE((*out)->Commit().ok());
    auto r = Grad(path);
    ASSERT_TRUE(r.ok()) << r.status().message();
    // geom(n, β) returns n + (number of failed draws): d/dn = 1; β only decides branches.
    EXPECT_EQ(Deriv(*r, 2), 1.0);
    EXPECT_EQ(Deriv(*r, 3), 0.0);
    GradOptions fw = ForwardAlong2();
    auto f = Grad(path, fw);
    ASSERT_TRUE(f.ok()) << f.status().message();
    EXPECT_EQ(f->tangent.to_double(), 1.0);
  }
}

TEST(GradTest, EmittedTraceGivesTheSameGradientAndSecondDerivatives) {
  std::string h = ReadFile(Source("testdata/ir/h.ir"));
  std::string path = TraceIR(h, "h", {Value::F64(2.4), Value::I64(4)});
  auto r = Grad(path);
  ASSERT_TRUE(r.ok());
  std::string emitted = Emit(path);
  auto t = Trace::Open(emitted);
  ASSERT_TRUE(t.ok());
  auto last = t->node(t->size() - 1);
  ASSERT_TRUE(last.ok());
  EXPECT_TRUE(BitEqual(last->value(), r->arguments[1].derivative));
  // Each adjoint node names its primal node.
  bool linked = false;
  for (NodeId i = 0; i < t->size(); ++i) {
    auto v = t->node(i);
    if (v->meta("adjoint_of")) linked = true;
  }
  EXPECT_TRUE(linked);
  auto r2 = Grad(emitted);
  ASSERT_TRUE(r2.ok()) << r2.status().message();
  // d²/dx² (1 + x + x² + x³) = 2 + 6x at 2.4.
  EXPECT_TRUE(Close(Deriv(*r2, 2), 2 + 6 * 2.4, 1e-14)) << Deriv(*r2, 2);
  // Third derivative: emit the emitted trace's backward pass.
  auto r3 = Grad(Emit(emitted));
  ASSERT_TRUE(r3.ok()) << r3.status().message();
  EXPECT_TRUE(Close(Deriv(*r3, 2), 6.0, 1e-14)) << Deriv(*r3, 2);
}

// Emitting gives back chunks and decodes them again as the gradient does
// (its Constants copy values from far back): whatever the budget, the
// emitted trace is the same bytes, and it returns the gradient's bits.
TEST(GradTest, EmittedTraceIsTheSameWhateverTheColumnBudget) {
  std::string text = ReadFile(Source("testdata/ir/looprec.ir"));
  WriterOptions small;
  small.chunk_nodes = 16;
  std::string path = TraceIR(text, "looprec", {Value::F64(1.01), Value::I64(30)}, small);
  auto r = Grad(path);
  ASSERT_TRUE(r.ok()) << r.status().message();
  std::optional<std::string> first;
  for (uint64_t budget : {uint64_t{1} << 30, uint64_t{1}, uint64_t{0}}) {
    GradOptions o;
    o.column_budget = budget;
    std::string bytes = ReadFile(Emit(path, o));
    ASSERT_FALSE(bytes.empty());
    if (!first) first = bytes;
    EXPECT_TRUE(bytes == *first) << "budget " << budget;
  }
  auto t = Trace::Open(Emit(path, {}));
  ASSERT_TRUE(t.ok());
  auto last = t->node(t->size() - 1);
  ASSERT_TRUE(last.ok());
  EXPECT_TRUE(BitEqual(last->value(), r->arguments[1].derivative));
}

// getindex's adjoint adds one element at a time. The emitted trace keeps
// each element's sum and writes the tensor once, joined by a tree of cats:
// its size grows as n log n with the elements added (it held a copy of the
// tensor per addition, n^2). On Rosenbrock's function it returns the
// gradient's bits, and its own derivatives are rows of the Hessian.
TEST(GradTest, EmittedElementAdjointsGrowAsNLogN) {
  std::string text = ReadFile(Source("bench/ir/w2_rosenbrock.ir"));
  auto rosen = [&](int64_t n) {
    Tensor x = Tensor::Zeros(DType::kF64, {n});
    for (int64_t k = 0; k < n; ++k) x.f64()[k] = 0.5 + 0.01 * static_cast<double>(k % 50);
    return TraceIR(text, "rosen", {Value::MakeTensor(std::move(x)), Value::I64(n)});
  };
  std::vector<uint64_t> bytes;
  for (int64_t n : {64, 512}) {
    SCOPED_TRACE(n);
    std::string path = rosen(n);
    auto r = Grad(path);
    ASSERT_TRUE(r.ok()) << r.status().message();
    std::string emitted = Emit(path);
    bytes.push_back(ReadFile(emitted).size());
    auto t = Trace::Open(emitted);
    ASSERT_TRUE(t.ok());
    Value g = t->node(t->size() - 1)->value();
    EXPECT_TRUE(BitEqual(g, DerivativeAt(*r, 2))) << FormatValue(g);
    if (n != 64) continue;
    // Hessian rows 1 and 2: the emitted trace seeded with e1 and e2.
    auto x = [&](int64_t k) { return 0.5 + 0.01 * static_cast<double>((k - 1) % 50); };
    for (int64_t row : {1, 2}) {
      Tensor e = Tensor::Zeros(DType::kF64, {n});
      e.f64()[row - 1] = 1.0;
      GradOptions o;
      o.seed = Value::MakeTensor(std::move(e));
      o.wrt = {2};
      auto h = Grad(emitted, o);
      ASSERT_TRUE(h.ok()) << h.status().message();
      const Tensor& hr = DerivativeAt(*h, 2).tensor();
      std::vector<double> want(static_cast<size_t>(n), 0.0);
      auto at = [&](int64_t k) -> double& { return want[static_cast<size_t>(k - 1)]; };
      at(row) = (row > 1 ? 200.0 : 0.0) + 1200 * x(row) * x(row) - 400 * x(row + 1) + 2;
      at(row + 1) = -400 * x(row);
      if (row > 1) at(row - 1) = -400 * x(row - 1);
      for (int64_t k = 1; k <= n; ++k) {
        EXPECT_TRUE(Close(hr.f64()[k - 1], at(k), 1e-12, 1e-12))
            << "H[" << row << "][" << k << "] = " << hr.f64()[k - 1] << ", want " << at(k);
      }
    }
  }
  // 8 times the elements: 8 * 9 / 6 = 12 times the bytes for n log n, 64
  // for n^2.
  EXPECT_LT(bytes[1], 14 * bytes[0]) << bytes[0] << " then " << bytes[1];
}

// Element adjoints carried through a loop (a block argument passing them
// on), merged with the root argument's own, added to a dense adjoint,
// elements never touched, a matrix; a dense adjoint that comes first (then
// each element is added with addindex); and -0.0 alone in an element: the
// emitted trace returns the gradient's bits.
TEST(GradTest, EmittedElementAdjointsHaveTheGradientsBits) {
  const char* merged =
      "function a\n1: (%1, %2)\n  %3 = Main.sum(%2)\n  br 2 (1, %3, %2)\n"
      "2: (%4, %5, %6)\n  %7 = %4 <= 3\n  br 4 unless %7\n  br 3\n"
      "3:\n  %8 = Main.getindex(%6, 2, %4)\n  %9 = Main.getindex(%6, 1, %4)\n"
      "  %10 = %8 * %9\n  %11 = %5 + %10\n  %12 = %4 + 1\n  br 2 (%12, %11, %6)\n"
      "4:\n  %13 = Main.getindex(%2, 1, 1)\n  %14 = %5 * %13\n"
      "  return %14\nend\n";
  const char* dense_first =
      "function b\n1: (%1, %2)\n  %3 = Main.getindex(%2, 2, 1)\n  %4 = Main.sum(%2)\n"
      "  %5 = %3 * %4\n  %6 = Main.getindex(%2, 2, 1)\n  %7 = %5 * %6\n  return %7\nend\n";
  const char* negative_zero =
      "function c\n1: (%1, %2)\n  %3 = Main.getindex(%2, 1, 2)\n  %4 = %3 * -0.0\n"
      "  %5 = Main.getindex(%2, 2, 1)\n  %6 = %5 * %5\n  %7 = %4 + %6\n  return %7\nend\n";
  Tensor m = Tensor::Zeros(DType::kF64, {2, 4});
  for (int k = 0; k < 8; ++k) m.f64()[k] = 0.25 * (k + 1) - 0.6;
  for (auto [text, fn] :
       {std::pair{merged, "a"}, std::pair{dense_first, "b"}, std::pair{negative_zero, "c"}}) {
    SCOPED_TRACE(fn);
    std::string path = TraceIR(text, fn, {Value::MakeTensor(m)});
    auto r = Grad(path);
    ASSERT_TRUE(r.ok()) << r.status().message();
    auto t = Trace::Open(Emit(path));
    ASSERT_TRUE(t.ok());
    Value g = t->node(t->size() - 1)->value();
    EXPECT_TRUE(BitEqual(g, DerivativeAt(*r, 2)))
        << FormatValue(g) << " vs " << FormatValue(DerivativeAt(*r, 2));
    if (std::string(fn) == "c") {
      EXPECT_FALSE(std::signbit(g.tensor().f64()[1]));  // -0.0 added into +0.0
    }
  }
}

TEST(GradTest, AnnotatedTraceCarriesAdjoints) {
  std::string path = TraceIR(kCosSin, "cs", {Value::F64(0.7)});
  auto t = Trace::Open(path);
  ASSERT_TRUE(t.ok());
  std::string out_path = UniqueTempPath("annotated.fb");
  auto out = Output::Open(out_path);
  GradOptions opts;
  opts.keep_adjoints = true;
  auto r = WriteAnnotated(*t, DefaultRules(), opts, **out);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE((*out)->Commit().ok());
  auto a = Trace::Open(out_path);
  ASSERT_TRUE(a.ok());
  ASSERT_EQ(a->size(), t->size());
  for (NodeId i = 0; i < t->size(); ++i) {
    auto x = t->node(i);
    auto y = a->node(i);
    EXPECT_TRUE(BitEqual(x->value(), y->value()));
    EXPECT_EQ(x->op(), y->op());
  }
  auto arg = a->node(2);  // @2 = x
  ASSERT_TRUE(arg->meta("adjoint"));
  EXPECT_TRUE(BitEqual(*arg->meta("adjoint"), r->arguments[1].derivative));
}

// The annotated trace reads its chunks again after the passes, through the
// engine's bounded set of decoded chunks: whatever the budget, the same
// bytes, and each node's adjoint is the gradient's (looprec in 16-node
// chunks: references reach far back).
TEST(GradTest, AnnotatedTraceIsTheSameWhateverTheColumnBudget) {
  std::string text = ReadFile(Source("testdata/ir/looprec.ir"));
  WriterOptions small;
  small.chunk_nodes = 16;
  std::string path = TraceIR(text, "looprec", {Value::F64(1.01), Value::I64(30)}, small);
  std::optional<std::string> first;
  for (uint64_t budget : {uint64_t{1} << 30, uint64_t{1}, uint64_t{0}}) {
    SCOPED_TRACE(budget);
    auto t = Trace::Open(path);
    ASSERT_TRUE(t.ok());
    std::string out_path = UniqueTempPath("annotated-budget.fb");
    auto out = Output::Open(out_path);
    ASSERT_TRUE(out.ok());
    GradOptions o;
    o.column_budget = budget;
    auto r = WriteAnnotated(*t, DefaultRules(), o, **out);
    ASSERT_TRUE(r.ok()) << r.status().message();
    ASSERT_TRUE((*out)->Commit().ok());
    std::string bytes = ReadFile(out_path);
    ASSERT_FALSE(bytes.empty());
    if (!first) first = bytes;
    EXPECT_TRUE(bytes == *first);
    auto a = Trace::Open(out_path);
    ASSERT_TRUE(a.ok());
    auto x = a->node(2)->meta("adjoint");
    ASSERT_TRUE(x);
    EXPECT_TRUE(BitEqual(*x, DerivativeAt(*r, 2)));
  }
}

// ---------------------------------------------------------------- random programs

// Random scalar IR programs: arithmetic and smooth functions over a pool of
// values, a loop carrying an accumulator, a branch on a float, and calls to
// a helper function that itself recurses a few levels.
class ProgramGen {
 public:
  explicit ProgramGen(uint32_t seed) : rng_(seed) {}

  std::string Generate() {
    std::string s = "function main\n1: (%1, %2, %3, %4)\n";
    next_ = 5;
    pool_ = {"%2", "%3"};
    for (int i = 0; i < Uniform(2, 5); ++i) s += Statement(pool_);
    std::string init = Pick(pool_);
    int i_ssa = next_++, acc_ssa = next_++;
    s += "  br 2 (0, " + init + ")\n";
    s += "2: (%" + std::to_string(i_ssa) + ", %" + std::to_string(acc_ssa) + ")\n";
    int cond = next_++;
    s += "  %" + std::to_string(cond) + " = %" + std::to_string(i_ssa) + " < %4\n";
    s += "  br 4 unless %" + std::to_string(cond) + "\n  br 3\n3:\n";
    std::vector<std::string> loop_pool = pool_;
    loop_pool.push_back("%" + std::to_string(acc_ssa));
    std::string body;
    for (int i = 0; i < Uniform(1, 3); ++i) body += Statement(loop_pool);
    int acc2 = next_++;
    body += "  %" + std::to_string(acc2) + " = %" + std::to_string(acc_ssa) + " * 0.5\n";
    // The accumulator mixes in the last loop value (magnitudes stay bounded).
    int acc3 = next_++;
    body += "  %" + std::to_string(acc3) + " = %" + std::to_string(acc2) + " + " +
            loop_pool.back() + "\n";
    int inc = next_++;
    body += "  %" + std::to_string(inc) + " = %" + std::to_string(i_ssa) + " + 1\n";
    body += "  br 2 (%" + std::to_string(inc) + ", %" + std::to_string(acc3) + ")\n";
    s += body;
    s += "4:\n";
    std::vector<std::string> tail = pool_;
    tail.push_back("%" + std::to_string(acc_ssa));
    int c2 = next_++;
    s += "  %" + std::to_string(c2) + " = " + tail.back() + " < " + Fmt(Real(-1, 1)) + "\n";
    s += "  br 6 unless %" + std::to_string(c2) + "\n  br 5\n5:\n";
    int call = next_++;
    s += "  %" + std::to_string(call) + " = Main.helper(" + tail.back() + ", " + Pick(pool_) +
         ", 3)\n";
    s += "  return %" + std::to_string(call) + "\n6:\n";
    std::vector<std::string> p6 = tail;
    for (int i = 0; i < Uniform(1, 3); ++i) {
      s += Statement(p6);
    }
    s += "  return " + p6.back() + "\nend\n";
    s += Helper();
    return s;
  }

 private:
  int Uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  double Real(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng_); }
  std::string Pick(const std::vector<std::string>& v) {
    return v[static_cast<size_t>(Uniform(0, static_cast<int>(v.size()) - 1))];
  }
  static std::string Fmt(double d) { return FormatDouble(d); }

  // One statement: `%k = expr` over values of `pool` (added to it). Some
  // expressions take two statements (a safe denominator first).
  std::string Statement(std::vector<std::string>& pool) {
    std::string a = Pick(pool), b = Pick(pool);
    std::string out;
    auto def = [&](const std::string& expr) {
      std::string name = "%" + std::to_string(next_++);
      out += "  " + name + " = " + expr + "\n";
      return name;
    };
    std::string r;
    switch (Uniform(0, 11)) {
      case 0:
        r = def(a + " + " + b);
        break;
      case 1:
        r = def(a + " - " + b);
        break;
      case 2:
        r = def(a + " * " + b);
        break;
      case 3: {
        std::string sq = def(b + " * " + b);
        std::string den = def(sq + " + 1.5");
        r = def(a + " / " + den);
        break;
      }
      case 4:
        r = def("Main.sin(" + a + ")");
        break;
      case 5:
        r = def("Main.cos(" + a + ")");
        break;
      case 6:
        r = def("Main.tanh(" + a + ")");
        break;
      case 7: {
        std::string t = def("Main.tanh(" + a + ")");
        r = def("Main.exp(" + t + ")");
        break;
      }
      case 8: {
        std::string sq = def(a + " * " + a);
        std::string p = def(sq + " + 1.0");
        r = def(Uniform(0, 1) ? "Main.log(" + p + ")" : "Main.sqrt(" + p + ")");
        break;
      }
      case 9:
        r = def(a + " ^ " + std::to_string(Uniform(2, 3)));
        break;
      case 10:
        r = def(Fmt(Real(-2, 2)) + " * " + a);
        break;
      default:
        r = def("-" + a);
        break;
    }
    pool.push_back(r);
    return out;
  }

  std::string Helper() {
    // helper(a, b, d) = d == 0 ? f(a, b) : helper(g(a, b), b, d - 1) * 0.5 + a
    std::string s =
        "function helper\n1: (%1, %2, %3, %4)\n  %5 = %4 == 0\n  br 3 unless %5\n  br 2\n2:\n";
    next_ = 6;
    std::vector<std::string> p = {"%2", "%3"};
    s += Statement(p);
    s += "  return " + p.back() + "\n3:\n";
    std::vector<std::string> q = {"%2", "%3"};
    s += Statement(q);
    int d = next_++, c = next_++, m = next_++, r = next_++;
    s += "  %" + std::to_string(d) + " = %4 - 1\n";
    s += "  %" + std::to_string(c) + " = Main.helper(" + q.back() + ", %3, %" + std::to_string(d) +
         ")\n";
    s += "  %" + std::to_string(m) + " = %" + std::to_string(c) + " * 0.5\n";
    s += "  %" + std::to_string(r) + " = %" + std::to_string(m) + " + %2\n";
    s += "  return %" + std::to_string(r) + "\nend\n";
    return s;
  }

  std::mt19937 rng_;
  int next_ = 5;
  std::vector<std::string> pool_;
};

// The jumps a run takes, to tell whether a perturbation changed its path.
std::vector<uint32_t> Path(const std::string& trace_path) {
  std::vector<uint32_t> out;
  auto t = Trace::Open(trace_path);
  if (!t.ok()) return out;
  for (NodeId i = 0; i < t->size(); ++i) {
    auto v = t->node(i);
    if (v->kind() == NodeKind::kJump) out.push_back(v->jump_target());
    if (v->kind() == NodeKind::kCall) out.push_back(1000000);
  }
  return out;
}

TEST(GradTest, RandomProgramsReverseForwardAndFiniteDifferencesAgree) {
  int checked = 0, skipped = 0;
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    std::string text = ProgramGen(seed).Generate();
    std::mt19937 rng(seed * 7919);
    std::uniform_real_distribution<double> u(-1.5, 1.5);
    double x = u(rng), y = u(rng);
    int64_t n = 1 + static_cast<int64_t>(seed % 4);
    std::vector<Value> args{Value::F64(x), Value::F64(y), Value::I64(n)};
    std::string path = TraceIR(text, "main", args);
    ASSERT_FALSE(path.empty()) << text;
    auto rev = Grad(path);
    ASSERT_TRUE(rev.ok()) << rev.status().message() << "\n" << text;
    double g[2] = {Deriv(*rev, 2), Deriv(*rev, 3)};
    // Central differences, where the perturbation keeps the same path.
    std::vector<uint32_t> base = Path(path);
    bool same = true;
    double fd[2];
    for (int k = 0; k < 2; ++k) {
      double v = k == 0 ? x : y;
      double h = 1e-6 * std::max(1.0, std::fabs(v));
      std::vector<Value> lo = args, hi = args;
      lo[static_cast<size_t>(k)] = Value::F64(v - h);
      hi[static_cast<size_t>(k)] = Value::F64(v + h);
      same = same && Path(TraceIR(text, "main", lo)) == base &&
             Path(TraceIR(text, "main", hi)) == base;
      fd[k] = (Evaluate(text, "main", hi).to_double() - Evaluate(text, "main", lo).to_double()) /
              (2 * h);
    }
    // Forward mode, one tangent per argument and both at once.
    for (int k = 0; k < 2; ++k) {
      GradOptions fw;
      fw.mode = GradMode::kForward;
      fw.tangents = {{static_cast<uint32_t>(k + 2), Value::F64(1.0)}};
      auto f = Grad(path, fw);
      ASSERT_TRUE(f.ok()) << f.status().message();
      EXPECT_TRUE(Close(f->tangent.to_double(), g[k], 1e-12, 1e-13))
          << "seed " << seed << " arg " << k << ": forward " << f->tangent.to_double()
          << " reverse " << g[k] << "\n"
          << text;
    }
    GradOptions fw;
    fw.mode = GradMode::kForward;
    fw.tangents = {{2, Value::F64(0.3)}, {3, Value::F64(-1.7)}};
    auto f = Grad(path, fw);
    ASSERT_TRUE(f.ok());
    EXPECT_TRUE(Close(f->tangent.to_double(), 0.3 * g[0] - 1.7 * g[1], 1e-12, 1e-13));
    // The emitted backward trace returns the same gradient, bit for bit.
    std::string emitted = Emit(path);
    auto t = Trace::Open(emitted);
    ASSERT_TRUE(t.ok());
    auto ret = t->node(t->size() - 1);
    ASSERT_EQ(ret->value().kind(), VKind::kTuple);
    EXPECT_TRUE(BitEqual(ret->value().tuple()[0], rev->arguments[1].derivative)) << "seed " << seed;
    EXPECT_TRUE(BitEqual(ret->value().tuple()[1], rev->arguments[2].derivative)) << "seed " << seed;
    if (!same) {
      ++skipped;
      continue;
    }
    ++checked;
    for (int k = 0; k < 2; ++k) {
      EXPECT_TRUE(Close(g[k], fd[k], 2e-6, 1e-7))
          << "seed " << seed << " arg " << k << ": reverse " << g[k] << " fd " << fd[k] << "\n"
          << text;
    }
    // Second derivatives: the emitted trace differentiated again, against
    // central differences of the gradient.
    GradOptions wx;
    wx.wrt = {2};
    std::string ex = Emit(path, wx);
    auto h2 = Grad(ex);
    ASSERT_TRUE(h2.ok()) << h2.status().message();
    double hxx = Deriv(*h2, 2), hxy = Deriv(*h2, 3);
    double hx = 1e-5 * std::max(1.0, std::fabs(x));
    std::vector<Value> lo = args, hi = args;
    lo[0] = Value::F64(x - hx);
    hi[0] = Value::F64(x + hx);
    if (Path(TraceIR(text, "main", lo)) != base || Path(TraceIR(text, "main", hi)) != base)
      continue;
    auto glo = Grad(TraceIR(text, "main", lo));
    auto ghi = Grad(TraceIR(text, "main", hi));
    double fxx = (Deriv(*ghi, 2) - Deriv(*glo, 2)) / (2 * hx);
    double fyx = (Deriv(*ghi, 3) - Deriv(*glo, 3)) / (2 * hx);
    EXPECT_TRUE(Close(hxx, fxx, 1e-5, 1e-6)) << "seed " << seed << ": " << hxx << " vs " << fxx;
    EXPECT_TRUE(Close(hxy, fyx, 1e-5, 1e-6)) << "seed " << seed << ": " << hxy << " vs " << fyx;
  }
  EXPECT_GE(checked, 30) << skipped << " skipped";
}

// ---------------------------------------------------------------- tensors

// A straight-line program over tensors, traced with the writer and the
// library's kernels: inputs become the root's arguments (positions 2...),
// each op a primitive node, the last value the result.
struct Flat {
  struct Op {
    std::string op;
    std::vector<int> args;  // indices into values (inputs first); -1 - k: literal k
    std::vector<Value> literals;
  };
  std::vector<Value> inputs;
  std::vector<Op> ops;

  Result<std::vector<Value>> Run(const std::vector<Value>& in) const {
    std::vector<Value> v = in;
    for (const Op& o : ops) {
      std::vector<Value> a;
      for (int i : o.args)
        a.push_back(i >= 0 ? v[static_cast<size_t>(i)] : o.literals[static_cast<size_t>(-1 - i)]);
      IRT_ASSIGN_OR_RETURN(Value r, ApplyOp(o.op, a));
      v.push_back(r);
    }
    return v;
  }

  std::string Write(const std::string& name) const {
    std::string path = UniqueTempPath(name);
    auto out = Output::Open(path);
    auto vals = Run(inputs);
    EXPECT_TRUE(vals.ok()) << vals.status().message();
    {
      TraceWriter w(out->get(), WriterOptions{});
      ClassSpec root;
      root.kind = NodeKind::kCall;
      root.op = "t";
      for (const Value& x : inputs) root.operands.push_back(OperandSpec::Literal(x));
      w.Append(w.DefineClass(root), Value(), {});
      ClassSpec fn;
      fn.kind = NodeKind::kArgument;
      fn.block = 1;
      fn.pos = 1;
      w.Append(w.DefineClass(fn), Value::Function("t"), {});
      std::vector<NodeId> ids;
      for (size_t i = 0; i < inputs.size(); ++i) {
        ClassSpec a;
        a.kind = NodeKind::kArgument;
        a.block = 1;
        a.pos = static_cast<uint32_t>(i + 2);
        ids.push_back(w.Append(w.DefineClass(a), inputs[i], {}));
      }
      for (size_t k = 0; k < ops.size(); ++k) {
        const Op& o = ops[k];
        ClassSpec c;
        c.kind = NodeKind::kPrimitive;
        c.op = o.op;
        c.block = 1;
        c.pos = static_cast<uint32_t>(inputs.size() + 2 + k);
        std::vector<NodeId> refs;
        for (int i : o.args) {
          if (i >= 0) {
            c.operands.push_back(OperandSpec::Ref());
            refs.push_back(ids[static_cast<size_t>(i)]);
          } else {
            c.operands.push_back(OperandSpec::Literal(o.literals[static_cast<size_t>(-1 - i)]));
          }
        }
        ids.push_back(w.Append(w.DefineClass(c), (*vals)[inputs.size() + k], refs));
      }
      ClassSpec ret;
      ret.kind = NodeKind::kReturn;
      ret.block = 1;
      ret.pos = 1;
      ret.operands.push_back(OperandSpec::Ref());
      w.Append(w.DefineClass(ret), vals->back(), std::vector<NodeId>{ids.back()});
      w.AddTraceMeta("status", Value::String("ok"));
      EXPECT_TRUE(w.Finish().ok());
    }
    EXPECT_TRUE((*out)->Commit().ok());
    return path;
  }
};

Value RandomTensor(std::mt19937& rng, std::vector<int64_t> shape, double scale = 1.0) {
  std::uniform_real_distribution<double> u(-scale, scale);
  Tensor t = Tensor::Zeros(DType::kF64, std::move(shape));
  for (int64_t i = 0; i < t.numel(); ++i) t.f64()[i] = u(rng);
  return Value::MakeTensor(std::move(t));
}

double Dot(const Value& a, const Value& b) {
  if (a.kind() != VKind::kTensor) return a.to_double() * b.to_double();
  double s = 0;
  for (int64_t i = 0; i < a.tensor().numel(); ++i) s += a.tensor().at(i) * b.tensor().at(i);
  return s;
}

// Equal within `rtol` elementwise (tensor products may round differently in
// the sweep, which multiplies transposed views, and in an emitted trace,
// which records the transposes).
bool CloseValues(const Value& a, const Value& b, double rtol) {
  if (a.kind() != b.kind()) return false;
  if (a.kind() != VKind::kTensor) return Close(a.to_double(), b.to_double(), rtol, 1e-300);
  if (a.tensor().shape != b.tensor().shape) return false;
  double scale = 0;
  for (int64_t i = 0; i < a.tensor().numel(); ++i)
    scale = std::max(scale, std::fabs(a.tensor().at(i)));
  for (int64_t i = 0; i < a.tensor().numel(); ++i) {
    if (std::fabs(a.tensor().at(i) - b.tensor().at(i)) > rtol * scale) return false;
  }
  return true;
}

bool Finite(const Value& v) {
  if (v.kind() != VKind::kTensor)
    return std::isfinite(v.to_double()) && std::fabs(v.to_double()) < 1e3;
  for (int64_t i = 0; i < v.tensor().numel(); ++i) {
    if (!std::isfinite(v.tensor().at(i)) || std::fabs(v.tensor().at(i)) > 1e3) return false;
  }
  return true;
}

// Random tensor programs: each op is tried on random operands and kept when
// the kernel accepts their shapes.
Flat RandomTensorProgram(uint32_t seed, bool scalar_result) {
  std::mt19937 rng(seed);
  Flat f;
  f.inputs = {RandomTensor(rng, {3, 4}), RandomTensor(rng, {4, 2}), RandomTensor(rng, {2}),
              Value::F64(std::uniform_real_distribution<double>(0.5, 1.5)(rng)),
              RandomTensor(rng, {3, 2})};
  std::vector<Value> vals = f.inputs;
  const std::vector<std::pair<std::string, int>> ops = {
      {"matmul", 2}, {"+", 2},     {"-", 2},        {"*", 2},         {"/", 2},
      {"tanh", 1},   {"sin", 1},   {"exp", 1},      {"transpose", 1}, {"sum", 1},
      {"sum", -1},   {"mean", -1}, {"reshape", -2}, {"getindex", -3}, {"fill", -4},
      {"-", 1},      {"^", -5},    {"matmul", 2},   {"*", 2},         {"+", 2}};
  std::uniform_int_distribution<size_t> pick_op(0, ops.size() - 1);
  int target = 6 + static_cast<int>(seed % 5);
  int tries = 0;
  while (static_cast<int>(f.ops.size()) < target && ++tries < 2000) {
    auto [name, n] = ops[pick_op(rng)];
    std::uniform_int_distribution<int> pick(0, static_cast<int>(vals.size()) - 1);
    Flat::Op o;
    o.op = name;
    int a = pick(rng);
    // Prefer recent values so that programs chain.
    if (rng() % 2)
      a = static_cast<int>(vals.size()) - 1 -
          static_cast<int>(rng() % std::min<size_t>(3, vals.size()));
    if (n >= 1) o.args.push_back(a);
    if (n == 2) o.args.push_back(pick(rng));
    if (name == "/" && o.args.size() == 2) {
      // A safe denominator: b*b + 2.
      int b = o.args[1];
      auto sq = ApplyOp(
          "*", std::vector<Value>{vals[static_cast<size_t>(b)], vals[static_cast<size_t>(b)]});
      auto den = ApplyOp("+", std::vector<Value>{*sq, Value::F64(2.0)});
      auto q = ApplyOp("/", std::vector<Value>{vals[static_cast<size_t>(a)], *den});
      if (!q.ok() || !Finite(*q)) continue;
      f.ops.push_back({"*", {b, b}, {}});
      vals.push_back(*sq);
      f.ops.push_back({"+", {static_cast<int>(vals.size()) - 1, -1}, {Value::F64(2.0)}});
      vals.push_back(*den);
      f.ops.push_back({"/", {a, static_cast<int>(vals.size()) - 1}, {}});
      vals.push_back(*q);
      continue;
    }
    if (n == -1) {  // sum/mean along a dimension
      o.args = {a, -1};
      o.literals = {Value::I64(1 + static_cast<int64_t>(rng() % 2))};
    } else if (n == -2) {  // reshape to the transposed shape
      if (vals[static_cast<size_t>(a)].kind() != VKind::kTensor) continue;
      auto sh = vals[static_cast<size_t>(a)].tensor().shape;
      if (sh.size() != 2) continue;
      o.args = {a, -1, -2};
      o.literals = {Value::I64(sh[1]), Value::I64(sh[0])};
    } else if (n == -3) {  // one element
      if (vals[static_cast<size_t>(a)].kind() != VKind::kTensor) continue;
      int64_t numel = vals[static_cast<size_t>(a)].tensor().numel();
      o.args = {a, -1};
      o.literals = {Value::I64(1 + static_cast<int64_t>(rng() % static_cast<uint32_t>(numel)))};
    } else if (n == -4) {  // fill a scalar
      if (vals[static_cast<size_t>(a)].kind() == VKind::kTensor) continue;
      o.args = {a, -1, -2};
      o.literals = {Value::I64(3), Value::I64(2)};
    } else if (n == -5) {  // integer power
      o.args = {a, -1};
      o.literals = {Value::I64(2)};
    }
    std::vector<Value> args;
    for (int i : o.args)
      args.push_back(i >= 0 ? vals[static_cast<size_t>(i)]
                            : o.literals[static_cast<size_t>(-1 - i)]);
    auto r = ApplyOp(o.op, args);
    if (!r.ok() || !Finite(*r)) continue;
    vals.push_back(*r);
    f.ops.push_back(o);
  }
  // Everything feeds the result: a weighted sum of the values made.
  int acc = -1;
  size_t made = vals.size();
  for (size_t i = f.inputs.size(); i < made; ++i) {
    int idx = static_cast<int>(i);
    Flat::Op s;
    if (vals[i].kind() == VKind::kTensor) {
      s.op = "sum";
      s.args = {idx};
      auto r = ApplyOp("sum", std::vector<Value>{vals[i]});
      vals.push_back(*r);
      f.ops.push_back(s);
      idx = static_cast<int>(vals.size()) - 1;
    }
    if (acc >= 0) {
      Flat::Op p{"+", {acc, idx}, {}};
      vals.push_back(*ApplyOp(
          "+", std::vector<Value>{vals[static_cast<size_t>(acc)], vals[static_cast<size_t>(idx)]}));
      f.ops.push_back(p);
      idx = static_cast<int>(vals.size()) - 1;
    }
    acc = idx;
  }
  if (!scalar_result) {
    // A tensor result: the last tensor made, scaled by the scalar sum.
    for (size_t i = made; i-- > f.inputs.size();) {
      if (vals[i].kind() == VKind::kTensor) {
        Flat::Op m{"*", {static_cast<int>(i), acc}, {}};
        vals.push_back(*ApplyOp("*", std::vector<Value>{vals[i], vals[static_cast<size_t>(acc)]}));
        f.ops.push_back(m);
        break;
      }
    }
  }
  return f;
}

TEST(GradTest, RandomTensorProgramsAgainstFiniteDifferences) {
  int checked = 0;
  for (uint32_t seed = 1; seed <= 25; ++seed) {
    Flat f = RandomTensorProgram(seed, true);
    std::string path = f.Write("tensor.fb");
    auto r = Grad(path);
    ASSERT_TRUE(r.ok()) << "seed " << seed << ": " << r.status().message();
    // Central differences for every element of every input.
    for (size_t k = 0; k < f.inputs.size(); ++k) {
      const Value& g = r->arguments[k + 1].derivative;
      const Value& x = f.inputs[k];
      int64_t n = x.kind() == VKind::kTensor ? x.tensor().numel() : 1;
      for (int64_t i = 0; i < n; ++i) {
        auto at = [&](double delta) {
          std::vector<Value> in = f.inputs;
          if (x.kind() == VKind::kTensor) {
            Tensor t = x.tensor();
            t.f64()[i] += delta;
            in[k] = Value::MakeTensor(std::move(t));
          } else {
            in[k] = Value::F64(x.to_double() + delta);
          }
          return f.Run(in)->back().to_double();
        };
        double h = 1e-6;
        double fd = (at(h) - at(-h)) / (2 * h);
        double gi = x.kind() == VKind::kTensor ? g.tensor().at(i) : g.to_double();
        EXPECT_TRUE(Close(gi, fd, 1e-5, 1e-6))
            << "seed " << seed << " input " << k << " element " << i << ": " << gi << " vs " << fd;
      }
    }
    // Forward mode along a random direction gives <gradient, direction>.
    std::mt19937 rng(seed + 100);
    GradOptions fw;
    fw.mode = GradMode::kForward;
    double expect = 0;
    for (size_t k = 0; k < f.inputs.size(); ++k) {
      const Value& x = f.inputs[k];
      Value v = x.kind() == VKind::kTensor ? RandomTensor(rng, x.tensor().shape) : Value::F64(0.7);
      fw.tangents.emplace_back(static_cast<uint32_t>(k + 2), v);
      expect += Dot(r->arguments[k + 1].derivative, v);
    }
    auto fr = Grad(path, fw);
    ASSERT_TRUE(fr.ok()) << fr.status().message();
    EXPECT_TRUE(Close(fr->tangent.to_double(), expect, 1e-11, 1e-12)) << "seed " << seed;
    // The emitted backward trace: the same gradient, and second derivatives
    // (a Hessian-vector product) against differences of the gradient.
    std::string emitted = Emit(path);
    auto et = Trace::Open(emitted);
    ASSERT_TRUE(et.ok());
    Value ret = et->node(et->size() - 1)->value();
    ASSERT_EQ(ret.kind(), VKind::kTuple);
    for (size_t k = 0; k < f.inputs.size(); ++k) {
      EXPECT_TRUE(CloseValues(ret.tuple()[k], r->arguments[k + 1].derivative, 1e-13))
          << "seed " << seed;
    }
    GradOptions w0;
    w0.wrt = {2};
    std::string e0 = Emit(path, w0);
    // H v for input 0 along direction v0 (forward over reverse).
    Value v0 = RandomTensor(rng, f.inputs[0].tensor().shape);
    GradOptions hv;
    hv.mode = GradMode::kForward;
    hv.tangents = {{2, v0}};
    auto hvr = Grad(e0, hv);
    ASSERT_TRUE(hvr.ok()) << hvr.status().message();
    double eps = 1e-5;
    auto grad_at = [&](double t) {
      Flat g = f;
      Tensor x = f.inputs[0].tensor();
      for (int64_t i = 0; i < x.numel(); ++i) x.f64()[i] += t * v0.tensor().at(i);
      g.inputs[0] = Value::MakeTensor(std::move(x));
      auto gr = Grad(g.Write("hv.fb"));
      return gr->arguments[1].derivative;
    };
    Value gp = grad_at(eps), gm = grad_at(-eps);
    for (int64_t i = 0; i < gp.tensor().numel(); ++i) {
      double fd = (gp.tensor().at(i) - gm.tensor().at(i)) / (2 * eps);
      EXPECT_TRUE(Close(hvr->tangent.tensor().at(i), fd, 1e-4, 1e-6))
          << "seed " << seed << " Hv[" << i << "]: " << hvr->tangent.tensor().at(i) << " vs " << fd;
    }
    // Reverse over reverse: seeding the emitted gradient with v0 gives Hᵀv0 = H v0.
    GradOptions rr;
    rr.seed = v0;
    auto rrr = Grad(e0, rr);
    ASSERT_TRUE(rrr.ok()) << rrr.status().message();
    for (int64_t i = 0; i < gp.tensor().numel(); ++i) {
      EXPECT_TRUE(Close(rrr->arguments[1].derivative.tensor().at(i), hvr->tangent.tensor().at(i),
                        1e-9, 1e-11))
          << "seed " << seed;
    }
    ++checked;
  }
  EXPECT_EQ(checked, 25);
}

// Forward mode reads getindex's tangent in place (an element of a Float64
// tangent at Int64 indices, literal or not, linear or not) and leaves
// Float64 indices and Float32 tensors to the general path: along every
// element, and along a random direction, the tangents are the gradient's.
TEST(GradTest, ForwardTangentsOfElementsAreTheGradients) {
  const char* text =
      "function a\n1: (%1, %2, %3)\n  %4 = Main.sum(%2)\n  br 2 (1, %4, %2)\n"
      "2: (%5, %6, %7)\n  %8 = %5 <= 3\n  br 4 unless %8\n  br 3\n"
      "3:\n  %9 = Main.getindex(%7, 2, %5)\n  %10 = Main.getindex(%7, %5)\n"
      "  %11 = %9 * %10\n  %12 = Main.sin(%11)\n  %13 = %6 + %12\n  %14 = %5 + 1\n"
      "  br 2 (%14, %13, %7)\n"
      "4:\n  %15 = Main.getindex(%2, 1.0, 2.0)\n  %16 = Main.getindex(%3, 2)\n"
      "  %17 = %15 * %16\n  %18 = %6 * %17\n  return %18\nend\n";
  std::mt19937 rng(11);
  Value x = RandomTensor(rng, {2, 3});
  Tensor y = Tensor::Zeros(DType::kF32, {3});
  for (int64_t i = 0; i < 3; ++i) y.f32()[i] = 0.25f * static_cast<float>(i + 1);
  Value yv = Value::MakeTensor(std::move(y));
  std::string path = TraceIR(text, "a", {x, yv});
  auto r = Grad(path);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const Tensor& gx = DerivativeAt(*r, 2).tensor();
  for (int64_t i = 0; i < 6; ++i) {
    Tensor e = Tensor::Zeros(DType::kF64, {2, 3});
    e.f64()[i] = 1.0;
    GradOptions fw;
    fw.mode = GradMode::kForward;
    fw.tangents = {{2, Value::MakeTensor(std::move(e))}};
    auto f = Grad(path, fw);
    ASSERT_TRUE(f.ok()) << f.status().message();
    EXPECT_TRUE(Close(f->tangent.to_double(), gx.f64()[i], 1e-14, 1e-300))
        << "element " << i << ": " << f->tangent.to_double() << " vs " << gx.f64()[i];
  }
  GradOptions fw;
  fw.mode = GradMode::kForward;
  Value v = RandomTensor(rng, {2, 3});
  Tensor wt = Tensor::Zeros(DType::kF32, {3});
  wt.f32()[1] = 0.5f;
  Value w = Value::MakeTensor(std::move(wt));
  fw.tangents = {{2, v}, {3, w}};
  auto f = Grad(path, fw);
  ASSERT_TRUE(f.ok()) << f.status().message();
  double want = Dot(DerivativeAt(*r, 2), v) + Dot(DerivativeAt(*r, 3), w);
  // The derivative along %3 is a Float32 tensor: seven digits.
  EXPECT_TRUE(Close(f->tangent.to_double(), want, 1e-6))
      << f->tangent.to_double() << " vs " << want;
  EXPECT_NE(DerivativeAt(*r, 3).tensor().at(1), 0.0);
}

// getitem's reverse line, additem(zero(x), dy, i...), adds dy into one
// element of x's adjoint in place when the indices name an element (0-based,
// negative ones from the end; Int64 here): the same bits as the line run on
// tensors, which the same rule written with dy * 1.0 still takes, as a
// sub-tensor (a row) and a Float32 element always do.
// A loop of getitem over a 2x3 Float64 matrix (2-D indices) and a 5-vector
// (negative ones), then a row of the matrix and an element of a Float32
// vector; `tail` ends block 4 with %18 = sum(row) * element in hand.
std::string TraceItems(std::mt19937& rng, const std::string& tail) {
  const std::string text =
      "function a\n1: (%1, %2, %3, %4)\n  br 2 (0, 0.0)\n2: (%5, %6)\n  %7 = %5 < 3\n"
      "  br 4 unless %7\n  br 3\n3:\n  %8 = Main.getitem(%2, 1, %5)\n  %9 = 0 - %5\n"
      "  %10 = %9 - 1\n  %11 = Main.getitem(%4, %10)\n  %12 = %8 * %11\n  %13 = %6 + %12\n"
      "  %14 = %5 + 1\n  br 2 (%14, %13)\n"
      "4:\n  %15 = Main.getitem(%2, 0)\n  %16 = Main.sum(%15)\n  %17 = Main.getitem(%3, 1)\n"
      "  %18 = %16 * %17\n" +
      tail;
  Tensor y = Tensor::Zeros(DType::kF32, {3});
  for (int64_t i = 0; i < 3; ++i) y.f32()[i] = 0.5f + 0.25f * static_cast<float>(i);
  return TraceIR(
      text, "a",
      {RandomTensor(rng, {2, 3}), Value::MakeTensor(std::move(y)), RandomTensor(rng, {5})});
}

// The default rules with getindex's and getitem's reverse lines written
// densely (dy * 1.0: adding tensors of zeros), as a reference for the
// element paths.
RuleSet DenseIndexRules() {
  RuleSet dense = DefaultRules();
  auto lines = RuleSet::Parse(
      "getindex(x, i...) -> y\n  dy = getindex(dx, i...)\n"
      "  dx = addindex(zero(x), dy * 1.0, i...)\n"
      "getitem(x, i...) -> y\n  dy = getitem(dx, i...)\n"
      "  dx = additem(zero(x), dy * 1.0, i...)\n",
      "dense.rules");
  EXPECT_TRUE(lines.ok()) << lines.status().message();
  if (lines.ok()) dense.Merge(*lines);
  return dense;
}

TEST(GradTest, ItemAdjointsAreAddedInPlace) {
  std::mt19937 rng(5);
  std::string path = TraceItems(rng, "  %19 = %6 + %18\n  return %19\nend\n");
  auto in_place = Grad(path);
  ASSERT_TRUE(in_place.ok()) << in_place.status().message();
  RuleSet dense = DenseIndexRules();
  auto on_tensors = Grad(path, {}, dense);
  ASSERT_TRUE(on_tensors.ok()) << on_tensors.status().message();
  for (uint32_t pos : {2u, 3u, 4u}) {
    EXPECT_TRUE(BitEqual(DerivativeAt(*in_place, pos), DerivativeAt(*on_tensors, pos)))
        << "@" << pos << ": " << FormatValue(DerivativeAt(*in_place, pos)) << " vs "
        << FormatValue(DerivativeAt(*on_tensors, pos));
  }
  // A line that adds dy into zeros shaped like another operand (here the
  // index) is not added in place into x's adjoint: it fails as on tensors.
  RuleSet other = DefaultRules();
  auto wrong = RuleSet::Parse(
      "getitem(x, i) -> y\n  dy = getitem(dx, i)\n  dx = additem(zero(i), dy, i)\n", "w.rules");
  ASSERT_TRUE(wrong.ok()) << wrong.status().message();
  other.Merge(*wrong);
  std::string one =
      TraceIR("function b\n1: (%1, %2)\n  %3 = Main.getitem(%2, -2)\n  return %3\nend\n", "b",
              {RandomTensor(rng, {4})});
  ASSERT_TRUE(Grad(one).ok());
  EXPECT_FALSE(Grad(one, {}, other).ok());
  // d/dv[-1 - i] = x[1, i] for i < 3; v[0] and v[1] get nothing.
  const Tensor& dv = DerivativeAt(*in_place, 4).tensor();
  EXPECT_EQ(dv.f64()[0], 0.0);
  EXPECT_EQ(dv.f64()[1], 0.0);
  EXPECT_NE(dv.f64()[4], 0.0);
}

// Python's getitem: its reverse line, additem(zero(x), dy, i...), is
// emitted as element adjoints too (joined once, as getindex's are), not as
// two tensors the size of x per element read. The emitted trace returns
// the gradient's bits: 2-D and negative indices, a row (a sub-tensor,
// written as the program), a Float32 element, -0.0 alone in an element;
// and a loop over n elements grows as n log n.
TEST(GradTest, EmittedItemAdjointsAreElements) {
  std::mt19937 rng(7);
  std::string path = TraceItems(rng,
                                "  %19 = Main.getitem(%4, 0)\n  %20 = %19 * -0.0\n"
                                "  %21 = %6 + %18\n  %22 = %21 + %20\n  return %22\nend\n");
  auto r = Grad(path);
  ASSERT_TRUE(r.ok()) << r.status().message();
  auto t = Trace::Open(Emit(path));
  ASSERT_TRUE(t.ok());
  Value g = t->node(t->size() - 1)->value();
  ASSERT_EQ(g.kind(), VKind::kTuple) << FormatValue(g);
  ASSERT_EQ(g.tuple().size(), 3u);
  for (uint32_t pos : {2u, 3u, 4u}) {
    EXPECT_TRUE(BitEqual(g.tuple()[pos - 2], DerivativeAt(*r, pos)))
        << "@" << pos << ": " << FormatValue(g.tuple()[pos - 2]) << " vs "
        << FormatValue(DerivativeAt(*r, pos));
  }
  EXPECT_FALSE(std::signbit(g.tuple()[2].tensor().f64()[0]));  // -0.0 added into +0.0
  const char* loop =
      "function s\n1: (%1, %2, %3)\n  br 2 (0, 0.0)\n2: (%4, %5)\n  %6 = %4 < %3\n"
      "  br 4 unless %6\n  br 3\n3:\n  %7 = Main.getitem(%2, %4)\n  %8 = %7 * %7\n"
      "  %9 = %5 + %8\n  %10 = %4 + 1\n  br 2 (%10, %9)\n4:\n  return %5\nend\n";
  std::vector<uint64_t> bytes;
  for (int64_t n : {64, 512}) {
    SCOPED_TRACE(n);
    std::string lp = TraceIR(loop, "s", {RandomTensor(rng, {n}), Value::I64(n)});
    auto lr = Grad(lp);
    ASSERT_TRUE(lr.ok()) << lr.status().message();
    std::string emitted = Emit(lp);
    bytes.push_back(ReadFile(emitted).size());
    auto lt = Trace::Open(emitted);
    ASSERT_TRUE(lt.ok());
    EXPECT_TRUE(BitEqual(lt->node(lt->size() - 1)->value(), DerivativeAt(*lr, 2)));
  }
  // 8 times the elements: 12 times the bytes for n log n, 64 for n^2.
  EXPECT_LT(bytes[1], 14 * bytes[0]) << bytes[0] << " then " << bytes[1];
}

// Derivatives pass through tuples: made by tuple(...), returned from a call,
// passed into one, carried by a loop, read by getitem (negative too) and
// getindex, an item a tensor, a tuple nested in a tuple. Reverse, forward
// and the emitted trace agree with the analytic derivatives: for
// f(x, v) = x y sin(x) + x y + sum(v) + x^2 with y = sum(v .* v),
// df/dx = y sin x + x y cos x + y + 2x and df/dv = (x sin x + x) 2v + 1.
// A tuple's derivative used to be a silent zero once a call returned it.
TEST(GradTest, DerivativesPassThroughTuples) {
  const std::string pair =
      "function pair\n1: (%1, %2, %3)\n  %4 = %2 * %3\n  %5 = Main.sin(%2)\n"
      "  %6 = Main.tuple(%4, %5, %3)\n  return %6\nend\n\n"
      "function take\n1: (%1, %2)\n  %3 = Main.getitem(%2, 1)\n  %4 = Main.getindex(%3, 1)\n"
      "  %5 = Main.sum(%4)\n  return %5\nend\n\n";
  const std::string head =
      "function f\n1: (%1, %2, %3)\n  %4 = %3 * %3\n  %5 = Main.sum(%4)\n"
      "  %6 = Main.pair(%2, %5)\n  %7 = Main.getindex(%6, 1)\n  %8 = Main.getitem(%6, -2)\n"
      "  %9 = %7 * %8\n  %10 = Main.getitem(%6, 0)\n  %11 = %9 + %10\n";
  const std::string text =
      pair + head +
      "  %12 = %2 * %2\n  %13 = Main.tuple(%3, %12)\n  %14 = Main.tuple(%2, %13)\n"
      "  br 2 (0, %14, %11)\n2: (%15, %16, %17)\n  %18 = %15 < 2\n  br 4 unless %18\n  br 3\n"
      "3:\n  %19 = %15 + 1\n  br 2 (%19, %16, %17)\n"
      "4:\n  %20 = Main.take(%16)\n  %21 = Main.getitem(%16, 1)\n  %22 = Main.getitem(%21, 1)\n"
      "  %23 = %17 + %20\n  %24 = %23 + %22\n  return %24\nend\n";
  const double x = 0.7;
  const std::vector<double> v{0.3, -1.2};
  Tensor vt = Tensor::Zeros(DType::kF64, {2});
  vt.f64()[0] = v[0];
  vt.f64()[1] = v[1];
  std::string path = TraceIR(text, "f", {Value::F64(x), Value::MakeTensor(vt)});
  const double y = v[0] * v[0] + v[1] * v[1];
  const double dx = y * std::sin(x) + x * y * std::cos(x) + y + 2 * x;
  const double dy = x * std::sin(x) + x;
  auto r = Grad(path);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(Close(Deriv(*r, 2), dx, 1e-14)) << Deriv(*r, 2) << " vs " << dx;
  const Tensor& gv = DerivativeAt(*r, 3).tensor();
  for (int i = 0; i < 2; ++i) {
    EXPECT_TRUE(Close(gv.f64()[i], dy * 2 * v[i] + 1, 1e-14)) << i << ": " << gv.f64()[i];
  }
  auto fw = Grad(path, ForwardAlong2());
  ASSERT_TRUE(fw.ok()) << fw.status().message();
  EXPECT_TRUE(Close(fw->tangent.to_double(), dx, 1e-14)) << FormatValue(fw->tangent);
  // The emitted trace returns the same gradient bit for bit, nested tuple
  // and all; and so without the loop's tuple.
  auto et = Trace::Open(Emit(path));
  ASSERT_TRUE(et.ok());
  Value eg = et->node(et->size() - 1)->value();
  ASSERT_EQ(eg.kind(), VKind::kTuple) << FormatValue(eg);
  EXPECT_TRUE(BitEqual(eg.tuple()[0], DerivativeAt(*r, 2))) << FormatValue(eg);
  EXPECT_TRUE(BitEqual(eg.tuple()[1], DerivativeAt(*r, 3))) << FormatValue(eg);
  std::string fp =
      TraceIR(pair + head + "  return %11\nend\n", "f", {Value::F64(x), Value::MakeTensor(vt)});
  auto fr = Grad(fp);
  ASSERT_TRUE(fr.ok()) << fr.status().message();
  auto ft = Trace::Open(Emit(fp));
  ASSERT_TRUE(ft.ok());
  Value g = ft->node(ft->size() - 1)->value();
  ASSERT_EQ(g.kind(), VKind::kTuple) << FormatValue(g);
  EXPECT_TRUE(BitEqual(g.tuple()[0], DerivativeAt(*fr, 2))) << FormatValue(g);
  EXPECT_TRUE(BitEqual(g.tuple()[1], DerivativeAt(*fr, 3))) << FormatValue(g);
}

// A root argument that is a tuple holding floats is differentiable: its
// derivative is the tuple of its items' (zero where none came, nothing for
// an item that is no float), in reverse mode, forward mode (a tuple
// tangent) and the emitted trace (a tuple node). f(t) = t[1] u[1]^2 with
// t = (a, b, "s", c) and u = t[1:-1:2] (getslice: (b,)): (b^2, 2ab,
// nothing, 0).
TEST(GradTest, TupleArgumentsAreDifferentiable) {
  const char* text =
      "function f\n1: (%1, %2)\n  %3 = Main.getindex(%2, 1)\n"
      "  %7 = Main.getslice(%2, 1, 1, -1, 2)\n  %4 = Main.getitem(%7, 0)\n"
      "  %5 = %4 * %4\n  %6 = %3 * %5\n  return %6\nend\n";
  Value t =
      Value::MakeTuple({Value::F64(1.5), Value::F64(-0.5), Value::String("s"), Value::F64(2.0)});
  std::string path = TraceIR(text, "f", {t});
  auto r = Grad(path);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(FormatValue(DerivativeAt(*r, 2)), "(0.25, -1.5, nothing, 0.0)");
  GradOptions fw;
  fw.mode = GradMode::kForward;
  fw.tangents = {
      {2, Value::MakeTuple({Value::F64(0.0), Value::F64(1.0), Value::Nothing(), Value::F64(0.0)})}};
  auto f = Grad(path, fw);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->tangent.to_double(), -1.5);
  fw.tangents = {{2, Value::F64(1.0)}};
  EXPECT_EQ(Grad(path, fw).status().code(), Code::kUsage);
  auto e = Trace::Open(Emit(path));
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(FormatValue(e->node(e->size() - 1)->value()), "(0.25, -1.5, nothing, 0.0)");
}

// Tuples joined (cat(1, t...), Python's t1 + t2, growing a list in a loop):
// each operand receives its run of the adjoint's items, in reverse mode,
// forward mode and the emitted trace. testdata/ir/tuplecat.ir at (x, 3):
// the joined tuple is (x, 3, 0x, 1x, 2x, x, 3), the result 3 * 1x + x.
TEST(GradTest, DerivativesPassThroughJoinedTuples) {
  std::string path =
      TraceIR(ReadFile(Source("testdata/ir/tuplecat.ir")), "sum", {Value::F64(1.5), Value::I64(3)});
  auto r = Grad(path);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(Deriv(*r, 2), 4.0);
  auto fw = Grad(path, ForwardAlong2());
  ASSERT_TRUE(fw.ok()) << fw.status().message();
  EXPECT_EQ(fw->tangent.to_double(), 4.0);
  auto e = Trace::Open(Emit(path));
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(FormatValue(e->node(e->size() - 1)->value()), "4.0");
  // A tuple joined with a tensor is refused when recorded (MethodError),
  // so the engine never meets one; a tensor cat keeps its rule.
  Tensor v = Tensor::Zeros(DType::kF64, {2});
  v.f64()[0] = 1.0;
  v.f64()[1] = -2.0;
  std::string m = TraceIR(
      "function g\n1: (%1, %2)\n  %3 = Main.cat(1, %2, %2)\n  %4 = %3 * %3\n"
      "  %5 = Main.sum(%4)\n  return %5\nend\n",
      "g", {Value::MakeTensor(v)});
  auto rm = Grad(m);
  ASSERT_TRUE(rm.ok()) << rm.status().message();
  EXPECT_EQ(FormatValue(DerivativeAt(*rm, 2)), "[4.0, -8.0]");  // d/dv 2 sum(v^2)
}

// collect(t), a vector of a tuple's numbers: element q of the vector's
// adjoint goes to item q, a float (an integer item gets none), in reverse
// and forward mode and the emitted trace. testdata/ir/collect.ir at
// (x, 3): sum of the squares of (1, 0, x, 1, x^2, 2), 2x + 4x^3; and of
// a root argument that is a tuple: (2a, nothing, 2c) for (a, 7, c).
TEST(GradTest, DerivativesPassThroughCollect) {
  std::string path =
      TraceIR(ReadFile(Source("testdata/ir/collect.ir")), "vec", {Value::F64(1.5), Value::I64(3)});
  auto r = Grad(path);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(Deriv(*r, 2), 2 * 1.5 + 4 * 1.5 * 1.5 * 1.5);
  auto fw = Grad(path, ForwardAlong2());
  ASSERT_TRUE(fw.ok()) << fw.status().message();
  EXPECT_EQ(fw->tangent.to_double(), 16.5);
  auto e = Trace::Open(Emit(path));
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(FormatValue(e->node(e->size() - 1)->value()), "16.5");
  std::string t = TraceIR(
      "function g\n1: (%1, %2)\n  %3 = Main.collect(%2)\n  %4 = %3 * %3\n"
      "  %5 = Main.sum(%4)\n  return %5\nend\n",
      "g", {Value::MakeTuple({Value::F64(1.5), Value::I64(7), Value::F64(-0.5)})});
  auto rt = Grad(t);
  ASSERT_TRUE(rt.ok()) << rt.status().message();
  EXPECT_EQ(FormatValue(DerivativeAt(*rt, 2)), "(3.0, nothing, -1.0)");
  auto et = Trace::Open(Emit(t));
  ASSERT_TRUE(et.ok());
  EXPECT_EQ(FormatValue(et->node(et->size() - 1)->value()), "(3.0, nothing, -1.0)");
}

// A tensor passed to a call per iteration, one element read in each: the
// parameter's adjoint holds that element only (a tensor of zeros per call
// made the sweep quadratic), and passes it on element by element. The
// gradient has the bits of the dense rules (the same lines with dy * 1.0,
// which add tensors): getindex and getitem, a Float32 tensor, a call that
// reads more elements than a sparse adjoint holds, a dense contribution
// (sum) after element ones, -0.0 alone in an element.
TEST(GradTest, TensorsPassedToCallsGetElementAdjoints) {
  const char* text =
      "function rd\n1: (%1, %2, %3)\n  %4 = Main.getindex(%2, %3)\n  %5 = %3 - 1\n"
      "  %6 = Main.getitem(%2, %5)\n  %7 = %4 * %6\n  return %7\nend\n\n"
      "function many\n1: (%1, %2)\n  br 2 (1, 0.0)\n2: (%3, %4)\n  %5 = %3 <= 10\n"
      "  br 4 unless %5\n  br 3\n3:\n  %6 = Main.getindex(%2, %3)\n  %7 = %4 + %6\n"
      "  %8 = %3 + 1\n  br 2 (%8, %7)\n4:\n  %9 = Main.getindex(%2, 12)\n  %10 = %9 * -0.0\n"
      "  %11 = %4 + %10\n  return %11\nend\n\n"
      "function top\n1: (%1, %2, %3, %4)\n  br 2 (1, 0.0)\n2: (%5, %6)\n  %7 = %5 <= %4\n"
      "  br 4 unless %7\n  br 3\n3:\n  %8 = rd(%2, %5)\n  %9 = rd(%3, %5)\n  %10 = %8 + %9\n"
      "  %11 = %6 + %10\n  %12 = %5 + 1\n  br 2 (%12, %11)\n"
      "4:\n  %13 = many(%2)\n  %14 = Main.sum(%3)\n  %15 = %13 * %14\n  %16 = %6 + %15\n"
      "  return %16\nend\n";
  std::mt19937 rng(11);
  Tensor y = Tensor::Zeros(DType::kF32, {12});
  for (int64_t i = 0; i < 12; ++i) y.f32()[i] = 0.5f - 0.125f * static_cast<float>(i);
  std::string path = TraceIR(
      text, "top", {RandomTensor(rng, {12}), Value::MakeTensor(std::move(y)), Value::I64(6)});
  auto sparse = Grad(path);
  ASSERT_TRUE(sparse.ok()) << sparse.status().message();
  RuleSet dense = DenseIndexRules();
  auto on_tensors = Grad(path, {}, dense);
  ASSERT_TRUE(on_tensors.ok()) << on_tensors.status().message();
  for (uint32_t pos : {2u, 3u}) {
    EXPECT_TRUE(BitEqual(DerivativeAt(*sparse, pos), DerivativeAt(*on_tensors, pos)))
        << "@" << pos << ": " << FormatValue(DerivativeAt(*sparse, pos)) << " vs "
        << FormatValue(DerivativeAt(*on_tensors, pos));
  }
  // -0.0 added into an element, which only a rule can give (scalar
  // adjoints are sums from +0.0): here dy * -1.0 with dy = +0.0. Zeros
  // plus -0.0 are +0.0, and so is the element.
  std::string one = TraceIR(
      "function g\n1: (%1, %2)\n  %3 = Main.getindex(%2, 2)\n  %4 = %3 * 0.0\n"
      "  return %4\nend\n",
      "g", {RandomTensor(rng, {3})});
  RuleSet negated = DefaultRules(), negated_dense = DefaultRules();
  auto sparse_line = RuleSet::Parse(
      "getindex(x, i...) -> y\n  dy = getindex(dx, i...)\n  dx[i...] += dy * -1.0\n", "n.rules");
  auto dense_line = RuleSet::Parse(
      "getindex(x, i...) -> y\n  dy = getindex(dx, i...)\n"
      "  dx = addindex(zero(x), dy * -1.0, i...)\n",
      "nd.rules");
  ASSERT_TRUE(sparse_line.ok() && dense_line.ok());
  negated.Merge(*sparse_line);
  negated_dense.Merge(*dense_line);
  auto mz = Grad(one, {}, negated);
  auto mzd = Grad(one, {}, negated_dense);
  ASSERT_TRUE(mz.ok() && mzd.ok()) << mz.status().message() << mzd.status().message();
  EXPECT_TRUE(BitEqual(DerivativeAt(*mz, 2), DerivativeAt(*mzd, 2)));
  EXPECT_FALSE(std::signbit(DerivativeAt(*mz, 2).tensor().f64()[1]));
  // Kept adjoints (irt-grad --annotate) read the same.
  GradOptions keep;
  keep.keep_adjoints = true;
  auto kept = Grad(path, keep);
  ASSERT_TRUE(kept.ok()) << kept.status().message();
  EXPECT_TRUE(BitEqual(DerivativeAt(*kept, 2), DerivativeAt(*sparse, 2)));
}

TEST(GradTest, DotProductTest) {
  // <u, J v> = <Jᵀ u, v> for programs with tensor results.
  for (uint32_t seed = 1; seed <= 25; ++seed) {
    Flat f = RandomTensorProgram(seed, false);
    std::string path = f.Write("dot.fb");
    auto t = Trace::Open(path);
    Value result = t->node(t->size() - 1)->value();
    if (result.kind() != VKind::kTensor) continue;
    std::mt19937 rng(seed + 500);
    Value u = RandomTensor(rng, result.tensor().shape);
    GradOptions fw;
    fw.mode = GradMode::kForward;
    for (size_t k = 0; k < f.inputs.size(); ++k) {
      const Value& x = f.inputs[k];
      fw.tangents.emplace_back(
          static_cast<uint32_t>(k + 2),
          x.kind() == VKind::kTensor ? RandomTensor(rng, x.tensor().shape) : Value::F64(-0.4));
    }
    auto jv = Grad(path, fw);
    ASSERT_TRUE(jv.ok()) << jv.status().message();
    GradOptions rv;
    rv.seed = u;
    auto jtu = Grad(path, rv);
    ASSERT_TRUE(jtu.ok()) << jtu.status().message();
    double lhs = Dot(u, jv->tangent), rhs = 0;
    for (size_t k = 0; k < f.inputs.size(); ++k) {
      rhs += Dot(jtu->arguments[k + 1].derivative, fw.tangents[k].second);
    }
    EXPECT_TRUE(Close(lhs, rhs, 1e-12, 1e-12)) << "seed " << seed << ": " << lhs << " vs " << rhs;
  }
}

// Random tensor IR programs: a matrix product and broadcasting, random
// elementwise statements, a loop over a tensor accumulator, a branch on a
// reduction, and a nested call that multiplies by a transpose.
std::string TensorProgram(uint32_t seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int next = 6;
  std::vector<std::string> mats = {"%7"};  // 2×2 tensors
  std::string s =
      "function main\n1: (%1, %2, %3, %4, %5)\n  %6 = Main.matmul(%2, %3)\n  %7 = %6 + %4\n";
  next = 8;
  auto def = [&](const std::string& e) {
    std::string n = "%" + std::to_string(next++);
    s += "  " + n + " = " + e + "\n";
    return n;
  };
  for (int i = 0; i < pick(1, 4); ++i) {
    std::string a = mats[static_cast<size_t>(pick(0, static_cast<int>(mats.size()) - 1))];
    std::string b = mats[static_cast<size_t>(pick(0, static_cast<int>(mats.size()) - 1))];
    std::string r;
    switch (pick(0, 7)) {
      case 0:
        r = def(a + " * " + b);
        break;
      case 1:
        r = def(a + " - " + b);
        break;
      case 2:
        r = def("Main.sin(" + a + ")");
        break;
      case 3:
        r = def("Main.exp(" + def("Main.tanh(" + a + ")") + ")");
        break;
      case 4:
        r = def(a + " * %5");
        break;
      case 5:
        r = def(a + " + " + def("Main.sum(" + b + ", 1)"));
        break;
      case 6:
        r = def("Main.matmul(" + a + ", " + def("Main.transpose(" + b + ")") + ")");
        break;
      default:
        r = def(a + " / " + def(def(b + " * " + b) + " + 2.0"));
        break;
    }
    mats.push_back(r);
  }
  std::string init = mats.back();
  int i0 = next++, acc = next++;
  s += "  br 2 (0, " + init + ")\n2: (%" + std::to_string(i0) + ", %" + std::to_string(acc) + ")\n";
  int c = next++;
  s += "  %" + std::to_string(c) + " = %" + std::to_string(i0) + " < 2\n  br 4 unless %" +
       std::to_string(c) + "\n  br 3\n3:\n";
  std::string t = def("Main.tanh(%" + std::to_string(acc) + ")");
  std::string u = def(t + " * %5");
  std::string w =
      def(u + " + " + mats[static_cast<size_t>(pick(0, static_cast<int>(mats.size()) - 1))]);
  std::string a2 = def(w + " * 0.5");
  std::string i2 = def("%" + std::to_string(i0) + " + 1");
  s += "  br 2 (" + i2 + ", " + a2 + ")\n4:\n";
  std::string sum = def("Main.sum(%" + std::to_string(acc) + ")");
  std::string b = def(sum + " < 0.3");
  s += "  br 6 unless " + b + "\n  br 5\n5:\n";
  std::string call = def("Main.helper(%" + std::to_string(acc) + ", %5)");
  s += "  return " + call + "\n6:\n";
  std::string mean = def("Main.mean(%" + std::to_string(acc) + ")");
  std::string m2 = def(mean + " * " + sum);
  s += "  return " + m2 + "\nend\n";
  s += "function helper\n1: (%1, %2, %3)\n  %4 = Main.transpose(%2)\n  %5 = Main.matmul(%2, %4)\n"
       "  %6 = Main.sum(%5)\n  %7 = %6 * %3\n  return %7\nend\n";
  return s;
}

TEST(GradTest, RandomTensorIRProgramsWithControlFlow) {
  int checked = 0;
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    std::string text = TensorProgram(seed);
    std::mt19937 rng(seed + 77);
    std::vector<Value> args{RandomTensor(rng, {2, 3}, 0.8), RandomTensor(rng, {3, 2}, 0.8),
                            RandomTensor(rng, {2}, 0.5), Value::F64(0.9)};
    std::string path = TraceIR(text, "main", args);
    ASSERT_FALSE(path.empty()) << text;
    auto r = Grad(path);
    ASSERT_TRUE(r.ok()) << r.status().message() << "\n" << text;
    std::vector<uint32_t> base = Path(path);
    bool same = true;
    std::vector<double> fd, an;
    double dot = 0;
    GradOptions fw;
    fw.mode = GradMode::kForward;
    for (size_t k = 0; k < args.size(); ++k) {
      const Value& x = args[k];
      Value dir =
          x.kind() == VKind::kTensor ? RandomTensor(rng, x.tensor().shape) : Value::F64(0.6);
      fw.tangents.emplace_back(static_cast<uint32_t>(k + 2), dir);
      dot += Dot(r->arguments[k + 1].derivative, dir);
      int64_t n = x.kind() == VKind::kTensor ? x.tensor().numel() : 1;
      for (int64_t i = 0; i < n; ++i) {
        auto at = [&](double delta) {
          std::vector<Value> in = args;
          if (x.kind() == VKind::kTensor) {
            Tensor tt = x.tensor();
            tt.f64()[i] += delta;
            in[k] = Value::MakeTensor(std::move(tt));
          } else {
            in[k] = Value::F64(x.to_double() + delta);
          }
          same = same && Path(TraceIR(text, "main", in)) == base;
          return Evaluate(text, "main", in).to_double();
        };
        double h = 1e-6;
        fd.push_back((at(h) - at(-h)) / (2 * h));
        const Value& g = r->arguments[k + 1].derivative;
        an.push_back(x.kind() == VKind::kTensor ? g.tensor().at(i) : g.to_double());
      }
    }
    auto f = Grad(path, fw);
    ASSERT_TRUE(f.ok()) << f.status().message();
    EXPECT_TRUE(Close(f->tangent.to_double(), dot, 1e-11, 1e-12)) << "seed " << seed;
    std::string emitted = Emit(path);
    auto et = Trace::Open(emitted);
    Value ret = et->node(et->size() - 1)->value();
    for (size_t k = 0; k < args.size(); ++k) {
      EXPECT_TRUE(CloseValues(ret.tuple()[k], r->arguments[k + 1].derivative, 1e-13))
          << "seed " << seed;
    }
    if (!same) continue;
    ++checked;
    for (size_t i = 0; i < fd.size(); ++i) {
      EXPECT_TRUE(Close(an[i], fd[i], 1e-5, 1e-6))
          << "seed " << seed << " element " << i << ": " << an[i] << " vs " << fd[i] << "\n"
          << text;
    }
  }
  EXPECT_GE(checked, 15);
}

// ---------------------------------------------------------------- rules for functions, errors

const char* kSquare =
    "function main\n1: (%1, %2)\n  %3 = Main.sq(%2)\n  %4 = %3 + %2\n  return %4\nend\n"
    "function sq\n1: (%1, %2)\n  %3 = %2 * %2\n  return %3\nend\n";

TEST(GradTest, RuleForAModuleFunctionReplacesItsBody) {
  std::string path = TraceIR(kSquare, "main", {Value::F64(3.0)});
  auto plain = Grad(path);
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(Deriv(*plain, 2), 7.0);
  // A deliberately different rule shows that the body is not entered.
  RuleSet rules = DefaultRules();
  auto extra = RuleSet::Parse("sq(x) -> y\n  dy = 10 * x * dx\n  dx = 10 * x * dy\n", "sq.rules");
  ASSERT_TRUE(extra.ok()) << extra.status().message();
  rules.Merge(*extra);
  auto ruled = Grad(path, {}, rules);
  ASSERT_TRUE(ruled.ok()) << ruled.status().message();
  EXPECT_EQ(Deriv(*ruled, 2), 31.0);
  GradOptions fw = ForwardAlong2();
  auto f = Grad(path, fw, rules);
  ASSERT_TRUE(f.ok()) << f.status().message();
  EXPECT_EQ(f->tangent.to_double(), 31.0);
  // The emitted trace records the call as one primitive.
  auto t = Trace::Open(path);
  std::string out_path = UniqueTempPath("ruled.fb");
  auto out = Output::Open(out_path);
  auto e = EmitGradientTrace(*t, rules, {}, **out);
  ASSERT_TRUE(e.ok()) << e.status().message();
  ASSERT_TRUE((*out)->Commit().ok());
  auto et = Trace::Open(out_path);
  bool has_sq = false;
  for (NodeId i = 0; i < et->size(); ++i) has_sq = has_sq || et->node(i)->op() == "sq";
  EXPECT_TRUE(has_sq);
  auto again = Grad(out_path, {}, rules);
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(Deriv(*again, 2), 10.0);
}

TEST(GradTest, Errors) {
  // A primitive without a rule, in a differentiable position.
  std::string path = TraceIR(kF, "f", {Value::F64(1.0)});
  auto plus = RuleSet::Parse(
      "+(a, b) -> y\n  dy = da + db\n  da = sum_to(dy, a)\n  db = sum_to(dy, b)\n", "p");
  ASSERT_TRUE(plus.ok());
  auto r = Grad(path, {}, *plus);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kNotFound);
  EXPECT_EQ(r.status().message(),
            "no derivative rule for primitive 'sin' taking 1 argument at node 3 (@3, ⟨sin⟩ at "
            "§1:%3); add one with --rules");
  GradOptions fw = ForwardAlong2();
  auto rf = Grad(path, fw, *plus);
  ASSERT_FALSE(rf.ok());
  EXPECT_NE(rf.status().message().find("'sin'"), std::string::npos);
  // No differentiable argument.
  const char* ints = "function k\n1: (%1, %2)\n  %3 = %2 * 1.5\n  return %3\nend\n";
  auto ri = Grad(TraceIR(ints, "k", {Value::I64(2)}));
  ASSERT_FALSE(ri.ok());
  EXPECT_EQ(ri.status().message(),
            "no differentiable argument: k takes @2::Int64; derivatives exist for Float64, "
            "Float32 and tensors of them");
  // An Int result.
  const char* intres = "function k\n1: (%1, %2)\n  %3 = %2 < 1.5\n  return %3\nend\n";
  auto rr = Grad(TraceIR(intres, "k", {Value::F64(2)}));
  ASSERT_FALSE(rr.ok());
  EXPECT_NE(rr.status().message().find("the result of k is Bool"), std::string::npos);
  // --wrt beyond the arguments.
  GradOptions w;
  w.wrt = {5};
  auto rw = Grad(path, w);
  ASSERT_FALSE(rw.ok());
  EXPECT_EQ(rw.status().message(),
            "@5 is not an argument of the root call (its arguments are @1 to @2)");
  // A nondiff primitive is a structural zero, not an error.
  const char* nondiff =
      "function k\n1: (%1, %2)\n  %3 = Main.zero(%2)\n  %4 = %3 + 1.0\n  return %4\nend\n";
  auto rz = Grad(TraceIR(nondiff, "k", {Value::F64(2)}));
  ASSERT_TRUE(rz.ok());
  EXPECT_EQ(Deriv(*rz, 2), 0.0);
}

// ---------------------------------------------------------------- scale

// A tensor's first adjoint is the rule's output itself when nothing else
// holds it, and a copy when it is shared: t(A, B) = sum(A .* B + A .* B)
// hands the same dy to both operands of +, and A .* B's adjoint must be
// 2 dy. The first adjoint is what zeros + g gives: -0 becomes 0.
TEST(GradTest, FirstTensorAdjointsTakenOverOrCopied) {
  const char* ir =
      "function t\n1: (%1, %2, %3)\n  %4 = %2 * %3\n  %5 = %4 + %4\n  %6 = Main.sum(%5)\n"
      "  return %6\nend\n";
  const std::vector<double> a = {1.0, -2.0, 3.0, 4.0}, b = {0.5, -0.0, 0.0, -1.5};
  std::string path = TraceIR(ir, "t",
                             {Value::MakeTensor(Tensor::FromF64({2, 2}, a)),
                              Value::MakeTensor(Tensor::FromF64({2, 2}, b))});
  auto r = Grad(path);
  ASSERT_TRUE(r.ok()) << r.status().message();
  Tensor da, db;
  for (const ArgumentDerivative& d : r->arguments) {
    if (d.pos == 2) da = d.derivative.tensor();
    if (d.pos == 3) db = d.derivative.tensor();
  }
  ASSERT_EQ(da.numel(), 4);
  ASSERT_EQ(db.numel(), 4);
  for (int64_t i = 0; i < 4; ++i) {
    size_t k = static_cast<size_t>(i);
    EXPECT_EQ(da.at(i), 2.0 * b[k]) << i;
    EXPECT_EQ(db.at(i), 2.0 * a[k]) << i;
    EXPECT_FALSE(std::signbit(da.at(i)) && da.at(i) == 0.0) << "-0 at " << i;
  }
}

// A matrix product's adjoint rules give products, taken over as first
// adjoints without a pass for -0s: a -0 that the product's terms would make
// (1 x -0) must come out 0, as zeros + g gives it, at every size.
TEST(GradTest, ProductAdjointsTakenOverHoldNoNegativeZero) {
  const char* ir =
      "function t\n1: (%1, %2, %3)\n  %4 = Main.matmul(%2, %3)\n  %5 = Main.sum(%4)\n"
      "  return %5\nend\n";
  for (int64_t size : {1, 2, 40}) {
    std::vector<double> a(static_cast<size_t>(size * size), 2.0);
    std::vector<double> b(static_cast<size_t>(size * size), -0.0);
    std::string path = TraceIR(ir, "t",
                               {Value::MakeTensor(Tensor::FromF64({size, size}, a)),
                                Value::MakeTensor(Tensor::FromF64({size, size}, b))});
    auto r = Grad(path);
    ASSERT_TRUE(r.ok()) << r.status().message();
    for (const ArgumentDerivative& d : r->arguments) {
      if (d.pos != 2) continue;
      const Tensor& da = d.derivative.tensor();  // ones * B^T: sums of -0
      ASSERT_EQ(da.numel(), size * size);
      for (int64_t i = 0; i < da.numel(); ++i) {
        ASSERT_EQ(da.at(i), 0.0);
        ASSERT_FALSE(std::signbit(da.at(i))) << "-0 at " << i << " for size " << size;
      }
    }
  }
}

TEST(GradTest, DeepRecursionAndLongLoops) {
  // down(x, n) = n == 0 ? x : sin(down(x, n - 1)) * 0.5 + x, 10^5 calls deep.
  const char* deep =
      "function down\n1: (%1, %2, %3)\n  %4 = %3 == 0\n  br 2 unless %4\n  return %2\n2:\n"
      "  %5 = %3 - 1\n  %6 = Main.down(%2, %5)\n  %7 = Main.sin(%6)\n  %8 = %7 * 0.5\n"
      "  %9 = %8 + %2\n  return %9\nend\n";
  int64_t depth = 100000;
  std::string path = TraceIR(deep, "down", {Value::F64(0.3), Value::I64(depth)});
  auto r = Grad(path);
  ASSERT_TRUE(r.ok()) << r.status().message();
  // Independent: the recurrence v_k = 0.5 sin(v_{k-1}) + x, dv_k = 0.5 cos(v_{k-1}) dv_{k-1} + 1.
  double v = 0.3, dv = 1.0;
  for (int64_t k = 0; k < depth; ++k) {
    dv = 0.5 * std::cos(v) * dv + 1.0;
    v = std::sin(v) * 0.5 + 0.3;
  }
  EXPECT_TRUE(Close(Deriv(*r, 2), dv, 1e-12)) << Deriv(*r, 2) << " vs " << dv;
  GradOptions fw = ForwardAlong2();
  auto f = Grad(path, fw);
  ASSERT_TRUE(f.ok());
  EXPECT_TRUE(Close(f->tangent.to_double(), dv, 1e-12));
}

}  // namespace
}  // namespace irt
