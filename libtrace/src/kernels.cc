// Primitive operations on values. Scalars follow Julia's promotion (Bool <
// Int64 < Float32 < Float64, integer + - * wrap around, `/` is always
// floating point); tensors are dense and row-major, computed with Eigen:
// elementwise operations on equal shapes and matrix products are Eigen
// expressions, broadcasting and reductions walk the shapes with explicit
// strides around Eigen inner loops.
#include "irt/kernels.h"

#include <Eigen/Core>
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>

#include "kernels_internal.h"
#include "scalar_ops.h"

namespace irt {

namespace internal {

// Checked here, in code built for the baseline instruction set.
bool CpuHasAvx2Fma() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return ok;
#else
  return false;
#endif
}

}  // namespace internal

namespace {

using internal::SOp;

template <typename T>
using ArrayX = Eigen::Array<T, Eigen::Dynamic, 1>;
template <typename T>
using MatrixR = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

Status Bad(std::string_view op, const std::string& what) {
  return InvalidArgument(std::string(op) + ": " + what);
}

// Every tensor a kernel returns is made here: the shape is checked against
// kMaxTensorDims and kMaxTensorElements and a failed allocation is an error.
Result<Tensor> Alloc(std::string_view op, DType dtype, std::vector<int64_t> shape) {
  Result<Tensor> t = Tensor::Make(dtype, std::move(shape));
  if (!t.ok()) return t.error().Prefixed(std::string(op));
  return t;
}

std::string ShapeText(const std::vector<int64_t>& shape) {
  if (shape.empty()) return "()";
  std::string s;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += "×";
    s += std::to_string(shape[i]);
  }
  return s;
}

// Promotion rank of a real scalar: Bool 0 < Int64 1 < Float32 2 < Float64 3; -1 otherwise.
int Rank(VKind k) {
  switch (k) {
    case VKind::kBool:
      return 0;
    case VKind::kI64:
      return 1;
    case VKind::kF32:
      return 2;
    case VKind::kF64:
      return 3;
    default:
      return -1;
  }
}

bool IsReal(const Value& v) { return Rank(v.kind()) >= 0; }
bool IsTensor(const Value& v) { return v.kind() == VKind::kTensor; }
bool IsFloatDType(DType t) { return t == DType::kF64 || t == DType::kF32; }

int64_t AsInt(const Value& v) {
  return v.kind() == VKind::kBool ? (v.as_bool() ? 1 : 0) : v.as_i64();
}
int64_t Wrap(uint64_t u) { return static_cast<int64_t>(u); }

// An integer argument: Int64, Bool, or a float with an integral value (rule
// literals are floats).
bool ToIndex(const Value& v, int64_t* out) {
  switch (v.kind()) {
    case VKind::kI64:
    case VKind::kBool:
      *out = AsInt(v);
      return true;
    case VKind::kF64:
    case VKind::kF32: {
      double d = v.to_double();
      if (d != std::trunc(d) || std::fabs(d) > 9.0e15) return false;
      *out = static_cast<int64_t>(d);
      return true;
    }
    default:
      return false;
  }
}

Value MakeFloat(double d, bool f32) {
  return f32 ? Value::F32(static_cast<float>(d)) : Value::F64(d);
}

// ---------------------------------------------------------------- scalars

Result<Value> ScalarBinary(std::string_view name, SOp op, const Value& a, const Value& b) {
  int ra = Rank(a.kind()), rb = Rank(b.kind());
  if (ra < 0 || rb < 0) {
    return Bad(name, "no method for " + TypeName(a) + " and " + TypeName(b));
  }
  int r = std::max(ra, rb);
  switch (op) {
    case SOp::kLt:
    case SOp::kLe:
    case SOp::kGt:
    case SOp::kGe:
    case SOp::kEq:
    case SOp::kNe: {
      if (r <= 1) {
        int64_t x = AsInt(a), y = AsInt(b);
        bool v = op == SOp::kLt   ? x < y
                 : op == SOp::kLe ? x <= y
                 : op == SOp::kGt ? x > y
                 : op == SOp::kGe ? x >= y
                 : op == SOp::kEq ? x == y
                                  : x != y;
        return Value::Bool(v);
      }
      return Value::Bool(internal::Apply2(op, a.to_double(), b.to_double()) != 0);
    }
    case SOp::kAdd:
    case SOp::kSub:
    case SOp::kMul:
      if (r <= 1) {
        uint64_t x = static_cast<uint64_t>(AsInt(a)), y = static_cast<uint64_t>(AsInt(b));
        return Value::I64(Wrap(op == SOp::kAdd ? x + y : op == SOp::kSub ? x - y : x * y));
      }
      break;
    case SOp::kPow:
      if (r <= 1) {
        int64_t e = AsInt(b), x = AsInt(a);
        if (e < 0) {
          if (x == 1) return Value::I64(1);
          if (x == -1) return Value::I64((e & 1) ? -1 : 1);
          return Bad(name, "cannot raise an integer to a negative power " + std::to_string(e));
        }
        uint64_t result = 1, base = static_cast<uint64_t>(x), n = static_cast<uint64_t>(e);
        while (n != 0) {
          if (n & 1) result *= base;
          base *= base;
          n >>= 1;
        }
        return Value::I64(Wrap(result));
      }
      if (rb <= 1 && ra == 2) {
        // Float32 base, integer exponent, as the IR adapter computes it.
        return Value::F32(static_cast<float>(
            std::pow(static_cast<double>(a.as_f32()), static_cast<double>(AsInt(b)))));
      }
      break;
    case SOp::kMin:
    case SOp::kMax:
      if (r == 0) {
        bool x = a.as_bool(), y = b.as_bool();
        return Value::Bool(op == SOp::kMax ? (x || y) : (x && y));
      }
      if (r == 1) {
        int64_t x = AsInt(a), y = AsInt(b);
        return Value::I64(op == SOp::kMax ? std::max(x, y) : std::min(x, y));
      }
      break;
    default:
      break;
  }
  if (r == 2) {
    float x = static_cast<float>(a.to_double()), y = static_cast<float>(b.to_double());
    float z;
    switch (op) {
      case SOp::kAdd:
        z = x + y;
        break;
      case SOp::kSub:
        z = x - y;
        break;
      case SOp::kMul:
        z = x * y;
        break;
      case SOp::kDiv:
        z = x / y;
        break;
      case SOp::kPow:
        z = std::pow(x, y);
        break;
      default:
        z = static_cast<float>(internal::Apply2(op, x, y));
        break;
    }
    return Value::F32(z);
  }
  return Value::F64(internal::Apply2(op, a.to_double(), b.to_double()));
}

