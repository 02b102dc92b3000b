// Tensor evaluation of the standard operations: dense and row-major,
// computed with Eigen. Elementwise operations on floating-point tensors and
// matrix products are Eigen expressions; broadcasting and reductions walk
// the shapes with explicit strides around Eigen inner loops; integer and
// Bool tensors, comparisons and ifelse go element by element through the
// operation's scalar evaluation (scalar.cc), so both agree.

#include <Eigen/Core>
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <optional>

#include "kernels_internal.h"
#include "ops_internal.h"

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

}  // namespace irt

namespace irt::ops {

namespace {

template <typename T>
using ArrayX = Eigen::Array<T, Eigen::Dynamic, 1>;
template <typename T>
using MatrixR = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// An argument error: "ArgumentError: op: what".
Status Bad(std::string_view op, const std::string& what) { return ArgError(op, what); }

Result<Tensor> Alloc(std::string_view op, DType dtype, std::vector<int64_t> shape) {
  Result<Tensor> t = Tensor::Make(dtype, std::move(shape));
  if (t.ok()) return t;
  if (t.error().code() == Code::kIoError)
    return RuntimeError("OutOfMemoryError: " + t.error().message());
  return ShapeError(op, t.error().message());
}

Value MakeFloat(double d, bool f32) {
  return f32 ? Value::F32(static_cast<float>(d)) : Value::F64(d);
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
  return internal::Apply2(op, x, y);
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
    case SOp::kZero:
      o.setZero();
      break;
    case SOp::kOne:
      o.setOnes();
      break;
    case SOp::kCopy:
      o = a;
      break;
    default:
      o = a.unaryExpr([op](T v) { return internal::Apply1(op, v); });
      break;
  }
}

// Whether the floating-point kernels compute `op` on these operands: one or
// two operands, every tensor of a floating-point type, every scalar a
// number, and an operation with a floating-point result.
bool FloatPath(SOp op, OpArgs a) {
  if (!internal::HasFloatKernel(op, a.size())) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (IsTensor(a[i]) ? !IsFloatDType(a[i].tensor().dtype) : !IsReal(a[i])) return false;
  }
  return true;
}

// Float32 only when every tensor operand is Float32 (scalars adapt to the
// tensors).
DType FloatResultDType(OpArgs a) {
  for (size_t i = 0; i < a.size(); ++i) {
    if (IsTensor(a[i]) && a[i].tensor().dtype == DType::kF64) return DType::kF64;
  }
  return DType::kF32;
}

Result<Value> FloatElementwise(const OpDef& op, OpArgs args) {
  SOp sop = SOpOf(op);
  DType dt = FloatResultDType(args);
  if (args.size() == 1) {
    const Tensor& x = args[0].tensor();
    IRT_ASSIGN_OR_RETURN(Tensor t, Alloc(op.name, x.dtype, x.shape));
    if (x.dtype == DType::kF64) {
      Unary<double>(sop, x.f64(), t.f64(), x.numel());
    } else {
      Unary<float>(sop, x.f32(), t.f32(), x.numel());
    }
    return Value::MakeTensor(std::move(t));
  }
  const Value& a = args[0];
  const Value& b = args[1];
  std::vector<int64_t> shape;
  if (!BroadcastShapes(ShapeOf(a), ShapeOf(b), &shape)) {
    return ShapeError(op.name, "shapes " + ShapeText(ShapeOf(a)) + " and " + ShapeText(ShapeOf(b)) +
                                   " do not broadcast");
  }
  IRT_ASSIGN_OR_RETURN(Tensor t, Alloc(op.name, dt, shape));
  if (dt == DType::kF64) {
    Binary<double>(sop, a, b, shape, t.f64());
  } else {
    Binary<float>(sop, a, b, shape, t.f32());
  }
  return Value::MakeTensor(std::move(t));
}

// Element `off` of a tensor as a scalar (Int32 elements become Int64).
Value ElementAt(const Tensor& t, int64_t off) {
  switch (t.dtype) {
    case DType::kF64:
      return F64(t.f64()[off]);
    case DType::kF32:
      return F32(t.f32()[off]);
    case DType::kBool:
      return Value::Bool(t.data[static_cast<size_t>(off)] != 0);
    case DType::kI64: {
      int64_t x;
      std::memcpy(&x, t.data.data() + off * 8, 8);
      return Value::I64(x);
    }
    case DType::kI32: {
      int32_t x;
      std::memcpy(&x, t.data.data() + off * 4, 4);
      return Value::I64(x);
    }
  }
  return Value();
}

