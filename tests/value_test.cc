// Values and their text: Julia-style numbers (round trips of random bit
// patterns), FormatValue and TypeName for every kind, abbreviated tensors,
// deep tuples without recursion, and bit equality.
#include "irt/value.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace irt {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kTensorBlocksMapped = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kTensorBlocksMapped = false;
#else
constexpr bool kTensorBlocksMapped = true;
#endif
#else
constexpr bool kTensorBlocksMapped = true;
#endif

TEST(ValueTest, FormatDoubleLikeJulia) {
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

TEST(ValueTest, FormatFloatLikeJulia) {
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

TEST(ValueTest, FormatDoubleRoundTripsRandomBits) {
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

TEST(ValueTest, FormatFloatRoundTripsRandomBits) {
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

TEST(ValueTest, FormatScalarsAndTypes) {
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

TEST(ValueTest, FormatTensors) {
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

TEST(ValueTest, FormatAbbreviatesLargeTensors) {
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

TEST(ValueTest, FormatTuples) {
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

TEST(ValueTest, DeepTuplesNeedNoRecursion) {
  // 10^6 nested 1-tuples: formatting, comparing and destroying them must
  // not use stack space proportional to the depth.
  Value v = Value::I64(7);
  Value w = Value::I64(7);
  for (int i = 0; i < 1000000; ++i) {
    v = Value::MakeTuple({v});
    w = Value::MakeTuple({w});
  }
  EXPECT_TRUE(BitEqual(v, w));
  std::string s = FormatValue(v, {.max_elements = 0});
  EXPECT_EQ(s.size(), 1000000u * 3 + 1);
  EXPECT_EQ(s.substr(0, 3), "(((");
  EXPECT_EQ(ValueKey(v), ValueKey(w));
  EXPECT_NE(ValueKey(v), ValueKey(Value::MakeTuple({w})));
  // Shown abbreviated, a tuple's text and its type name are cut.
  std::string shown = FormatValue(v);
  EXPECT_LT(shown.size(), 70000u);
  EXPECT_EQ(shown.substr(shown.size() - 3), "…");
  std::string type = TypeName(v);
  EXPECT_LT(type.size(), 1100u);
  EXPECT_EQ(type.substr(0, 12), "Tuple{Tuple{");
}

// Items that share a tuple: the key writes a shared tuple once, so 30
// levels of (t, t) (2^30 leaves decoded) make a short key; different
// sharing of equal values gives different keys (never equal keys for
// different values).
TEST(ValueTest, ValueKeyFollowsDistinctTuples) {
  Value t = Value::F64(1.0);
  for (int i = 0; i < 30; ++i) t = Value::MakeTuple({t, t});
  std::string k = ValueKey(t);
  EXPECT_LT(k.size(), 500u);
  Value a = Value::MakeTuple({Value::I64(1), Value::String("x")});
  Value b = Value::MakeTuple({Value::I64(1), Value::String("y")});
  EXPECT_NE(ValueKey(a), ValueKey(b));
  EXPECT_NE(ValueKey(Value::I64(1)), ValueKey(Value::F64(1.0)));
  double d1[] = {1, 2}, d2[] = {1, 3};
  EXPECT_NE(ValueKey(Value::MakeTensor(Tensor::FromF64({2}, d1))),
            ValueKey(Value::MakeTensor(Tensor::FromF64({2}, d2))));
  EXPECT_EQ(ValueKey(Value::MakeTensor(Tensor::FromF64({2}, d1))),
            ValueKey(Value::MakeTensor(Tensor::FromF64({2}, d1))));
}

TEST(ValueTest, BitEqual) {
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

// TakeTensor moves the tensor out of its only holder and copies a shared
// one, leaving the other holders as they were.
TEST(ValueTest, TakeTensorMovesOnlyWhatNothingElseHolds) {
  Value v = Value::MakeTensor(Tensor::FromF64({2}, std::vector<double>{1.0, 2.0}));
  const uint8_t* data = v.tensor().data.data();
  Tensor t = Value::TakeTensor(std::move(v));
  EXPECT_EQ(t.data.data(), data);  // moved, not copied
  EXPECT_TRUE(v.is_none());        // NOLINT(bugprone-use-after-move)
  Value a = Value::MakeTensor(Tensor::FromF64({2}, std::vector<double>{3.0, 4.0}));
  Value b = a;
  Tensor u = Value::TakeTensor(std::move(b));
  EXPECT_NE(u.data.data(), a.tensor().data.data());
  EXPECT_EQ(u.at(1), 4.0);
  EXPECT_EQ(a.tensor().numel(), 2);
  EXPECT_EQ(a.tensor().at(0), 3.0);
  Tensor s = Value::TakeTensor(Value::F64(1.0));
  EXPECT_EQ(s.data.size(), 0u);
}

// Tensors of 2 MiB or more live in tensor blocks: aligned to 2 MiB (except
// under AddressSanitizer, where every tensor comes from operator new), kept
// for reuse up to a bound, and zeros whenever Make or Zeros hands them out,
// reused or not.
TEST(ValueTest, TensorBlocksComeZeroedAndAreReusedWithinABound) {
  const int64_t n = (int64_t{3} << 20) / 8;  // 3 MiB of Float64
  for (int round = 0; round < 3; ++round) {
    Result<Tensor> t = Tensor::Make(DType::kF64, {n});
    ASSERT_TRUE(t.ok());
    ASSERT_EQ(t->data.size(), size_t{3} << 20);
    for (int64_t i = 0; i < n; i += 4093) ASSERT_EQ(t->f64()[i], 0.0) << "round " << round;
    ASSERT_EQ(t->f64()[n - 1], 0.0);
    if (kTensorBlocksMapped) {
      EXPECT_EQ(reinterpret_cast<uintptr_t>(t->data.data()) % (uintptr_t{2} << 20), 0u);
    }
    std::memset(t->data.data(), 0xab, t->data.size());  // dirty it for the next round
  }
  Tensor z = Tensor::Zeros(DType::kF32, {n * 2});
  EXPECT_EQ(z.at(0), 0.0);
  EXPECT_EQ(z.at(n), 0.0);
  EXPECT_EQ(z.at(2 * n - 1), 0.0);
  // Many blocks freed at once: the cache keeps at most 64 MiB of them.
  {
    std::vector<Tensor> many;
    for (int i = 0; i < 40; ++i) many.push_back(Tensor::Zeros(DType::kF64, {n}));
  }
  EXPECT_LE(internal::CachedTensorBlockBytes(), size_t{64} << 20);
  // A small tensor made where a dirty one was freed is zeros too.
  for (int round = 0; round < 2; ++round) {
    Tensor s = Tensor::Zeros(DType::kF64, {1000});
    for (int64_t i = 0; i < 1000; ++i) ASSERT_EQ(s.f64()[i], 0.0);
    std::memset(s.data.data(), 0xab, s.data.size());
  }
  // Bytes made without a value are the caller's to write: resize keeps
  // the ones there and the vector still copies and compares as one.
  TensorBytes b(5);
  std::memset(b.data(), 7, 5);
  b.resize(8);
  EXPECT_EQ(b[4], 7);
  TensorBytes c = b;
  EXPECT_TRUE(c == b);
}

// Storage from 64 KiB to 2 MiB is a piece: the pieces freed last are kept
// (except under AddressSanitizer) for the next tensor of exactly their
// size, up to 4 MiB, and a tensor made on a reused, dirtied piece is zeros
// all the same.
TEST(ValueTest, TensorPiecesAreReusedByExactSizeWithinABound) {
  const int64_t n = (int64_t{256} << 10) / 8;  // 256 KiB of Float64
  const void* last = nullptr;
  for (int round = 0; round < 3; ++round) {
    Result<Tensor> t = Tensor::Make(DType::kF64, {n});
    ASSERT_TRUE(t.ok());
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(t->f64()[i], 0.0) << "round " << round;
    if (kTensorBlocksMapped && round > 0) {
      EXPECT_EQ(t->data.data(), last);  // reused
    }
    last = t->data.data();
    std::memset(t->data.data(), 0xab, t->data.size());
  }
  // Another size does not take it, larger or smaller.
  const void* larger = nullptr;
  {
    TensorBytes other((size_t{256} << 10) + 8);
    EXPECT_NE(static_cast<const void*>(other.data()), last);
    larger = other.data();
  }
  {
    TensorBytes other((size_t{256} << 10) - 8);
    EXPECT_NE(static_cast<const void*>(other.data()), last);
    EXPECT_NE(static_cast<const void*>(other.data()), larger);
  }
  // Many pieces freed at once: at most 4 MiB are kept.
  {
    std::vector<Tensor> many;
    for (int i = 0; i < 200; ++i) many.push_back(Tensor::Zeros(DType::kF64, {n + i * 1000}));
  }
  EXPECT_LE(internal::CachedTensorPieceBytes(), size_t{4} << 20);
  if (kTensorBlocksMapped) {
    EXPECT_GT(internal::CachedTensorPieceBytes(), 0u);
  }
  // Below 64 KiB storage is not kept.
  size_t before = internal::CachedTensorPieceBytes();
  { Tensor small = Tensor::Zeros(DType::kF64, {1000}); }
  EXPECT_EQ(internal::CachedTensorPieceBytes(), before);
}

}  // namespace
}  // namespace irt
