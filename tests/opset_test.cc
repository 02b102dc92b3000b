// The standard operation set (irt/ops.h) against independent computations:
// every differentiable operation is traced by the IR adapter, differentiated
// by irt-grad's engine with the shipped rules in reverse and forward mode,
// and compared with central differences of the operation itself, on
// scalars and on tensors (with broadcasting). A differentiable row without a
// case here fails the coverage test.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "ir_test_util.h"
#include "irt/grad.h"
#include "irt/ops.h"
#include "irt/rules.h"
#include "irt/trace.h"
#include "irt/value.h"
#include "test_util.h"

namespace irt {
namespace {

using testing::TempPath;

RuleSet ShippedRules() {
  auto r = RuleSet::Load(std::string(IRT_SOURCE_DIR) + "/rules/default.rules");
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? std::move(r).value() : RuleSet();
}

struct Case {
  std::string op;    // the row it covers
  std::string expr;  // the statement's right-hand side over %2, %3, ...
  std::vector<std::string> args;
  std::vector<bool> diff;  // which arguments to differentiate
};

// `expr` over the arguments, then sum(result .* weights) so that every
// element of a tensor result matters, each with its own weight.
std::string Program(const Case& c) {
  size_t n = c.args.size();
  std::string params = "%1";
  for (size_t i = 0; i < n + 1; ++i) params += ", %" + std::to_string(i + 2);
  std::string r = "%" + std::to_string(n + 3);
  std::string w = "%" + std::to_string(n + 2);
  // The IR writes operators as operators: -%2, %2 + %3.
  std::string expr = c.expr;
  if (!std::isalpha(static_cast<unsigned char>(expr[0]))) {
    std::string op = expr.substr(0, expr.find('('));
    expr = c.args.size() == 1 ? op + "%2" : "%2 " + op + " %3";
  }
  std::string text = "function t\n1: (" + params + ")\n  " + r + " = " + expr + "\n";
  text += "  %100 = " + r + " * " + w + "\n  %101 = sum(%100)\n  return %101\nend\n";
  return text;
}

// The same function computed directly with the operations.
Result<double> Direct(const Case& c, const std::vector<Value>& args, const Value& weights) {
  // The expression is "name(%2, ..., literal, ...)": evaluate by substituting.
  std::string_view e = c.expr;
  size_t open = e.find('(');
  std::string name(e.substr(0, open));
  if (name.starts_with("Main.")) name = name.substr(5);
  std::vector<Value> operands;
  std::string inner(e.substr(open + 1, e.size() - open - 2));
  size_t start = 0;
  while (start <= inner.size()) {
    size_t comma = inner.find(", ", start);
    std::string tok =
        inner.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (tok[0] == '%') {
      operands.push_back(args[std::stoul(tok.substr(1)) - 2]);
    } else {
      IRT_ASSIGN_OR_RETURN(Value v, ParseLiteral(tok));
      operands.push_back(v);
    }
    if (comma == std::string::npos) break;
    start = comma + 2;
  }
  IRT_ASSIGN_OR_RETURN(Value y, ApplyOp(name, operands));
  IRT_ASSIGN_OR_RETURN(Value p, ApplyOp("*", std::vector<Value>{y, weights}));
  if (p.kind() == VKind::kTensor) {
    IRT_ASSIGN_OR_RETURN(p, ApplyOp("sum", std::vector<Value>{p}));
  }
  return p.to_double();
}

std::vector<Case> Cases() {
  const std::string v = "[0.3, 0.9, 1.7]";
  const std::string m = "[1.0 2.5 0.3; 0.7 -1.0 2.0]";
  std::vector<Case> cs;
  for (const char* f : {"sin", "cos", "tan", "exp", "log", "sqrt", "tanh", "atan", "log1p", "expm1",
                        "lgamma", "digamma", "identity"}) {
    cs.push_back({f, std::string(f) + "(%2)", {"0.7"}, {true}});
    cs.push_back({f, std::string(f) + "(%2)", {v}, {true}});
  }
  for (const char* f : {"sinh", "cosh", "asin", "acos", "asinh", "atanh", "log2", "log10", "exp2",
                        "cbrt", "erf", "erfc"}) {
    cs.push_back({f, std::string(f) + "(%2)", {"0.6"}, {true}});
    cs.push_back({f, std::string(f) + "(%2)", {"[0.3, 0.45, 0.8]"}, {true}});
  }
  cs.push_back({"acosh", "acosh(%2)", {"1.7"}, {true}});
  cs.push_back({"acosh", "acosh(%2)", {"[1.3, 2.9, 1.7]"}, {true}});
  cs.push_back({"cbrt", "cbrt(%2)", {"-2.5"}, {true}});
  cs.push_back({"hypot", "hypot(%2, %3)", {"0.7", "-1.9"}, {true, true}});
  cs.push_back({"hypot", "hypot(%2, %3)", {"[0.3, 0.9, -1.7]", "1.3"}, {true, true}});
  cs.push_back({"abs", "abs(%2)", {"-0.7"}, {true}});
  cs.push_back({"abs", "abs(%2)", {"[-0.5, 0.8, -1.3]"}, {true}});
  cs.push_back({"-", "-(%2)", {v}, {true}});
  cs.push_back({"polygamma", "polygamma(1, %2)", {"1.3"}, {true}});
  cs.push_back({"polygamma", "polygamma(2, %2)", {v}, {true}});
  for (const char* f : {"+", "-", "*", "/", "^", "min", "max", "atan2"}) {
    std::string call = std::string(f) + "(%2, %3)";
    cs.push_back({f, call, {"0.7", "1.9"}, {true, true}});
    cs.push_back({f, call, {v, "1.3"}, {true, true}});
    cs.push_back({f, call, {"2.1", v}, {true, true}});
    // (A negative base has no real power: NaN, by the domain policy.)
    cs.push_back({f,
                  call,
                  {std::string(f) == "^" ? "[1.0 2.5 0.3; 0.7 1.2 2.0]" : m, "[1.3 0.2 0.6]"},
                  {true, true}});
  }
  // rem and mod away from their jumps.
  for (const char* f : {"rem", "mod"}) {
    std::string call = std::string(f) + "(%2, %3)";
    cs.push_back({f, call, {"0.7", "1.9"}, {true, true}});
    cs.push_back({f, call, {"-5.3", "1.7"}, {true, true}});
    cs.push_back({f, call, {"[5.3, -4.1, 2.2]", "1.7"}, {true, true}});
    cs.push_back({f, call, {"2.3", "[0.7, -0.9, 1.7]"}, {true, true}});
    cs.push_back({f, call, {m, "[1.3 0.3 0.6]"}, {true, true}});
  }
  cs.push_back(
      {"ifelse", "ifelse(%2, %3, %4)", {"[true, false, true]", v, "0.4"}, {false, true, true}});
  cs.push_back({"ifelse", "ifelse(%2, %3, %4)", {"false", "0.6", "0.4"}, {false, true, true}});
  for (const char* f : {"maximum", "minimum", "sum", "mean"}) {
    cs.push_back({f, std::string(f) + "(%2)", {m}, {true}});
    cs.push_back({f, std::string(f) + "(%2, 1)", {m}, {true}});
    cs.push_back({f, std::string(f) + "(%2, 2)", {m}, {true}});
  }
  cs.push_back({"matmul", "matmul(%2, %3)", {m, "[0.5 1.0; -2.0 0.3; 1.1 0.9]"}, {true, true}});
  cs.push_back({"matmul", "matmul(%2, %3)", {m, "[0.5, -2.0, 1.1]"}, {true, true}});
  cs.push_back({"matmul", "matmul(%2, %3)", {"[0.5, -2.0]", "[1.5 0.25 -1.0]"}, {true, true}});
  cs.push_back({"dot", "dot(%2, %3)", {"[0.5, -2.0, 1.1]", "[1.5, 0.25, -1.0]"}, {true, true}});
  cs.push_back({"transpose", "transpose(%2)", {m}, {true}});
  cs.push_back({"reshape", "reshape(%2, 3, 2)", {m}, {true}});
  cs.push_back({"slice", "slice(%2, 2, 1, 3, 2)", {m}, {true}});
  cs.push_back({"slice", "slice(%2, 1, 2, 2)", {m}, {true}});
  cs.push_back({"slice", "slice(%2, 1, 3, 1, -1)", {v}, {true}});
  cs.push_back(
      {"unslice", "unslice(%2, %3, 2, 1, 3, 2)", {"[1.0 2.0; 3.0 4.0]", m}, {true, false}});
  cs.push_back({"getslice", "getslice(%2, 2, 1, nothing)", {m}, {true}});
  cs.push_back({"getslice", "getslice(%2, 1, -1, nothing, -1)", {v}, {true}});
  cs.push_back({"getslice", "getslice(%2, 2, nothing, nothing, 2)", {m}, {true}});
  cs.push_back(
      {"ungetslice", "ungetslice(%2, %3, 2, 0, 3, 2)", {"[1.0 2.0; 3.0 4.0]", m}, {true, false}});
  cs.push_back({"cumsum", "cumsum(%2)", {v}, {true}});
  cs.push_back({"cumsum", "cumsum(%2, 2)", {m}, {true}});
  cs.push_back({"cumsum", "cumsum(%2, 1)", {m}, {true}});
  cs.push_back({"cat", "cat(1, %2, %3)", {m, "[0.1 0.2 0.3]"}, {true, true}});
  cs.push_back({"cat", "cat(2, %2, %3)", {m, "[0.1 0.2; 0.3 0.4]"}, {true, true}});
  cs.push_back({"getindex", "getindex(%2, 2, 3)", {m}, {true}});
  cs.push_back({"getindex", "getindex(%2, 5)", {m}, {true}});
  cs.push_back({"addindex", "addindex(%2, %3, 1, 2)", {m, "0.8"}, {true, true}});
  cs.push_back({"getitem", "getitem(%2, 1, -1)", {m}, {true}});
  cs.push_back({"getitem", "getitem(%2, 0)", {m}, {true}});
  cs.push_back({"additem", "additem(%2, %3, 1)", {m, "[0.1, 0.2, 0.3]"}, {true, true}});
  cs.push_back({"additem", "additem(%2, %3, 0, 2)", {m, "0.8"}, {true, true}});
  cs.push_back({"getitem", "getitem(%2, nothing, -1)", {m}, {true}});
  cs.push_back({"additem", "additem(%2, %3, nothing, 1)", {m, "[0.1, 0.2]"}, {true, true}});
  cs.push_back({"fill", "Main.fill(%2, 2, 3)", {"0.8"}, {true}});
  cs.push_back({"broadcast_to", "broadcast_to(%2, %3)", {"[0.5 0.25 2.0]", m}, {true, false}});
  cs.push_back({"sum_to", "sum_to(%2, %3)", {m, "[0.5 0.25 2.0]"}, {true, false}});
  return cs;
}

std::string WriteFile(const std::string& name, const std::string& text) {
  std::string path = TempPath(name);
  std::ofstream(path) << text;
  return path;
}

Result<Trace> TraceProgram(const std::string& text, const std::vector<std::string>& args,
                           const std::string& name) {
  ir::TraceRequest req;
  req.module_path = WriteFile(name + ".ir", text);
  req.function = "t";
  req.args = args;
  IRT_ASSIGN_OR_RETURN(ir::TraceJob job, ir::TraceJob::Prepare(req));
  std::string path = TempPath(name + ".fb");
  IRT_ASSIGN_OR_RETURN(std::unique_ptr<Output> out, Output::Open(path));
  IRT_RETURN_IF_ERROR(job.Run(*out));
  IRT_RETURN_IF_ERROR(out->Commit());
  return Trace::Open(path);
}

double Element(const Value& v, int64_t i) {
  return v.kind() == VKind::kTensor ? v.tensor().at(i) : v.to_double();
}

Value Perturbed(const Value& x, int64_t i, double delta) {
  if (x.kind() != VKind::kTensor) return Value::F64(x.to_double() + delta);
  Tensor t = x.tensor();
  t.f64()[i] += delta;
  return Value::MakeTensor(std::move(t));
}

TEST(OpsetTest, DerivativesAgreeWithCentralDifferences) {
  RuleSet rules = ShippedRules();
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  int n = 0;
  for (const Case& c : Cases()) {
    std::string what = c.expr + " at (";
    for (size_t i = 0; i < c.args.size(); ++i) what += (i ? ", " : "") + c.args[i];
    what += ")";
    std::vector<Value> args;
    for (const std::string& a : c.args) args.push_back(*ParseLiteral(a));
    Result<double> probe = Direct(c, args, Value::F64(1.0));
    ASSERT_TRUE(probe.ok()) << what << ": " << probe.status().message();
    auto traced = [&](const Value& w) -> Result<Trace> {
      std::vector<std::string> targs = c.args;
      targs.push_back(FormatValue(w));
      return TraceProgram(Program(c), targs, "opset" + std::to_string(n));
    };
    // Find the result's shape by tracing with a scalar weight first.
    Result<Trace> t0 = traced(Value::F64(1.0));
    ASSERT_TRUE(t0.ok()) << what << ": " << t0.status().message();
    Value result = t0->node(static_cast<NodeId>(c.args.size() + 2))->value();
    Value w = Value::F64(0.75);
    if (result.kind() == VKind::kTensor) {
      Tensor wt = Tensor::Zeros(DType::kF64, result.tensor().shape);
      for (int64_t i = 0; i < wt.numel(); ++i) wt.f64()[i] = unit(rng);
      w = Value::MakeTensor(std::move(wt));
    }
    Result<Trace> trace = traced(w);
    ASSERT_TRUE(trace.ok()) << what << ": " << trace.status().message();

    GradOptions rev;
    for (size_t k = 0; k < c.args.size(); ++k) {
      if (c.diff[k]) rev.wrt.push_back(static_cast<uint32_t>(k + 2));
    }
    Result<GradResult> g = Differentiate(*trace, rules, rev);
    ASSERT_TRUE(g.ok()) << what << ": " << g.status().message();
    double forward_expect = 0;
    GradOptions fwd;
    fwd.mode = GradMode::kForward;
    for (size_t k = 0; k < c.args.size(); ++k) {
      if (!c.diff[k]) continue;
      const Value& x = args[k];
      const Value& d = g->arguments[k + 1].derivative;
      int64_t count = x.kind() == VKind::kTensor ? x.tensor().numel() : 1;
      Value dir = Value::F64(unit(rng));
      if (x.kind() == VKind::kTensor) {
        Tensor t = Tensor::Zeros(DType::kF64, x.tensor().shape);
        for (int64_t i = 0; i < count; ++i) t.f64()[i] = unit(rng);
        dir = Value::MakeTensor(std::move(t));
      }
      for (int64_t i = 0; i < count; ++i) {
        const double h = 1e-6;
        std::vector<Value> up = args, down = args;
        up[k] = Perturbed(x, i, h);
        down[k] = Perturbed(x, i, -h);
        double fd = (*Direct(c, up, w) - *Direct(c, down, w)) / (2 * h);
        double got = Element(d, i);
        EXPECT_NEAR(got, fd, 1e-5 * std::max(1.0, std::fabs(fd)))
            << what << ": d/d%" << k + 2 << "[" << i + 1 << "]";
      }
      fwd.tangents.emplace_back(static_cast<uint32_t>(k + 2), dir);
      for (int64_t i = 0; i < count; ++i) forward_expect += Element(d, i) * Element(dir, i);
    }
    Result<GradResult> f = Differentiate(*trace, rules, fwd);
    ASSERT_TRUE(f.ok()) << what << ": " << f.status().message();
    EXPECT_NEAR(f->tangent.to_double(), forward_expect,
                1e-10 * std::max(1.0, std::fabs(forward_expect)))
        << what << ": forward mode";
    ++n;
  }
  EXPECT_GT(n, 80);
}

TEST(OpsetTest, EveryDifferentiableOperationHasACase) {
  std::set<std::string> covered;
  for (const Case& c : Cases()) covered.insert(c.op);
  for (const OpDef& op : StandardOps()) {
    if (op.Has(kOpNondiff) || op.Has(kOpRandom) || op.rule.empty()) continue;
    EXPECT_TRUE(covered.count(std::string(op.name))) << op.name << " has no derivative case";
  }
}

}  // namespace
}  // namespace irt