Result<Value> ScalarUnary(std::string_view name, SOp op, const Value& a) {
  int r = Rank(a.kind());
  if (r < 0) return Bad(name, "no method for " + TypeName(a));
  switch (op) {
    case SOp::kNot:
      if (a.kind() != VKind::kBool) return Bad(name, "no method for " + TypeName(a));
      return Value::Bool(!a.as_bool());
    case SOp::kZero:
    case SOp::kOne: {
      bool one = op == SOp::kOne;
      if (r == 0) return Value::Bool(one);
      if (r == 1) return Value::I64(one ? 1 : 0);
      return MakeFloat(one ? 1.0 : 0.0, r == 2);
    }
    case SOp::kCopy:
      return a;
    case SOp::kNeg:
      if (r <= 1) return Value::I64(Wrap(0 - static_cast<uint64_t>(AsInt(a))));
      break;
    case SOp::kAbs:
      if (r == 0) return a;
      if (r == 1) {
        int64_t x = a.as_i64();
        return Value::I64(x < 0 ? Wrap(0 - static_cast<uint64_t>(x)) : x);
      }
      break;
    case SOp::kSign:
      if (r <= 1) {
        int64_t x = AsInt(a);
        return Value::I64(x > 0 ? 1 : x < 0 ? -1 : 0);
      }
      break;
    default:
      break;
  }
  if (r == 2) {
    float x = a.as_f32();
    float z;
    switch (op) {
      case SOp::kNeg:
        z = -x;
        break;
      case SOp::kSin:
        z = std::sin(x);
        break;
      case SOp::kCos:
        z = std::cos(x);
        break;
      case SOp::kTan:
        z = std::tan(x);
        break;
      case SOp::kExp:
        z = std::exp(x);
        break;
      case SOp::kLog:
        z = std::log(x);
        break;
      case SOp::kSqrt:
        z = std::sqrt(x);
        break;
      case SOp::kTanh:
        z = std::tanh(x);
        break;
      case SOp::kAbs:
        z = std::fabs(x);
        break;
      default:
        z = static_cast<float>(internal::Apply1(op, x));
        break;
    }
    return Value::F32(z);
  }
  return Value::F64(internal::Apply1(op, a.to_double()));
}

// ---------------------------------------------------------------- tensors

// Elements of a float tensor (or a real scalar) as a contiguous array of T,
// converting only when the stored type differs.
template <typename T>
class Elements {
 public:
  explicit Elements(const Value& v) {
    if (v.kind() != VKind::kTensor) {
      scalar_ = static_cast<T>(v.to_double());
      ptr_ = &scalar_;
      return;
    }
    const Tensor& t = v.tensor();
    int64_t n = t.numel();
    if (t.dtype == DType::kF64 && std::is_same_v<T, double>) {
      ptr_ = reinterpret_cast<const T*>(t.data.data());
    } else if (t.dtype == DType::kF32 && std::is_same_v<T, float>) {
      ptr_ = reinterpret_cast<const T*>(t.data.data());
    } else {
      copy_.resize(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) copy_[static_cast<size_t>(i)] = static_cast<T>(t.at(i));
      ptr_ = copy_.data();
    }
  }
  const T* data() const { return ptr_; }

 private:
  const T* ptr_ = nullptr;
  T scalar_{};
  std::vector<T> copy_;
};

const std::vector<int64_t>& ShapeOf(const Value& v) {
  static const std::vector<int64_t> kScalar;
  return v.kind() == VKind::kTensor ? v.tensor().shape : kScalar;
}

int64_t Numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// NumPy broadcasting of two shapes.
bool BroadcastShapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                     std::vector<int64_t>* out) {
  size_t r = std::max(a.size(), b.size());
  out->assign(r, 1);
  for (size_t i = 0; i < r; ++i) {
    int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da != db && da != 1 && db != 1) return false;
    (*out)[i] = da == 1 ? db : da;
  }
  return true;
}

// Element strides of `shape` seen through the broadcast shape `out`
// (0 along broadcast dimensions).
std::vector<int64_t> BroadcastStrides(const std::vector<int64_t>& shape,
                                      const std::vector<int64_t>& out) {
  std::vector<int64_t> strides(out.size(), 0);
  int64_t s = 1;
  for (size_t k = 0; k < shape.size(); ++k) {
    size_t i = shape.size() - 1 - k;
    size_t o = out.size() - 1 - k;
    strides[o] = shape[i] == 1 ? 0 : s;
    s *= shape[i];
  }
  return strides;
}

