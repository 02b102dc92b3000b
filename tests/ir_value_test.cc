// Values: Julia-style formatting, literal parsing (round trips and errors),
// bit equality, deep tuples, and .npy files.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>

#include "irt/npy.h"
#include "irt/value.h"
#include "test_util.h"

namespace irt {
namespace {

std::string TempPath(const std::string& name) { return irt::testing::TempPath(name); }

TEST(IrValueTest, FormatDoubleLikeJulia) {
  EXPECT_EQ(FormatDouble(1.0), "1.0");
  EXPECT_EQ(FormatDouble(3.0), "3.0");
  EXPECT_EQ(FormatDouble(-2.5), "-2.5");
  EXPECT_EQ(FormatDouble(0.0), "0.0");
  EXPECT_EQ(FormatDouble(-0.0), "-0.0");
  EXPECT_EQ(FormatDouble(std::sin(1.0)), "0.8414709848078965");
  EXPECT_EQ(FormatDouble(std::sin(1.0) + 1.0), "1.8414709848078965");
  EXPECT_EQ(FormatDouble(632120.7427607874), "632120.7427607874");
  EXPECT_EQ(FormatDouble(100000.0), "100000.0");
  EXPECT_EQ(FormatDouble(1e6), "1.0e6");
  EXPECT_EQ(FormatDouble(1234567.0), "1.234567e6");
  EXPECT_EQ(FormatDouble(1e16), "1.0e16");
  EXPECT_EQ(FormatDouble(0.0001), "0.0001");
  EXPECT_EQ(FormatDouble(1e-5), "1.0e-5");
  EXPECT_EQ(FormatDouble(1e-7), "1.0e-7");
  EXPECT_EQ(FormatDouble(1.5e-7), "1.5e-7");
  EXPECT_EQ(FormatDouble(0.1), "0.1");
  EXPECT_EQ(FormatDouble(123.456), "123.456");
  EXPECT_EQ(FormatDouble(5e-324), "5.0e-324");
  EXPECT_EQ(FormatDouble(1.7976931348623157e308), "1.7976931348623157e308");
  EXPECT_EQ(FormatDouble(std::nan("")), "NaN");
  EXPECT_EQ(FormatDouble(HUGE_VAL), "Inf");
  EXPECT_EQ(FormatDouble(-HUGE_VAL), "-Inf");
}

TEST(IrValueTest, FormatFloatLikeJulia) {
  EXPECT_EQ(FormatFloat(1.5f), "1.5f0");
  EXPECT_EQ(FormatFloat(1.0f), "1.0f0");
  EXPECT_EQ(FormatFloat(0.1f), "0.1f0");
  EXPECT_EQ(FormatFloat(-0.0f), "-0.0f0");
  EXPECT_EQ(FormatFloat(1e6f), "1.0f6");
  EXPECT_EQ(FormatFloat(1e-5f), "1.0f-5");
  EXPECT_EQ(FormatFloat(std::nanf("")), "NaN32");
  EXPECT_EQ(FormatFloat(HUGE_VALF), "Inf32");
  EXPECT_EQ(FormatFloat(-HUGE_VALF), "-Inf32");
}

TEST(IrValueTest, FormatDoubleRoundTripsRandomBits) {
  std::mt19937_64 rng(12345);
  for (int i = 0; i < 100000; ++i) {
    uint64_t bits = rng();
    double d = std::bit_cast<double>(bits);
    if (std::isnan(d)) continue;
    std::string s = FormatDouble(d);
    auto v = ParseLiteral(s);
    ASSERT_TRUE(v.ok()) << s << ": " << v.status().message();
    ASSERT_EQ(v->kind(), VKind::kF64) << s;
    ASSERT_EQ(v->bits(), bits) << s;
  }
  // Also uniformly distributed magnitudes around 1, where plain notation is used.
  std::uniform_real_distribution<double> u(-1e7, 1e7);
  for (int i = 0; i < 50000; ++i) {
    double d = u(rng);
    auto v = ParseLiteral(FormatDouble(d));
    ASSERT_TRUE(v.ok());
    ASSERT_EQ(v->bits(), std::bit_cast<uint64_t>(d)) << FormatDouble(d);
  }
}

TEST(IrValueTest, FormatFloatRoundTripsRandomBits) {
  std::mt19937 rng(7);
  for (int i = 0; i < 50000; ++i) {
    uint32_t bits = rng();
    float f = std::bit_cast<float>(bits);
    if (std::isnan(f)) continue;
    std::string s = FormatFloat(f);
    auto v = ParseLiteral(s);
    ASSERT_TRUE(v.ok()) << s << ": " << v.status().message();
    ASSERT_EQ(v->kind(), VKind::kF32) << s;
    ASSERT_EQ(static_cast<uint32_t>(v->bits()), bits) << s;
  }
}

TEST(IrValueTest, FormatScalarsAndTypes) {
  EXPECT_EQ(FormatValue(Value::I64(2)), "2");
  EXPECT_EQ(FormatValue(Value::I64(-3)), "-3");
  EXPECT_EQ(FormatValue(Value::Bool(true)), "true");
  EXPECT_EQ(FormatValue(Value::Nothing()), "nothing");
  EXPECT_EQ(FormatValue(Value::Function("geom")), "geom");
  EXPECT_EQ(FormatValue(Value::String("a\"b\\c\n$\x01")), "\"a\\\"b\\\\c\\n\\$\\x01\"");
  EXPECT_EQ(FormatValue(Value::String("β")), "\"β\"");
  EXPECT_EQ(FormatValue(Value::String("\xff")), "\"\\xff\"");
  EXPECT_EQ(TypeName(Value::F64(1)), "Float64");
  EXPECT_EQ(TypeName(Value::F32(1)), "Float32");
  EXPECT_EQ(TypeName(Value::I64(1)), "Int64");
  EXPECT_EQ(TypeName(Value::Bool(true)), "Bool");
  EXPECT_EQ(TypeName(Value::Nothing()), "Nothing");
  EXPECT_EQ(TypeName(Value::String("x")), "String");
  EXPECT_EQ(TypeName(Value::Function("geom")), "typeof(geom)");
}

TEST(IrValueTest, FormatTensors) {
  double v4[] = {1, 2, 3, 4};
  EXPECT_EQ(FormatValue(Value::MakeTensor(Tensor::FromF64({2}, std::span(v4, 2)))), "[1.0, 2.0]");
  Value m = Value::MakeTensor(Tensor::FromF64({2, 2}, v4));
  EXPECT_EQ(FormatValue(m), "[1.0 2.0; 3.0 4.0]");
  EXPECT_EQ(TypeName(m), "Matrix{Float64}");
  EXPECT_EQ(FormatValue(Value::MakeTensor(Tensor::FromF64({1, 2}, std::span(v4, 2)))), "[1.0 2.0]");
  EXPECT_EQ(FormatValue(Value::MakeTensor(Tensor::FromF64({2, 1}, std::span(v4, 2)))),
            "[1.0; 2.0;;]");
  Value c = Value::MakeTensor(Tensor::FromF64({2, 1, 2}, v4));
  EXPECT_EQ(FormatValue(c), "2×1×2[1.0, 2.0, 3.0, 4.0]");
  EXPECT_EQ(TypeName(c), "Array{Float64, 3}");
  Value z = Value::MakeTensor(Tensor::FromF64({}, std::span(v4, 1)));
  EXPECT_EQ(FormatValue(z), "fill(1.0)");
  EXPECT_EQ(TypeName(z), "Array{Float64, 0}");
  float f2[] = {1.5f, 2};
  Value vf = Value::MakeTensor(Tensor::FromF32({2}, f2));
  EXPECT_EQ(FormatValue(vf), "Float32[1.5, 2.0]");
  EXPECT_EQ(TypeName(vf), "Vector{Float32}");
  EXPECT_EQ(FormatValue(Value::MakeTensor(Tensor::Zeros(DType::kF64, {0}))), "Float64[]");
  EXPECT_EQ(FormatValue(Value::MakeTensor(Tensor::Zeros(DType::kI32, {0, 3}))), "0×3 Int32[]");
  EXPECT_EQ(FormatValue(Value::MakeTensor(Tensor::Zeros(DType::kBool, {2}))), "[false, false]");
  EXPECT_EQ(FormatValue(Value::MakeTensor(Tensor::Zeros(DType::kI64, {2, 2}))), "[0 0; 0 0]");
}

TEST(IrValueTest, FormatAbbreviatesLargeTensors) {
  std::vector<double> v;
  for (int i = 1; i <= 9; ++i) v.push_back(i / 10.0);
  FormatOptions small;
  small.max_elements = 5;
  EXPECT_EQ(FormatValue(Value::MakeTensor(Tensor::FromF64({9}, v)), small),
            "[0.1, 0.2, 0.3, …, 0.9]");
  EXPECT_EQ(FormatValue(Value::MakeTensor(Tensor::FromF64({3, 3}, v)), small),
            "3×3[0.1, 0.2, 0.3, …, 0.9]");
  EXPECT_EQ(FormatValue(Value::MakeTensor(Tensor::FromF64({9}, v))),
            "[0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]");  // 9 <= the default 10
  FormatOptions never;
  never.max_elements = 0;
  std::vector<double> big(100, 1.0);
  EXPECT_EQ(FormatValue(Value::MakeTensor(Tensor::FromF64({100}, big)), never).size(),
            2 + 100 * 3 + 99 * 2);
}

TEST(IrValueTest, FormatTuples) {
  Value t = Value::MakeTuple({Value::I64(1), Value::F64(2.0)});
  EXPECT_EQ(FormatValue(t), "(1, 2.0)");
  EXPECT_EQ(TypeName(t), "Tuple{Int64, Float64}");
  EXPECT_EQ(FormatValue(Value::MakeTuple({Value::I64(1)})), "(1,)");
  EXPECT_EQ(FormatValue(Value::MakeTuple({})), "()");
  EXPECT_EQ(TypeName(Value::MakeTuple({})), "Tuple{}");
  Value nested = Value::MakeTuple({Value::MakeTuple({Value::I64(1)}), Value::String("s")});
  EXPECT_EQ(FormatValue(nested), "((1,), \"s\")");
  EXPECT_EQ(TypeName(nested), "Tuple{Tuple{Int64}, String}");
}

TEST(IrValueTest, DeepTuplesNeedNoRecursion) {
  // 10^6 nested 1-tuples: formatting, comparing and destroying them must
  // not use stack space proportional to the depth.
  Value v = Value::I64(7);
  Value w = Value::I64(7);
  for (int i = 0; i < 1000000; ++i) {
    v = Value::MakeTuple({v});
    w = Value::MakeTuple({w});
  }
  EXPECT_TRUE(BitEqual(v, w));
  std::string s = FormatValue(v);
  EXPECT_EQ(s.size(), 1000000u * 3 + 1);
  EXPECT_EQ(s.substr(0, 3), "(((");
  EXPECT_EQ(TypeName(v).size(), 1000000u * 7 + 5);
}

TEST(IrValueTest, BitEqual) {
  EXPECT_TRUE(BitEqual(Value::F64(std::nan("")), Value::F64(std::nan(""))));
  EXPECT_FALSE(BitEqual(Value::F64(0.0), Value::F64(-0.0)));
  EXPECT_FALSE(BitEqual(Value::F64(1.0), Value::I64(1)));
  EXPECT_TRUE(BitEqual(Value::String("a"), Value::String("a")));
  EXPECT_FALSE(BitEqual(Value::String("a"), Value::Function("a")));
  double v[] = {1, 2};
  EXPECT_TRUE(BitEqual(Value::MakeTensor(Tensor::FromF64({2}, v)),
                       Value::MakeTensor(Tensor::FromF64({2}, v))));
  EXPECT_FALSE(BitEqual(Value::MakeTensor(Tensor::FromF64({2}, v)),
                        Value::MakeTensor(Tensor::FromF64({1, 2}, v))));
}

TEST(IrValueTest, ParseScalars) {
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

TEST(IrValueTest, ParseRoundTrips) {
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
  };
  for (const Value& v : values) {
    std::string s = FormatValue(v);
    auto back = ParseLiteral(s);
    ASSERT_TRUE(back.ok()) << s << ": " << back.status().message();
    EXPECT_TRUE(BitEqual(*back, v)) << s << " -> " << FormatValue(*back);
  }
}

TEST(IrValueTest, ParseArraysLikeJulia) {
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

TEST(IrValueTest, ParseErrors) {
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

TEST(IrValueTest, ParseDepthLimit) {
  std::string ok(kMaxLiteralDepth, '(');
  ok += "1";
  for (int i = 0; i < kMaxLiteralDepth; ++i) ok += ",)";
  EXPECT_TRUE(ParseLiteral(ok).ok());
  std::string deep(100000, '(');
  auto v = ParseLiteral(deep);
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.status().message().find("nested more than 64 levels deep"), std::string::npos);
}

TEST(IrValueTest, ParseLiteralPrefix) {
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

TEST(IrValueTest, NpyRoundTrip) {
  double v6[] = {1, 2, 3, 4, 5, 6.5};
  float f6[] = {1, 2, 3, 4, 5, 6.5f};
  Tensor i32 = Tensor::Zeros(DType::kI32, {2, 3});
  for (int i = 0; i < 6; ++i) std::memcpy(i32.data.data() + 4 * i, &i, 4);
  Tensor b = Tensor::Zeros(DType::kBool, {3});
  b.data[1] = 1;
  std::vector<Value> values = {
      Value::MakeTensor(Tensor::FromF64({2, 3}, v6)),
      Value::MakeTensor(Tensor::FromF32({6}, f6)),
      Value::MakeTensor(Tensor::FromF64({1, 2, 3}, v6)),
      Value::MakeTensor(Tensor::Zeros(DType::kI64, {0, 4})),
      Value::MakeTensor(std::move(i32)),
      Value::MakeTensor(std::move(b)),
  };
  for (size_t i = 0; i < values.size(); ++i) {
    std::string path = TempPath("rt" + std::to_string(i) + ".npy");
    ASSERT_TRUE(WriteNpy(values[i], path).ok());
    std::ifstream in(path, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    uint16_t hlen = static_cast<uint8_t>(bytes[8]) | (static_cast<uint8_t>(bytes[9]) << 8);
    EXPECT_EQ((10 + hlen) % 64, 0u);
    auto back = ReadNpy(path);
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_TRUE(BitEqual(*back, values[i])) << FormatValue(*back);
  }
  // Scalars become 0-dimensional arrays.
  std::string path = TempPath("scalar.npy");
  ASSERT_TRUE(WriteNpy(Value::F64(2.5), path).ok());
  auto s = ReadNpy(path);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(FormatValue(*s), "fill(2.5)");
  EXPECT_FALSE(WriteNpy(Value::String("x"), path).ok());
}

std::string NpyBytes(int major, const std::string& dict, const std::string& data) {
  std::string h = dict;
  size_t prefix = major == 1 ? 10 : 12;
  while ((prefix + h.size() + 1) % 64 != 0) h += ' ';
  h += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(major);
  out += '\0';
  out += static_cast<char>(h.size() & 0xFF);
  out += static_cast<char>(h.size() >> 8);
  if (major != 1) out += std::string(2, '\0');
  return out + h + data;
}

Result<Value> ReadBytes(const std::string& name, const std::string& bytes) {
  std::string path = TempPath(name);
  std::ofstream(path, std::ios::binary) << bytes;
  return ReadNpy(path);
}

TEST(IrValueTest, NpyFortranOrderAndVersions) {
  // A 2×3 array in column-major order: [[1 2 3]; [4 5 6]] is stored 1 4 2 5 3 6.
  double col[] = {1, 4, 2, 5, 3, 6};
  std::string data(reinterpret_cast<const char*>(col), sizeof(col));
  for (int major : {1, 2, 3}) {
    auto v = ReadBytes(
        "f" + std::to_string(major) + ".npy",
        NpyBytes(major, "{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }", data));
    ASSERT_TRUE(v.ok()) << v.status().message();
    EXPECT_EQ(FormatValue(*v), "[1.0 2.0 3.0; 4.0 5.0 6.0]");
  }
  int64_t ints[] = {7, -8};
  auto v = ReadBytes("i8.npy", NpyBytes(1, "{'descr':'<i8','fortran_order':False,'shape':(2,)}",
                                        std::string(reinterpret_cast<const char*>(ints), 16)));
  ASSERT_TRUE(v.ok()) << v.status().message();
  EXPECT_EQ(FormatValue(*v), "[7, -8]");
}

TEST(IrValueTest, NpyErrors) {
  auto message = [](const std::string& name, const std::string& bytes) {
    auto v = ReadBytes(name, bytes);
    EXPECT_FALSE(v.ok()) << name;
    return v.ok() ? std::string() : v.status().message();
  };
  std::string d8(8, '\0');
  EXPECT_NE(message("m.npy", "hello world").find("not a .npy file"), std::string::npos);
  EXPECT_NE(
      message("t.npy", NpyBytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", d8))
          .find("truncated: the shape needs 2 elements, the file holds 1"),
      std::string::npos);
  EXPECT_NE(message("x.npy", NpyBytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }",
                                      d8 + "xx"))
                .find("2 unexpected bytes after the data"),
            std::string::npos);
  // A huge shape is rejected before any allocation.
  EXPECT_NE(message("h.npy", NpyBytes(1,
                                      "{'descr': '<f8', 'fortran_order': False, "
                                      "'shape': (1000000000, 1000000000, 1000000000), }",
                                      d8))
                .find("truncated"),
            std::string::npos);
  EXPECT_NE(
      message("b.npy", NpyBytes(1, "{'descr': '>f8', 'fortran_order': False, 'shape': (1,), }", d8))
          .find("big-endian"),
      std::string::npos);
  EXPECT_NE(message("c.npy",
                    NpyBytes(1, "{'descr': '<c16', 'fortran_order': False, 'shape': (1,), }", d8))
                .find("not supported"),
            std::string::npos);
  EXPECT_NE(message("k.npy", NpyBytes(1, "{'descr': '<f8', 'shape': (1,), }", d8)).find("lacks"),
            std::string::npos);
  std::string v9 = NpyBytes(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }", d8);
  v9[6] = 9;
  EXPECT_NE(message("v.npy", v9).find("version 9.0 is not supported"), std::string::npos);
  auto missing = ReadNpy(TempPath("does-not-exist.npy"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Code::kIoError);
}

}  // namespace
}  // namespace irt