// Stores a real scalar as element `off`, converted to the tensor's type.
void StoreElement(Tensor* t, int64_t off, const Value& v) {
  switch (t->dtype) {
    case DType::kF64:
      t->f64()[off] = ToF64(v);
      break;
    case DType::kF32:
      t->f32()[off] = ToF32(v);
      break;
    case DType::kBool:
      t->data[static_cast<size_t>(off)] = ToF64(v) != 0 ? 1 : 0;
      break;
    case DType::kI64: {
      // (Callers pick the element type so that a float never lands here;
      // should one, it converts without undefined behaviour.)
      double d = ToF64(v);
      int64_t x = v.kind() == VKind::kF64 || v.kind() == VKind::kF32
                      ? (std::fabs(d) < 9.2e18 ? static_cast<int64_t>(d) : 0)
                      : AsInt(v);
      std::memcpy(t->data.data() + off * 8, &x, 8);
      break;
    }
    case DType::kI32: {
      int32_t x = static_cast<int32_t>(AsInt(v));
      std::memcpy(t->data.data() + off * 4, &x, 4);
      break;
    }
  }
}

std::optional<DType> DTypeOfScalar(VKind k) {
  switch (k) {
    case VKind::kF64:
      return DType::kF64;
    case VKind::kF32:
      return DType::kF32;
    case VKind::kI64:
      return DType::kI64;
    case VKind::kBool:
      return DType::kBool;
    default:
      return std::nullopt;
  }
}