// Calls f(offset_a, offset_b, offset_out, inner_count, inner_stride_a,
// inner_stride_b) for each run of the last dimension of `out`.
template <typename F>
void ForEachRow(const std::vector<int64_t>& out, const std::vector<int64_t>& sa,
                const std::vector<int64_t>& sb, F f) {
  size_t r = out.size();
  if (r == 0) {
    f(0, 0, 0, 1, 0, 0);
    return;
  }
  int64_t total = Numel(out);
  if (total == 0) return;
  int64_t inner = out[r - 1];
  std::vector<int64_t> idx(r, 0);
  int64_t oa = 0, ob = 0, oo = 0;
  for (;;) {
    f(oa, ob, oo, inner, sa[r - 1], sb[r - 1]);
    oo += inner;
    // Advance the odometer over dimensions 0 .. r-2.
    size_t d = r - 1;
    for (;;) {
      if (d == 0) return;
      --d;
      ++idx[d];
      oa += sa[d];
      ob += sb[d];
      if (idx[d] < out[d]) break;
      oa -= sa[d] * out[d];
      ob -= sb[d] * out[d];
      idx[d] = 0;
    }
  }
}

template <typename T>
T Op2(SOp op, T x, T y) {
  switch (op) {
    case SOp::kAdd:
      return x + y;
    case SOp::kSub:
      return x - y;
    case SOp::kMul:
      return x * y;
    case SOp::kDiv:
      return x / y;
    case SOp::kPow:
      return std::pow(x, y);
    case SOp::kMin:
      return static_cast<T>(internal::Min(x, y));
    case SOp::kMax:
      return static_cast<T>(internal::Max(x, y));
    default:
      return std::numeric_limits<T>::quiet_NaN();
  }
}

template <typename T>
void Binary(SOp op, const Value& a, const Value& b, const std::vector<int64_t>& out_shape, T* out) {
  Elements<T> ea(a), eb(b);
  const auto& sha = ShapeOf(a);
  const auto& shb = ShapeOf(b);
  int64_t n = Numel(out_shape);
  bool a_full = Numel(sha) == n && sha.size() == out_shape.size();
  bool b_full = Numel(shb) == n && shb.size() == out_shape.size();
  Eigen::Map<ArrayX<T>> o(out, n);
  if (a_full && b_full) {
    Eigen::Map<const ArrayX<T>> x(ea.data(), n), y(eb.data(), n);
    switch (op) {
      case SOp::kAdd:
        o = x + y;
        return;
      case SOp::kSub:
        o = x - y;
        return;
      case SOp::kMul:
        o = x * y;
        return;
      case SOp::kDiv:
        o = x / y;
        return;
      default:
        o = x.binaryExpr(y, [op](T p, T q) { return Op2(op, p, q); });
        return;
    }
  }
  if (a_full && Numel(shb) == 1) {
    Eigen::Map<const ArrayX<T>> x(ea.data(), n);
    T y = eb.data()[0];
    switch (op) {
      case SOp::kAdd:
        o = x + y;
        return;
      case SOp::kSub:
        o = x - y;
        return;
      case SOp::kMul:
        o = x * y;
        return;
      case SOp::kDiv:
        o = x / y;
        return;
      default:
        o = x.unaryExpr([op, y](T p) { return Op2(op, p, y); });
        return;
    }
  }
  if (b_full && Numel(sha) == 1) {
    Eigen::Map<const ArrayX<T>> y(eb.data(), n);
    T x = ea.data()[0];
    switch (op) {
      case SOp::kAdd:
        o = x + y;
        return;
      case SOp::kSub:
        o = x - y;
        return;
      case SOp::kMul:
        o = x * y;
        return;
      case SOp::kDiv:
        o = x / y;
        return;
      default:
        o = y.unaryExpr([op, x](T q) { return Op2(op, x, q); });
        return;
    }
  }
  std::vector<int64_t> sa = BroadcastStrides(sha, out_shape);
  std::vector<int64_t> sb = BroadcastStrides(shb, out_shape);
  const T* pa = ea.data();
  const T* pb = eb.data();
  ForEachRow(out_shape, sa, sb,
             [&](int64_t oa, int64_t ob, int64_t oo, int64_t cnt, int64_t ia, int64_t ib) {
               Eigen::Map<ArrayX<T>> row(out + oo, cnt);
               if (ia == 1 && ib == 1) {
                 Eigen::Map<const ArrayX<T>> x(pa + oa, cnt), y(pb + ob, cnt);
                 row = x.binaryExpr(y, [op](T p, T q) { return Op2(op, p, q); });
               } else if (ia == 1) {
                 Eigen::Map<const ArrayX<T>> x(pa + oa, cnt);
                 T y = pb[ob];
                 row = x.unaryExpr([op, y](T p) { return Op2(op, p, y); });
               } else if (ib == 1) {
                 Eigen::Map<const ArrayX<T>> y(pb + ob, cnt);
                 T x = pa[oa];
                 row = y.unaryExpr([op, x](T q) { return Op2(op, x, q); });
               } else {
                 row.setConstant(Op2(op, pa[oa], pb[ob]));
               }
             });
}

// The element type of an elementwise result: Float32 only when every
// tensor operand is Float32 (scalars adapt to the tensors).
Result<DType> ResultDType(std::string_view name, const Value& a, const Value& b) {
  bool any_f64 = false;
  for (const Value* v : {&a, &b}) {
    if (IsTensor(*v)) {
      DType t = v->tensor().dtype;
      if (!IsFloatDType(t)) {
        return Bad(name, "tensors of " + std::string(DTypeName(t)) + " are not supported");
      }
      any_f64 = any_f64 || t == DType::kF64;
    } else if (!IsReal(*v)) {
      return Bad(name, "no method for " + TypeName(a) + " and " + TypeName(b));
    }
  }
  return any_f64 ? DType::kF64 : DType::kF32;
}

