// Internal to the operation set: what the tensor evaluations share
// (elementwise.cc, matmul.cc, shape.cc, index.cc): allocation with the tensor limits,
// element access and conversion, NumPy broadcasting of shapes and strides,
// and the floating-point broadcasting loop.
#ifndef IRT_SRC_OPS_TENSOR_UTIL_H_
#define IRT_SRC_OPS_TENSOR_UTIL_H_

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "ops_internal.h"

namespace irt::ops {

template <typename T>
using ArrayX = Eigen::Array<T, Eigen::Dynamic, 1>;
template <typename T>
using MatrixR = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// An argument error: "ArgumentError: op: what".
inline Status Bad(std::string_view op, const std::string& what) { return ArgError(op, what); }

inline Result<Tensor> Alloc(std::string_view op, DType dtype, std::vector<int64_t> shape) {
  Result<Tensor> t = Tensor::Make(dtype, std::move(shape));
  if (t.ok()) return t;
  if (t.error().code() == Code::kIoError)
    return RuntimeError("OutOfMemoryError: " + t.error().message());
  return ShapeError(op, t.error().message());
}

inline Value MakeFloat(double d, bool f32) {
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

inline const std::vector<int64_t>& ShapeOf(const Value& v) {
  static const std::vector<int64_t> kScalar;
  return v.kind() == VKind::kTensor ? v.tensor().shape : kScalar;
}

inline int64_t Numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// NumPy broadcasting of two shapes.
inline bool BroadcastShapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
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
inline std::vector<int64_t> BroadcastStrides(const std::vector<int64_t>& shape,
                                             const std::vector<int64_t>& out) {
  std::vector<int64_t> strides(out.size(), 0);
  int64_t s = 1;
  for (size_t k = 0; k < shape.size(); ++k) {
    size_t i = shape.size() - 1 - k;
    size_t o = out.size() - 1 - k;
    strides[o] = shape[i] == 1 ? 0 : s;
    // Wraps instead of overflowing: a tensor with a zero dimension may have
    // other dimensions whose product is out of range, and its strides are
    // never used (it has no elements); any other tensor has at most
    // kMaxTensorElements.
    s = static_cast<int64_t>(static_cast<uint64_t>(s) * static_cast<uint64_t>(shape[i]));
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

// Element `off` of a tensor as a scalar (Int32 elements become Int64).
inline Value ElementAt(const Tensor& t, int64_t off) {
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
inline void StoreElement(Tensor* t, int64_t off, const Value& v) {
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

inline Result<const Tensor*> FloatTensorArg(std::string_view name, const Value& v,
                                            const char* what) {
  if (!IsTensor(v)) return Bad(name, std::string(what) + " must be a tensor, not " + TypeName(v));
  const Tensor& t = v.tensor();
  if (!IsFloatDType(t.dtype)) {
    return Bad(name, "tensors of " + std::string(DTypeName(t.dtype)) + " are not supported");
  }
  return &t;
}

}  // namespace irt::ops

#endif  // IRT_SRC_OPS_TENSOR_UTIL_H_