// Any elementwise operation, element by element through its scalar
// evaluation: integer and Bool tensors, comparisons, ifelse. The result's
// element type is that of the scalar result on elements equal to one.
Result<Value> GenericElementwise(const OpDef& op, OpArgs args) {
  size_t n = args.size();
  if (n > 3) return NoMethod(op.name, args);
  std::vector<int64_t> shape;
  for (size_t i = 0; i < n; ++i) {
    if (!IsTensor(args[i])) {
      if (!IsReal(args[i])) return NoMethod(op.name, args);
      continue;
    }
    std::vector<int64_t> next;
    if (!BroadcastShapes(shape, args[i].tensor().shape, &next)) {
      std::string shapes;
      for (size_t j = 0; j < n; ++j) shapes += (j ? " and " : "") + ShapeText(ShapeOf(args[j]));
      return ShapeError(op.name, "shapes " + shapes + " do not broadcast");
    }
    shape = std::move(next);
  }
  Value elems[3];
  const Value* ptrs[3] = {&elems[0], &elems[1], &elems[2]};
  for (size_t i = 0; i < n; ++i) {
    if (!IsTensor(args[i])) {
      elems[i] = args[i];
      continue;
    }
    Tensor one = Tensor::Zeros(args[i].tensor().dtype, {1});
    StoreElement(&one, 0, Value::I64(1));
    elems[i] = ElementAt(one, 0);
  }
  Result<Value> sample = op.scalar(op, OpArgs(ptrs, n));
  if (!sample.ok() && sample.error().message().starts_with("MethodError")) {
    return NoMethod(op.name, args);
  }
  std::optional<DType> dt = sample.ok() ? DTypeOfScalar(sample->kind()) : DType::kF64;
  if (!dt) return NoMethod(op.name, args);
  if (SOpOf(op) == SOp::kIfElse && n == 3) {
    // The element type holds both branches: ifelse(c, Int64[...], 0.5) is Float64.
    auto rank = [](DType d) {
      return d == DType::kBool ? 0 : d == DType::kI64 ? 1 : d == DType::kF32 ? 2 : 3;
    };
    for (size_t i : {size_t{1}, size_t{2}}) {
      std::optional<DType> other = DTypeOfScalar(elems[i].kind());
      if (!other) return NoMethod(op.name, args);
      if (rank(*other) > rank(*dt)) dt = other;
    }
  }
  IRT_ASSIGN_OR_RETURN(Tensor t, Alloc(op.name, *dt, shape));
  int64_t total = t.numel();
  size_t r = shape.size();
  std::vector<std::vector<int64_t>> strides(n);
  for (size_t i = 0; i < n; ++i) {
    if (IsTensor(args[i])) strides[i] = BroadcastStrides(args[i].tensor().shape, shape);
  }
  std::vector<int64_t> idx(r, 0);
  int64_t offs[3] = {0, 0, 0};
  for (int64_t k = 0; k < total; ++k) {
    for (size_t i = 0; i < n; ++i) {
      if (IsTensor(args[i])) elems[i] = ElementAt(args[i].tensor(), offs[i]);
    }
    Result<Value> v = op.scalar(op, OpArgs(ptrs, n));
    if (!v.ok()) return v.error();
    StoreElement(&t, k, *v);
    // Advance the odometer.
    for (size_t d = r; d-- > 0;) {
      ++idx[d];
      for (size_t i = 0; i < n; ++i) {
        if (IsTensor(args[i])) offs[i] += strides[i][d];
      }
      if (idx[d] < shape[d]) break;
      for (size_t i = 0; i < n; ++i) {
        if (IsTensor(args[i])) offs[i] -= strides[i][d] * shape[d];
      }
      idx[d] = 0;
    }
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
    return ShapeError(name, "needs two matrices, got " + ShapeText(x->shape) + " and " +
                                ShapeText(y->shape) + " (reshape vectors to n×1 or 1×n)");
  }
  int64_t m = x->shape[0], k = x->shape[1], k2 = y->shape[0], n = y->shape[1];
  if (k != k2) {
    return ShapeError(
        name, "inner dimensions " + std::to_string(k) + " and " + std::to_string(k2) + " differ");
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
    return ShapeError(name, "dimension " + std::to_string(k) + " out of range for a tensor of " +
                                std::to_string(rank) + " dimensions");
  }
  return static_cast<size_t>(k - 1);
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
    if (!IsReal(like)) return ShapeError(name, "cannot reduce to " + TypeName(like));
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
  if (IsReal(a)) return ShapeError(name, "cannot reduce a scalar to " + ShapeText(lt.shape));
  IRT_ASSIGN_OR_RETURN(const Tensor* x, FloatTensorArg(name, a, "the argument"));
  if (x->shape == lt.shape) return a;
  if (!Unbroadcastable(x->shape, lt.shape)) {
    return ShapeError(name, "cannot reduce " + ShapeText(x->shape) + " to " + ShapeText(lt.shape));
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
    return ShapeError(name, "cannot broadcast " + ShapeText(xs) + " to " + ShapeText(lt.shape));
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

Result<std::vector<int64_t>> DimsArgs(std::string_view name, OpArgs args) {
  std::vector<int64_t> dims;
  if (args.size() == 1 && args[0].kind() == VKind::kTuple) {
    for (const Value& v : args[0].tuple()) {
      int64_t d;
      if (!ToIndex(v, &d) || d < 0) return Bad(name, "dimensions must be integers >= 0");
      dims.push_back(d);
    }
  } else {
    for (size_t i = 0; i < args.size(); ++i) {
      const Value& v = args[i];
      int64_t d;
      if (!ToIndex(v, &d) || d < 0) return Bad(name, "dimensions must be integers >= 0");
      dims.push_back(d);
    }
  }
  if (Result<int64_t> n = CheckedNumel(dims); !n.ok()) return ShapeError(name, n.error().message());
  return dims;
}

Result<Value> Reshape(std::string_view name, OpArgs args) {
  const Value& a = args[0];
  IRT_ASSIGN_OR_RETURN(std::vector<int64_t> dims, DimsArgs(name, args.from(1)));
  if (IsReal(a) && dims.empty()) return a;  // a scalar keeps its (empty) shape
  if (!IsTensor(a)) return Bad(name, "needs a tensor, not " + TypeName(a));
  const Tensor& x = a.tensor();
  if (Numel(dims) != x.numel()) {
    return ShapeError(name, "cannot reshape " + ShapeText(x.shape) + " to " + ShapeText(dims));
  }
  Tensor t = x;
  t.shape = std::move(dims);
  return Value::MakeTensor(std::move(t));
}

Result<Value> Fill(std::string_view name, OpArgs args, int kind) {
  // kind 0: fill(v, dims...), 1: zeros(dims...), 2: ones(dims...)
  Value v = kind == 0 ? args[0] : Value::F64(kind == 2 ? 1.0 : 0.0);
  if (!IsReal(v)) return Bad(name, "cannot fill with " + TypeName(v));
  IRT_ASSIGN_OR_RETURN(std::vector<int64_t> dims, DimsArgs(name, kind == 0 ? args.from(1) : args));
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

Result<Value> Size(std::string_view name, OpArgs args) {
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

// Offset of element (i...) (1-based) in a tensor; one index is a linear
// index in row-major order (the storage order, the order reshape keeps).
Result<int64_t> Offset(std::string_view name, const std::vector<int64_t>& shape, OpArgs idx) {
  int64_t n = Numel(shape);
  if (idx.size() == 1) {
    int64_t i;
    if (!ToIndex(idx[0], &i))
      return Bad(name, "an index must be an integer, not " + TypeName(idx[0]));
    if (i < 1 || i > n) {
      return BoundsError(name, "index " + std::to_string(i) + " out of bounds for " +
                                   std::to_string(n) + " elements");
    }
    return i - 1;
  }
  if (idx.size() != shape.size()) {
    return BoundsError(name, std::to_string(idx.size()) + " indices for a tensor of " +
                                 std::to_string(shape.size()) + " dimensions");
  }
  int64_t off = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t i;
    if (!ToIndex(idx[d], &i))
      return Bad(name, "an index must be an integer, not " + TypeName(idx[d]));
    if (i < 1 || i > shape[d]) {
      return BoundsError(name, "index " + std::to_string(i) + " out of bounds for dimension " +
                                   std::to_string(d + 1) + " of size " + std::to_string(shape[d]));
    }
    off = off * shape[d] + (i - 1);
  }
  return off;
}

Result<Value> GetIndex(std::string_view name, OpArgs args) {
  const Value& a = args[0];
  if (a.kind() == VKind::kTuple) {
    const auto& items = a.tuple();
    int64_t i;
    if (args.size() != 2 || !ToIndex(args[1], &i))
      return Bad(name, "a tuple takes one integer index");
    if (i < 1 || static_cast<uint64_t>(i) > items.size()) {
      return BoundsError(name, "index " + std::to_string(i) + " out of bounds for a tuple of " +
                                   std::to_string(items.size()));
    }
    return items[static_cast<size_t>(i - 1)];
  }
  if (!IsTensor(a)) return NoMethod(name, args);
  const Tensor& x = a.tensor();
  IRT_ASSIGN_OR_RETURN(int64_t off, Offset(name, x.shape, args.from(1)));
  return ElementAt(x, off);
}

Result<Value> AddIndex(std::string_view name, OpArgs args) {
  IRT_ASSIGN_OR_RETURN(const Tensor* x, FloatTensorArg(name, args[0], "the first argument"));
  const Value& v = args[1];
  if (!IsReal(v)) return Bad(name, "cannot add " + TypeName(v) + " to an element");
  IRT_ASSIGN_OR_RETURN(int64_t off, Offset(name, x->shape, args.from(2)));
  Tensor t = *x;
  if (t.dtype == DType::kF64) {
    t.f64()[off] += v.to_double();
  } else {
    t.f32()[off] += static_cast<float>(v.to_double());
  }
  return Value::MakeTensor(std::move(t));
}

// maximum and minimum of float elements: NaN wins, as Julia's.
template <typename T>
T Extreme(const T* x, int64_t n, int64_t stride, bool is_max) {
  T m = x[0];
  for (int64_t i = 1; i < n; ++i) {
    T v = x[i * stride];
    m = is_max ? internal::Max(m, v) : internal::Min(m, v);
  }
  return m;
}

// sum, mean, maximum, minimum of a tensor, or over one dimension (kept with
// size 1). Integer and Bool tensors sum to Int64 (wrapping) and average to
// Float64; maximum and minimum keep the element type and refuse an empty
// collection, as Julia's do.
Result<Value> Reduction(const OpDef& op, OpArgs args) {
  std::string_view name = op.name;
  bool mean = name == "mean";
  bool extreme = name == "maximum" || name == "minimum";
  bool is_max = name == "maximum";
  const Value& a = args[0];
  if (IsReal(a)) {
    if (args.size() == 2) return ArgError(name, "a scalar has no dimensions");
    return a;
  }
  if (!IsTensor(a)) return NoMethod(name, args);
  const Tensor& x = a.tensor();
  int64_t n = x.numel();
  std::optional<size_t> dim;
  if (args.size() == 2) {
    IRT_ASSIGN_OR_RETURN(size_t d, DimArg(name, args[1], x.shape.size()));
    dim = d;
  }
  int64_t len = dim ? x.shape[*dim] : n;
  if (extreme && len == 0) {
    return ArgError(name, "reducing over an empty collection is not allowed");
  }
  if (!extreme && IsFloatDType(x.dtype) && (!dim || true)) {
    bool f32 = x.dtype == DType::kF32;
    if (!dim) {
      double s;
      if (f32) {
        s = n == 0 ? 0.0f : Eigen::Map<const ArrayX<float>>(x.f32(), n).sum();
        if (mean) s = static_cast<float>(s) / static_cast<float>(n);
      } else {
        s = n == 0 ? 0.0 : Eigen::Map<const ArrayX<double>>(x.f64(), n).sum();
        if (mean) s /= static_cast<double>(n);
      }
      return MakeFloat(s, f32);
    }
    std::vector<int64_t> shape = x.shape;
    shape[*dim] = 1;
    IRT_ASSIGN_OR_RETURN(Tensor t, Alloc(name, x.dtype, shape));
    int64_t m = t.numel();
    if (f32) {
      SumDim(x.f32(), x.shape, *dim, t.f32());
      if (mean) Eigen::Map<ArrayX<float>>(t.f32(), m) /= static_cast<float>(x.shape[*dim]);
    } else {
      SumDim(x.f64(), x.shape, *dim, t.f64());
      if (mean) Eigen::Map<ArrayX<double>>(t.f64(), m) /= static_cast<double>(x.shape[*dim]);
    }
    return Value::MakeTensor(std::move(t));
  }
  // Element by element: outer × len × inner.
  int64_t outer = 1, inner = 1;
  if (dim) {
    for (size_t i = 0; i < *dim; ++i) outer *= x.shape[i];
    for (size_t i = *dim + 1; i < x.shape.size(); ++i) inner *= x.shape[i];
  } else {
    len = n;
  }
  DType out_dt = extreme ? x.dtype : mean ? DType::kF64 : DType::kI64;
  std::vector<int64_t> shape = x.shape;
  if (dim) shape[*dim] = 1;
  Tensor t;
  if (dim) {
    IRT_ASSIGN_OR_RETURN(t, Alloc(name, out_dt, shape));
  } else {
    IRT_ASSIGN_OR_RETURN(t, Alloc(name, out_dt, {}));
  }
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      int64_t base = o * len * inner + i;
      Value r;
      if (extreme && x.dtype == DType::kF64) {
        r = F64(Extreme(x.f64() + base, len, inner, is_max));
      } else if (extreme && x.dtype == DType::kF32) {
        r = F32(Extreme(x.f32() + base, len, inner, is_max));
      } else if (extreme) {
        int64_t m = AsInt(ElementAt(x, base));
        for (int64_t k = 1; k < len; ++k) {
          int64_t v = AsInt(ElementAt(x, base + k * inner));
          m = is_max ? std::max(m, v) : std::min(m, v);
        }
        r = Value::I64(m);
      } else {
        uint64_t sum = 0;
        for (int64_t k = 0; k < len; ++k) {
          sum += static_cast<uint64_t>(AsInt(ElementAt(x, base + k * inner)));
        }
        r = mean ? F64(static_cast<double>(Wrap(sum)) / static_cast<double>(len))
                 : Value::I64(Wrap(sum));
      }
      StoreElement(&t, o * inner + i, r);
    }
  }
  if (!dim) return ElementAt(t, 0);
  return Value::MakeTensor(std::move(t));
}

// The positions slice(x, d, first, last[, step]) selects along dimension d.
struct SliceSpec {
  size_t dim = 0;
  int64_t first = 1, step = 1, count = 0;
};

Result<SliceSpec> SliceArgs(std::string_view name, const std::vector<int64_t>& shape, OpArgs args) {
  SliceSpec s;
  IRT_ASSIGN_OR_RETURN(s.dim, DimArg(name, args[0], shape.size()));
  int64_t last;
  if (!ToIndex(args[1], &s.first) || !ToIndex(args[2], &last) ||
      (args.size() == 4 && !ToIndex(args[3], &s.step))) {
    return ArgError(name, "the first, last and step of a range must be integers");
  }
  if (s.step == 0) return ArgError(name, "the step of a range cannot be zero");
  int64_t size = shape[s.dim];
  if (s.step > 0 ? last < s.first : last > s.first) {
    s.count = 0;
    return s;
  }
  // |last - first| < 2^54: indices are bounded by ToIndex.
  s.count = (last - s.first) / s.step + 1;
  int64_t end = s.first + (s.count - 1) * s.step;
  if (std::min(s.first, end) < 1 || std::max(s.first, end) > size) {
    return BoundsError(name, "range " + std::to_string(s.first) + ":" + std::to_string(s.step) +
                                 ":" + std::to_string(last) + " out of bounds for dimension " +
                                 std::to_string(s.dim + 1) + " of size " + std::to_string(size));
  }
  return s;
}

// Copies between x (shape xs) and the slice y: y[.., k, ..] <-> x[.., first + k*step, ..].
// to_slice: y = x[...]; else x[...] += y.
void SliceCopy(const Tensor& x, const SliceSpec& s, Tensor* y, bool to_slice, Tensor* out) {
  const std::vector<int64_t>& xs = x.shape;
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < s.dim; ++i) outer *= xs[i];
  for (size_t i = s.dim + 1; i < xs.size(); ++i) inner *= xs[i];
  size_t es = DTypeSize(x.dtype);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = 0; k < s.count; ++k) {
      int64_t xi = (o * xs[s.dim] + (s.first - 1 + k * s.step)) * inner;
      int64_t yi = (o * s.count + k) * inner;
      if (to_slice) {
        std::memcpy(y->data.data() + static_cast<size_t>(yi) * es,
                    x.data.data() + static_cast<size_t>(xi) * es, static_cast<size_t>(inner) * es);
      } else if (out->dtype == DType::kF64) {
        for (int64_t i = 0; i < inner; ++i) out->f64()[xi + i] += y->f64()[yi + i];
      } else {
        for (int64_t i = 0; i < inner; ++i) out->f32()[xi + i] += y->f32()[yi + i];
      }
    }
  }
}

}  // namespace