Result<Value> TensorBinary(std::string_view name, SOp op, const Value& a, const Value& b) {
  IRT_ASSIGN_OR_RETURN(DType dt, ResultDType(name, a, b));
  switch (op) {
    case SOp::kAdd:
    case SOp::kSub:
    case SOp::kMul:
    case SOp::kDiv:
    case SOp::kPow:
    case SOp::kMin:
    case SOp::kMax:
      break;
    default:
      return Bad(name, "not defined for tensors");
  }
  std::vector<int64_t> shape;
  if (!BroadcastShapes(ShapeOf(a), ShapeOf(b), &shape)) {
    return Bad(name, "shapes " + ShapeText(ShapeOf(a)) + " and " + ShapeText(ShapeOf(b)) +
                         " do not broadcast");
  }
  IRT_ASSIGN_OR_RETURN(Tensor t, Alloc(name, dt, shape));
  if (dt == DType::kF64) {
    Binary<double>(op, a, b, shape, t.f64());
  } else {
    Binary<float>(op, a, b, shape, t.f32());
  }
  return Value::MakeTensor(std::move(t));
}

template <typename T>
void Unary(SOp op, const T* x, T* out, int64_t n) {
  Eigen::Map<const ArrayX<T>> a(x, n);
  Eigen::Map<ArrayX<T>> o(out, n);
  switch (op) {
    case SOp::kNeg:
      o = -a;
      break;
    case SOp::kSin:
      o = a.sin();
      break;
    case SOp::kCos:
      o = a.cos();
      break;
    case SOp::kTan:
      o = a.tan();
      break;
    case SOp::kExp:
      o = a.exp();
      break;
    case SOp::kLog:
      o = a.log();
      break;
    case SOp::kSqrt:
      o = a.sqrt();
      break;
    case SOp::kTanh:
      o = a.tanh();
      break;
    case SOp::kAbs:
      o = a.abs();
      break;
    case SOp::kSign:
      o = a.unaryExpr([](T v) { return static_cast<T>(internal::Sign(v)); });
      break;
    case SOp::kZero:
      o.setZero();
      break;
    case SOp::kCopy:
      o = a;
      break;
    default:
      o.setConstant(std::numeric_limits<T>::quiet_NaN());
      break;
  }
}

Result<Value> TensorUnary(std::string_view name, SOp op, const Value& a) {
  const Tensor& x = a.tensor();
  if (op == SOp::kCopy) return a;
  if (op == SOp::kZero) {
    IRT_ASSIGN_OR_RETURN(Tensor z, Alloc(name, x.dtype, x.shape));
    return Value::MakeTensor(std::move(z));
  }
  if (!IsFloatDType(x.dtype)) {
    return Bad(name, "tensors of " + std::string(DTypeName(x.dtype)) + " are not supported");
  }
  switch (op) {
    case SOp::kNeg:
    case SOp::kSin:
    case SOp::kCos:
    case SOp::kTan:
    case SOp::kExp:
    case SOp::kLog:
    case SOp::kSqrt:
    case SOp::kTanh:
    case SOp::kAbs:
    case SOp::kSign:
      break;
    default:
      return Bad(name, "not defined for tensors");
  }
  IRT_ASSIGN_OR_RETURN(Tensor t, Alloc(name, x.dtype, x.shape));
  if (x.dtype == DType::kF64) {
    Unary<double>(op, x.f64(), t.f64(), x.numel());
  } else {
    Unary<float>(op, x.f32(), t.f32(), x.numel());
  }
  return Value::MakeTensor(std::move(t));
}

Result<const Tensor*> FloatTensorArg(std::string_view name, const Value& v, const char* what) {
  if (!IsTensor(v)) return Bad(name, std::string(what) + " must be a tensor, not " + TypeName(v));
  const Tensor& t = v.tensor();
  if (!IsFloatDType(t.dtype)) {
    return Bad(name, "tensors of " + std::string(DTypeName(t.dtype)) + " are not supported");
  }
  return &t;
}

Result<Value> Matmul(std::string_view name, const Value& a, const Value& b) {
  IRT_ASSIGN_OR_RETURN(const Tensor* x, FloatTensorArg(name, a, "the first argument"));
  IRT_ASSIGN_OR_RETURN(const Tensor* y, FloatTensorArg(name, b, "the second argument"));
  if (x->shape.size() != 2 || y->shape.size() != 2) {
    return Bad(name, "needs two matrices, got " + ShapeText(x->shape) + " and " +
                         ShapeText(y->shape) + " (reshape vectors to n×1 or 1×n)");
  }
  int64_t m = x->shape[0], k = x->shape[1], k2 = y->shape[0], n = y->shape[1];
  if (k != k2) {
    return Bad(name,
               "inner dimensions " + std::to_string(k) + " and " + std::to_string(k2) + " differ");
  }
  if (x->dtype == DType::kF32 && y->dtype == DType::kF32) {
    IRT_ASSIGN_OR_RETURN(Tensor t, (Alloc(name, DType::kF32, {m, n})));
    Eigen::Map<const MatrixR<float>> A(x->f32(), m, k), B(y->f32(), k, n);
    Eigen::Map<MatrixR<float>> C(t.f32(), m, n);
    C.noalias() = A * B;
    return Value::MakeTensor(std::move(t));
  }
  Elements<double> ea(a), eb(b);
  IRT_ASSIGN_OR_RETURN(Tensor t, (Alloc(name, DType::kF64, {m, n})));
  if (internal::CpuHasAvx2Fma() &&
      internal::GemmF64Avx2(ea.data(), m, k, false, eb.data(), k, n, false, t.f64(), m, n)) {
    return Value::MakeTensor(std::move(t));
  }
  Eigen::Map<const MatrixR<double>> A(ea.data(), m, k), B(eb.data(), k, n);
  Eigen::Map<MatrixR<double>> C(t.f64(), m, n);
  C.noalias() = A * B;
  return Value::MakeTensor(std::move(t));
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
    return Bad(name, "needs a vector or a matrix, got " + ShapeText(x.shape));
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

// Sum of a float tensor over dimension `dim` (0-based), kept with size 1.
template <typename T>
void SumDim(const T* x, const std::vector<int64_t>& shape, size_t dim, T* out) {
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < dim; ++i) outer *= shape[i];
  for (size_t i = dim + 1; i < shape.size(); ++i) inner *= shape[i];
  int64_t nd = shape[dim];
  for (int64_t o = 0; o < outer; ++o) {
    Eigen::Map<const MatrixR<T>> blk(x + o * nd * inner, nd, inner);
    Eigen::Map<Eigen::Matrix<T, 1, Eigen::Dynamic>> row(out + o * inner, inner);
    if (nd == 0) {
      row.setZero();
    } else {
      row = blk.colwise().sum();
    }
  }
}

