// The primitive table (irt/eval.h): registered entries over the standard
// operation set, random draws, and what it knows by name and arity
// (ir_eval_test.cc compares it with the IR adapter's interpreter).
#include "irt/eval.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <span>
#include <string>
#include <vector>

namespace irt {
namespace {

TEST(EvalTest, TableIsExtensibleAndKnowsRandomDraws) {
  PrimitiveTable t = PrimitiveTable::Builtins();
  EXPECT_TRUE(t.IsRandom("rand"));
  EXPECT_TRUE(t.IsRandom("randn"));
  EXPECT_FALSE(t.IsRandom("sin"));
  EXPECT_EQ(t.Apply("rand", {}).status().code(), Code::kUnsupported);
  EXPECT_EQ(t.Apply("frobnicate", {}).status().code(), Code::kUnsupported);
  t.Register("twice", [](std::span<const Value> a) -> Result<Value> {
    return Value::F64(2 * a[0].to_double());
  });
  Value x = Value::F64(1.5);
  auto r = t.Apply("twice", std::span<const Value>(&x, 1));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->as_f64(), 3.0);
  EXPECT_EQ(PrimitiveTable::Builtins().Find("twice"), nullptr);
}

TEST(EvalTest, RegisteredEntriesOverrideStandardOperations) {
  PrimitiveTable t;
  Value args[] = {Value::F64(2.0), Value::F64(3.0)};
  auto std_add = t.Apply("+", args);
  ASSERT_TRUE(std_add.ok());
  EXPECT_EQ(std_add->as_f64(), 5.0);
  t.Register("+", [](std::span<const Value> a) -> Result<Value> {
    return Value::F64(a[0].to_double() * 10 + a[1].to_double());
  });
  auto mine = t.Apply("+", args);
  ASSERT_TRUE(mine.ok());
  EXPECT_EQ(mine->as_f64(), 23.0);
  // The shared table is not affected.
  EXPECT_EQ(ApplyPrimitive("+", args)->as_f64(), 5.0);
}

TEST(EvalTest, KnowsNamesByArity) {
  PrimitiveTable t;
  EXPECT_TRUE(t.Knows("sin", 1));
  EXPECT_FALSE(t.Knows("sin", 2));
  EXPECT_FALSE(t.Knows("frobnicate", 1));
  t.RegisterRandom("draw");
  EXPECT_TRUE(t.IsRandom("draw"));
  ASSERT_NE(t.Find("draw"), nullptr);
  EXPECT_TRUE(t.Find("draw")->random);
  EXPECT_EQ(t.Apply("draw", {}).status().code(), Code::kUnsupported);
  std::vector<std::string> names = t.Names();
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_NE(std::find(names.begin(), names.end(), "sin"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "draw"), names.end());
}

TEST(EvalTest, ErrorsAreJuliaStyleRuntimeErrors) {
  Value args[] = {Value::I64(1), Value::I64(0)};
  auto r = ApplyPrimitive("div", args);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kRuntimeError);
  EXPECT_EQ(r.status().message(), "DivideError: integer division error");
}

}  // namespace
}  // namespace irt
