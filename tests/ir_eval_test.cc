// The primitive table (irt/eval.h) against the IR adapter's interpreter:
// every builtin on a pool of scalars and tensors, bit for bit, errors
// included, so that a replay computes what a fresh trace would.
#include <gtest/gtest.h>

#include <span>
#include <string>
#include <vector>

#include "irt/eval.h"
#include "irt/ir/interpreter.h"
#include "irt/ir/module.h"
#include "irt/value.h"

namespace irt {
namespace {

// The table must agree with the interpreter bit for bit, errors included.
TEST(EvalTest, BuiltinsAgreeWithTheInterpreter) {
  std::vector<std::string> pool = {"0",
                                   "1",
                                   "-3",
                                   "7",
                                   "9223372036854775807",
                                   "2.5",
                                   "-0.0",
                                   "0.0",
                                   "-1.5",
                                   "1.0e300",
                                   "Inf",
                                   "NaN",
                                   "true",
                                   "false",
                                   "1.5f0",
                                   "-2f0",
                                   "0.75",
                                   "2",
                                   "-1",
                                   "3.0",
                                   "[1.0, 2.5, -3.0]",
                                   "[1 2; 3 4]",
                                   "Float32[1.5, 2.0]",
                                   "[true, false]",
                                   "4",
                                   "5"};
  struct P {
    const char* expr;  // over %2 and %3
    const char* name;
    int arity;
  };
  std::vector<P> prims = {
      {"%2 + %3", "+", 2},
      {"%2 - %3", "-", 2},
      {"%2 * %3", "*", 2},
      {"%2 / %3", "/", 2},
      {"%2 ^ %3", "^", 2},
      {"div(%2, %3)", "div", 2},
      {"rem(%2, %3)", "rem", 2},
      {"-%2", "-", 1},
      {"%2 < %3", "<", 2},
      {"%2 <= %3", "<=", 2},
      {"%2 > %3", ">", 2},
      {"%2 >= %3", ">=", 2},
      {"%2 == %3", "==", 2},
      {"%2 != %3", "!=", 2},
      {"%2 & %3", "&", 2},
      {"%2 | %3", "|", 2},
      {"!%2", "!", 1},
      {"xor(%2, %3)", "xor", 2},
      {"Main.sin(%2)", "sin", 1},
      {"Main.cos(%2)", "cos", 1},
      {"Main.tan(%2)", "tan", 1},
      {"Main.exp(%2)", "exp", 1},
      {"Main.log(%2)", "log", 1},
      {"Main.sqrt(%2)", "sqrt", 1},
      {"Main.abs(%2)", "abs", 1},
      {"Main.tanh(%2)", "tanh", 1},
      {"Main.min(%2, %3)", "min", 2},
      {"Main.max(%2, %3)", "max", 2},
      {"Main.zero(%2)", "zero", 1},
      {"Main.one(%2)", "one", 1},
      {"getindex(%2, %3)", "getindex", 2},
      {"Main.length(%2)", "length", 1},
      {"Main.matmul(%2, %3)", "matmul", 2},
      {"Main.transpose(%2)", "transpose", 1},
      {"Main.sum(%2)", "sum", 1},
  };
  int checked = 0;
  for (const P& p : prims) {
    std::string text =
        "function t\n1: (%1, %2, %3)\n  %4 = " + std::string(p.expr) + "\n  return %4\nend\n";
    auto m = ir::Module::Parse(text, "t.ir");
    ASSERT_TRUE(m.ok()) << m.status().message();
    ir::TrackingContext ctx;
    ir::RandomSource rs = ir::RandomSource::Seeded(1);
    ir::Interpreter interp(*m, ctx, rs);
    for (const std::string& a : pool) {
      for (const std::string& b : pool) {
        if (p.arity == 1 && b != "0") continue;
        Value args[] = {*ParseLiteral(a), *ParseLiteral(b)};
        Result<Value> want = interp.Evaluate("t", args);
        Result<Value> got = ApplyPrimitive(p.name, std::span<const Value>(args, p.arity));
        std::string what = std::string(p.name) + "(" + a + (p.arity == 2 ? ", " + b : "") + ")";
        ASSERT_EQ(want.ok(), got.ok())
            << what << ": " << (want.ok() ? got : want).status().message();
        if (want.ok()) {
          EXPECT_TRUE(BitEqual(*want, *got))
              << what << ": " << FormatValue(*want) << " vs " << FormatValue(*got);
        } else {
          // The interpreter prefixes the statement's location.
          std::string w = want.status().message();
          if (w.rfind("t.ir:3:3: ", 0) == 0) w = w.substr(10);
          // (The interpreter names a phantom second argument in its message
          // for length of a non-tensor: only the failure is compared there.)
          if (std::string(p.name) != "length") {
            EXPECT_EQ(w, got.status().message()) << what;
          }
          EXPECT_EQ(got.status().code(), Code::kRuntimeError) << what;
        }
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 5000);
}

}  // namespace
}  // namespace irt