Result<size_t> DimArg(std::string_view name, const Value& d, size_t rank) {
  int64_t k;
  if (!ToIndex(d, &k)) return Bad(name, "the dimension must be an integer, not " + TypeName(d));
  if (k < 1 || static_cast<uint64_t>(k) > rank) {
    return Bad(name, "dimension " + std::to_string(k) + " out of range for a tensor of " +
                         std::to_string(rank) + " dimensions");
  }
  return static_cast<size_t>(k - 1);
}

Result<Value> Sum(std::string_view name, std::span<const Value> args, bool mean) {
  const Value& a = args[0];
  if (IsReal(a)) {
    if (args.size() == 2) return Bad(name, "a scalar has no dimensions");
    return a;
  }
  IRT_ASSIGN_OR_RETURN(const Tensor* x, FloatTensorArg(name, a, "the argument"));
  bool f32 = x->dtype == DType::kF32;
  int64_t n = x->numel();
  if (args.size() == 1) {
    double s;
    if (f32) {
      s = n == 0 ? 0.0f : Eigen::Map<const ArrayX<float>>(x->f32(), n).sum();
      if (mean) s = static_cast<float>(s) / static_cast<float>(n);
    } else {
      s = n == 0 ? 0.0 : Eigen::Map<const ArrayX<double>>(x->f64(), n).sum();
      if (mean) s /= static_cast<double>(n);
    }
    return MakeFloat(s, f32);
  }
  IRT_ASSIGN_OR_RETURN(size_t dim, DimArg(name, args[1], x->shape.size()));
  std::vector<int64_t> shape = x->shape;
  shape[dim] = 1;
  IRT_ASSIGN_OR_RETURN(Tensor t, Alloc(name, x->dtype, shape));
  int64_t m = t.numel();
  if (f32) {
    SumDim(x->f32(), x->shape, dim, t.f32());
    if (mean) Eigen::Map<ArrayX<float>>(t.f32(), m) /= static_cast<float>(x->shape[dim]);
  } else {
    SumDim(x->f64(), x->shape, dim, t.f64());
    if (mean) Eigen::Map<ArrayX<double>>(t.f64(), m) /= static_cast<double>(x->shape[dim]);
  }
  return Value::MakeTensor(std::move(t));
}

// Reduces `x` to the shape of `like` by summing over broadcast dimensions:
// the adjoint of broadcasting.
template <typename T>
void SumToInto(const T* x, const std::vector<int64_t>& xs, const std::vector<int64_t>& ts, T* out) {
  int64_t n = Numel(xs), m = Numel(ts);
  Eigen::Map<ArrayX<T>> o(out, m);
  o.setZero();
  if (n == 0) return;
  // Common case: only leading dimensions are summed away.
  size_t lead = xs.size() - ts.size();
  bool leading_only = true;
  for (size_t i = 0; i < ts.size(); ++i) leading_only = leading_only && ts[i] == xs[lead + i];
  if (leading_only) {
    Eigen::Map<const MatrixR<T>> blk(x, n / std::max<int64_t>(m, 1), m);
    if (m > 0) o = blk.colwise().sum().transpose().array();
    return;
  }
  std::vector<int64_t> strides = BroadcastStrides(ts, xs);
  std::vector<int64_t> ones(xs.size(), 0);
  ForEachRow(xs, strides, ones,
             [&](int64_t ot, int64_t, int64_t ox, int64_t cnt, int64_t st, int64_t) {
               if (st == 0) {
                 out[ot] += Eigen::Map<const ArrayX<T>>(x + ox, cnt).sum();
               } else {
                 Eigen::Map<ArrayX<T>>(out + ot, cnt) += Eigen::Map<const ArrayX<T>>(x + ox, cnt);
               }
             });
}

bool Unbroadcastable(const std::vector<int64_t>& from, const std::vector<int64_t>& to) {
  if (to.size() > from.size()) return false;
  size_t lead = from.size() - to.size();
  for (size_t i = 0; i < to.size(); ++i) {
    if (to[i] != from[lead + i] && to[i] != 1) return false;
  }
  return true;
}

Result<Value> SumTo(std::string_view name, const Value& a, const Value& like) {
  if (!IsTensor(like)) {
    if (!IsReal(like)) return Bad(name, "cannot reduce to " + TypeName(like));
    bool f32 = like.kind() == VKind::kF32;
    if (IsReal(a)) return f32 ? Value::F32(static_cast<float>(a.to_double())) : a;
    IRT_ASSIGN_OR_RETURN(const Tensor* x, FloatTensorArg(name, a, "the argument"));
    int64_t n = x->numel();
    double s = x->dtype == DType::kF64
                   ? (n ? Eigen::Map<const ArrayX<double>>(x->f64(), n).sum() : 0.0)
                   : (n ? Eigen::Map<const ArrayX<float>>(x->f32(), n).sum() : 0.0f);
    return MakeFloat(s, f32 || (like.kind() != VKind::kF64 && x->dtype == DType::kF32));
  }
  const Tensor& lt = like.tensor();
  if (IsReal(a)) return Bad(name, "cannot reduce a scalar to " + ShapeText(lt.shape));
  IRT_ASSIGN_OR_RETURN(const Tensor* x, FloatTensorArg(name, a, "the argument"));
  if (x->shape == lt.shape) return a;
  if (!Unbroadcastable(x->shape, lt.shape)) {
    return Bad(name, "cannot reduce " + ShapeText(x->shape) + " to " + ShapeText(lt.shape));
  }
  IRT_ASSIGN_OR_RETURN(Tensor t, Alloc(name, x->dtype, lt.shape));
  if (x->dtype == DType::kF64) {
    SumToInto(x->f64(), x->shape, lt.shape, t.f64());
  } else {
    SumToInto(x->f32(), x->shape, lt.shape, t.f32());
  }
  return Value::MakeTensor(std::move(t));
}

