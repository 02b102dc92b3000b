// Matrix products and transposes: Eigen, or on x86-64 processors with
// AVX-512 or AVX2 and FMA a binary64 kernel chosen at run time
// (gemm_avx512.cc, gemm_avx2.cc); the transposed products the derivative
// rules need are formed without transposing (MatmulTransposed).
#include "ops/kernels_internal.h"
#include "tensor_util.h"

namespace irt {

namespace internal {

namespace {

enum class Isa { kBaseline, kAvx2, kAvx512 };

// Checked here, in code built for the baseline instruction set.
Isa CpuIsa() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const Isa isa = [] {
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("fma")) {
      return Isa::kAvx512;
    }
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return Isa::kAvx2;
    return Isa::kBaseline;
  }();
  return isa;
#else
  return Isa::kBaseline;
#endif
}

}  // namespace

bool GemmF64Isa(const double* a, int64_t ar, int64_t ac, bool ta, const double* b, int64_t br,
                int64_t bc, bool tb, double* c, int64_t m, int64_t n) {
  switch (CpuIsa()) {
    case Isa::kAvx512:
      if (GemmF64Avx512(a, ar, ac, ta, b, br, bc, tb, c, m, n)) return true;
      [[fallthrough]];
    case Isa::kAvx2:
      return GemmF64Avx2(a, ar, ac, ta, b, br, bc, tb, c, m, n);
    case Isa::kBaseline:
      break;
  }
  return false;
}

}  // namespace internal

}  // namespace irt

namespace irt::ops {

namespace {

// A vector is a column: a 1-D first argument is m×1 (so the product is an
// outer product), and a 1-D second argument k×1, the result then 1-D (a
// matrix times a vector is a vector), as Julia's * does.
Result<Value> Matmul(std::string_view name, const Value& a, const Value& b) {
  IRT_ASSIGN_OR_RETURN(const Tensor* x, FloatTensorArg(name, a, "the first argument"));
  IRT_ASSIGN_OR_RETURN(const Tensor* y, FloatTensorArg(name, b, "the second argument"));
  size_t xd = x->shape.size(), yd = y->shape.size();
  if (xd < 1 || xd > 2 || yd < 1 || yd > 2) {
    return ShapeError(name, "needs matrices or vectors, got " + ShapeText(x->shape) + " and " +
                                ShapeText(y->shape));
  }
  int64_t m = x->shape[0], k = xd == 2 ? x->shape[1] : 1;
  int64_t k2 = y->shape[0], n = yd == 2 ? y->shape[1] : 1;
  if (k != k2) {
    return ShapeError(
        name, "inner dimensions " + std::to_string(k) + " and " + std::to_string(k2) + " differ");
  }
  std::vector<int64_t> shape = yd == 2 ? std::vector<int64_t>{m, n} : std::vector<int64_t>{m};
  if (x->dtype == DType::kF32 && y->dtype == DType::kF32) {
    IRT_ASSIGN_OR_RETURN(Tensor t, (Alloc(name, DType::kF32, shape)));
    Eigen::Map<const MatrixR<float>> A(x->f32(), m, k), B(y->f32(), k, n);
    Eigen::Map<MatrixR<float>> C(t.f32(), m, n);
    C.noalias() += A * B;
    return Value::MakeTensor(std::move(t));
  }
  Elements<double> ea(a), eb(b);
  IRT_ASSIGN_OR_RETURN(Tensor t, (Alloc(name, DType::kF64, shape)));
  if (internal::GemmF64Isa(ea.data(), m, k, false, eb.data(), k, n, false, t.f64(), m, n)) {
    return Value::MakeTensor(std::move(t));
  }
  Eigen::Map<const MatrixR<double>> A(ea.data(), m, k), B(eb.data(), k, n);
  Eigen::Map<MatrixR<double>> C(t.f64(), m, n);
  C.noalias() += A * B;
  return Value::MakeTensor(std::move(t));
}

// The sum of the products of two vectors' elements (NumPy's 1-D @).
Result<Value> Dot(std::string_view name, const Value& a, const Value& b) {
  IRT_ASSIGN_OR_RETURN(const Tensor* x, FloatTensorArg(name, a, "the first argument"));
  IRT_ASSIGN_OR_RETURN(const Tensor* y, FloatTensorArg(name, b, "the second argument"));
  if (x->shape.size() != 1 || y->shape.size() != 1 || x->shape[0] != y->shape[0]) {
    return ShapeError(name, "needs two vectors of one length, got " + ShapeText(x->shape) +
                                " and " + ShapeText(y->shape));
  }
  if (x->dtype == DType::kF32 && y->dtype == DType::kF32) {
    Eigen::Map<const Eigen::VectorXf> u(x->f32(), x->shape[0]), v(y->f32(), y->shape[0]);
    return Value::F32(u.dot(v));
  }
  Elements<double> ea(a), eb(b);
  Eigen::Map<const Eigen::VectorXd> u(ea.data(), x->shape[0]), v(eb.data(), y->shape[0]);
  return Value::F64(u.dot(v));
}

template <typename T>
void TransposeInto(const T* x, int64_t m, int64_t n, T* out) {
  Eigen::Map<const MatrixR<T>> A(x, m, n);
  Eigen::Map<MatrixR<T>> B(out, n, m);
  B = A.transpose();
}

Result<Value> Transpose(std::string_view name, const Value& a) {
  if (IsReal(a)) return a;
  if (!IsTensor(a)) return Bad(name, "no method for " + TypeName(a));
  const Tensor& x = a.tensor();
  if (x.shape.size() == 1) {
    Tensor t = x;
    t.shape = {1, x.shape[0]};
    return Value::MakeTensor(std::move(t));
  }
  if (x.shape.size() != 2)
    return ShapeError(name, "needs a vector or a matrix, got " + ShapeText(x.shape));
  int64_t m = x.shape[0], n = x.shape[1];
  IRT_ASSIGN_OR_RETURN(Tensor t, (Alloc(name, x.dtype, {n, m})));
  switch (x.dtype) {
    case DType::kF64:
      TransposeInto(x.f64(), m, n, t.f64());
      break;
    case DType::kF32:
      TransposeInto(x.f32(), m, n, t.f32());
      break;
    default: {
      size_t es = DTypeSize(x.dtype);
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          std::memcpy(t.data.data() + static_cast<size_t>(j * m + i) * es,
                      x.data.data() + static_cast<size_t>(i * n + j) * es, es);
        }
      }
    }
  }
  return Value::MakeTensor(std::move(t));
}

}  // namespace

