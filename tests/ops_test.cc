// Operation evaluation through the standard operation set (ApplyOp):
// broadcasting, reductions, matrix products, indexing, and scalars that
// follow the adapter's promotion rules.
#include "irt/ops.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "irt/value.h"
#include "ops/kernels_internal.h"

namespace irt {
namespace {

Value T(std::vector<int64_t> shape, std::vector<double> v) {
  return Value::MakeTensor(Tensor::FromF64(std::move(shape), v));
}

std::vector<double> Data(const Value& v) {
  std::vector<double> out;
  for (int64_t i = 0; i < v.tensor().numel(); ++i) out.push_back(v.tensor().at(i));
  return out;
}

Value Eval(const std::string& op, std::vector<Value> args) {
  auto r = ApplyOp(op, args);
  EXPECT_TRUE(r.ok()) << op << ": " << r.status().message();
  return r.ok() ? *r : Value();
}

TEST(OpsTest, BroadcastingAndReductions) {
  Value a = T({2, 3}, {1, 2, 3, 4, 5, 6});
  Value b = T({3}, {10, 20, 30});
  EXPECT_EQ(Data(Eval("+", {a, b})), (std::vector<double>{11, 22, 33, 14, 25, 36}));
  EXPECT_EQ(Data(Eval("*", {a, Value::F64(2)})), (std::vector<double>{2, 4, 6, 8, 10, 12}));
  Value col = T({2, 1}, {1, 2});
  EXPECT_EQ(Data(Eval("-", {a, col})), (std::vector<double>{0, 1, 2, 2, 3, 4}));
  EXPECT_EQ(Eval("sum", {a}).to_double(), 21);
  Value s1 = Eval("sum", {a, Value::I64(1)});
  EXPECT_EQ(s1.tensor().shape, (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(Data(s1), (std::vector<double>{5, 7, 9}));
  EXPECT_EQ(Data(Eval("sum", {a, Value::I64(2)})), (std::vector<double>{6, 15}));
  EXPECT_EQ(Data(Eval("mean", {a, Value::I64(2)})), (std::vector<double>{2, 5}));
  EXPECT_EQ(Data(Eval("sum_to", {a, b})), (std::vector<double>{5, 7, 9}));
  EXPECT_EQ(Data(Eval("sum_to", {a, col})), (std::vector<double>{6, 15}));
  EXPECT_EQ(Eval("sum_to", {a, Value::F64(0)}).to_double(), 21);
  EXPECT_EQ(Data(Eval("broadcast_to", {col, a})), (std::vector<double>{1, 1, 1, 2, 2, 2}));
  EXPECT_FALSE(ApplyOp("+", std::vector<Value>{a, T({2}, {1, 2})}).ok());
}

TEST(OpsTest, MatmulTransposeIndexing) {
  Value a = T({2, 3}, {1, 2, 3, 4, 5, 6});
  Value b = T({3, 2}, {7, 8, 9, 10, 11, 12});
  EXPECT_EQ(Data(Eval("matmul", {a, b})), (std::vector<double>{58, 64, 139, 154}));
  EXPECT_EQ(Data(Eval("transpose", {a})), (std::vector<double>{1, 4, 2, 5, 3, 6}));
  auto bad = ApplyOp("matmul", std::vector<Value>{a, a});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "DimensionMismatch: matmul: inner dimensions 3 and 2 differ");
  // One index into a matrix is a row-major linear index.
  EXPECT_EQ(Eval("getindex", {a, Value::I64(2)}).to_double(), 2);
  EXPECT_EQ(Eval("getindex", {a, Value::I64(2), Value::I64(1)}).to_double(), 4);
  EXPECT_EQ(Data(Eval("addindex", {a, Value::F64(0.5), Value::I64(1), Value::I64(3)})),
            (std::vector<double>{1, 2, 3.5, 4, 5, 6}));
  // getitem is Python's indexing: 0-based, negative from the end, fewer
  // indices than dimensions give a sub-tensor.
  EXPECT_EQ(Eval("getitem", {a, Value::I64(1), Value::I64(-1)}).to_double(), 6);
  EXPECT_EQ(Data(Eval("getitem", {a, Value::I64(-2)})), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(Eval("getitem", {Value::MakeTuple({Value::I64(7), Value::F64(8)}), Value::I64(-1)})
                .to_double(),
            8);
  EXPECT_EQ(ApplyOp("getitem", std::vector<Value>{a, Value::I64(2)}).status().message(),
            "BoundsError: getitem: index 2 out of bounds for dimension 1 of size 2");
  EXPECT_EQ(Data(Eval("additem", {a, Eval("getitem", {a, Value::I64(0)}), Value::I64(1)})),
            (std::vector<double>{1, 2, 3, 5, 7, 9}));
  EXPECT_EQ(
      ApplyOp("additem", std::vector<Value>{a, Value::F64(1), Value::I64(1)}).status().message(),
      "DimensionMismatch: additem: cannot add Float64 to an item of shape 3");
  Value r = Eval("reshape", {a, Value::I64(3), Value::I64(2)});
  EXPECT_EQ(r.tensor().shape, (std::vector<int64_t>{3, 2}));
  Value sz = Eval("size", {a});
  EXPECT_EQ(FormatValue(sz), "(2, 3)");
  EXPECT_EQ(Eval("reshape", {a, sz}).tensor().shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(Data(Eval("fill", {Value::F64(1.5), Value::I64(2)})), (std::vector<double>{1.5, 1.5}));
  // Float32 stays Float32, with a Float64 scalar too.
  Value f = Value::MakeTensor(Tensor::FromF32({2}, std::vector<float>{1, 2}));
  EXPECT_EQ(Eval("*", {f, Value::F64(2)}).tensor().dtype, DType::kF32);
}

TEST(OpsTest, ScalarsFollowTheAdapter) {
  EXPECT_EQ(Eval("+", {Value::I64(2), Value::I64(3)}).kind(), VKind::kI64);
  EXPECT_EQ(Eval("/", {Value::I64(1), Value::I64(2)}).to_double(), 0.5);
  EXPECT_EQ(Eval("^", {Value::F64(2), Value::I64(10)}).to_double(), 1024);
  EXPECT_EQ(Eval("*", {Value::F32(1.5f), Value::I64(2)}).kind(), VKind::kF32);
  EXPECT_EQ(Eval("max", {Value::F64(-0.0), Value::F64(0.0)}).to_double(), 0.0);
  EXPECT_FALSE(ApplyOp("nosuch", std::vector<Value>{}).ok());
}

// Each instruction-set build of the binary64 matrix product that this
// processor can run, and the one chosen at run time, against a long double
// triple loop: sizes that are not multiples of any kernel's blocking, every
// combination of transposed operands. The product is added to C.
TEST(OpsTest, MatrixProductBuildsAgreeWithALongDoubleProduct) {
  using Gemm = bool (*)(const double*, int64_t, int64_t, bool, const double*, int64_t, int64_t,
                        bool, double*, int64_t, int64_t);
  struct Build {
    const char* name;
    Gemm gemm;
    bool runs;
  };
  std::vector<Build> builds = {{"chosen", internal::GemmF64Isa, true}};
#if defined(__x86_64__) && defined(__GNUC__)
  builds.push_back({"avx2", internal::GemmF64Avx2,
                    __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")});
  builds.push_back({"avx512", internal::GemmF64Avx512,
                    __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
                        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("fma")});
#endif
  // Shapes in an order that makes the kept packing buffers grow, then serve
  // a smaller product with what a larger one left in them, then grow again
  // on another thread; the small and vector shapes take Eigen's own paths.
  struct Shape {
    int64_t m, k, n;
    bool other_thread;
  };
  const Shape shapes[] = {{37, 131, 29, false}, {150, 600, 90, false}, {5, 6, 7, false},
                          {1, 50, 30, false},   {30, 50, 1, false},    {37, 131, 29, false},
                          {90, 600, 150, true}};
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (const Shape& s : shapes) {
    const int64_t m = s.m, k = s.k, n = s.n;
    std::vector<double> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n));
    for (double& x : a) x = u(rng);
    for (double& x : b) x = u(rng);
    for (int t = 0; t < 4; ++t) {
      bool ta = (t & 1) != 0, tb = (t & 2) != 0;
      // op(A) is m×k and op(B) k×n; stored transposed when asked.
      auto A = [&](int64_t i, int64_t q) {
        return ta ? a[static_cast<size_t>(q * m + i)] : a[static_cast<size_t>(i * k + q)];
      };
      auto B = [&](int64_t q, int64_t j) {
        return tb ? b[static_cast<size_t>(j * k + q)] : b[static_cast<size_t>(q * n + j)];
      };
      for (const Build& build : builds) {
        if (!build.runs) continue;
        std::vector<double> c(static_cast<size_t>(m * n), -7.0);
        bool done = false;
        auto run = [&] {
          done = build.gemm(a.data(), ta ? k : m, ta ? m : k, ta, b.data(), tb ? n : k, tb ? k : n,
                            tb, c.data(), m, n);
        };
        if (s.other_thread) {
          std::thread(run).join();
        } else {
          run();
        }
        if (!done) continue;  // this build has no such code
        for (int64_t i = 0; i < m; ++i) {
          for (int64_t j = 0; j < n; ++j) {
            long double want = -7.0L;
            for (int64_t q = 0; q < k; ++q) want += static_cast<long double>(A(i, q)) * B(q, j);
            double got = c[static_cast<size_t>(i * n + j)];
            ASSERT_NEAR(got, static_cast<double>(want), 2e-15 * static_cast<double>(k))
                << build.name << " " << m << "x" << k << "x" << n << " ta=" << ta << " tb=" << tb
                << " at " << i << "," << j;
          }
        }
      }
    }
  }
}

// A matrix product is added to zeros, so no element of it is -0 however
// small the matrices (Eigen's coefficient-wise products start a sum with its
// first term) or large (its blocked kernels): the gradient sweep relies on
// it to take a product over as a first adjoint without clearing -0s.
TEST(OpsTest, MatrixProductsHoldNoNegativeZero) {
  for (int64_t size : {1, 3, 64}) {
    std::vector<double> a(static_cast<size_t>(size * size), -1.0);
    std::vector<double> b(static_cast<size_t>(size * size), 0.0);
    std::vector<float> af(a.begin(), a.end()), bf(b.begin(), b.end());
    Value x = Value::MakeTensor(Tensor::FromF64({size, size}, a));
    Value y = Value::MakeTensor(Tensor::FromF64({size, size}, b));
    Value xf = Value::MakeTensor(Tensor::FromF32({size, size}, af));
    Value yf = Value::MakeTensor(Tensor::FromF32({size, size}, bf));
    Value v = Value::MakeTensor(Tensor::FromF64({size}, b));
    for (const Value& r : {Eval("matmul", {x, y}), Eval("matmul", {xf, yf}), Eval("matmul", {x, v}),
                           internal::MatmulTransposed(x, true, y, false).value(),
                           internal::MatmulTransposed(x, false, y, true).value()}) {
      const Tensor& t = r.tensor();
      for (int64_t i = 0; i < t.numel(); ++i) {
        ASSERT_EQ(t.at(i), 0.0);
        ASSERT_FALSE(std::signbit(t.at(i)))
            << "-0 at " << i << " of a " << size << "-square product";
      }
    }
  }
}

}  // namespace
}  // namespace irt
