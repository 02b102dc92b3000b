// ParseLiteral, the inverse of FormatValue: scalars, round trips of every
// printed form, Julia's array syntax, errors with their column, the depth
// limit and prefixes.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "irt/value.h"

namespace irt {
namespace {

TEST(LiteralTest, ParseScalars) {
  auto check = [](std::string_view text, const Value& want) {
    auto v = ParseLiteral(text);
    ASSERT_TRUE(v.ok()) << text << ": " << v.status().message();
    EXPECT_TRUE(BitEqual(*v, want)) << text << " -> " << FormatValue(*v);
  };
  check("2", Value::I64(2));
  check("-3", Value::I64(-3));
  check("+3", Value::I64(3));
  check("1_000", Value::I64(1000));
  check("-9223372036854775808", Value::I64(std::numeric_limits<int64_t>::min()));
  check("2.0", Value::F64(2.0));
  check("1e-3", Value::F64(1e-3));
  check("1E3", Value::F64(1000.0));
  check(".5", Value::F64(0.5));
  check("5.", Value::F64(5.0));
  check("-Inf", Value::F64(-HUGE_VAL));
  check("Inf", Value::F64(HUGE_VAL));
  check("1.5f0", Value::F32(1.5f));
  check("1f-3", Value::F32(1e-3f));
  check("Inf32", Value::F32(HUGE_VALF));
  check("true", Value::Bool(true));
  check("false", Value::Bool(false));
  check("nothing", Value::Nothing());
  check("  2.5  ", Value::F64(2.5));
  check("\"a\\tb\\u00e9\\x41\"", Value::String("a\tbéA"));
  auto nan = ParseLiteral("NaN");
  ASSERT_TRUE(nan.ok());
  EXPECT_TRUE(std::isnan(nan->as_f64()));
}

TEST(LiteralTest, ParseRoundTrips) {
  double v6[] = {1, 2, 3, 4, 5, 6};
  float f4[] = {1.5f, 2, 3, 4};
  std::vector<Value> values = {
      Value::MakeTensor(Tensor::FromF64({3}, std::span(v6, 3))),
      Value::MakeTensor(Tensor::FromF64({2, 3}, v6)),
      Value::MakeTensor(Tensor::FromF64({1, 3}, std::span(v6, 3))),
      Value::MakeTensor(Tensor::FromF64({3, 1}, std::span(v6, 3))),
      Value::MakeTensor(Tensor::FromF64({1, 1}, std::span(v6, 1))),
      Value::MakeTensor(Tensor::FromF64({1, 2, 3}, v6)),
      Value::MakeTensor(Tensor::FromF64({}, std::span(v6, 1))),
      Value::MakeTensor(Tensor::FromF32({2, 2}, f4)),
      Value::MakeTensor(Tensor::FromF32({}, std::span(f4, 1))),
      Value::MakeTensor(Tensor::Zeros(DType::kI32, {2, 2, 2})),
      Value::MakeTensor(Tensor::Zeros(DType::kI32, {})),
      Value::MakeTensor(Tensor::Zeros(DType::kI64, {3})),
      Value::MakeTensor(Tensor::Zeros(DType::kBool, {2, 2})),
      Value::MakeTensor(Tensor::Zeros(DType::kF64, {0})),
      Value::MakeTensor(Tensor::Zeros(DType::kF32, {0})),
      Value::MakeTensor(Tensor::Zeros(DType::kF64, {0, 3})),
      Value::MakeTensor(Tensor::Zeros(DType::kI64, {2, 0, 2})),
      Value::MakeTuple({Value::I64(1), Value::F64(2.0)}),
      Value::MakeTuple({Value::I64(1)}),
      Value::MakeTuple({}),
      Value::MakeTuple({Value::MakeTuple({Value::String("(\"x\")")}), Value::Nothing(),
                        Value::MakeTensor(Tensor::FromF64({2}, std::span(v6, 2)))}),
      // A C1 control is escaped; before a hex digit, with all four digits.
      Value::String("\u0097"
                    "3 \u0085x \u0080"),
  };
  for (const Value& v : values) {
    std::string s = FormatValue(v);
    auto back = ParseLiteral(s);
    ASSERT_TRUE(back.ok()) << s << ": " << back.status().message();
    EXPECT_TRUE(BitEqual(*back, v)) << s << " -> " << FormatValue(*back);
  }
  EXPECT_EQ(FormatValue(Value::String("\u0097"
                                      "3 \u0085x \u0080")),
            "\"\\u00973 \\u85x \\u80\"");
}

TEST(LiteralTest, ParseArraysLikeJulia) {
  auto parse = [](std::string_view s) {
    auto v = ParseLiteral(s);
    EXPECT_TRUE(v.ok()) << s << ": " << v.status().message();
    return v.ok() ? *v : Value();
  };
  Value v = parse("[1, 2.5]");  // promotes to Float64
  EXPECT_EQ(TypeName(v), "Vector{Float64}");
  EXPECT_EQ(FormatValue(v), "[1.0, 2.5]");
  EXPECT_EQ(TypeName(parse("[1, 2]")), "Vector{Int64}");
  EXPECT_EQ(TypeName(parse("[true, 2]")), "Vector{Int64}");
  EXPECT_EQ(TypeName(parse("[1, 1.5f0]")), "Vector{Float32}");
  EXPECT_EQ(TypeName(parse("[1.0; 2.0]")), "Vector{Float64}");  // vcat
  EXPECT_EQ(FormatValue(parse("[1 -2]")), "[1 -2]");
  EXPECT_EQ(FormatValue(parse("Float64[1, 2]")), "[1.0, 2.0]");
  EXPECT_EQ(FormatValue(parse("Int32[1 2; 3 4]")), "Int32[1 2; 3 4]");
  EXPECT_EQ(TypeName(parse("[]")), "Vector{Float64}");
  EXPECT_EQ(FormatValue(parse("(1)")), "1");
  EXPECT_EQ(FormatValue(parse("( 1 , ( 2 , ) )")), "(1, (2,))");
}

TEST(LiteralTest, ParseErrors) {
  auto error = [](std::string_view s) {
    auto v = ParseLiteral(s);
    EXPECT_FALSE(v.ok()) << s;
    return v.ok() ? std::string() : v.status().message();
  };
  EXPECT_EQ(error("[1.0, x]"), "bad literal '[1.0, x]': unknown name 'x' in literal (column 7)");
  EXPECT_EQ(error("[1.0, 2.0"),
            "bad literal '[1.0, 2.0': missing ']' to close the array (column 1)");
  EXPECT_EQ(error("[1 2; 3]"),
            "bad literal '[1 2; 3]': matrix rows have different lengths (column 1)");
  EXPECT_EQ(error("1.5x"), "bad literal '1.5x': bad number '1.5x' (column 1)");
  EXPECT_EQ(error("99999999999999999999"),
            "bad literal '99999999999999999999': integer '99999999999999999999' does not fit in "
            "Int64 (column 1)");
  EXPECT_EQ(error("1e999"), "bad literal '1e999': number '1e999' overflows Float64 (column 1)");
  EXPECT_EQ(error("\"abc"), "bad literal '\"abc': unterminated string literal (column 1)");
  EXPECT_EQ(error("\"\\q\""), "bad literal '\"\\q\"': invalid escape sequence '\\q' (column 2)");
  EXPECT_EQ(error("1 2"), "bad literal '1 2': unexpected '2' after the literal (column 3)");
  EXPECT_EQ(error(""), "bad literal '': expected a literal (column 1)");
  EXPECT_EQ(error("Int64[1.5]"), "bad literal 'Int64[1.5]': 1.5 is not an integer (column 6)");
  EXPECT_EQ(error("2×2[1.0]"),
            "bad literal '2×2[1.0]': tensor shape needs 4 elements, found 1 (column 1)");
  EXPECT_NE(error("[1, 2; 3]").find("cannot mix"), std::string::npos);
  EXPECT_NE(error("[\"a\"]").find("expected a literal"), std::string::npos);
}

TEST(LiteralTest, ParseDepthLimit) {
  std::string ok(kMaxLiteralDepth, '(');
  ok += "1";
  for (int i = 0; i < kMaxLiteralDepth; ++i) ok += ",)";
  EXPECT_TRUE(ParseLiteral(ok).ok());
  std::string deep(100000, '(');
  auto v = ParseLiteral(deep);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("nested more than 64 levels deep"), std::string::npos);
}

TEST(LiteralTest, ParseLiteralPrefix) {
  size_t len = 0;
  auto v = ParseLiteralPrefix("[1, 2], %3)", &len);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(len, 6u);
  v = ParseLiteralPrefix("1.5)", &len);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(len, 3u);
  size_t err = 0;
  v = ParseLiteralPrefix("(1, @)", &len, &err);
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(err, 4u);
}

}  // namespace
}  // namespace irt
