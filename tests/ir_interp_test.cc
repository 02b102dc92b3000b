// The IR interpreter without a trace: Julia's promotion rules, every
// primitive, runtime errors, random numbers, deep recursion and tensors.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>

#include "irt/ir/interpreter.h"

namespace irt::ir {
namespace {

Value Lit(std::string_view s) {
  auto v = ParseLiteral(s);
  EXPECT_TRUE(v.ok()) << s;
  return v.ok() ? *v : Value();
}

// Evaluates `expr` (over %2 and %3) on the literal arguments a and b.
Result<Value> Eval2(const std::string& expr, std::string_view a, std::string_view b,
                    RandomSource random = RandomSource::Seeded(1)) {
  std::string text = "function t\n1: (%1, %2, %3)\n  %4 = " + expr + "\n  return %4\nend\n";
  auto m = Module::Parse(text, "t.ir");
  if (!m.ok()) return m.status();
  TrackingContext ctx;
  Interpreter interp(*m, ctx, random);
  Value args[] = {Lit(a), Lit(b)};
  return interp.Evaluate("t", args);
}

// "value::Type" of a successful evaluation, or the error message.
std::string Show(const std::string& expr, std::string_view a, std::string_view b = "0") {
  auto v = Eval2(expr, a, b);
  if (!v.ok()) return v.status().message();
  return FormatValue(*v) + "::" + TypeName(*v);
}

TEST(IrInterpTest, ArithmeticPromotion) {
  EXPECT_EQ(Show("%2 + %3", "1", "2"), "3::Int64");
  EXPECT_EQ(Show("%2 + %3", "1", "2.0"), "3.0::Float64");
  EXPECT_EQ(Show("%2 + %3", "true", "true"), "2::Int64");
  EXPECT_EQ(Show("%2 + %3", "1.5f0", "1"), "2.5f0::Float32");
  EXPECT_EQ(Show("%2 + %3", "1.5f0", "1.0"), "2.5::Float64");
  EXPECT_EQ(Show("%2 * %3", "true", "2.5"), "2.5::Float64");
  EXPECT_EQ(Show("%2 - %3", "3", "5"), "-2::Int64");
  EXPECT_EQ(Show("%2 + %3", "9223372036854775807", "1"), "-9223372036854775808::Int64");
  EXPECT_EQ(Show("%2 * %3", "4611686018427387904", "2"), "-9223372036854775808::Int64");
  EXPECT_EQ(Show("%2 / %3", "7", "2"), "3.5::Float64");
  EXPECT_EQ(Show("%2 / %3", "6", "3"), "2.0::Float64");
  EXPECT_EQ(Show("%2 / %3", "1", "0"), "Inf::Float64");
  EXPECT_EQ(Show("%2 / %3", "1f0", "4"), "0.25f0::Float32");
  EXPECT_EQ(Show("-%2", "3"), "-3::Int64");
  EXPECT_EQ(Show("-%2", "true"), "-1::Int64");
  EXPECT_EQ(Show("-%2", "2.5"), "-2.5::Float64");
  EXPECT_EQ(Show("-%2", "0.0"), "-0.0::Float64");
}

TEST(IrInterpTest, Power) {
  EXPECT_EQ(Show("%2 ^ %3", "2", "10"), "1024::Int64");
  EXPECT_EQ(Show("%2 ^ %3", "2", "64"), "0::Int64");  // wraps, like Julia
  EXPECT_EQ(Show("%2 ^ %3", "2.0", "3"), "8.0::Float64");
  EXPECT_EQ(Show("%2 ^ %3", "2.0", "-1"), "0.5::Float64");
  EXPECT_EQ(Show("%2 ^ %3", "4", "0.5"), "2.0::Float64");
  EXPECT_EQ(Show("%2 ^ %3", "1.5f0", "2"), "2.25f0::Float32");
  EXPECT_EQ(Show("%2 ^ %3", "-1", "-3"), "-1::Int64");
  EXPECT_EQ(Show("%2 ^ %3", "true", "5"), "true::Bool");
  EXPECT_EQ(Show("%2 ^ %3", "2", "-1"),
            "t.ir:3:3: DomainError with -1: cannot raise an integer x to a negative power -1");
  // Floating-point domain errors are NaN (IEEE 754), not errors.
  EXPECT_EQ(Show("%2 ^ %3", "-8.0", "0.5"), "NaN::Float64");
  EXPECT_EQ(Show("%2 ^ %3", "-8.0", "3.0"), "-512.0::Float64");
}

TEST(IrInterpTest, IntegerDivision) {
  EXPECT_EQ(Show("div(%2, %3)", "7", "2"), "3::Int64");
  EXPECT_EQ(Show("div(%2, %3)", "-7", "2"), "-3::Int64");
  EXPECT_EQ(Show("%2 ÷ %3", "7", "-2"), "-3::Int64");
  EXPECT_EQ(Show("rem(%2, %3)", "-7", "2"), "-1::Int64");
  EXPECT_EQ(Show("%2 % %3", "7", "-2"), "1::Int64");
  EXPECT_EQ(Show("rem(%2, %3)", "-9223372036854775808", "-1"), "0::Int64");
  EXPECT_EQ(Show("div(%2, %3)", "7.5", "2.0"), "3.0::Float64");
  EXPECT_EQ(Show("rem(%2, %3)", "7.5", "2"), "1.5::Float64");
  EXPECT_EQ(Show("div(%2, %3)", "1", "0"), "t.ir:3:3: DivideError: integer division error");
  EXPECT_EQ(Show("rem(%2, %3)", "1", "0"), "t.ir:3:3: DivideError: integer division error");
  EXPECT_EQ(Show("div(%2, %3)", "-9223372036854775808", "-1"),
            "t.ir:3:3: DivideError: integer division error");
}

TEST(IrInterpTest, Comparisons) {
  EXPECT_EQ(Show("%2 < %3", "1", "2.5"), "true::Bool");
  EXPECT_EQ(Show("%2 <= %3", "2", "2"), "true::Bool");
  EXPECT_EQ(Show("%2 > %3", "2", "2"), "false::Bool");
  EXPECT_EQ(Show("%2 >= %3", "2.5", "2"), "true::Bool");
  EXPECT_EQ(Show("%2 == %3", "1", "1.0"), "true::Bool");
  EXPECT_EQ(Show("%2 == %3", "true", "1"), "true::Bool");
  // Exact, not via Float64: 2^53 + 1 differs from 2.0^53.
  EXPECT_EQ(Show("%2 == %3", "9007199254740993", "9007199254740992.0"), "false::Bool");
  EXPECT_EQ(Show("%2 > %3", "9007199254740993", "9007199254740992.0"), "true::Bool");
  EXPECT_EQ(Show("%2 < %3", "9223372036854775807", "9223372036854775807.0"), "true::Bool");
  EXPECT_EQ(Show("%2 < %3", "NaN", "1"), "false::Bool");
  EXPECT_EQ(Show("%2 == %3", "NaN", "NaN"), "false::Bool");
  EXPECT_EQ(Show("%2 != %3", "NaN", "NaN"), "true::Bool");
  EXPECT_EQ(Show("%2 == %3", "-0.0", "0"), "true::Bool");
  EXPECT_EQ(Show("%2 < %3", "\"a\"", "\"b\""), "true::Bool");
  EXPECT_EQ(Show("%2 == %3", "\"a\"", "1"), "false::Bool");
  EXPECT_EQ(Show("%2 == %3", "nothing", "nothing"), "true::Bool");
  EXPECT_EQ(Show("%2 == %3", "(1, (2.0,))", "(1.0, (2,))"), "true::Bool");
  // Tensors compare element by element, with broadcasting.
  EXPECT_EQ(Show("%2 == %3", "[1, 2]", "[1.0, 3.0]"), "[true, false]::Vector{Bool}");
  EXPECT_EQ(Show("%2 < %3", "[1, 2]", "1.5"), "[true, false]::Vector{Bool}");
  EXPECT_EQ(Show("%2 == %3", "[1, 2, 3]", "[1 2]"),
            "t.ir:3:3: DimensionMismatch: ==: shapes 3 and 1×2 do not broadcast");
  EXPECT_EQ(Show("%2 < %3", "nothing", "1"),
            "t.ir:3:3: MethodError: no method matching <(::Nothing, ::Int64)");
}

TEST(IrInterpTest, BooleanOperators) {
  EXPECT_EQ(Show("%2 & %3", "true", "false"), "false::Bool");
  EXPECT_EQ(Show("%2 | %3", "true", "false"), "true::Bool");
  EXPECT_EQ(Show("xor(%2, %3)", "true", "true"), "false::Bool");
  EXPECT_EQ(Show("%2 ⊻ %3", "true", "false"), "true::Bool");
  EXPECT_EQ(Show("%2 & %3", "6", "3"), "2::Int64");
  EXPECT_EQ(Show("%2 | %3", "true", "2"), "3::Int64");
  EXPECT_EQ(Show("!%2", "true"), "false::Bool");
  EXPECT_EQ(Show("!%2", "1"), "t.ir:3:3: MethodError: no method matching !(::Int64)");
  EXPECT_EQ(Show("%2 & %3", "1.0", "true"),
            "t.ir:3:3: MethodError: no method matching &(::Float64, ::Bool)");
}

TEST(IrInterpTest, MathFunctions) {
  EXPECT_EQ(Show("sin(%2)", "1.0"), "0.8414709848078965::Float64");
  EXPECT_EQ(Show("Main.sin(%2)", "1"), "0.8414709848078965::Float64");
  EXPECT_EQ(Show("cos(%2)", "0"), "1.0::Float64");
  EXPECT_EQ(Show("sin(%2)", "0.5f0"), "0.47942555f0::Float32");
  EXPECT_EQ(Show("tan(%2)", "0.0"), "0.0::Float64");
  EXPECT_EQ(Show("exp(%2)", "0"), "1.0::Float64");
  EXPECT_EQ(Show("log(%2)", "1.0"), "0.0::Float64");
  EXPECT_EQ(Show("log(%2)", "0.0"), "-Inf::Float64");
  EXPECT_EQ(Show("sqrt(%2)", "4"), "2.0::Float64");
  EXPECT_EQ(Show("sqrt(%2)", "-0.0"), "-0.0::Float64");
  EXPECT_EQ(Show("tanh(%2)", "0.0"), "0.0::Float64");
  EXPECT_EQ(Show("abs(%2)", "-3"), "3::Int64");
  EXPECT_EQ(Show("abs(%2)", "-2.5"), "2.5::Float64");
  EXPECT_EQ(Show("abs(%2)", "-2.5f0"), "2.5f0::Float32");
  // Floating-point domain errors are NaN (IEEE 754), not errors.
  EXPECT_EQ(Show("sqrt(%2)", "-1.0"), "NaN::Float64");
  EXPECT_EQ(Show("log(%2)", "-1"), "NaN::Float64");
  EXPECT_EQ(Show("log(%2)", "0.0"), "-Inf::Float64");
  EXPECT_EQ(Show("sin(%2)", "Inf"), "NaN::Float64");
  EXPECT_EQ(Show("sin(%2)", "\"a\""), "t.ir:3:3: MethodError: no method matching sin(::String)");
  // Math functions apply elementwise to tensors.
  EXPECT_EQ(Show("sin(%2)", "[1.0]"), "[0.8414709848078965]::Vector{Float64}");
  EXPECT_EQ(Show("sin(%2)", "Int64[0]"), "[0.0]::Vector{Float64}");
  EXPECT_EQ(Show("%2 + %3", "Int64[1, 2]", "3"), "[4, 5]::Vector{Int64}");
  EXPECT_EQ(Show("%2 / %3", "Int64[1, 2]", "2"), "[0.5, 1.0]::Vector{Float64}");
}

TEST(IrInterpTest, MinMaxZeroOne) {
  EXPECT_EQ(Show("min(%2, %3)", "1", "2.0"), "1.0::Float64");
  EXPECT_EQ(Show("max(%2, %3)", "3", "2"), "3::Int64");
  EXPECT_EQ(Show("min(%2, %3)", "NaN", "1.0"), "NaN::Float64");
  EXPECT_EQ(Show("max(%2, %3)", "1.0", "NaN"), "NaN::Float64");
  EXPECT_EQ(Show("min(%2, %3)", "0.0", "-0.0"), "-0.0::Float64");
  EXPECT_EQ(Show("max(%2, %3)", "-0.0", "0.0"), "0.0::Float64");
  EXPECT_EQ(Show("max(%2, %3)", "1f0", "2"), "2.0f0::Float32");
  EXPECT_EQ(Show("zero(%2)", "2.5"), "0.0::Float64");
  EXPECT_EQ(Show("zero(%2)", "7"), "0::Int64");
  EXPECT_EQ(Show("one(%2)", "2.5f0"), "1.0f0::Float32");
  EXPECT_EQ(Show("one(%2)", "false"), "true::Bool");
  EXPECT_EQ(Show("zero(%2)", "[1.0 2.0; 3.0 4.0]"), "[0.0 0.0; 0.0 0.0]::Matrix{Float64}");
  // zero and one are elementwise on tensors.
  EXPECT_EQ(Show("one(%2)", "[1 2; 3 4]"), "[1 1; 1 1]::Matrix{Int64}");
  EXPECT_EQ(Show("one(%2)", "[1.5, 2.5]"), "[1.0, 1.0]::Vector{Float64}");
  EXPECT_EQ(Show("zero(%2)", "nothing"),
            "t.ir:3:3: MethodError: no method matching zero(::Nothing)");
}

TEST(IrInterpTest, Indexing) {
  EXPECT_EQ(Show("getindex(%2, %3)", "[1.5, 2.5, 3.5]", "2"), "2.5::Float64");
  EXPECT_EQ(Show("Main.getindex(%2, %3)", "Float32[1, 2]", "1"), "1.0f0::Float32");
  // One index on a matrix is row-major, the order reshape keeps: [1 2; 3 4][2] == 2.
  EXPECT_EQ(Show("getindex(%2, %3)", "[1 2; 3 4]", "2"), "2::Int64");
  EXPECT_EQ(Show("getindex(%2, %3, 1)", "[1 2; 3 4]", "2"), "3::Int64");
  EXPECT_EQ(Show("getindex(%2, 1, %3)", "[1 2; 3 4]", "2"), "2::Int64");
  EXPECT_EQ(Show("getindex(%2, 2, 1, %3)", "2×2×2[1, 2, 3, 4, 5, 6, 7, 8]", "2"), "6::Int64");
  EXPECT_EQ(Show("getindex(%2, %3)", "Int32[7, 8]", "2"), "8::Int64");
  EXPECT_EQ(Show("getindex(%2, %3)", "[true, false]", "1"), "true::Bool");
  EXPECT_EQ(Show("length(%2)", "[1 2; 3 4]"), "4::Int64");
  EXPECT_EQ(Show("getindex(%2, %3)", "[1.5, 2.5, 3.5]", "4"),
            "t.ir:3:3: BoundsError: getindex: index 4 out of bounds for 3 elements");
  EXPECT_EQ(Show("getindex(%2, %3, 3)", "[1 2; 3 4]", "1"),
            "t.ir:3:3: BoundsError: getindex: index 3 out of bounds for dimension 2 of size 2");
  // An integral float is an index (numbers in derivative rules are floats).
  EXPECT_EQ(Show("getindex(%2, %3)", "[1.5]", "1.0"), "1.5::Float64");
  EXPECT_EQ(Show("getindex(%2, %3)", "[1.5]", "1.5"),
            "t.ir:3:3: ArgumentError: getindex: an index must be an integer, not Float64");
  EXPECT_EQ(Show("getindex(%2, %3)", "(1, 2.5)", "2"), "2.5::Float64");
  EXPECT_EQ(Show("getindex(%2, %3)", "1.5", "1"),
            "t.ir:3:3: MethodError: no method matching getindex(::Float64, ::Int64)");
}

TEST(IrInterpTest, CallErrors) {
  EXPECT_EQ(Show("frob(%2)", "1"), "t.ir:3:3: UndefVarError: `frob` not defined");
  EXPECT_EQ(Show("sin(%2, %3)", "1", "2"),
            "t.ir:3:3: MethodError: no method matching sin(::Int64, ::Int64)");
  EXPECT_EQ(Show("Main.t(%2)", "1"),
            "t.ir:3:3: MethodError: no method matching t(::Int64) (t takes 2 arguments)");
}

Result<Value> RunModule(std::string_view text, std::string_view fn, std::vector<Value> args,
                        InterpreterOptions opts = {}) {
  auto m = Module::Parse(text, "m.ir");
  if (!m.ok()) return m.status();
  TrackingContext ctx;
  RandomSource random = RandomSource::Seeded(0);
  Interpreter interp(*m, ctx, random, std::move(opts));
  return interp.Evaluate(fn, args);
}

TEST(IrInterpTest, ConditionMustBeBool) {
  auto v = RunModule("function f\n1: (%1, %2)\n  br 2 unless %2\n  return 1\n2:\n  return 2\nend\n",
                     "f", {Value::I64(1)});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), Code::kRuntimeError);
  EXPECT_EQ(v.status().message(),
            "m.ir:3:3: TypeError: non-boolean (Int64) used in boolean context");
  v = RunModule("function f\n1: (%1, %2)\n  br 2 unless %2\n  return 1\n2:\n  return 2\nend\n", "f",
                {Value::Bool(false)});
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(FormatValue(*v), "2");
}

