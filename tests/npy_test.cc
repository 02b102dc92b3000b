// NumPy .npy files: round trips of every dtype, Fortran order, format
// versions 1 to 3, and the errors of malformed or hostile files.
#include "irt/npy.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include "irt/value.h"
#include "test_util.h"

namespace irt {
namespace {

TEST(NpyTest, NpyRoundTrip) {
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
    std::string path = testing::TempPath("rt" + std::to_string(i) + ".npy");
    ASSERT_TRUE(WriteNpy(values[i], path).ok());
    std::string bytes = irt::testing::ReadFile(path);
    uint16_t hlen = static_cast<uint8_t>(bytes[8]) | (static_cast<uint8_t>(bytes[9]) << 8);
    EXPECT_EQ((10 + hlen) % 64, 0u);
    auto back = ReadNpy(path);
    ASSERT_TRUE(back.ok()) << back.status().message();
    EXPECT_TRUE(BitEqual(*back, values[i])) << FormatValue(*back);
  }
  // Scalars become 0-dimensional arrays.
  std::string path = testing::TempPath("scalar.npy");
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
  std::string path = testing::TempPath(name);
  std::ofstream(path, std::ios::binary) << bytes;
  return ReadNpy(path);
}

TEST(NpyTest, NpyFortranOrderAndVersions) {
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

TEST(NpyTest, NpyErrors) {
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
  auto missing = ReadNpy(testing::TempPath("does-not-exist.npy"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Code::kIoError);
}

}  // namespace
}  // namespace irt