namespace irt {
namespace {

std::string Eval(std::string_view op, std::vector<std::string> args) {
  std::vector<Value> vals;
  for (const std::string& a : args) vals.push_back(*ParseLiteral(a));
  Result<Value> r = ApplyOp(op, vals);
  if (!r.ok()) return r.status().message();
  return FormatValue(*r) + "::" + TypeName(*r);
}

TEST(OpsetTest, ValuesFollowTheDocumentedSemantics) {
  // One order for reshape and linear indexing: row-major.
  EXPECT_EQ(Eval("reshape", {"[1 2 3; 4 5 6]", "6"}), "[1, 2, 3, 4, 5, 6]::Vector{Int64}");
  EXPECT_EQ(Eval("getindex", {"[1 2 3; 4 5 6]", "2"}), "2::Int64");
  EXPECT_EQ(Eval("getindex", {"[1 2 3; 4 5 6]", "4"}), "4::Int64");
  // Floor division and modulo are Python's // and %; div and rem truncate.
  EXPECT_EQ(Eval("fld", {"-7", "2"}), "-4::Int64");
  EXPECT_EQ(Eval("mod", {"-7", "2"}), "1::Int64");
  EXPECT_EQ(Eval("div", {"-7", "2"}), "-3::Int64");
  EXPECT_EQ(Eval("rem", {"-7", "2"}), "-1::Int64");
  EXPECT_EQ(Eval("mod", {"7", "-2"}), "-1::Int64");
  EXPECT_EQ(Eval("fld", {"-7.5", "2.0"}), "-4.0::Float64");
  EXPECT_EQ(Eval("mod", {"-7.5", "2.0"}), "0.5::Float64");
  EXPECT_EQ(Eval("mod", {"-0.0", "2.0"}), "0.0::Float64");
  EXPECT_EQ(Eval("fld", {"1", "0"}), "DivideError: integer division error");
  EXPECT_EQ(Eval("fld", {"1.0", "0.0"}), "Inf::Float64");
  EXPECT_EQ(Eval("mod", {"1.0", "0.0"}), "NaN::Float64");
  EXPECT_EQ(Eval("fld", {"[7, -7]", "2"}), "[3, -4]::Vector{Int64}");
  // Integer overflow wraps; domain errors are NaN; integer ^ negative is an error.
  EXPECT_EQ(Eval("+", {"9223372036854775807", "1"}), "-9223372036854775808::Int64");
  EXPECT_EQ(Eval("log", {"-1.0"}), "NaN::Float64");
  EXPECT_EQ(Eval("sqrt", {"-1.0f0"}), "NaN32::Float32");
  EXPECT_EQ(Eval("^", {"2", "-1"}),
            "DomainError with -1: cannot raise an integer x to a negative power -1");
  // Special functions at known points.
  EXPECT_EQ(Eval("lgamma", {"1.0"}), "0.0::Float64");
  EXPECT_NEAR(ApplyOp("digamma", std::vector<Value>{Value::F64(1)})->to_double(),
              -0.57721566490153286, 1e-15);
  EXPECT_NEAR(ApplyOp("polygamma", std::vector<Value>{Value::I64(1), Value::F64(1)})->to_double(),
              M_PI * M_PI / 6, 1e-14);
  EXPECT_NEAR(ApplyOp("polygamma", std::vector<Value>{Value::I64(2), Value::F64(1)})->to_double(),
              -2 * 1.2020569031595943, 1e-13);
  EXPECT_NEAR(ApplyOp("digamma", std::vector<Value>{Value::F64(-0.5)})->to_double(),
              0.036489973978576520, 1e-14);
  EXPECT_EQ(Eval("atan2", {"1.0", "-1.0"}), "2.356194490192345::Float64");
  EXPECT_EQ(Eval("log1p", {"1.0e-20"}), "1.0e-20::Float64");
  // Integer and Bool tensors; comparisons give Bool tensors.
  EXPECT_EQ(Eval("*", {"Int64[1, 2]", "Int64[3, 4]"}), "[3, 8]::Vector{Int64}");
  EXPECT_EQ(Eval("<", {"[1.0, 3.0]", "2"}), "[true, false]::Vector{Bool}");
  EXPECT_EQ(Eval("sum", {"[true, true, false]"}), "2::Int64");
  EXPECT_EQ(Eval("maximum", {"Int64[4, 9, 2]"}), "9::Int64");
  EXPECT_EQ(Eval("maximum", {"[1.0 5.0; 7.0 2.0]", "2"}), "[5.0; 7.0;;]::Matrix{Float64}");
  EXPECT_EQ(Eval("minimum", {"[1.0, NaN]"}), "NaN::Float64");
  EXPECT_EQ(Eval("maximum", {"Float64[]"}),
            "ArgumentError: maximum: reducing over an empty collection is not allowed");
  EXPECT_EQ(Eval("ifelse", {"[true, false]", "1.0", "[5.0, 6.0]"}), "[1.0, 6.0]::Vector{Float64}");
  EXPECT_EQ(Eval("ifelse", {"[true, false]", "Int64[3, 4]", "0.5"}), "[3.0, 0.5]::Vector{Float64}");
  EXPECT_EQ(Eval("ifelse", {"false", "Int64[3, 4]", "true"}), "[1, 1]::Vector{Int64}");
  // Slices and concatenation.
  EXPECT_EQ(Eval("slice", {"[1 2 3; 4 5 6]", "2", "3", "1", "-2"}), "[3 1; 6 4]::Matrix{Int64}");
  EXPECT_EQ(Eval("slice", {"[1, 2, 3]", "1", "3", "2"}), "Int64[]::Vector{Int64}");
  EXPECT_EQ(Eval("slice", {"[1, 2, 3]", "1", "2", "4"}),
            "BoundsError: slice: range 2:1:4 out of bounds for dimension 1 of size 3");
  EXPECT_EQ(Eval("cat", {"1", "[1 2]", "[3.5 4.5]"}), "[1.0 2.0; 3.5 4.5]::Matrix{Float64}");
  EXPECT_EQ(Eval("cat", {"2", "[1 2]", "[3, 4]"}),
            "DimensionMismatch: cat: cannot join 1×2 and 2 along dimension 2");
  // cumsum: in order along a dimension; integers and Bools as Int64.
  EXPECT_EQ(Eval("cumsum", {"[1.5, 2.0, -1.0]"}), "[1.5, 3.5, 2.5]::Vector{Float64}");
  EXPECT_EQ(Eval("cumsum", {"[1 2 3; 4 5 6]", "1"}), "[1 2 3; 5 7 9]::Matrix{Int64}");
  EXPECT_EQ(Eval("cumsum", {"[1 2 3; 4 5 6]", "2"}), "[1 3 6; 4 9 15]::Matrix{Int64}");
  EXPECT_EQ(Eval("cumsum", {"[true, true, false]"}), "[1, 2, 2]::Vector{Int64}");
  EXPECT_EQ(Eval("cumsum", {"[1 2; 3 4]"}),
            "ArgumentError: cumsum: a tensor of 2 dimensions needs the dimension to sum along");
  // collect: a tuple's numbers as a vector of the type that holds them.
  EXPECT_EQ(Eval("collect", {"(1, true, 2.5)"}), "[1.0, 1.0, 2.5]::Vector{Float64}");
  EXPECT_EQ(Eval("collect", {"(1, true)"}), "[1, 1]::Vector{Int64}");
  EXPECT_EQ(Eval("collect", {"()"}), "Bool[]::Vector{Bool}");
  EXPECT_EQ(Eval("collect", {"(1.0, [2.0])"}).substr(0, 42),
            "MethodError: no method matching collect(::");
  // Tuples: along their one dimension, Python's t1 + t2; with tuples only.
  EXPECT_EQ(Eval("cat", {"1", "(1, 2.5)", "()", "(true,)"}),
            "(1, 2.5, true)::Tuple{Int64, Float64, Bool}");
  EXPECT_EQ(Eval("cat", {"2", "(1, 2.5)", "(3,)"}).substr(0, 40),
            "DimensionMismatch: cat: dimension 2 out ");
  EXPECT_EQ(Eval("cat", {"1", "(1, 2.5)", "[3, 4]"}).substr(0, 38),
            "MethodError: no method matching cat(::");
  EXPECT_EQ(Eval("unslice", {"[1.0, 2.0]", "[0.0, 0.0, 0.0, 0.0]", "1", "2", "4", "2"}),
            "[0.0, 1.0, 0.0, 2.0]::Vector{Float64}");
  // Python's slices: 0-based, stop excluded, negative from the end, clamped.
  EXPECT_EQ(Eval("getslice", {"[1, 2, 3, 4, 5]", "1", "-2", "nothing"}), "[4, 5]::Vector{Int64}");
  EXPECT_EQ(Eval("getslice", {"[1, 2, 3, 4, 5]", "1", "nothing", "nothing", "-2"}),
            "[5, 3, 1]::Vector{Int64}");
  EXPECT_EQ(Eval("getslice", {"[1, 2, 3, 4, 5]", "1", "3", "-10", "-1"}),
            "[4, 3, 2, 1]::Vector{Int64}");
  EXPECT_EQ(Eval("getslice", {"[1, 2, 3]", "1", "10", "20"}), "Int64[]::Vector{Int64}");
  EXPECT_EQ(Eval("getslice", {"[1 2 3; 4 5 6]", "2", "-2", "nothing"}),
            "[2 3; 5 6]::Matrix{Int64}");
  EXPECT_EQ(Eval("getslice", {"(1, \"a\", 2.5)", "1", "1", "nothing"}),
            "(\"a\", 2.5)::Tuple{String, Float64}");
  EXPECT_EQ(Eval("getslice", {"[1, 2, 3]", "1", "0", "2", "0"}),
            "ArgumentError: getslice: the step of a slice cannot be zero");
  EXPECT_EQ(Eval("getslice", {"[1, 2, 3]", "1", "0.5", "2"}),
            "ArgumentError: getslice: the start, stop and step of a slice must be integers or "
            "nothing");
  EXPECT_EQ(Eval("ungetslice", {"[1.0, 2.0]", "[0.0, 0.0, 0.0, 0.0]", "1", "-1", "nothing", "-2"}),
            "[0.0, 2.0, 0.0, 1.0]::Vector{Float64}");
  // Any Int64 is a step or an index, the extremes too (no overflow).
  EXPECT_EQ(Eval("getslice", {"[1, 2, 3]", "1", "nothing", "nothing", "-9223372036854775808"}),
            "[3]::Vector{Int64}");
  EXPECT_EQ(Eval("getslice", {"[1, 2, 3]", "1", "-9223372036854775808", "9223372036854775807",
                              "9223372036854775807"}),
            "[1]::Vector{Int64}");
  EXPECT_EQ(Eval("slice", {"[1, 2, 3]", "1", "3", "-9223372036854775808", "-1"}),
            "BoundsError: slice: range 3:-1:-9223372036854775808 out of bounds for dimension 1 "
            "of size 3");
  EXPECT_EQ(Eval("slice", {"[1, 2, 3]", "1", "-9223372036854775807", "9223372036854775807"}),
            "BoundsError: slice: range -9223372036854775807:1:9223372036854775807 out of bounds "
            "for dimension 1 of size 3");
  EXPECT_EQ(Eval("slice", {"[1, 2, 3]", "1", "3", "1", "-9223372036854775808"}),
            "[3]::Vector{Int64}");
  EXPECT_EQ(Eval("slice", {"[1, 2, 3]", "1", "3", "-9223372036854775808", "-9223372036854775808"}),
            "BoundsError: slice: range 3:-9223372036854775808:-9223372036854775808 out of bounds "
            "for dimension 1 of size 3");
  EXPECT_EQ(Eval("slice", {"[1, 2, 3]", "1", "1", "9223372036854775807", "2"}),
            "BoundsError: slice: range 1:2:9223372036854775807 out of bounds for dimension 1 of "
            "size 3");
  EXPECT_EQ(Eval("slice", {"[1, 2, 3]", "1", "1", "3", "2"}), "[1, 3]::Vector{Int64}");
  // nothing takes a whole dimension (Python's `:`), in any place.
  EXPECT_EQ(Eval("getitem", {"[1 2 3; 4 5 6]", "nothing", "1"}), "[2, 5]::Vector{Int64}");
  EXPECT_EQ(Eval("getitem", {"[1 2 3; 4 5 6]", "nothing"}), "[1 2 3; 4 5 6]::Matrix{Int64}");
  EXPECT_EQ(Eval("getitem", {"[1 2 3; 4 5 6]", "-1", "nothing"}), "[4, 5, 6]::Vector{Int64}");
  EXPECT_EQ(Eval("getitem", {"[1 2 3; 4 5 6]", "nothing", "3"}),
            "BoundsError: getitem: index 3 out of bounds for dimension 2 of size 3");
  EXPECT_EQ(Eval("additem", {"[0.0 0.0 0.0; 0.0 0.0 0.0]", "[1.0, 2.0]", "nothing", "-1"}),
            "[0.0 0.0 1.0; 0.0 0.0 2.0]::Matrix{Float64}");
  EXPECT_EQ(Eval("additem", {"[0.0 0.0 0.0; 0.0 0.0 0.0]", "1.0", "nothing", "0"}),
            "DimensionMismatch: additem: cannot add Float64 to an item of shape 2");
  EXPECT_EQ(Eval("getitem", {"(1, 2)", "nothing"}),
            "ArgumentError: getitem: a tuple takes one integer index");

  EXPECT_EQ(Eval("getindex", {"(1, \"a\", 2.5)", "2"}), "\"a\"::String");
  EXPECT_EQ(Eval("length", {"(1, 2)"}), "2::Int64");
  EXPECT_EQ(Eval("getindex", {"(1, 2)", "3"}),
            "BoundsError: getindex: index 3 out of bounds for a tuple of 2");
  // Errors name the operation and the argument types.
  EXPECT_EQ(Eval("atan2", {"\"a\"", "1.0"}),
            "MethodError: no method matching atan2(::String, ::Float64)");
  EXPECT_EQ(Eval("sin", {"1.0", "2.0"}),
            "MethodError: no method matching sin(::Float64, ::Float64)");
  EXPECT_EQ(Eval("frobnicate", {"1.0"}), "no operation 'frobnicate' in the standard set");
}

TEST(OpsetTest, RowsAreWellFormed) {
  std::set<std::string> names;
  for (const OpDef& op : StandardOps()) {
    EXPECT_FALSE(op.meaning.empty()) << op.name;
    EXPECT_TRUE(op.signature.starts_with(op.name) || !std::isalpha(op.name[0])) << op.name;
    EXPECT_NE(op.scalar, nullptr) << op.name;
    if (op.Has(kOpElementwise)) {
      EXPECT_NE(op.tensor, nullptr) << op.name;
    }
    EXPECT_EQ(FindOp(op.name, op.min_arity), &op) << op.name;
    names.insert(std::string(op.name));
  }
  EXPECT_EQ(FindOp("sin", 2), nullptr);
  EXPECT_EQ(FindOp("-", 1)->scalar_op, FindOp("-", 1)->scalar_op);
  EXPECT_NE(FindOp("-", 1), FindOp("-", 2));
  EXPECT_GE(names.size(), 60u);
}

}  // namespace
}  // namespace irt

