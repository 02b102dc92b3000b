// The JSON notation of values (irt/json.h): integers as integers, floats
// always with a "." or an exponent and digits that read back exactly, the
// strings "NaN"/"Inf"/"-Inf", and tensors element by element without a
// detour through double.
#include "irt/json.h"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>

namespace irt {
namespace {

TEST(JsonTest, FloatsAlwaysReadAsFloats) {
  EXPECT_EQ(JsonValue(Value::F64(3.0)), "3.0");
  EXPECT_EQ(JsonValue(Value::F64(-0.0)), "-0.0");
  EXPECT_EQ(JsonValue(Value::F64(0.1)), "0.1");
  EXPECT_EQ(JsonValue(Value::F64(1e300)), "1e+300");
  EXPECT_EQ(JsonValue(Value::F64(5e-324)), "5e-324");
  EXPECT_EQ(JsonValue(Value::F64(123456789.0)), "123456789.0");
  EXPECT_EQ(JsonValue(Value::F32(0.1f)), "0.1");
  EXPECT_EQ(JsonValue(Value::F32(2.0f)), "2.0");
  EXPECT_EQ(JsonValue(Value::F32(std::numeric_limits<float>::max())), "3.4028235e+38");
}

TEST(JsonTest, NonFiniteAsStrings) {
  double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(JsonValue(Value::F64(std::numeric_limits<double>::quiet_NaN())), "\"NaN\"");
  EXPECT_EQ(JsonValue(Value::F64(inf)), "\"Inf\"");
  EXPECT_EQ(JsonValue(Value::F64(-inf)), "\"-Inf\"");
  EXPECT_EQ(JsonValue(Value::F32(-std::numeric_limits<float>::infinity())), "\"-Inf\"");
}

TEST(JsonTest, IntegersAndOthers) {
  EXPECT_EQ(JsonValue(Value::I64(3)), "3");
  EXPECT_EQ(JsonValue(Value::I64(std::numeric_limits<int64_t>::min())), "-9223372036854775808");
  EXPECT_EQ(JsonValue(Value::Bool(true)), "true");
  EXPECT_EQ(JsonValue(Value::Nothing()), "null");
  EXPECT_EQ(JsonValue(Value()), "null");
  EXPECT_EQ(JsonValue(Value::String("a\"b\n")), "\"a\\\"b\\n\"");
  EXPECT_EQ(JsonValue(Value::Function("f")), "{\"function\":\"f\"}");
  EXPECT_EQ(JsonValue(Value::MakeTuple({Value::I64(1), Value::F64(1)})), "{\"tuple\":[1,1.0]}");
}

TEST(JsonTest, Tensors) {
  Value f64 = Value::MakeTensor(Tensor::FromF64({2}, std::vector<double>{1.0, 0.5}));
  EXPECT_EQ(JsonValue(f64), "{\"dtype\":\"Float64\",\"shape\":[2],\"data\":[1.0,0.5]}");
  Value f32 = Value::MakeTensor(Tensor::FromF32({1}, std::vector<float>{0.1f}));
  EXPECT_EQ(JsonValue(f32), "{\"dtype\":\"Float32\",\"shape\":[1],\"data\":[0.1]}");
  // Int64 elements exactly, beyond what a double holds.
  Tensor i64 = Tensor::Zeros(DType::kI64, {1});
  int64_t big = (int64_t{1} << 62) + 1;
  std::memcpy(i64.data.data(), &big, sizeof(big));
  EXPECT_EQ(JsonValue(Value::MakeTensor(i64)),
            "{\"dtype\":\"Int64\",\"shape\":[1],\"data\":[4611686018427387905]}");
  EXPECT_EQ(JsonValue(f64, {.max_elements = 1}),
            "{\"dtype\":\"Float64\",\"shape\":[2],\"abbreviated\":true}");
  Tensor short_data = Tensor::Zeros(DType::kF64, {2});
  short_data.data.erase(short_data.data.begin() + 8, short_data.data.end());
  EXPECT_EQ(JsonValue(Value::MakeTensor(short_data)),
            "{\"dtype\":\"Float64\",\"shape\":[2],\"invalid\":true}");
}

}  // namespace
}  // namespace irt