Result<Value> BroadcastTo(std::string_view name, const Value& a, const Value& like) {
  if (!IsTensor(like)) {
    if (IsReal(a) && IsReal(like)) return a;
    return Bad(name, "cannot broadcast " + TypeName(a) + " to " + TypeName(like));
  }
  const Tensor& lt = like.tensor();
  const auto& xs = ShapeOf(a);
  std::vector<int64_t> shape;
  if (!BroadcastShapes(xs, lt.shape, &shape) || shape != lt.shape) {
    return Bad(name, "cannot broadcast " + ShapeText(xs) + " to " + ShapeText(lt.shape));
  }
  DType dt = IsTensor(a) ? a.tensor().dtype : (a.kind() == VKind::kF32 ? DType::kF32 : DType::kF64);
  if (!IsReal(a) && !IsTensor(a)) return Bad(name, "cannot broadcast " + TypeName(a));
  if (!IsFloatDType(dt)) {
    return Bad(name, "tensors of " + std::string(DTypeName(dt)) + " are not supported");
  }
  if (IsTensor(a) && xs == shape) return a;
  IRT_ASSIGN_OR_RETURN(Tensor t, Alloc(name, dt, shape));
  Value zero = dt == DType::kF64 ? Value::F64(0) : Value::F32(0);
  if (dt == DType::kF64) {
    Binary<double>(SOp::kAdd, a, zero, shape, t.f64());
  } else {
    Binary<float>(SOp::kAdd, a, zero, shape, t.f32());
  }
  return Value::MakeTensor(std::move(t));
}

Result<std::vector<int64_t>> DimsArgs(std::string_view name, std::span<const Value> args) {
  std::vector<int64_t> dims;
  if (args.size() == 1 && args[0].kind() == VKind::kTuple) {
    for (const Value& v : args[0].tuple()) {
      int64_t d;
      if (!ToIndex(v, &d) || d < 0) return Bad(name, "dimensions must be integers >= 0");
      dims.push_back(d);
    }
  } else {
    for (const Value& v : args) {
      int64_t d;
      if (!ToIndex(v, &d) || d < 0) return Bad(name, "dimensions must be integers >= 0");
      dims.push_back(d);
    }
  }
  if (Result<int64_t> n = CheckedNumel(dims); !n.ok()) return n.error().Prefixed(std::string(name));
  return dims;
}

Result<Value> Reshape(std::string_view name, std::span<const Value> args) {
  const Value& a = args[0];
  IRT_ASSIGN_OR_RETURN(std::vector<int64_t> dims, DimsArgs(name, args.subspan(1)));
  if (IsReal(a) && dims.empty()) return a;  // a scalar keeps its (empty) shape
  if (!IsTensor(a)) return Bad(name, "needs a tensor, not " + TypeName(a));
  const Tensor& x = a.tensor();
  if (Numel(dims) != x.numel()) {
    return Bad(name, "cannot reshape " + ShapeText(x.shape) + " to " + ShapeText(dims));
  }
  Tensor t = x;
  t.shape = std::move(dims);
  return Value::MakeTensor(std::move(t));
}

Result<Value> Fill(std::string_view name, std::span<const Value> args, int kind) {
  // kind 0: fill(v, dims...), 1: zeros(dims...), 2: ones(dims...)
  Value v = kind == 0 ? args[0] : Value::F64(kind == 2 ? 1.0 : 0.0);
  if (!IsReal(v)) return Bad(name, "cannot fill with " + TypeName(v));
  IRT_ASSIGN_OR_RETURN(std::vector<int64_t> dims,
                       DimsArgs(name, kind == 0 ? args.subspan(1) : args));
  DType dt = v.kind() == VKind::kF32    ? DType::kF32
             : v.kind() == VKind::kF64  ? DType::kF64
             : v.kind() == VKind::kBool ? DType::kBool
                                        : DType::kI64;
  IRT_ASSIGN_OR_RETURN(Tensor t, Alloc(name, dt, dims));
  int64_t n = t.numel();
  switch (dt) {
    case DType::kF64:
      std::fill_n(t.f64(), n, v.as_f64());
      break;
    case DType::kF32:
      std::fill_n(t.f32(), n, v.as_f32());
      break;
    case DType::kI64:
      std::fill_n(reinterpret_cast<int64_t*>(t.data.data()), n, v.as_i64());
      break;
    default:
      std::fill_n(t.data.data(), n, v.as_bool() ? 1 : 0);
      break;
  }
  return Value::MakeTensor(std::move(t));
}

Result<Value> Size(std::string_view name, std::span<const Value> args) {
  const Value& a = args[0];
  if (!IsTensor(a) && !IsReal(a)) return Bad(name, "no method for " + TypeName(a));
  const auto& shape = ShapeOf(a);
  if (args.size() == 1) {
    std::vector<Value> items;
    for (int64_t d : shape) items.push_back(Value::I64(d));
    return Value::MakeTuple(std::move(items));
  }
  int64_t k;
  if (!ToIndex(args[1], &k) || k < 1) return Bad(name, "the dimension must be an integer >= 1");
  return Value::I64(static_cast<uint64_t>(k) <= shape.size() ? shape[k - 1] : 1);
}