Result<Value> Matmul(const OpDef& op, OpArgs a) { return Matmul(op.name, a[0], a[1]); }
Result<Value> Dot(const OpDef& op, OpArgs a) { return Dot(op.name, a[0], a[1]); }
Result<Value> Transpose(const OpDef& op, OpArgs a) { return Transpose(op.name, a[0]); }

}  // namespace irt::ops

namespace irt::ops {

namespace {

// C += op(A) op(B). Every product here and in Matmul is added to the zeros
// of a new tensor rather than assigned (Eigen would clear the destination
// again first), so the zeros are written once, and 0 + x turns a -0 sum
// into 0: no product holds a -0, whatever its size
// (Program::output_is_product).
template <typename T>
void Gemm(const T* a, int64_t ar, int64_t ac, bool ta, const T* b, int64_t br, int64_t bc, bool tb,
          T* c, int64_t m, int64_t n) {
  if constexpr (std::is_same_v<T, double>) {
    if (internal::GemmF64Isa(a, ar, ac, ta, b, br, bc, tb, c, m, n)) return;
  }
  Eigen::Map<const MatrixR<T>> A(a, ar, ac), B(b, br, bc);
  Eigen::Map<MatrixR<T>> C(c, m, n);
  if (!ta && !tb) {
    C.noalias() += A * B;
  } else if (ta && !tb) {
    C.noalias() += A.transpose() * B;
  } else if (!ta && tb) {
    C.noalias() += A * B.transpose();
  } else {
    C.noalias() += A.transpose() * B.transpose();
  }
}

Result<Value> MatmulTransposedImpl(const Value& a, bool ta, const Value& b, bool tb) {
  auto matrix = [](const Value& v) {
    return v.kind() == VKind::kTensor && v.tensor().shape.size() == 2 &&
           IsFloatDType(v.tensor().dtype);
  };
  if (!matrix(a) || !matrix(b)) {
    Value x = a, y = b;
    if (ta) {
      IRT_ASSIGN_OR_RETURN(x, Transpose("transpose", a));
    }
    if (tb) {
      IRT_ASSIGN_OR_RETURN(y, Transpose("transpose", b));
    }
    return Matmul("matmul", x, y);
  }
  const Tensor& x = a.tensor();
  const Tensor& y = b.tensor();
  int64_t ar = x.shape[0], ac = x.shape[1], br = y.shape[0], bc = y.shape[1];
  int64_t m = ta ? ac : ar, k = ta ? ar : ac, k2 = tb ? bc : br, n = tb ? br : bc;
  if (k != k2) {
    return ShapeError("matmul", "inner dimensions " + std::to_string(k) + " and " +
                                    std::to_string(k2) + " differ");
  }
  if (x.dtype == DType::kF32 && y.dtype == DType::kF32) {
    IRT_ASSIGN_OR_RETURN(Tensor t, (Alloc("matmul", DType::kF32, {m, n})));
    Gemm(x.f32(), ar, ac, ta, y.f32(), br, bc, tb, t.f32(), m, n);
    return Value::MakeTensor(std::move(t));
  }
  Elements<double> ea(a), eb(b);
  IRT_ASSIGN_OR_RETURN(Tensor t, (Alloc("matmul", DType::kF64, {m, n})));
  Gemm(ea.data(), ar, ac, ta, eb.data(), br, bc, tb, t.f64(), m, n);
  return Value::MakeTensor(std::move(t));
}

}  // namespace

}  // namespace irt::ops

namespace irt::internal {

Result<Value> MatmulTransposed(const Value& a, bool ta, const Value& b, bool tb) {
  return ops::MatmulTransposedImpl(a, ta, b, tb);
}

}  // namespace irt::internal