Result<Value> TensorElementwise(const OpDef& op, OpArgs a) {
  if (FloatPath(SOpOf(op), a)) return FloatElementwise(op, a);
  return GenericElementwise(op, a);
}

Result<Value> Matmul(const OpDef& op, OpArgs a) { return Matmul(op.name, a[0], a[1]); }
Result<Value> Transpose(const OpDef& op, OpArgs a) { return Transpose(op.name, a[0]); }
Result<Value> Reduce(const OpDef& op, OpArgs a) { return Reduction(op, a); }
Result<Value> SumTo(const OpDef& op, OpArgs a) { return SumTo(op.name, a[0], a[1]); }
Result<Value> BroadcastTo(const OpDef& op, OpArgs a) { return BroadcastTo(op.name, a[0], a[1]); }
Result<Value> Reshape(const OpDef& op, OpArgs a) { return Reshape(op.name, a); }
Result<Value> Fill(const OpDef& op, OpArgs a) {
  return Fill(op.name, a, op.name == "fill" ? 0 : op.name == "zeros" ? 1 : 2);
}
Result<Value> Size(const OpDef& op, OpArgs a) { return Size(op.name, a); }
Result<Value> Length(const OpDef& op, OpArgs a) {
  if (IsReal(a[0])) return Value::I64(1);
  if (a[0].kind() == VKind::kTuple) return Value::I64(static_cast<int64_t>(a[0].tuple().size()));
  if (!IsTensor(a[0])) return NoMethod(op.name, a);
  return Value::I64(a[0].tensor().numel());
}
Result<Value> GetIndex(const OpDef& op, OpArgs a) { return GetIndex(op.name, a); }
Result<Value> AddIndex(const OpDef& op, OpArgs a) { return AddIndex(op.name, a); }