// Julia's linear index (column-major, 0-based here) to a row-major offset.
int64_t LinearToOffset(const std::vector<int64_t>& shape, int64_t lin) {
  if (shape.size() <= 1) return lin;
  std::vector<int64_t> sub(shape.size());
  for (size_t k = 0; k < shape.size(); ++k) {
    sub[k] = lin % shape[k];
    lin /= shape[k];
  }
  int64_t off = 0;
  for (size_t k = 0; k < shape.size(); ++k) off = off * shape[k] + sub[k];
  return off;
}

// Offset of element (i...) (1-based) in a tensor; one index is Julia's
// linear index (column-major), as the IR adapter's getindex takes it.
Result<int64_t> Offset(std::string_view name, const std::vector<int64_t>& shape,
                       std::span<const Value> idx) {
  int64_t n = Numel(shape);
  if (idx.size() == 1) {
    int64_t i;
    if (!ToIndex(idx[0], &i))
      return Bad(name, "an index must be an integer, not " + TypeName(idx[0]));
    if (i < 1 || i > n) {
      return Bad(name, "index " + std::to_string(i) + " out of bounds for " + std::to_string(n) +
                           " elements");
    }
    return LinearToOffset(shape, i - 1);
  }
  if (idx.size() != shape.size()) {
    return Bad(name, std::to_string(idx.size()) + " indices for a tensor of " +
                         std::to_string(shape.size()) + " dimensions");
  }
  int64_t off = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t i;
    if (!ToIndex(idx[d], &i))
      return Bad(name, "an index must be an integer, not " + TypeName(idx[d]));
    if (i < 1 || i > shape[d]) {
      return Bad(name, "index " + std::to_string(i) + " out of bounds for dimension " +
                           std::to_string(d + 1) + " of size " + std::to_string(shape[d]));
    }
    off = off * shape[d] + (i - 1);
  }
  return off;
}

Result<Value> GetIndex(std::string_view name, std::span<const Value> args) {
  const Value& a = args[0];
  if (a.kind() == VKind::kTuple) {
    const auto& items = a.tuple();
    int64_t i;
    if (args.size() != 2 || !ToIndex(args[1], &i))
      return Bad(name, "a tuple takes one integer index");
    if (i < 1 || static_cast<uint64_t>(i) > items.size()) {
      return Bad(name, "index " + std::to_string(i) + " out of bounds for a tuple of " +
                           std::to_string(items.size()));
    }
    return items[static_cast<size_t>(i - 1)];
  }
  if (!IsTensor(a)) return Bad(name, "cannot index " + TypeName(a));
  const Tensor& x = a.tensor();
  IRT_ASSIGN_OR_RETURN(int64_t off, Offset(name, x.shape, args.subspan(1)));
  switch (x.dtype) {
    case DType::kF64:
      return Value::F64(x.f64()[off]);
    case DType::kF32:
      return Value::F32(x.f32()[off]);
    case DType::kBool:
      return Value::Bool(x.data[static_cast<size_t>(off)] != 0);
    default:
      return Value::I64(static_cast<int64_t>(x.at(off)));
  }
}

Result<Value> AddIndex(std::string_view name, std::span<const Value> args) {
  IRT_ASSIGN_OR_RETURN(const Tensor* x, FloatTensorArg(name, args[0], "the first argument"));
  const Value& v = args[1];
  if (!IsReal(v)) return Bad(name, "cannot add " + TypeName(v) + " to an element");
  IRT_ASSIGN_OR_RETURN(int64_t off, Offset(name, x->shape, args.subspan(2)));
  Tensor t = *x;
  if (t.dtype == DType::kF64) {
    t.f64()[off] += v.to_double();
  } else {
    t.f32()[off] += static_cast<float>(v.to_double());
  }
  return Value::MakeTensor(std::move(t));
}

// div (truncated) and rem (sign of the dividend), as the IR adapter computes them.
Result<Value> DivRem(std::string_view name, std::span<const Value> args) {
  const Value& a = args[0];
  const Value& b = args[1];
  bool is_rem = name == "rem";
  int ra = Rank(a.kind()), rb = Rank(b.kind());
  if (ra < 0 || rb < 0) return Bad(name, "no method for " + TypeName(a) + " and " + TypeName(b));
  int r = std::max(ra, rb);
  if (r <= 1) {
    int64_t x = AsInt(a), y = AsInt(b);
    if (y == 0 || (!is_rem && y == -1 && x == std::numeric_limits<int64_t>::min())) {
      return Bad(name, "integer division error");
    }
    int64_t q =
        is_rem ? (y == -1 ? 0 : x % y) : (y == -1 ? Wrap(0 - static_cast<uint64_t>(x)) : x / y);
    return r == 0 ? Value::Bool(q != 0) : Value::I64(q);
  }
  double x = a.to_double(), y = b.to_double();
  double q;
  if (is_rem) {
    q = std::fmod(x, y);
  } else if (y == 0 || !std::isfinite(x) || !std::isfinite(y)) {
    q = std::trunc(x / y);
  } else {
    q = std::nearbyint((x - std::fmod(x, y)) / y);
  }
  return MakeFloat(q, r == 2);
}

// ---------------------------------------------------------------- table

using KernelFn = Result<Value> (*)(std::string_view, std::span<const Value>);

struct Kernel {
  size_t min_arity;
  size_t max_arity;  // SIZE_MAX: variadic
  KernelFn fn;
};

constexpr size_t kAny = static_cast<size_t>(-1);

Result<Value> Elementwise(std::string_view name, std::span<const Value> args) {
  auto op = internal::ScalarOpFor(name, args.size());
  if (!op) return NotFound("no primitive " + std::string(name));
  if (args.size() == 1) {
    if (IsTensor(args[0])) return TensorUnary(name, *op, args[0]);
    return ScalarUnary(name, *op, args[0]);
  }
  if (IsTensor(args[0]) || IsTensor(args[1])) return TensorBinary(name, *op, args[0], args[1]);
  return ScalarBinary(name, *op, args[0], args[1]);
}