TEST(IrInterpTest, UseBeforeAssignment) {
  // %4 is only assigned in block 3, which has not run when block 2 reads it.
  auto v = RunModule(
      "function f\n1: (%1)\n  br 2\n2:\n  %3 = %4 + 1\n  return %3\n3:\n  %4 = 1\n  br 2\nend\n",
      "f", {});
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().message(), "m.ir:5:3: UndefVarError: %4 used before it was assigned");
}

TEST(IrInterpTest, CheckCall) {
  auto m = Module::Parse("function f\n1: (%1, %2)\n  return %2\nend\n", "m.ir");
  ASSERT_TRUE(m.ok());
  TrackingContext ctx;
  RandomSource random = RandomSource::Seeded(0);
  Interpreter interp(*m, ctx, random);
  EXPECT_TRUE(interp.CheckCall("f", 1).ok());
  Status s = interp.CheckCall("g", 1);
  EXPECT_EQ(s.code(), Code::kUsage);
  EXPECT_EQ(s.message(), "'m.ir' defines no function 'g' (it defines f)");
  s = interp.CheckCall("f", 2);
  EXPECT_EQ(s.message(), "function 'f' takes 1 argument, 2 given");
}

TEST(IrInterpTest, DeepRecursionUsesNoHostStack) {
  auto v = RunModule(
      "function down\n1: (%1, %2)\n  %3 = %2 == 0\n  br 2 unless %3\n  return 0\n2:\n"
      "  %4 = %2 - 1\n  %5 = Main.down(%4)\n  %6 = %5 + 1\n  return %6\nend\n",
      "down", {Value::I64(1000000)});
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_EQ(v->as_i64(), 1000000);
}