namespace irt {
namespace {

// The list of operations in man/irt-ops.7.md, made from the rows.
std::string OperationList() {
  std::string out;
  for (const OpDef& op : StandardOps()) {
    std::string arity = op.max_arity == kOpVariadic ? std::to_string(op.min_arity) + " or more"
                        : op.min_arity == op.max_arity
                            ? std::to_string(op.min_arity)
                            : std::to_string(op.min_arity) + " to " + std::to_string(op.max_arity);
    std::string flags;
    auto flag = [&](OpFlag f, const char* name) {
      if (op.Has(f)) flags += std::string(flags.empty() ? "" : ", ") + name;
    };
    flag(kOpElementwise, "elementwise");
    flag(kOpLinear, "linear");
    flag(kOpNondiff, "nondiff");
    flag(kOpRandom, "random");
    if (op.Has(kOpTuple)) {
      flags += std::string(flags.empty() ? "" : ", ") +
               "derivatives pass through item by item, without a rule";
    } else if (!op.Has(kOpNondiff) && !op.Has(kOpRandom) && op.rule.empty()) {
      flags += std::string(flags.empty() ? "" : ", ") + "no derivative: an error to differentiate";
    }
    std::string sig(op.signature);
    // ronn: escape characters markdown would read as markup.
    out += "  * `" + sig + "`:\n    " + std::string(op.meaning) + ". Arguments: " + arity + "." +
           (flags.empty() ? "" : " *" + flags + "*.") + "\n\n";
  }
  return out;
}

TEST(OpsetTest, ManPageListsEveryOperation) {
  std::string path = std::string(IRT_SOURCE_DIR) + "/man/irt-ops.7.md";
  std::string text = testing::ReadFile(path);
  const std::string begin_mark = "<!-- operations:";
  const std::string end_mark = "<!-- end of operations -->";
  size_t b = text.find(begin_mark);
  ASSERT_NE(b, std::string::npos);
  b = text.find('\n', b) + 1;
  size_t e = text.find(end_mark, b);
  ASSERT_NE(e, std::string::npos);
  std::string want = "\n" + OperationList();
  if (std::getenv("IRT_UPDATE_GOLDEN") != nullptr) {
    text.replace(b, e - b, want);
    std::ofstream(path) << text;
    return;
  }
  EXPECT_EQ(text.substr(b, e - b), want)
      << "man/irt-ops.7.md lists other operations than the rows: rerun this test with "
         "IRT_UPDATE_GOLDEN=1, then man/build.sh";
}

}  // namespace
}  // namespace irt