Result<Value> IfElse(std::string_view name, std::span<const Value> args) {
  if (!IsReal(args[0])) return Bad(name, "the condition must be a Bool, not " + TypeName(args[0]));
  return args[0].to_double() != 0 ? args[1] : args[2];
}

const std::map<std::string, Kernel, std::less<>>& Table() {
  static const std::map<std::string, Kernel, std::less<>> table = {
      {"+", {2, 2, Elementwise}},
      {"-", {1, 2, Elementwise}},
      {"*", {2, 2, Elementwise}},
      {"/", {2, 2, Elementwise}},
      {"^", {2, 2, Elementwise}},
      {"min", {2, 2, Elementwise}},
      {"max", {2, 2, Elementwise}},
      {"<", {2, 2, Elementwise}},
      {"<=", {2, 2, Elementwise}},
      {">", {2, 2, Elementwise}},
      {">=", {2, 2, Elementwise}},
      {"==", {2, 2, Elementwise}},
      {"!=", {2, 2, Elementwise}},
      {"!", {1, 1, Elementwise}},
      {"sin", {1, 1, Elementwise}},
      {"cos", {1, 1, Elementwise}},
      {"tan", {1, 1, Elementwise}},
      {"exp", {1, 1, Elementwise}},
      {"log", {1, 1, Elementwise}},
      {"sqrt", {1, 1, Elementwise}},
      {"tanh", {1, 1, Elementwise}},
      {"abs", {1, 1, Elementwise}},
      {"sign", {1, 1, Elementwise}},
      {"zero", {1, 1, Elementwise}},
      {"one", {1, 1, Elementwise}},
      {"identity", {1, 1, Elementwise}},
      {"ifelse", {3, 3, IfElse}},
      {"div", {2, 2, DivRem}},
      {"rem", {2, 2, DivRem}},
      {"matmul",
       {2, 2, [](std::string_view n, std::span<const Value> a) { return Matmul(n, a[0], a[1]); }}},
      {"transpose",
       {1, 1, [](std::string_view n, std::span<const Value> a) { return Transpose(n, a[0]); }}},
      {"sum",
       {1, 2, [](std::string_view n, std::span<const Value> a) { return Sum(n, a, false); }}},
      {"mean",
       {1, 2, [](std::string_view n, std::span<const Value> a) { return Sum(n, a, true); }}},
      {"sum_to",
       {2, 2, [](std::string_view n, std::span<const Value> a) { return SumTo(n, a[0], a[1]); }}},
      {"broadcast_to",
       {2, 2,
        [](std::string_view n, std::span<const Value> a) { return BroadcastTo(n, a[0], a[1]); }}},
      {"reshape", {2, kAny, Reshape}},
      {"fill",
       {1, kAny, [](std::string_view n, std::span<const Value> a) { return Fill(n, a, 0); }}},
      {"zeros",
       {0, kAny, [](std::string_view n, std::span<const Value> a) { return Fill(n, a, 1); }}},
      {"ones",
       {0, kAny, [](std::string_view n, std::span<const Value> a) { return Fill(n, a, 2); }}},
      {"size", {1, 2, Size}},
      {"length",
       {1, 1,
        [](std::string_view n, std::span<const Value> a) -> Result<Value> {
          if (IsReal(a[0])) return Value::I64(1);
          if (!IsTensor(a[0])) return Bad(n, "no method for " + TypeName(a[0]));
          return Value::I64(a[0].tensor().numel());
        }}},
      {"getindex", {2, kAny, GetIndex}},
      {"addindex", {3, kAny, AddIndex}},
      {"tuple",
       {0, kAny,
        [](std::string_view, std::span<const Value> a) -> Result<Value> {
          return Value::MakeTuple(std::vector<Value>(a.begin(), a.end()));
        }}},
  };
  return table;
}

}  // namespace

bool HasKernel(std::string_view op, size_t arity) {
  const auto& t = Table();
  auto it = t.find(op);
  return it != t.end() && arity >= it->second.min_arity && arity <= it->second.max_arity;
}

std::vector<std::string> KernelNames() {
  std::vector<std::string> out;
  for (const auto& [name, k] : Table()) out.push_back(name);
  return out;
}

Result<Value> EvalPrimitive(std::string_view op, std::span<const Value> args) {
  const auto& t = Table();
  auto it = t.find(op);
  if (it == t.end()) return NotFound("no primitive '" + std::string(op) + "'");
  if (args.size() < it->second.min_arity || args.size() > it->second.max_arity) {
    return NotFound("no primitive '" + std::string(op) + "' with " + std::to_string(args.size()) +
                    " arguments");
  }
  return it->second.fn(op, args);
}

namespace internal {

namespace {

template <typename T>
void Gemm(const T* a, int64_t ar, int64_t ac, bool ta, const T* b, int64_t br, int64_t bc, bool tb,
          T* c, int64_t m, int64_t n) {
  if constexpr (std::is_same_v<T, double>) {
    if (CpuHasAvx2Fma() && GemmF64Avx2(a, ar, ac, ta, b, br, bc, tb, c, m, n)) return;
  }
  Eigen::Map<const MatrixR<T>> A(a, ar, ac), B(b, br, bc);
  Eigen::Map<MatrixR<T>> C(c, m, n);
  if (!ta && !tb) {
    C.noalias() = A * B;
  } else if (ta && !tb) {
    C.noalias() = A.transpose() * B;
  } else if (!ta && tb) {
    C.noalias() = A * B.transpose();
  } else {
    C.noalias() = A.transpose() * B.transpose();
  }
}

}  // namespace

Result<Value> MatmulTransposed(const Value& a, bool ta, const Value& b, bool tb) {
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
    return Bad("matmul",
               "inner dimensions " + std::to_string(k) + " and " + std::to_string(k2) + " differ");
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

}  // namespace internal

}  // namespace irt