// slice(x, d, first, last[, step]): the elements first, first + step, ...,
// last (1-based, inclusive) along dimension d.
Result<Value> Slice(const OpDef& op, OpArgs a) {
  if (!IsTensor(a[0])) return NoMethod(op.name, a);
  const Tensor& x = a[0].tensor();
  IRT_ASSIGN_OR_RETURN(SliceSpec s, SliceArgs(op.name, x.shape, a.from(1)));
  std::vector<int64_t> shape = x.shape;
  shape[s.dim] = s.count;
  IRT_ASSIGN_OR_RETURN(Tensor y, Alloc(op.name, x.dtype, shape));
  SliceCopy(x, s, &y, true, nullptr);
  return Value::MakeTensor(std::move(y));
}

// unslice(t, x, d, first, last[, step]): zeros shaped like x with t added
// at the positions slice(x, d, first, last, step) takes (its adjoint).
Result<Value> Unslice(const OpDef& op, OpArgs a) {
  if (!IsTensor(a[0]) || !IsTensor(a[1])) return NoMethod(op.name, a);
  IRT_ASSIGN_OR_RETURN(const Tensor* t, FloatTensorArg(op.name, a[0], "the first argument"));
  const Tensor& like = a[1].tensor();
  IRT_ASSIGN_OR_RETURN(SliceSpec s, SliceArgs(op.name, like.shape, a.from(2)));
  std::vector<int64_t> shape = like.shape;
  shape[s.dim] = s.count;
  if (t->shape != shape) {
    return ShapeError(
        op.name, "a slice of shape " + ShapeText(shape) + " cannot take " + ShapeText(t->shape));
  }
  IRT_ASSIGN_OR_RETURN(Tensor out, Alloc(op.name, t->dtype, like.shape));
  Tensor y = *t;
  SliceCopy(out, s, &y, false, &out);
  return Value::MakeTensor(std::move(out));
}

