// Elementwise operations on tensors: floating-point tensors through Eigen
// expressions (the exact ones) and the binary64/binary32 arithmetic of
// scalar_ops.h, with NumPy broadcasting; integer and Bool tensors,
// comparisons and ifelse element by element through the operation's scalar evaluation
// (scalar.cc), so that a tensor and its elements agree.
#include <optional>

#include "tensor_util.h"

namespace irt::ops {

namespace {

// Negation, absolute value, square root and the constants are exact in
// Eigen's vectorized form; every other function goes element by element
// through the scalar evaluation (the C library's function), not Eigen's
// own vectorized exp, log, sin, cos and tanh, so that a tensor's elements
// equal the scalar operation on its elements bit for bit.
template <typename T>
void Unary(SOp op, const T* x, T* out, int64_t n) {
  Eigen::Map<const ArrayX<T>> a(x, n);
  Eigen::Map<ArrayX<T>> o(out, n);
  switch (op) {
    case SOp::kNeg:
      o = -a;
      break;
    case SOp::kSqrt:
      o = a.sqrt();
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
      for (int64_t i = 0; i < n; ++i) out[i] = internal::Apply1(op, x[i]);
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

}  // namespace

Result<Value> TensorElementwise(const OpDef& op, OpArgs a) {
  if (FloatPath(SOpOf(op), a)) return FloatElementwise(op, a);
  return GenericElementwise(op, a);
}

}  // namespace irt::ops