TEST(IrInterpTest, CallDepthLimit) {
  InterpreterOptions opts;
  opts.max_call_depth = 100;
  auto v = RunModule("function f\n1: (%1, %2)\n  %3 = f(%2)\n  return %3\nend\n", "f",
                     {Value::I64(1)}, opts);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().message(), "m.ir:3:3: StackOverflowError: calls nested more than 100 deep");
}

TEST(IrInterpTest, TensorsFlowThroughCallsAndBranches) {
  auto v = RunModule(R"(
function f
1: (%1, %2, %3)
  br 2 (%2) unless %3
  return [1.0, 2.0]
2: (%4)
  %5 = g(%4, (1, "x"))
  return %5
end
function g
1: (%1, %2, %3)
  return %2
end
)",
                     "f", {Lit("[1.0 2.0; 3.0 4.0]"), Value::Bool(false)});
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_EQ(FormatValue(*v), "[1.0 2.0; 3.0 4.0]");
}

TEST(IrInterpTest, SeededRandomIsReproducible) {
  // Integer-only generator and conversion: these values are the same on every machine.
  RandomSource r = RandomSource::Seeded(42);
  double u[3];
  for (double& x : u) ASSERT_TRUE(r.Uniform(&x));
  RandomSource again = RandomSource::Seeded(42);
  for (double x : u) {
    double y;
    ASSERT_TRUE(again.Uniform(&y));
    EXPECT_EQ(std::bit_cast<uint64_t>(x), std::bit_cast<uint64_t>(y));
  }
  EXPECT_EQ(FormatDouble(u[0]), "0.08386297105988216");
  RandomSource n = RandomSource::Seeded(42);
  double z;
  ASSERT_TRUE(n.Normal(&z));
  EXPECT_EQ(FormatDouble(z), "-0.7262191382447857");
  // Moments of many draws.
  RandomSource s = RandomSource::Seeded(7);
  double sum_u = 0, sum_z = 0, sum_z2 = 0;
  const int kN = 200000;
  for (int i = 0; i < kN; ++i) {
    double a, b;
    ASSERT_TRUE(s.Uniform(&a));
    ASSERT_TRUE(s.Normal(&b));
    ASSERT_GE(a, 0.0);
    ASSERT_LT(a, 1.0);
    sum_u += a;
    sum_z += b;
    sum_z2 += b * b;
  }
  EXPECT_NEAR(sum_u / kN, 0.5, 0.005);
  EXPECT_NEAR(sum_z / kN, 0.0, 0.01);
  EXPECT_NEAR(sum_z2 / kN, 1.0, 0.02);
  EXPECT_EQ(s.draws(), 2u * kN);
}