// cat(d, x1, x2, ...): tensors of one rank, equal but along dimension d,
// joined along d. The element type: Float64 if any is, else Float32 if any
// is, else Int64 if any is an integer tensor, else Bool.
Result<Value> Cat(const OpDef& op, OpArgs a) {
  if (a.size() < 2) return NoMethod(op.name, a);
  for (size_t i = 1; i < a.size(); ++i) {
    if (!IsTensor(a[i])) return NoMethod(op.name, a);
  }
  const std::vector<int64_t>& s0 = a[1].tensor().shape;
  IRT_ASSIGN_OR_RETURN(size_t dim, DimArg(op.name, a[0], s0.size()));
  std::vector<int64_t> shape = s0;
  shape[dim] = 0;
  bool f64 = false, f32 = false, ints = false;
  for (size_t i = 1; i < a.size(); ++i) {
    const Tensor& x = a[i].tensor();
    bool fits = x.shape.size() == s0.size();
    for (size_t k = 0; fits && k < s0.size(); ++k) fits = k == dim || x.shape[k] == s0[k];
    if (!fits) {
      return ShapeError(op.name, "cannot join " + ShapeText(s0) + " and " + ShapeText(x.shape) +
                                     " along dimension " + std::to_string(dim + 1));
    }
    shape[dim] += x.shape[dim];
    f64 = f64 || x.dtype == DType::kF64;
    f32 = f32 || x.dtype == DType::kF32;
    ints = ints || x.dtype == DType::kI64 || x.dtype == DType::kI32;
  }
  DType dt = f64 ? DType::kF64 : f32 ? DType::kF32 : ints ? DType::kI64 : DType::kBool;
  if (f32 && ints) dt = DType::kF64;
  IRT_ASSIGN_OR_RETURN(Tensor out, Alloc(op.name, dt, shape));
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < dim; ++i) outer *= shape[i];
  for (size_t i = dim + 1; i < shape.size(); ++i) inner *= shape[i];
  int64_t at = 0;  // position along dim
  for (size_t i = 1; i < a.size(); ++i) {
    const Tensor& x = a[i].tensor();
    int64_t len = x.shape[dim];
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t k = 0; k < len * inner; ++k) {
        StoreElement(&out, (o * shape[dim] + at) * inner + k, ElementAt(x, o * len * inner + k));
      }
    }
    at += len;
  }
  return Value::MakeTensor(std::move(out));
}

}  // namespace irt::ops

namespace irt::ops {

namespace {

template <typename T>
void Gemm(const T* a, int64_t ar, int64_t ac, bool ta, const T* b, int64_t br, int64_t bc, bool tb,
          T* c, int64_t m, int64_t n) {
  if constexpr (std::is_same_v<T, double>) {
    if (internal::CpuHasAvx2Fma() && internal::GemmF64Avx2(a, ar, ac, ta, b, br, bc, tb, c, m, n))
      return;
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
