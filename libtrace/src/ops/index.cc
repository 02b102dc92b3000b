// Indexing and slices: Julia's (getindex, addindex, slice, unslice; 1-based,
// inclusive) and Python's (getitem, additem, getslice, ungetslice; 0-based,
// negative from the end, stop excluded, nothing for `:` or a part left out).
// Dense and row-major.
#include <algorithm>
#include <span>

#include "tensor_util.h"

namespace irt::ops {

Status PythonSlice(std::string_view name, int64_t n, OpArgs parts, int64_t* first, int64_t* step,
                   int64_t* count) {
  auto given = [&](size_t k) { return k < parts.size() && parts[k].kind() != VKind::kNothing; };
  int64_t start = 0, stop = 0;
  *step = 1;
  if ((given(0) && !ToIndex(parts[0], &start)) || (given(1) && !ToIndex(parts[1], &stop)) ||
      (given(2) && !ToIndex(parts[2], step))) {
    return ArgError(name, "the start, stop and step of a slice must be integers or nothing");
  }
  if (*step == 0) return ArgError(name, "the step of a slice cannot be zero");
  const int64_t lower = *step < 0 ? -1 : 0, upper = *step < 0 ? n - 1 : n;
  // n is added to negative values only, so it cannot overflow.
  auto clamp = [&](bool has, int64_t v, int64_t dflt) {
    if (!has) return dflt;
    if (v < 0) v += n;
    return std::clamp(v, lower, upper);
  };
  start = clamp(given(0), start, *step < 0 ? upper : lower);
  stop = clamp(given(1), stop, *step < 0 ? lower : upper);
  // Any Int64 is a step, INT64_MIN too: divide by its magnitude unsigned.
  // start and stop lie in [-1, n], so their distance is small.
  const uint64_t mag = *step < 0 ? 0 - static_cast<uint64_t>(*step) : static_cast<uint64_t>(*step);
  if (*step < 0) {
    *count =
        stop < start ? static_cast<int64_t>(static_cast<uint64_t>(start - stop - 1) / mag) + 1 : 0;
  } else {
    *count =
        start < stop ? static_cast<int64_t>(static_cast<uint64_t>(stop - start - 1) / mag) + 1 : 0;
  }
  *first = start;
  return Status::Ok();
}

namespace {

// The 0-based position of index `v` into dimension d (0-based) of size n:
// 1-based (1..n), or Python's (0..n-1, negative from the end).
Status IndexInDim(std::string_view name, const Value& v, size_t d, int64_t n, bool python,
                  int64_t* out) {
  int64_t i;
  if (!ToIndex(v, &i)) return Bad(name, "an index must be an integer, not " + TypeName(v));
  bool ok = python ? i >= -n && i < n : i >= 1 && i <= n;
  if (!ok) {
    return BoundsError(name, "index " + std::to_string(i) + " out of bounds for dimension " +
                                 std::to_string(d + 1) + " of size " + std::to_string(n));
  }
  *out = python ? (i < 0 ? i + n : i) : i - 1;
  return Status::Ok();
}

// The storage offset of element (i...) (1-based) in a tensor of `shape`:
// one index is a linear index in row-major order (the storage order, the
// order reshape keeps), else one index per dimension. `at(d, &i)` gives
// index d, false when it is not an integer. -1 when the indices do not name
// an element (Offset then says why).
template <class At>
int64_t OffsetOf(const std::vector<int64_t>& shape, size_t nidx, At at) {
  int64_t i;
  if (nidx == 1) {
    return at(0, &i) && i >= 1 && i <= Numel(shape) ? i - 1 : -1;
  }
  if (nidx != shape.size()) return -1;
  int64_t off = 0;
  for (size_t d = 0; d < nidx; ++d) {
    if (!at(d, &i) || i < 1 || i > shape[d]) return -1;
    off = off * shape[d] + (i - 1);
  }
  return off;
}

// OffsetOf, or the error that says why the indices name no element.
Result<int64_t> Offset(std::string_view name, const std::vector<int64_t>& shape, OpArgs idx) {
  const int64_t found =
      OffsetOf(shape, idx.size(), [&](size_t d, int64_t* i) { return ToIndex(idx[d], i); });
  if (found >= 0) return found;
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
    IRT_RETURN_IF_ERROR(IndexInDim(name, idx[d], d, shape[d], /*python=*/false, &i));
    off = off * shape[d] + i;
  }
  return off;
}

// Item args[1] of the tuple args[0]: 1-based, or Python's (0-based,
// negative from the end).
Result<Value> TupleItem(std::string_view name, OpArgs args, bool python) {
  const auto& items = args[0].tuple();
  int64_t i;
  if (args.size() != 2 || !ToIndex(args[1], &i)) {
    return Bad(name, "a tuple takes one integer index");
  }
  const int64_t n = static_cast<int64_t>(items.size());
  if (python ? i < -n || i >= n : i < 1 || i > n) {
    return BoundsError(
        name, "index " + std::to_string(i) + " out of bounds for a tuple of " + std::to_string(n));
  }
  return items[static_cast<size_t>(python ? (i < 0 ? i + n : i) : i - 1)];
}

Result<Value> GetIndex(std::string_view name, OpArgs args) {
  const Value& a = args[0];
  if (a.kind() == VKind::kTuple) return TupleItem(name, args, /*python=*/false);
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

// Python's and NumPy's basic indexing by integers: 0-based, a negative
// index counts from the end, nothing takes a whole dimension (`:`). k
// indices into a tensor of n >= k dimensions select a tensor of the
// dimensions taken whole, then the last n - k: blocks of `inner`
// contiguous elements, one per combination of the dimensions taken whole.
struct ItemPlan {
  int64_t base = 0;                // offset of the first block
  int64_t inner = 1;               // elements per block
  std::vector<int64_t> free_size;  // the dimensions taken whole, outermost first
  std::vector<int64_t> free_step;  // and their strides in elements
  std::vector<int64_t> shape;      // of the result
  bool element() const { return shape.empty(); }
  int64_t blocks() const {
    int64_t b = 1;
    for (int64_t n : free_size) b *= n;
    return b;
  }
};

Status PlanItem(std::string_view name, const std::vector<int64_t>& shape, OpArgs idx, ItemPlan* p) {
  if (idx.size() > shape.size()) {
    return BoundsError(name, std::to_string(idx.size()) + " indices for a tensor of " +
                                 std::to_string(shape.size()) + " dimensions");
  }
  std::vector<int64_t> stride(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;) stride[d - 1] = stride[d] * shape[d];
  for (size_t d = 0; d < idx.size(); ++d) {
    if (idx[d].kind() == VKind::kNothing) {
      p->free_size.push_back(shape[d]);
      p->free_step.push_back(stride[d]);
      p->shape.push_back(shape[d]);
      continue;
    }
    int64_t i;
    IRT_RETURN_IF_ERROR(IndexInDim(name, idx[d], d, shape[d], /*python=*/true, &i));
    p->base += i * stride[d];
  }
  for (size_t d = idx.size(); d < shape.size(); ++d) {
    p->inner *= shape[d];
    p->shape.push_back(shape[d]);
  }
  return Status::Ok();
}

// Calls f(block, offset of the block) for each block of the plan, in the
// result's order.
template <class F>
void ForEachBlock(const ItemPlan& p, F f) {
  const size_t nf = p.free_size.size();
  std::vector<int64_t> at(nf, 0);
  const int64_t n = p.blocks();
  int64_t off = p.base;
  for (int64_t b = 0; b < n; ++b) {
    f(b, off);
    for (size_t d = nf; d-- > 0;) {  // the next combination, innermost first
      off += p.free_step[d];
      if (++at[d] < p.free_size[d]) break;
      off -= at[d] * p.free_step[d];
      at[d] = 0;
    }
  }
}

Result<Value> GetItem(std::string_view name, OpArgs args) {
  const Value& a = args[0];
  if (a.kind() == VKind::kTuple) return TupleItem(name, args, /*python=*/true);
  if (!IsTensor(a)) return NoMethod(name, args);
  const Tensor& x = a.tensor();
  ItemPlan p;
  IRT_RETURN_IF_ERROR(PlanItem(name, x.shape, args.from(1), &p));
  if (p.element()) return ElementAt(x, p.base);
  IRT_ASSIGN_OR_RETURN(Tensor t, Alloc(name, x.dtype, p.shape));
  const size_t es = DTypeSize(x.dtype);
  const size_t block = static_cast<size_t>(p.inner) * es;
  ForEachBlock(p, [&](int64_t b, int64_t off) {
    if (block == 0) return;
    std::memcpy(t.data.data() + static_cast<size_t>(b) * block,
                x.data.data() + static_cast<size_t>(off) * es, block);
  });
  return Value::MakeTensor(std::move(t));
}

Result<Value> AddItem(std::string_view name, OpArgs args) {
  IRT_ASSIGN_OR_RETURN(const Tensor* x, FloatTensorArg(name, args[0], "the first argument"));
  const Value& v = args[1];
  ItemPlan p;
  IRT_RETURN_IF_ERROR(PlanItem(name, x->shape, args.from(2), &p));
  const std::vector<int64_t>& sub = p.shape;
  const Tensor* vt = IsTensor(v) ? &v.tensor() : nullptr;
  if (vt != nullptr ? (vt->shape != sub || (vt->dtype != DType::kF64 && vt->dtype != DType::kF32))
                    : (!IsReal(v) || !sub.empty())) {
    return ShapeError(name, "cannot add " + TypeName(v) + " to an item of shape " + ShapeText(sub));
  }
  Tensor t = *x;
  ForEachBlock(p, [&](int64_t b, int64_t off) {
    for (int64_t j = 0; j < p.inner; ++j) {
      const int64_t k = b * p.inner + j;
      double d = vt == nullptr              ? v.to_double()
                 : vt->dtype == DType::kF64 ? vt->f64()[k]
                                            : static_cast<double>(vt->f32()[k]);
      if (t.dtype == DType::kF64) {
        t.f64()[off + j] += d;
      } else {
        t.f32()[off + j] += static_cast<float>(d);
      }
    }
  });
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
  // Any Int64 is an index here, so the range is measured unsigned: first
  // must lie in 1..size, and the steps taken may not leave it.
  const bool up = s.step > 0;
  const uint64_t mag = up ? static_cast<uint64_t>(s.step) : 0 - static_cast<uint64_t>(s.step);
  const uint64_t first = static_cast<uint64_t>(s.first), end = static_cast<uint64_t>(last);
  const uint64_t steps = (up ? end - first : first - end) / mag;
  if (s.first < 1 || s.first > size ||
      steps > static_cast<uint64_t>(up ? size - s.first : s.first - 1) / mag) {
    return BoundsError(name, "range " + std::to_string(s.first) + ":" + std::to_string(s.step) +
                                 ":" + std::to_string(last) + " out of bounds for dimension " +
                                 std::to_string(s.dim + 1) + " of size " + std::to_string(size));
  }
  s.count = static_cast<int64_t>(steps) + 1;
  return s;
}

// Python's start:stop:step along dimension d of `shape` (PythonSlice), as
// a SliceSpec.
Result<SliceSpec> PySliceArgs(std::string_view name, const std::vector<int64_t>& shape,
                              OpArgs args) {
  SliceSpec s;
  IRT_ASSIGN_OR_RETURN(s.dim, DimArg(name, args[0], shape.size()));
  int64_t first = 0;
  IRT_RETURN_IF_ERROR(PythonSlice(name, shape[s.dim], args.from(1), &first, &s.step, &s.count));
  s.first = first + 1;
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

Result<Value> GetIndex(const OpDef& op, OpArgs a) { return GetIndex(op.name, a); }
Result<Value> AddIndex(const OpDef& op, OpArgs a) { return AddIndex(op.name, a); }
Result<Value> GetItem(const OpDef& op, OpArgs a) { return GetItem(op.name, a); }
Result<Value> AddItem(const OpDef& op, OpArgs a) { return AddItem(op.name, a); }

namespace {

// The positions of slice (1-based, last included) or, python, of getslice
// (Python's start:stop:step) along dimension args[0] of `shape`.
Result<SliceSpec> SpecOf(std::string_view name, const std::vector<int64_t>& shape, OpArgs args,
                         bool python) {
  return python ? PySliceArgs(name, shape, args) : SliceArgs(name, shape, args);
}

// slice(x, d, ...) and getslice(x, d, ...) of a tensor.
Result<Value> SliceOf(const OpDef& op, OpArgs a, bool python) {
  if (!IsTensor(a[0])) return NoMethod(op.name, a);
  const Tensor& x = a[0].tensor();
  IRT_ASSIGN_OR_RETURN(SliceSpec s, SpecOf(op.name, x.shape, a.from(1), python));
  std::vector<int64_t> shape = x.shape;
  shape[s.dim] = s.count;
  IRT_ASSIGN_OR_RETURN(Tensor y, Alloc(op.name, x.dtype, shape));
  SliceCopy(x, s, &y, true, nullptr);
  return Value::MakeTensor(std::move(y));
}

// Their adjoints, unslice(t, x, d, ...) and ungetslice(t, x, d, ...):
// zeros shaped like x with t added at the positions the slice takes.
Result<Value> UnsliceOf(const OpDef& op, OpArgs a, bool python) {
  if (!IsTensor(a[0]) || !IsTensor(a[1])) return NoMethod(op.name, a);
  IRT_ASSIGN_OR_RETURN(const Tensor* t, FloatTensorArg(op.name, a[0], "the first argument"));
  const Tensor& like = a[1].tensor();
  IRT_ASSIGN_OR_RETURN(SliceSpec s, SpecOf(op.name, like.shape, a.from(2), python));
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

}  // namespace

// slice(x, d, first, last[, step]): the elements first, first + step, ...,
// last (1-based, inclusive) along dimension d.
Result<Value> Slice(const OpDef& op, OpArgs a) { return SliceOf(op, a, /*python=*/false); }

// unslice(t, x, d, first, last[, step]): zeros shaped like x with t added
// at the positions slice(x, d, first, last, step) takes (its adjoint).
Result<Value> Unslice(const OpDef& op, OpArgs a) { return UnsliceOf(op, a, /*python=*/false); }

// getslice(x, d, start, stop[, step]): Python's x[start:stop:step] along
// dimension d (1-based, as every dimension argument), of a tensor or (d = 1)
// a tuple.
Result<Value> GetSlice(const OpDef& op, OpArgs a) {
  if (a[0].kind() != VKind::kTuple) return SliceOf(op, a, /*python=*/true);
  const auto& items = a[0].tuple();
  std::vector<int64_t> shape{static_cast<int64_t>(items.size())};
  IRT_ASSIGN_OR_RETURN(SliceSpec s, PySliceArgs(op.name, shape, a.from(1)));
  std::vector<Value> out;
  out.reserve(static_cast<size_t>(s.count));
  for (int64_t k = 0; k < s.count; ++k) {
    out.push_back(items[static_cast<size_t>(s.first - 1 + k * s.step)]);
  }
  return Value::MakeTuple(std::move(out));
}

// ungetslice(t, x, d, start, stop[, step]): zeros shaped like x with t
// added at the positions getslice(x, d, start, stop, step) takes (its
// adjoint).
Result<Value> UngetSlice(const OpDef& op, OpArgs a) { return UnsliceOf(op, a, /*python=*/true); }

}  // namespace irt::ops

namespace irt {

int64_t ElementOffset(const std::vector<int64_t>& shape, std::span<const int64_t> index) {
  return ops::OffsetOf(shape, index.size(), [&](size_t d, int64_t* i) {
    *i = index[d];
    return true;
  });
}

int64_t ItemElementOffset(const std::vector<int64_t>& shape, std::span<const int64_t> index) {
  if (index.size() != shape.size()) return -1;
  int64_t off = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    const int64_t n = shape[d], i = index[d];
    if (i < -n || i >= n) return -1;  // as IndexInDim's Python rule
    off = off * n + (i < 0 ? i + n : i);
  }
  return off;
}

bool ElementF64(const Tensor& x, std::span<const int64_t> index, double* out) {
  if (x.dtype != DType::kF64) return false;
  const int64_t off = ElementOffset(x.shape, index);
  if (off < 0) return false;
  *out = x.f64()[off];
  return true;
}

}  // namespace irt