TEST(IrInterpTest, PortableLogIsAccurate) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(1e-300, 1.0);
  for (int i = 0; i < 100000; ++i) {
    double x = i % 2 ? u(rng) : std::ldexp(u(rng), -static_cast<int>(rng() % 1000));
    if (x == 0) continue;
    double want = std::log(x), got = PortableLog(x);
    ASSERT_LE(std::fabs(got - want), 2 * std::fabs(std::nextafter(want, 0.0) - want) + 1e-300) << x;
  }
  EXPECT_EQ(PortableLog(1.0), 0.0);
  EXPECT_EQ(PortableLog(0.0), -HUGE_VAL);
}

TEST(IrInterpTest, ReplayedRandomValues) {
  RandomSource r = RandomSource::Replay({0.25, -1.5});
  double x;
  ASSERT_TRUE(r.Uniform(&x));
  EXPECT_EQ(x, 0.25);
  ASSERT_TRUE(r.Normal(&x));
  EXPECT_EQ(x, -1.5);
  EXPECT_FALSE(r.Uniform(&x));
  EXPECT_EQ(r.ExhaustedMessage(), "no more random values: all 2 given values have been used");
  auto v = Eval2("Main.rand()", "0", "0", RandomSource::Replay({}));
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.status().message(),
            "t.ir:3:3: no more random values: all 0 given values have been used");
}

TEST(IrInterpTest, ParseArgumentsAndRandValues) {
  auto a = ParseArgument("[1.0, 2.0]");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(TypeName(*a), "Vector{Float64}");
  auto bad = ParseArgument("[1.0, x]");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Code::kUsage);
  auto missing = ParseArgument("@/nonexistent/x.npy");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Code::kIoError);
  auto r = ParseRandValues("0.5,1,-2e-3");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, (std::vector<double>{0.5, 1.0, -2e-3}));
  EXPECT_FALSE(ParseRandValues("0.5,,1").ok());
  EXPECT_FALSE(ParseRandValues("\"a\"").ok());
}

}  // namespace
}  // namespace irt::ir
