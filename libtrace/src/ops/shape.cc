// Tensor operations that change shapes: reductions (sum, mean, maximum,
// minimum), sum_to and broadcast_to, reshape, fill, size and length, and
// concatenation (indexing and slices are in index.cc). Dense and
// row-major; dimensions are 1-based.
#include <optional>

#include "tensor_util.h"

namespace irt::ops {

Result<size_t> DimArg(std::string_view name, const Value& d, size_t rank) {
  int64_t k;
  if (!ToIndex(d, &k)) return Bad(name, "the dimension must be an integer, not " + TypeName(d));
  if (k < 1 || static_cast<uint64_t>(k) > rank) {
    return ShapeError(name, "dimension " + std::to_string(k) + " out of range for a tensor of " +
                                std::to_string(rank) + " dimensions");
  }
  return static_cast<size_t>(k - 1);
}

namespace {

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
  if (dims == x.shape) return a;  // shares the data: no copy
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

}  // namespace

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
// The element type of elements joined (cat, collect): Float64 if any is,
// else Float32 if any is (Float64 with integers), else Int64 if any is an
// integer, else Bool (NumPy's np.array of numbers gives the same).
static DType JoinedDType(bool f64, bool f32, bool ints) {
  if (f64 || (f32 && ints)) return DType::kF64;
  return f32 ? DType::kF32 : ints ? DType::kI64 : DType::kBool;
}

// cumsum(x[, d]): running sums along dimension d (of a vector when d is
// left out), added in order; integers and Bools sum as Int64 (wrapping),
// Float32 in Float32, as NumPy's cumsum.
Result<Value> Cumsum(const OpDef& op, OpArgs a) {
  if (!IsTensor(a[0]) || (a.size() == 2 && !IsReal(a[1]))) return NoMethod(op.name, a);
  const Tensor& x = a[0].tensor();
  size_t dim = 0;
  if (a.size() == 2) {
    IRT_ASSIGN_OR_RETURN(dim, DimArg(op.name, a[1], x.shape.size()));
  } else if (x.shape.size() != 1) {
    return Bad(op.name, "a tensor of " + std::to_string(x.shape.size()) +
                            " dimensions needs the dimension to sum along");
  }
  const DType dt = IsFloatDType(x.dtype) ? x.dtype : DType::kI64;
  IRT_ASSIGN_OR_RETURN(Tensor out, Alloc(op.name, dt, x.shape));
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < dim; ++i) outer *= x.shape[i];
  for (size_t i = dim + 1; i < x.shape.size(); ++i) inner *= x.shape[i];
  const int64_t len = x.shape.empty() ? 0 : x.shape[dim];
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t k = 0; k < inner; ++k) {
      double f64 = 0.0;
      float f32 = 0.0f;
      uint64_t i64 = 0;
      for (int64_t j = 0; j < len; ++j) {
        const int64_t at = (o * len + j) * inner + k;
        const Value v = ElementAt(x, at);
        if (dt == DType::kF64) {
          f64 += ToF64(v);
          out.f64()[at] = f64;
        } else if (dt == DType::kF32) {
          f32 += ToF32(v);
          out.f32()[at] = f32;
        } else {
          i64 += static_cast<uint64_t>(v.bits());
          StoreElement(&out, at, Value::I64(Wrap(i64)));
        }
      }
    }
  }
  return Value::MakeTensor(std::move(out));
}

// collect(t): a vector of a tuple's numbers, of their joined type.
Result<Value> Collect(const OpDef& op, OpArgs a) {
  if (a[0].kind() != VKind::kTuple) return NoMethod(op.name, a);
  const std::vector<Value>& items = a[0].tuple();
  bool f64 = false, f32 = false, ints = false;
  for (const Value& v : items) {
    if (!IsReal(v)) return NoMethod(op.name, a);
    f64 = f64 || v.kind() == VKind::kF64;
    f32 = f32 || v.kind() == VKind::kF32;
    ints = ints || v.kind() == VKind::kI64;
  }
  IRT_ASSIGN_OR_RETURN(Tensor out, Alloc(op.name, JoinedDType(f64, f32, ints),
                                         {static_cast<int64_t>(items.size())}));
  for (size_t i = 0; i < items.size(); ++i) StoreElement(&out, static_cast<int64_t>(i), items[i]);
  return Value::MakeTensor(std::move(out));
}

// cat(d, x1, x2, ...): tensors of one rank, equal but along dimension d,
// joined along d. The element type: Float64 if any is, else Float32 if any
// is, else Int64 if any is an integer tensor, else Bool. Tuples (d = 1, a
// tuple's one dimension): their items in order, Python's t1 + t2.
Result<Value> Cat(const OpDef& op, OpArgs a) {
  if (a.size() < 2) return NoMethod(op.name, a);
  if (a[1].kind() == VKind::kTuple) {
    std::vector<Value> items;
    for (size_t i = 1; i < a.size(); ++i) {
      if (a[i].kind() != VKind::kTuple) return NoMethod(op.name, a);
      const std::vector<Value>& t = a[i].tuple();
      items.insert(items.end(), t.begin(), t.end());
    }
    IRT_ASSIGN_OR_RETURN(size_t dim, DimArg(op.name, a[0], 1));
    (void)dim;
    return Value::MakeTuple(std::move(items));
  }
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
  IRT_ASSIGN_OR_RETURN(Tensor out, Alloc(op.name, JoinedDType(f64, f32, ints), shape));
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
