// A trace as straight-line code, Python or C: one assignment per recorded
// node, in execution order, nested calls inlined, branches resolved as
// recorded (each recorded conditional jump becomes a guard that stops the
// code when its condition comes out otherwise), random draws as their
// recorded values. Each language's prelude gives every standard scalar
// operation libtrace's meaning (Julia's promotion Bool < Int64 < Float32 <
// Float64, Int64 that wraps, IEEE results where Python would raise) and
// takes every floating-point function from the C library, the one
// libtrace's kernels call, so that the code reproduces the recorded values
// bit for bit; tensors are computed as libtrace's kernels compute them, in
// NumPy (Python) or in loops (C), summing in the same order. Variables are
// named by global node number (n7), so memory is bounded by the call depth:
// one small frame per open call (and, for C, one elementwise kernel per
// distinct operation and result type).
#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "analyses/export_walk.h"
#include "irt/json.h"
#include "irt/value.h"
#include "print/notation.h"

namespace irt::internal {

namespace {

constexpr std::string_view kPythonPrelude = R"PY(import ctypes
import ctypes.util
import math
import struct

import numpy as np

np.seterr(all="ignore")
_libm = ctypes.CDLL(ctypes.util.find_library("m"))


def _cfn(name, argc, ctype):
    f = getattr(_libm, name)
    f.restype = ctype
    f.argtypes = [ctype] * argc
    return f


def f64(bits):
    """The Float64 with these bits (NaN payloads and signed zeros kept)."""
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def f32(bits):
    """The Float32 with these bits."""
    return np.frombuffer(struct.pack("<I", bits), dtype=np.float32)[0]


class Fn:
    """A function value, as recorded (the callee passed as argument 1)."""

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return "Fn(%r)" % self.name


class Diverged(Exception):
    """A branch came out otherwise than the trace recorded."""


def _rank(x):
    t = type(x)
    if t is bool:
        return 0
    if t is int:
        return 1
    if t is np.float32:
        return 2
    if t is float:
        return 3
    raise TypeError("not a real number: %r" % (x,))


def _wrap(i):
    i &= 0xFFFFFFFFFFFFFFFF
    return i - (1 << 64) if i >> 63 else i


def _fl(r, x):
    return np.float32(x) if r == 2 else float(x)


def _rank2(a, b):
    return max(_rank(a), _rank(b))


def _math1(name):
    d, f = _cfn(name, 1, ctypes.c_double), _cfn(name + "f", 1, ctypes.c_float)

    def op(a):
        return np.float32(f(a)) if _rank(a) == 2 else d(float(a))
    return op


def _math2(name):
    d, f = _cfn(name, 2, ctypes.c_double), _cfn(name + "f", 2, ctypes.c_float)

    def op(a, b):
        if _rank2(a, b) == 2:
            return np.float32(f(np.float32(a), np.float32(b)))
        return d(float(a), float(b))
    return op


for _name in ("sin", "cos", "tan", "exp", "log", "sqrt", "tanh", "atan", "log1p", "expm1",
              "lgamma", "sinh", "cosh", "asin", "acos", "asinh", "acosh", "atanh", "log2",
              "log10", "exp2", "cbrt", "erf", "erfc"):
    globals()[_name] = _math1(_name)
atan2 = _math2("atan2")
hypot = _math2("hypot")
_pow = _math2("pow")
_cpow = _cfn("pow", 2, ctypes.c_double)


def add(a, b):
    r = _rank2(a, b)
    return _wrap(a + b) if r <= 1 else _fl(r, a) + _fl(r, b)


def sub(a, b):
    r = _rank2(a, b)
    return _wrap(a - b) if r <= 1 else _fl(r, a) - _fl(r, b)


def mul(a, b):
    r = _rank2(a, b)
    return _wrap(a * b) if r <= 1 else _fl(r, a) * _fl(r, b)


def div(a, b):
    if _rank2(a, b) == 2:
        return np.float32(a) / np.float32(b)
    return float(np.float64(a) / np.float64(b))


def pow_(a, b):
    ra, rb = _rank(a), _rank(b)
    if ra <= 1 and rb <= 1:
        if b < 0:
            if ra == 0 and not a or ra == 1 and a not in (1, -1):
                raise ValueError("an integer to a negative power")
            return a if ra == 0 else (1 if a == 1 or b % 2 == 0 else -1)
        return (b == 0 or a) if ra == 0 else _wrap(pow(a, b, 1 << 64))
    if rb <= 1:
        if ra == 2:
            return np.float32(_cpow(float(a), float(int(b))))
        return _cpow(a, float(int(b)))
    return _pow(a, b)


def _real(x):
    return float(x) if type(x) is np.float32 else x


def lt(a, b):
    return _real(a) < _real(b)


def le(a, b):
    return _real(a) <= _real(b)


def gt(a, b):
    return _real(a) > _real(b)


def ge(a, b):
    return _real(a) >= _real(b)


def eq(a, b):
    return _real(a) == _real(b)


def ne(a, b):
    return not eq(a, b)


def _fmax(x, y):
    if math.isnan(x) or math.isnan(y):
        return x if math.isnan(x) else y
    return x if (x > y or (x == y and not math.copysign(1.0, x) < 0)) else y


def _fmin(x, y):
    if math.isnan(x) or math.isnan(y):
        return x if math.isnan(x) else y
    return x if (x < y or (x == y and math.copysign(1.0, x) < 0)) else y


def max_(a, b):
    r = _rank2(a, b)
    if r == 0:
        return a or b
    if r == 1:
        return max(int(a), int(b))
    return _fl(r, _fmax(float(a), float(b)))


def min_(a, b):
    r = _rank2(a, b)
    if r == 0:
        return a and b
    if r == 1:
        return min(int(a), int(b))
    return _fl(r, _fmin(float(a), float(b)))


def _bits(a, b, f):
    z = f(int(a), int(b))
    return z != 0 if _rank(a) == 0 and _rank(b) == 0 else z


def and_(a, b):
    return _bits(a, b, lambda x, y: x & y)


def or_(a, b):
    return _bits(a, b, lambda x, y: x | y)


def xor(a, b):
    return _bits(a, b, lambda x, y: x ^ y)


def not_(a):
    return not a


def neg(a):
    r = _rank(a)
    return _wrap(-int(a)) if r <= 1 else -a


def abs_(a):
    r = _rank(a)
    if r == 0:
        return a
    return _wrap(abs(a)) if r == 1 else _fl(r, math.fabs(a))


def sign(a):
    r = _rank(a)
    if r <= 1:
        return (a > 0) - (a < 0)
    if math.isnan(a) or a == 0:
        return a
    return _fl(r, 1.0 if a > 0 else -1.0)


def zero(a):
    r = _rank(a)
    return False if r == 0 else 0 if r == 1 else _fl(r, 0.0)


def one(a):
    r = _rank(a)
    return True if r == 0 else 1 if r == 1 else _fl(r, 1.0)


def identity(a):
    return a


def ifelse(c, a, b):
    return a if c else b


def _idiv(a, b, kind):
    r = _rank2(a, b)
    if r <= 1:
        x, y = int(a), int(b)
        quotient = kind in ("div", "fld")
        if y == 0 or (quotient and y == -1 and x == -(1 << 63)):
            raise ZeroDivisionError("integer division error")
        q = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)
        rem = x - q * y
        if not quotient:
            q = rem
        if kind in ("fld", "mod") and rem != 0 and (rem < 0) != (y < 0):
            q = q - 1 if kind == "fld" else q + y
        q = _wrap(q)
        return q != 0 if r == 0 else q
    t = np.float32 if r == 2 else np.float64
    x, y = t(a), t(b)
    if kind == "rem":
        z = np.fmod(x, y)
    elif kind == "div":
        if y == 0 or not np.isfinite(x) or not np.isfinite(y):
            z = np.trunc(x / y)
        else:
            z = np.rint((x - np.fmod(x, y)) / y)
    elif kind == "mod":
        z = np.fmod(x, y)
        if y != 0:
            if z != 0:
                if (y < 0) != (z < 0):
                    z = z + y
            else:
                z = np.copysign(t(0), y)
    elif y == 0 or not np.isfinite(x) or not np.isfinite(y):
        z = np.floor(x / y)
    else:
        m = np.fmod(x, y)
        q = (x - m) / y
        if m != 0 and (y < 0) != (m < 0):
            q = q - t(1)
        if q == 0:
            z = np.copysign(t(0), x / y)
        else:
            z = np.floor(q)
            if q - z > t(0.5):
                z = z + t(1)
    return float(z) if r == 3 else z


def idiv(a, b):
    return _idiv(a, b, "div")


def rem(a, b):
    return _idiv(a, b, "rem")


def mod(a, b):
    return _idiv(a, b, "mod")


def fld(a, b):
    return _idiv(a, b, "fld")


# Tensors: NumPy arrays of float64, float32, int64 or bool, row-major, of
# the recorded shape (a 0-dimensional array for a tensor of no dimensions);
# a number is never an array. Elementwise operations apply the scalar
# functions above to each element, so that every element is computed by
# the C library function libtrace calls. Sums reproduce the order in which
# libtrace's kernels (Eigen, vectorized for SSE2: packets of 2 doubles or
# 4 floats) add.
_DTYPES = {"f8": np.float64, "f4": np.float32, "i8": np.int64, "i4": np.int32, "b1": np.bool_}


def tensor(dtype, shape, data):
    """A tensor of `dtype` ("f8", "f4", "i8", "b1") from its elements in row-major order."""
    return np.array(data, dtype=np.float64 if dtype == "f4" else _DTYPES[dtype]).astype(
        _DTYPES[dtype]).reshape(shape)


def _ist(x):
    return isinstance(x, np.ndarray)


def _items(a):
    """The elements of a flat array as the scalars of the prelude."""
    if a.dtype == np.float32:
        return list(a)
    if a.dtype == np.int32:
        return [int(v) for v in a.tolist()]
    return a.tolist()


def _store(dtype, v):
    if dtype == np.float64:
        return float(v)
    if dtype == np.float32:
        return np.float32(float(v)) if type(v) is not np.float32 else v
    if dtype == np.bool_:
        return float(v) != 0
    return int(v)


_FLOAT_KERNEL = {"neg", "sin", "cos", "tan", "exp", "log", "sqrt", "tanh", "abs_", "sign", "zero",
                 "one", "identity", "atan", "log1p", "expm1", "lgamma", "sinh", "cosh", "asin",
                 "acos", "asinh", "acosh", "atanh", "log2", "log10", "exp2", "cbrt", "erf", "erfc",
                 "add", "sub", "mul", "div", "pow_", "min_", "max_", "atan2", "fld", "mod", "rem",
                 "hypot"}


def ew(dtype, f, *args):
    """The elementwise operation f (a scalar function of the prelude) on
    tensors and numbers, with NumPy broadcasting, giving a tensor of
    `dtype`. Floating-point tensors with numbers: the numbers take the
    tensors' type first (Float32 unless a tensor is Float64), as
    libtrace's floating-point kernels do; otherwise each element goes
    through f as a number of its own type."""
    ts = [a for a in args if _ist(a)]
    shape = np.broadcast_shapes(*[t.shape for t in ts])
    n = int(np.prod(shape, dtype=np.int64))
    if f.__name__ in _FLOAT_KERNEL and len(args) <= 2 and all(
            t.dtype.kind == "f" for t in ts):
        dt = np.float64 if any(t.dtype == np.float64 for t in ts) else np.float32
        conv = float if dt is np.float64 else (lambda v: np.float32(float(v)))
        args = [a.astype(dt) if _ist(a) else conv(a) for a in args]
    cols = [_items(np.broadcast_to(a, shape).ravel()) if _ist(a) else None for a in args]
    out = np.empty(n, dtype=_DTYPES[dtype])
    xs = list(args)
    for k in range(n):
        for j, c in enumerate(cols):
            if c is not None:
                xs[j] = c[k]
        out[k] = _store(out.dtype, f(*xs))
    return out.reshape(shape)


def _packets(x, start, p):
    """Eigen's vectorized sum of x[start:] (whole packets of p from start)
    as one packet: two accumulators, then a last single packet."""
    size = len(x) - start
    end2 = start + size // (2 * p) * (2 * p)
    end = start + size // p * p
    acc0 = x[start:start + p].copy()
    if end - start > p:
        acc1 = x[start + p:start + 2 * p].copy()
        for i in range(start + 2 * p, end2, 2 * p):
            acc0 = acc0 + x[i:i + p]
            acc1 = acc1 + x[i + p:i + 2 * p]
        acc0 = acc0 + acc1
        if end > end2:
            acc0 = acc0 + x[end2:end2 + p]
    return acc0, end


def _predux(acc):
    if len(acc) == 2:
        return acc[0] + acc[1]
    return (acc[0] + acc[2]) + (acc[1] + acc[3])


def _aligned_start(offset, n, p):
    """The first element at a 16-byte boundary, for elements from
    `offset` elements past an aligned address."""
    return min((p - offset % p) % p, n)


def _sum(x, offset=0):
    """Eigen's sum of the float elements of the flat array x (a view from
    `offset` elements past an aligned address), in its order."""
    n = len(x)
    if n == 0:
        return x.dtype.type(0)
    p = 2 if x.dtype == np.float64 else 4
    start = _aligned_start(offset, n, p)
    if (n - start) // p == 0:
        r = x[0]
        for i in range(1, n):
            r = r + x[i]
        return r
    acc, end = _packets(x, start, p)
    r = _predux(acc)
    for i in range(0, start):
        r = r + x[i]
    for i in range(end, n):
        r = r + x[i]
    return r


def _colsum(block, out, offset):
    """out[j] = sum of column j of the row-major matrix block, as Eigen's
    colwise().sum() assigned to out (which starts `offset` elements past an
    aligned address): whole packets of columns add the rows pairwise in
    fours, the other columns row after row."""
    rows, cols = block.shape
    p = 2 if block.dtype == np.float64 else 4
    start = _aligned_start(offset, cols, p)
    end = start + (cols - start) // p * p
    for j in range(cols):
        x = block[:, j]
        if rows == 0:
            out[j] = 0
            continue
        r = x[0]
        if start <= j < end:
            size4 = (rows - 1) & ~3
            i = 1
            while i < size4:
                r = r + ((x[i] + x[i + 1]) + (x[i + 2] + x[i + 3]))
                i += 4
        else:
            i = 1
        while i < rows:
            r = r + x[i]
            i += 1
        out[j] = r


def _reduce(x, dim, kind):
    """sum, mean, maximum, minimum of a tensor, or along dimension dim (1-based)."""
    if not _ist(x):
        if dim is not None:
            raise ValueError("ArgumentError: %s: a scalar has no dimensions" % kind)
        return x
    dims = x.shape
    d = None if dim is None else int(dim) - 1
    n = x.size
    length = n if d is None else dims[d]
    extreme = kind in ("maximum", "minimum")
    if extreme and length == 0:
        raise ValueError("ArgumentError: %s: reducing over an empty collection" % kind)
    flat = x.ravel()
    if not extreme and x.dtype.kind == "f":
        f32 = x.dtype == np.float32
        if d is None:
            s = _sum(flat)
            if kind == "mean":
                s = s / x.dtype.type(n)
            return np.float32(s) if f32 else float(s)
        outer = int(np.prod(dims[:d], dtype=np.int64))
        inner = int(np.prod(dims[d + 1:], dtype=np.int64))
        shape = list(dims)
        shape[d] = 1
        out = np.empty(outer * inner, dtype=x.dtype)
        for o in range(outer):
            row = np.empty(inner, dtype=x.dtype)
            _colsum(flat[o * length * inner:(o + 1) * length * inner].reshape(length, inner),
                    row, o * inner)
            out[o * inner:(o + 1) * inner] = row
        if kind == "mean":
            out = out / x.dtype.type(length)
        return out.reshape(shape)
    outer = 1 if d is None else int(np.prod(dims[:d], dtype=np.int64))
    inner = 1 if d is None else int(np.prod(dims[d + 1:], dtype=np.int64))
    out_dt = x.dtype if extreme else (np.float64 if kind == "mean" else np.int64)
    res = np.empty(outer * inner, dtype=out_dt)
    items = _items(flat)
    for o in range(outer):
        for i in range(inner):
            base = o * length * inner + i
            col = [items[base + k * inner] for k in range(length)]
            if extreme:
                r = col[0]
                for v in col[1:]:
                    r = (max_ if kind == "maximum" else min_)(r, v)
            else:
                r = 0
                for v in col:
                    r = _wrap(r + int(v))
                if kind == "mean":
                    r = float(r) / float(length)
            res[o * inner + i] = r
    if d is None:
        v = res[0]
        return np.float32(v) if out_dt == np.float32 else _items(res[:1])[0]
    shape = list(dims)
    shape[d] = 1
    return res.reshape(shape)


def sum_(x, dim=None):
    return _reduce(x, dim, "sum")


def mean(x, dim=None):
    return _reduce(x, dim, "mean")


def maximum(x, dim=None):
    return _reduce(x, dim, "maximum")


def minimum(x, dim=None):
    return _reduce(x, dim, "minimum")


def _floats(a, b):
    """Both operands as arrays of one float type: Float32 when both are."""
    dt = np.float32 if a.dtype == np.float32 and b.dtype == np.float32 else np.float64
    return a.astype(dt), b.astype(dt)


def matmul(a, b):
    """A matrix product; a vector is a column. Each element is the sum over
    k of a[i, k] * b[k, j], added in order of k (the order of Eigen's
    coefficient-based product; see the manual for when libtrace's kernel
    adds otherwise)."""
    x, y = _floats(a, b)
    m, k = (x.shape[0], x.shape[1]) if x.ndim == 2 else (x.shape[0], 1)
    k2, n = (y.shape[0], y.shape[1]) if y.ndim == 2 else (y.shape[0], 1)
    if k != k2:
        raise ValueError("DimensionMismatch: matmul: inner dimensions %d and %d differ" % (k, k2))
    x, y = x.reshape(m, k), y.reshape(k, n)
    out = np.zeros((m, n), dtype=x.dtype)
    for i in range(m):
        for j in range(n):
            if k > 0:
                r = x[i, 0] * y[0, j]
                for q in range(1, k):
                    r = r + x[i, q] * y[q, j]
                out[i, j] = r
    return out if b.ndim == 2 else out.reshape(m)


def dot(a, b):
    """The sum of the products, in the order of Eigen's vectorized sum."""
    x, y = _floats(a, b)
    s = _sum(x * y)
    return np.float32(s) if x.dtype == np.float32 else float(s)


def transpose(x):
    if not _ist(x):
        return x
    if x.ndim == 1:
        return x.reshape(1, -1)
    return np.ascontiguousarray(x.T)


def _index(v):
    return int(v)


def reshape(x, *dims):
    if len(dims) == 1 and isinstance(dims[0], tuple):
        dims = dims[0]
    if not _ist(x):
        return x
    return x.reshape([_index(d) for d in dims])


def getindex(x, *idx):
    """Element i... (1-based; one index is row-major linear); item i of a tuple."""
    if isinstance(x, tuple):
        return x[_index(idx[0]) - 1]
    k = _offset(x.shape, idx)
    if k < 0 or k >= x.size:
        raise IndexError("BoundsError: getindex: index out of bounds")
    return _items(x.ravel()[k:k + 1])[0]


def _offset(shape, idx):
    if len(idx) == 1:
        return _index(idx[0]) - 1
    off = 0
    for d, i in zip(shape, idx):
        off = off * d + _index(i) - 1
    return off


def addindex(x, v, *idx):
    t = x.copy()
    flat = t.reshape(-1)
    k = _offset(x.shape, idx)
    if t.dtype == np.float64:
        flat[k] = flat[k] + float(v)
    else:
        flat[k] = flat[k] + np.float32(float(v))
    return t


def getitem(x, *idx):
    """Python's x[i, ...], 0-based; a sub-tensor when fewer indices than dimensions."""
    if isinstance(x, tuple):
        return x[_index(idx[0])]
    sub = x[tuple(_index(i) for i in idx)]
    if len(idx) == x.ndim:
        return _items(np.asarray(sub).reshape(1))[0]
    return np.array(sub)


def additem(x, v, *idx):
    t = x.copy()
    key = tuple(_index(i) for i in idx)
    if _ist(v):
        t[key] = t[key] + v.astype(t.dtype)
    else:
        t[key] = t[key] + t.dtype.type(float(v))
    return t


def sum_to(x, like):
    """x summed over the dimensions broadcasting stretched, to like's shape."""
    if not _ist(like):
        f32 = type(like) is np.float32
        if not _ist(x):
            return np.float32(float(x)) if f32 else x
        s = _sum(x.ravel())
        return np.float32(s) if f32 or (type(like) is not float and x.dtype == np.float32) \
            else float(s)
    if x.shape == like.shape:
        return x
    xs, ts = x.shape, like.shape
    lead = len(xs) - len(ts)
    m = like.size
    flat = x.ravel()
    if xs[lead:] == ts:
        out = np.empty(m, dtype=x.dtype)
        if x.size:
            _colsum(flat.reshape(-1, m), out, 0)
        else:
            out[:] = 0
        return out.reshape(ts)
    out = np.zeros(m, dtype=x.dtype)
    full = (1,) * lead + ts
    strides = []
    s = 1
    for d in reversed(full):
        strides.append(0 if d == 1 else s)
        s *= d
    strides.reverse()
    inner = xs[-1] if xs else 1
    rows = x.size // inner if inner else 0
    for r in range(rows):
        # the odometer over all dimensions but the last
        rem, ot = r, 0
        for d in range(len(xs) - 2, -1, -1):
            ot += (rem % xs[d]) * strides[d]
            rem //= xs[d]
        ox = r * inner
        if strides[-1] == 0:
            out[ot] = out[ot] + _sum(flat[ox:ox + inner], ox)
        else:
            out[ot:ot + inner] = out[ot:ot + inner] + flat[ox:ox + inner]
    return out.reshape(ts)


def broadcast_to(x, like):
    if not _ist(like):
        return x
    if _ist(x) and x.shape == like.shape:
        return x
    dt = x.dtype.type if _ist(x) else (np.float32 if type(x) is np.float32 else np.float64)
    return np.broadcast_to(np.asarray(x, dtype=dt) + dt(0), like.shape).copy()


def _dims(dims):
    if len(dims) == 1 and isinstance(dims[0], tuple):
        dims = dims[0]
    return [_index(d) for d in dims]


def fill(v, *dims):
    r = _rank(v)
    dt = [np.bool_, np.int64, np.float32, np.float64][r]
    return np.full(_dims(dims), v, dtype=dt)


def zeros(*dims):
    return np.zeros(_dims(dims))


def ones(*dims):
    return np.ones(_dims(dims))


def size(x, d=None):
    shape = x.shape if _ist(x) else ()
    if d is None:
        return tuple(int(s) for s in shape)
    k = _index(d)
    return int(shape[k - 1]) if k <= len(shape) else 1


def length(x):
    if isinstance(x, tuple):
        return len(x)
    return int(x.size) if _ist(x) else 1


def tuple_(*items):
    return tuple(items)


def _range(d, first, last, step, shape):
    d, first, last, step = _index(d) - 1, _index(first), _index(last), _index(step)
    idx = [slice(None)] * len(shape)
    if (last < first) if step > 0 else (last > first):
        idx[d] = slice(0, 0)
    else:
        stop = last - 1 + (1 if step > 0 else -1)
        idx[d] = slice(first - 1, None if stop < 0 else stop, step)
    return tuple(idx)


def slice_(x, d, first, last, step=1):
    return np.array(x[_range(d, first, last, step, x.shape)])


def unslice(t, x, d, first, last, step=1):
    out = np.zeros(x.shape, dtype=t.dtype)
    key = _range(d, first, last, step, x.shape)
    out[key] = out[key] + t
    return out


def cat(d, *xs):
    f64 = any(x.dtype == np.float64 for x in xs)
    f32 = any(x.dtype == np.float32 for x in xs)
    ints = any(x.dtype.kind == "i" for x in xs)
    dt = np.float64 if f64 or (f32 and ints) else np.float32 if f32 else \
        np.int64 if ints else np.bool_
    return np.concatenate([x.astype(dt) for x in xs], axis=_index(d) - 1)
)PY";

constexpr std::string_view kCPrelude = R"C(#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Numbers as the trace records them: Bool, Int64, Float32, Float64. */
static inline double irt_f64(uint64_t bits) { double d; memcpy(&d, &bits, 8); return d; }
static inline float irt_f32(uint32_t bits) { float f; memcpy(&f, &bits, 4); return f; }

/* Julia's promotion: Bool < Int64 < Float32 < Float64. */
#define IRT_K(x) _Generic((x), bool: 0, int64_t: 1, float: 2, double: 3)
#define IRT_I(x) _Generic((x), bool: (int64_t)(x), int64_t: (int64_t)(x), default: (int64_t)0)
#define IRT_D(x) ((double)(x))

/* Int64 arithmetic wraps around. */
static inline int64_t irt_wrap(uint64_t u) { return (int64_t)u; }
static inline int64_t irt_addi(int64_t a, int64_t b) { return irt_wrap((uint64_t)a + (uint64_t)b); }
static inline int64_t irt_subi(int64_t a, int64_t b) { return irt_wrap((uint64_t)a - (uint64_t)b); }
static inline int64_t irt_muli(int64_t a, int64_t b) { return irt_wrap((uint64_t)a * (uint64_t)b); }
static inline int64_t irt_negi(int64_t a) { return irt_wrap(0 - (uint64_t)a); }
static inline int64_t irt_absi(int64_t a) { return a < 0 ? irt_negi(a) : a; }
static inline int64_t irt_signi(int64_t a) { return a > 0 ? 1 : a < 0 ? -1 : 0; }

static inline void irt_fail(const char* what) {
  fprintf(stderr, "%s\n", what);
  exit(3);
}

/* An integer to an integer power (a negative power only of 1 and -1). */
static inline int64_t irt_ipow(int64_t x, int64_t e) {
  if (e < 0) {
    if (x == 1) return 1;
    if (x == -1) return (e & 1) ? -1 : 1;
    irt_fail("DomainError: an integer to a negative power");
  }
  uint64_t r = 1, b = (uint64_t)x, n = (uint64_t)e;
  while (n != 0) {
    if (n & 1) r *= b;
    b *= b;
    n >>= 1;
  }
  return irt_wrap(r);
}

/* div (truncated), rem (sign of the dividend), fld (floored), mod (sign of
   the divisor) of integers; 0 1 2 3 in that order. */
static inline int64_t irt_idiv(int64_t x, int64_t y, int kind) {
  int quotient = kind == 0 || kind == 2;
  if (y == 0 || (quotient && y == -1 && x == INT64_MIN)) irt_fail("DivideError: integer division error");
  if (y == -1) return quotient ? irt_negi(x) : 0;
  int64_t q = quotient ? x / y : x % y, rem = x % y;
  if (kind >= 2 && rem != 0 && ((rem < 0) != (y < 0))) {
    if (kind == 2) q -= 1; else q += y;
  }
  return q;
}

/* The same of floats, in double (suffix d) and float (suffix f). */
#define IRT_FDIV(T, S)                                                          \
  static inline T irt_fdiv##S(T x, T y, int kind) {                                    \
    if (kind == 1) return fmod##S(x, y);                                        \
    if (kind == 0) {                                                            \
      if (y == 0 || !isfinite(x) || !isfinite(y)) return trunc##S(x / y);       \
      return nearbyint##S((x - fmod##S(x, y)) / y);                             \
    }                                                                           \
    if (kind == 3) {                                                            \
      if (y == 0) return fmod##S(x, y);                                         \
      T r = fmod##S(x, y);                                                      \
      if (r != 0) {                                                             \
        if ((y < 0) != (r < 0)) r += y;                                         \
      } else {                                                                  \
        r = copysign##S((T)0, y);                                               \
      }                                                                         \
      return r;                                                                 \
    }                                                                           \
    if (y == 0 || !isfinite(x) || !isfinite(y)) return floor##S(x / y);         \
    T r = fmod##S(x, y);                                                        \
    T q = (x - r) / y;                                                          \
    if (r != 0 && (y < 0) != (r < 0)) q -= 1;                                   \
    if (q == 0) return copysign##S((T)0, x / y);                                \
    T f = floor##S(q);                                                          \
    if (q - f > (T)0.5) f += 1;                                                 \
    return f;                                                                   \
  }
IRT_FDIV(double, )
IRT_FDIV(float, f)

static inline double irt_fmax(double x, double y) {
  if (isnan(x) || isnan(y)) return isnan(x) ? x : y;
  return (x > y || (x == y && !signbit(x))) ? x : y;
}
static inline double irt_fmin(double x, double y) {
  if (isnan(x) || isnan(y)) return isnan(x) ? x : y;
  return (x < y || (x == y && signbit(x))) ? x : y;
}
static inline double irt_signd(double x) { return (isnan(x) || x == 0) ? x : x > 0 ? 1.0 : -1.0; }
static inline float irt_signf(float x) { return (isnan(x) || x == 0) ? x : x > 0 ? 1.0f : -1.0f; }

/* Exact comparison of two real numbers: -1, 0, 1, or 2 when unordered. */
static inline int irt_cmp_id(int64_t i, double d) {
  if (isnan(d)) return 2;
  if (d >= 9223372036854775808.0) return -1;
  if (d < -9223372036854775808.0) return 1;
  double t = trunc(d);
  int64_t ti = (int64_t)t;
  if (i < ti) return -1;
  if (i > ti) return 1;
  double frac = d - t;
  return frac > 0 ? -1 : frac < 0 ? 1 : 0;
}
static inline int irt_cmp(int ka, int64_t ia, double da, int kb, int64_t ib, double db) {
  if (ka <= 1 && kb <= 1) return ia < ib ? -1 : ia > ib ? 1 : 0;
  if (ka >= 2 && kb >= 2) {
    if (isnan(da) || isnan(db)) return 2;
    return da < db ? -1 : da > db ? 1 : 0;
  }
  if (ka <= 1) return irt_cmp_id(ia, db);
  int c = irt_cmp_id(ib, da);
  return c == 2 ? 2 : -c;
}
#define IRT_CMP(a, b) irt_cmp(IRT_K(a), IRT_I(a), IRT_D(a), IRT_K(b), IRT_I(b), IRT_D(b))

/* Tensors and tuples: one object type, irt_t, for a tensor (element type,
   dimensions, elements in row-major order), a tuple (its items) or a
   number boxed for the tensor operations. Objects are never freed before
   the program ends: each is allocated once, recorded, and freed by an
   atexit handler. Elementwise operations apply the scalar expressions
   above to each element; sums add in the order of libtrace's kernels
   (Eigen, vectorized for SSE2: packets of 2 doubles or 4 floats). */
/* No fused multiply-adds: GCC contracts none under -std=c11, clang none
   with this pragma. */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif
enum { IRT_B1, IRT_I8, IRT_F4, IRT_F8, IRT_I4 }; /* element types; 0-3 also the number kinds */
enum { IRT_TENSOR = 4, IRT_TUPLE = 5 };
typedef struct irt_obj {
  int kind;  /* 0-3: a boxed Bool, Int64, Float32, Float64; IRT_TENSOR; IRT_TUPLE */
  int dtype;
  int ndim;
  int64_t* shape;
  int64_t n;  /* elements, or items */
  void* data; /* elements, or the items (irt_t) */
  bool b;
  int64_t i;
  float f;
  double d;
} irt_obj;
typedef const irt_obj* irt_t;

static void** irt_blocks;
static size_t irt_nblocks, irt_cap;
static inline void irt_free_all(void) {
  for (size_t k = 0; k < irt_nblocks; ++k) free(irt_blocks[k]);
  free(irt_blocks);
}
static inline void* irt_alloc(size_t size) {
  if (irt_nblocks == irt_cap) {
    if (irt_cap == 0) atexit(irt_free_all);
    irt_cap = irt_cap ? 2 * irt_cap : 64;
    irt_blocks = (void**)realloc(irt_blocks, irt_cap * sizeof(void*));
    if (!irt_blocks) irt_fail("out of memory");
  }
  void* p = calloc(1, size ? size : 1);
  if (!p) irt_fail("out of memory");
  irt_blocks[irt_nblocks++] = p;
  return p;
}

static inline size_t irt_esize(int dt) { return dt == IRT_B1 ? 1 : dt == IRT_F4 || dt == IRT_I4 ? 4 : 8; }
static inline int64_t irt_numel(int ndim, const int64_t* shape) {
  int64_t n = 1;
  for (int d = 0; d < ndim; ++d) n *= shape[d];
  return n;
}
static inline irt_obj* irt_new(int dtype, int ndim, const int64_t* shape) {
  irt_obj* t = (irt_obj*)irt_alloc(sizeof(irt_obj));
  t->kind = IRT_TENSOR;
  t->dtype = dtype;
  t->ndim = ndim;
  t->shape = (int64_t*)irt_alloc(sizeof(int64_t) * (size_t)(ndim ? ndim : 1));
  if (ndim) memcpy(t->shape, shape, sizeof(int64_t) * (size_t)ndim);
  t->n = irt_numel(ndim, shape);
  t->data = irt_alloc(irt_esize(dtype) * (size_t)t->n);
  return t;
}
/* A tensor from its elements (data as the C type of its element type). */
static inline irt_t irt_tensor(int dtype, int ndim, const int64_t* shape, const void* data) {
  irt_obj* t = irt_new(dtype, ndim, shape);
  memcpy(t->data, data, irt_esize(dtype) * (size_t)t->n);
  return t;
}
static inline irt_t irt_tuple(int64_t n, const irt_t* items) {
  irt_obj* t = (irt_obj*)irt_alloc(sizeof(irt_obj));
  t->kind = IRT_TUPLE;
  t->n = n;
  t->data = irt_alloc(sizeof(irt_t) * (size_t)n);
  if (n) memcpy(t->data, items, sizeof(irt_t) * (size_t)n);
  return t;
}
static inline irt_t irt_item(irt_t t, int64_t k) { return ((const irt_t*)t->data)[k]; }

static inline irt_t irt_box_b(bool v) { irt_obj* o = (irt_obj*)irt_alloc(sizeof(irt_obj)); o->kind = 0; o->b = v; o->i = v; o->d = v; return o; }
static inline irt_t irt_box_i(int64_t v) { irt_obj* o = (irt_obj*)irt_alloc(sizeof(irt_obj)); o->kind = 1; o->i = v; o->d = (double)v; return o; }
static inline irt_t irt_box_f(float v) { irt_obj* o = (irt_obj*)irt_alloc(sizeof(irt_obj)); o->kind = 2; o->f = v; o->d = v; return o; }
static inline irt_t irt_box_d(double v) { irt_obj* o = (irt_obj*)irt_alloc(sizeof(irt_obj)); o->kind = 3; o->d = v; return o; }
static inline irt_t irt_box_t(irt_t v) { return v; }
static inline irt_t irt_box_int(int v) { return irt_box_b(v != 0); } /* true and false */
#define IRT_BOX(x) _Generic((x), bool: irt_box_b, int: irt_box_int, int64_t: irt_box_i, float: irt_box_f, double: irt_box_d, irt_t: irt_box_t, irt_obj*: irt_box_t)(x)
static inline int irt_isnum(irt_t x) { return x->kind < IRT_TENSOR; }
/* A number of the kind the trace recorded. */
static inline bool irt_ub(irt_t x) { if (x->kind != 0) irt_fail("TypeError: not a Bool"); return x->b; }
static inline int64_t irt_ui(irt_t x) { if (x->kind != 1) irt_fail("TypeError: not an Int64"); return x->i; }
static inline float irt_uf(irt_t x) { if (x->kind != 2) irt_fail("TypeError: not a Float32"); return x->f; }
static inline double irt_ud(irt_t x) { if (x->kind != 3) irt_fail("TypeError: not a Float64"); return x->d; }
static inline int64_t irt_index(irt_t x) {
  if (x->kind == 0 || x->kind == 1) return x->i;
  if (x->kind <= 3 && x->d == trunc(x->d)) return (int64_t)x->d;
  irt_fail("TypeError: not an index");
  return 0;
}

/* Element k: its number kind, and its value as an integer and as a double. */
typedef struct { int k; int64_t i; double d; } irt_s;
static inline irt_s irt_el(irt_t t, int64_t k) {
  irt_s s = {0, 0, 0.0};
  if (t->kind != IRT_TENSOR) {
    s.k = t->kind; s.i = t->i; s.d = t->d;
    return s;
  }
  switch (t->dtype) {
    case IRT_B1: s.k = 0; s.i = ((const bool*)t->data)[k]; s.d = (double)s.i; break;
    case IRT_I8: s.k = 1; s.i = ((const int64_t*)t->data)[k]; s.d = (double)s.i; break;
    case IRT_I4: s.k = 1; s.i = ((const int32_t*)t->data)[k]; s.d = (double)s.i; break;
    case IRT_F4: s.k = 2; s.d = ((const float*)t->data)[k]; break;
    default: s.k = 3; s.d = ((const double*)t->data)[k]; break;
  }
  return s;
}
/* Element k as a boxed number (Int32 as Int64). */
static inline irt_t irt_elbox(irt_t t, int64_t k) {
  switch (t->dtype) {
    case IRT_B1: return irt_box_b(((const bool*)t->data)[k]);
    case IRT_I8: return irt_box_i(((const int64_t*)t->data)[k]);
    case IRT_I4: return irt_box_i(((const int32_t*)t->data)[k]);
    case IRT_F4: return irt_box_f(((const float*)t->data)[k]);
    default: return irt_box_d(((const double*)t->data)[k]);
  }
}
/* Stores a number in element k, converted to the element type. */
static inline void irt_store_d(irt_obj* t, int64_t k, double v) {
  switch (t->dtype) {
    case IRT_B1: ((bool*)t->data)[k] = v != 0; break;
    case IRT_I8: ((int64_t*)t->data)[k] = (int64_t)v; break;
    case IRT_I4: ((int32_t*)t->data)[k] = (int32_t)v; break;
    case IRT_F4: ((float*)t->data)[k] = (float)v; break;
    default: ((double*)t->data)[k] = v; break;
  }
}
static inline void irt_store_i(irt_obj* t, int64_t k, int64_t v) {
  switch (t->dtype) {
    case IRT_B1: ((bool*)t->data)[k] = v != 0; break;
    case IRT_I8: ((int64_t*)t->data)[k] = v; break;
    case IRT_I4: ((int32_t*)t->data)[k] = (int32_t)v; break;
    case IRT_F4: ((float*)t->data)[k] = (float)(double)v; break;
    default: ((double*)t->data)[k] = (double)v; break;
  }
}
static inline void irt_store_f(irt_obj* t, int64_t k, float v) { irt_store_d(t, k, v); }
static inline void irt_store_b(irt_obj* t, int64_t k, bool v) { irt_store_i(t, k, v); }
#define IRT_STORE(t, k, v) _Generic((v), bool: irt_store_b, int64_t: irt_store_i, float: irt_store_f, double: irt_store_d)(t, k, v)
static inline void irt_store(irt_obj* t, int64_t k, irt_s v) {
  if (v.k <= 1) irt_store_i(t, k, v.i); else irt_store_d(t, k, v.d);
}

/* The shape operands broadcast to (NumPy's rule), and each operand's
   offset of output element k. */
typedef struct {
  int ndim;
  int64_t shape[32];
} irt_shape;
static inline irt_shape irt_bshape(int na, const irt_t* a) {
  irt_shape s;
  s.ndim = 0;
  for (int j = 0; j < na; ++j) {
    if (a[j]->kind != IRT_TENSOR) continue;
    if (a[j]->ndim > 32) irt_fail("more than 32 dimensions");
    if (a[j]->ndim > s.ndim) {
      int extra = a[j]->ndim - s.ndim;
      memmove(s.shape + extra, s.shape, sizeof(int64_t) * (size_t)s.ndim);
      for (int d = 0; d < extra; ++d) s.shape[d] = 1;
      s.ndim = a[j]->ndim;
    }
    int lead = s.ndim - a[j]->ndim;
    for (int d = 0; d < a[j]->ndim; ++d) {
      int64_t x = a[j]->shape[d], *y = &s.shape[lead + d];
      if (x == *y || x == 1) continue;
      if (*y == 1) *y = x;
      else irt_fail("ValueError: shapes cannot be broadcast together");
    }
  }
  return s;
}
/* The offset in t (broadcast to s) of element k of s. */
static inline int64_t irt_boff(irt_t t, const irt_shape* s, int64_t k) {
  if (t->kind != IRT_TENSOR) return 0;
  int64_t off = 0, stride = 1;
  int lead = s->ndim - t->ndim;
  for (int d = s->ndim - 1; d >= 0; --d) {
    int64_t i = k % s->shape[d];
    k /= s->shape[d];
    if (d >= lead) {
      int64_t n = t->shape[d - lead];
      if (n != 1) off += i * stride;
      stride *= n;
    }
  }
  return off;
}

/* Eigen's vectorized sum of x[0..n) (x from `offset` elements past an
   16-byte boundary): the elements before the first boundary and after the
   last whole packet one by one, the packets in two accumulators. */
#define IRT_SUMS(T, S, P)                                                              \
  static inline T irt_sum##S(const T* x, int64_t n, int64_t offset) {                         \
    if (n == 0) return 0;                                                              \
    int64_t start = (P - offset % P) % P;                                              \
    if (start > n) start = n;                                                          \
    if ((n - start) / P == 0) {                                                        \
      T r = x[0];                                                                      \
      for (int64_t i = 1; i < n; ++i) r = r + x[i];                                    \
      return r;                                                                        \
    }                                                                                  \
    int64_t size = n - start, end2 = start + size / (2 * P) * (2 * P);                 \
    int64_t end = start + size / P * P;                                                \
    T a0[P], a1[P];                                                                    \
    for (int q = 0; q < P; ++q) a0[q] = x[start + q];                                  \
    if (end - start > P) {                                                             \
      for (int q = 0; q < P; ++q) a1[q] = x[start + P + q];                            \
      for (int64_t i = start + 2 * P; i < end2; i += 2 * P) {                          \
        for (int q = 0; q < P; ++q) {                                                  \
          a0[q] = a0[q] + x[i + q];                                                    \
          a1[q] = a1[q] + x[i + P + q];                                                \
        }                                                                              \
      }                                                                                \
      for (int q = 0; q < P; ++q) a0[q] = a0[q] + a1[q];                               \
      if (end > end2)                                                                  \
        for (int q = 0; q < P; ++q) a0[q] = a0[q] + x[end2 + q];                       \
    }                                                                                  \
    T r = P == 2 ? a0[0] + a0[1] : (a0[0] + a0[P > 2 ? 2 : 0]) + (a0[1] + a0[P > 2 ? 3 : 1]); \
    for (int64_t i = 0; i < start; ++i) r = r + x[i];                                  \
    for (int64_t i = end; i < n; ++i) r = r + x[i];                                    \
    return r;                                                                          \
  }                                                                                    \
  /* out[j] = the sum of column j of the rows x cols matrix x, as Eigen's              \
     colwise().sum() into out (`offset` elements past a boundary). */                  \
  static inline void irt_colsum##S(const T* x, int64_t rows, int64_t cols, T* out, int64_t offset) { \
    int64_t start = (P - offset % P) % P;                                              \
    if (start > cols) start = cols;                                                    \
    int64_t end = start + (cols - start) / P * P;                                      \
    for (int64_t j = 0; j < cols; ++j) {                                               \
      if (rows == 0) {                                                                 \
        out[j] = 0;                                                                    \
        continue;                                                                      \
      }                                                                                \
      T r = x[j];                                                                      \
      int64_t i = 1;                                                                   \
      if (start <= j && j < end) {                                                     \
        int64_t size4 = (rows - 1) & ~(int64_t)3;                                      \
        for (; i < size4; i += 4)                                                      \
          r = r + ((x[i * cols + j] + x[(i + 1) * cols + j]) +                         \
                   (x[(i + 2) * cols + j] + x[(i + 3) * cols + j]));                   \
      }                                                                                \
      for (; i < rows; ++i) r = r + x[i * cols + j];                                   \
      out[j] = r;                                                                      \
    }                                                                                  \
  }
IRT_SUMS(double, d, 2)
IRT_SUMS(float, f, 4)

static inline irt_t irt_tensor_of(irt_t x) {
  if (x->kind != IRT_TENSOR) irt_fail("TypeError: not a tensor");
  return x;
}
static inline bool irt_isfloat(int dt) { return dt == IRT_F4 || dt == IRT_F8; }
static inline irt_t irt_copy(irt_t x) { return irt_tensor(x->dtype, x->ndim, x->shape, x->data); }
static inline irt_obj* irt_convert(irt_t x, int dtype) {
  irt_obj* t = irt_new(dtype, x->ndim, x->shape);
  for (int64_t k = 0; k < x->n; ++k) irt_store(t, k, irt_el(x, k));
  return t;
}

/* sum, mean, maximum, minimum (kind 0-3) of a tensor, or along dimension
   a[1] (1-based). */
static inline irt_t irt_reduce(int na, const irt_t* a, int kind) {
  irt_t x = a[0];
  if (x->kind != IRT_TENSOR) {
    if (na > 1) irt_fail("ArgumentError: a scalar has no dimensions");
    return x;
  }
  int d = na > 1 ? (int)irt_index(a[1]) - 1 : -1;
  if (na > 1 && (d < 0 || d >= x->ndim)) irt_fail("ArgumentError: no such dimension");
  int64_t outer = 1, inner = 1, length = d < 0 ? x->n : x->shape[d];
  for (int k = 0; d >= 0 && k < x->ndim; ++k) {
    if (k < d) outer *= x->shape[k];
    if (k > d) inner *= x->shape[k];
  }
  int64_t shape[32];
  for (int k = 0; k < x->ndim && k < 32; ++k) shape[k] = k == d ? 1 : x->shape[k];
  bool extreme = kind >= 2;
  if (extreme && length == 0) irt_fail("ArgumentError: reducing over an empty collection");
  if (!extreme && irt_isfloat(x->dtype)) {
    if (x->dtype == IRT_F8) {
      const double* v = (const double*)x->data;
      if (d < 0) {
        double s = irt_sumd(v, x->n, 0);
        return irt_box_d(kind == 1 ? s / (double)x->n : s);
      }
      irt_obj* out = irt_new(IRT_F8, x->ndim, shape);
      double* o = (double*)out->data;
      for (int64_t b = 0; b < outer; ++b) irt_colsumd(v + b * length * inner, length, inner, o + b * inner, b * inner);
      if (kind == 1) for (int64_t k = 0; k < out->n; ++k) o[k] = o[k] / (double)length;
      return out;
    }
    const float* v = (const float*)x->data;
    if (d < 0) {
      float s = irt_sumf(v, x->n, 0);
      return irt_box_f(kind == 1 ? s / (float)x->n : s);
    }
    irt_obj* out = irt_new(IRT_F4, x->ndim, shape);
    float* o = (float*)out->data;
    for (int64_t b = 0; b < outer; ++b) irt_colsumf(v + b * length * inner, length, inner, o + b * inner, b * inner);
    if (kind == 1) for (int64_t k = 0; k < out->n; ++k) o[k] = o[k] / (float)length;
    return out;
  }
  int out_dt = extreme ? x->dtype : kind == 1 ? IRT_F8 : IRT_I8;
  irt_obj* out = irt_new(out_dt, d < 0 ? 0 : x->ndim, shape);
  if (d < 0) inner = 1;
  for (int64_t b = 0; b < outer; ++b) {
    for (int64_t i = 0; i < inner; ++i) {
      int64_t base = b * length * inner + i;
      irt_s r = irt_el(x, base);
      if (!extreme) {
        int64_t s = 0;
        for (int64_t q = 0; q < length; ++q) s = irt_addi(s, irt_el(x, base + q * inner).i);
        r.k = 1;
        r.i = s;
        if (kind == 1) {
          r.k = 3;
          r.d = (double)s / (double)length;
        }
      } else {
        for (int64_t q = 1; q < length; ++q) {
          irt_s v = irt_el(x, base + q * inner);
          if (r.k == 0) r.i = kind == 2 ? (r.i || v.i) : (r.i && v.i);
          else if (r.k == 1) r.i = kind == 2 ? (v.i > r.i ? v.i : r.i) : (v.i < r.i ? v.i : r.i);
          else if (r.k == 2) r.d = (float)(kind == 2 ? irt_fmax(r.d, v.d) : irt_fmin(r.d, v.d));
          else r.d = kind == 2 ? irt_fmax(r.d, v.d) : irt_fmin(r.d, v.d);
        }
      }
      irt_store(out, b * inner + i, r);
    }
  }
  if (d < 0) return irt_elbox(out, 0);
  return out;
}
static inline irt_t irt_sum(int na, const irt_t* a) { return irt_reduce(na, a, 0); }
static inline irt_t irt_mean(int na, const irt_t* a) { return irt_reduce(na, a, 1); }
static inline irt_t irt_maximum(int na, const irt_t* a) { return irt_reduce(na, a, 2); }
static inline irt_t irt_minimum(int na, const irt_t* a) { return irt_reduce(na, a, 3); }

/* Both operands as tensors of one float type: Float32 when both are. */
static inline int irt_floats(irt_t x, irt_t y) { return x->dtype == IRT_F4 && y->dtype == IRT_F4 ? IRT_F4 : IRT_F8; }

/* A matrix product (a vector is a column): each element the sum over k of
   x[i, k] * y[k, j], added in order of k. */
static inline irt_t irt_matmul(int na, const irt_t* a) {
  (void)na;
  irt_t x0 = irt_tensor_of(a[0]), y0 = irt_tensor_of(a[1]);
  int dt = irt_floats(x0, y0);
  irt_t x = irt_convert(x0, dt), y = irt_convert(y0, dt);
  if (x->ndim > 2 || y->ndim > 2 || x->ndim == 0 || y->ndim == 0) irt_fail("DimensionMismatch: matmul of tensors that are not matrices");
  int64_t m = x->shape[0], k = x->ndim == 2 ? x->shape[1] : 1;
  int64_t k2 = y->shape[0], n = y->ndim == 2 ? y->shape[1] : 1;
  if (k != k2) irt_fail("DimensionMismatch: matmul: inner dimensions differ");
  int64_t shape[2] = {m, n};
  irt_obj* out = irt_new(dt, y->ndim == 2 ? 2 : 1, shape);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      if (k == 0) continue;
      if (dt == IRT_F8) {
        const double *xv = (const double*)x->data, *yv = (const double*)y->data;
        double r = xv[i * k] * yv[j];
        for (int64_t q = 1; q < k; ++q) r = r + xv[i * k + q] * yv[q * n + j];
        ((double*)out->data)[i * n + j] = r;
      } else {
        const float *xv = (const float*)x->data, *yv = (const float*)y->data;
        float r = xv[i * k] * yv[j];
        for (int64_t q = 1; q < k; ++q) r = r + xv[i * k + q] * yv[q * n + j];
        ((float*)out->data)[i * n + j] = r;
      }
    }
  }
  return out;
}

/* The sum of the products, in the order of Eigen's vectorized sum. */
static inline irt_t irt_dot(int na, const irt_t* a) {
  (void)na;
  irt_t x0 = irt_tensor_of(a[0]), y0 = irt_tensor_of(a[1]);
  int dt = irt_floats(x0, y0);
  irt_t x = irt_convert(x0, dt), y = irt_convert(y0, dt);
  if (x->n != y->n) irt_fail("DimensionMismatch: dot of tensors of different lengths");
  irt_obj* p = irt_new(dt, x->ndim, x->shape);
  for (int64_t k = 0; k < x->n; ++k) {
    if (dt == IRT_F8) ((double*)p->data)[k] = ((const double*)x->data)[k] * ((const double*)y->data)[k];
    else ((float*)p->data)[k] = ((const float*)x->data)[k] * ((const float*)y->data)[k];
  }
  if (dt == IRT_F8) return irt_box_d(irt_sumd((const double*)p->data, p->n, 0));
  return irt_box_f(irt_sumf((const float*)p->data, p->n, 0));
}

static inline irt_t irt_transpose(int na, const irt_t* a) {
  (void)na;
  irt_t x = a[0];
  if (x->kind != IRT_TENSOR || x->ndim == 0) return x;
  if (x->ndim == 1) {
    int64_t shape[2] = {1, x->shape[0]};
    return irt_tensor(x->dtype, 2, shape, x->data);
  }
  if (x->ndim != 2) irt_fail("transpose of a tensor of more than 2 dimensions");
  int64_t r = x->shape[0], c = x->shape[1], shape[2] = {c, r};
  irt_obj* out = irt_new(x->dtype, 2, shape);
  size_t es = irt_esize(x->dtype);
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j)
      memcpy((char*)out->data + (size_t)(j * r + i) * es, (const char*)x->data + (size_t)(i * c + j) * es, es);
  return out;
}

/* Dimensions given as numbers, or as one tuple. */
static inline int irt_dims(int na, const irt_t* a, int64_t* dims) {
  if (na == 1 && a[0]->kind == IRT_TUPLE) {
    if (a[0]->n > 32) irt_fail("more than 32 dimensions");
    for (int64_t k = 0; k < a[0]->n; ++k) dims[k] = irt_index(irt_item(a[0], k));
    return (int)a[0]->n;
  }
  if (na > 32) irt_fail("more than 32 dimensions");
  for (int k = 0; k < na; ++k) dims[k] = irt_index(a[k]);
  return na;
}

static inline irt_t irt_reshape(int na, const irt_t* a) {
  irt_t x = a[0];
  int64_t dims[32];
  int nd = irt_dims(na - 1, a + 1, dims);
  if (x->kind != IRT_TENSOR) return x;
  if (irt_numel(nd, dims) != x->n) irt_fail("DimensionMismatch: reshape to another number of elements");
  return irt_tensor(x->dtype, nd, dims, x->data);
}

/* The row-major offset of 1-based indices (one index: linear). */
static inline int64_t irt_offset(irt_t x, int ni, const irt_t* idx) {
  if (ni == 1) return irt_index(idx[0]) - 1;
  int64_t off = 0;
  for (int k = 0; k < ni && k < x->ndim; ++k) off = off * x->shape[k] + irt_index(idx[k]) - 1;
  return off;
}

static inline irt_t irt_getindex(int na, const irt_t* a) {
  irt_t x = a[0];
  if (x->kind == IRT_TUPLE) {
    int64_t k = irt_index(a[1]) - 1;
    if (k < 0 || k >= x->n) irt_fail("BoundsError: getindex: index out of bounds");
    return irt_item(x, k);
  }
  x = irt_tensor_of(x);
  int64_t k = irt_offset(x, na - 1, a + 1);
  if (k < 0 || k >= x->n) irt_fail("BoundsError: getindex: index out of bounds");
  return irt_elbox(x, k);
}

static inline irt_t irt_addindex(int na, const irt_t* a) {
  irt_t x = irt_tensor_of(a[0]);
  irt_obj* t = (irt_obj*)irt_copy(x);
  int64_t k = irt_offset(x, na - 2, a + 2);
  if (k < 0 || k >= x->n) irt_fail("BoundsError: addindex: index out of bounds");
  double v = irt_el(a[1], 0).d;
  if (t->dtype == IRT_F8) ((double*)t->data)[k] = ((double*)t->data)[k] + v;
  else if (t->dtype == IRT_F4) ((float*)t->data)[k] = ((float*)t->data)[k] + (float)v;
  else irt_fail("addindex on a tensor that is not of floats");
  return t;
}

/* x[i, ...] (0-based, negative from the end): the offset of the block and
   its element count. */
static inline int64_t irt_key(irt_t x, int ni, const irt_t* idx, int64_t* count) {
  if (ni > x->ndim) irt_fail("IndexError: too many indices");
  int64_t off = 0, rest = 1;
  for (int k = 0; k < x->ndim; ++k) {
    if (k < ni) {
      int64_t i = irt_index(idx[k]);
      if (i < 0) i += x->shape[k];
      if (i < 0 || i >= x->shape[k]) irt_fail("IndexError: index out of bounds");
      off = off * x->shape[k] + i;
    } else {
      off *= x->shape[k];
      rest *= x->shape[k];
    }
  }
  *count = rest;
  return off;
}

static inline irt_t irt_getitem(int na, const irt_t* a) {
  irt_t x = a[0];
  if (x->kind == IRT_TUPLE) {
    int64_t k = irt_index(a[1]);
    if (k < 0) k += x->n;
    if (k < 0 || k >= x->n) irt_fail("IndexError: tuple index out of range");
    return irt_item(x, k);
  }
  x = irt_tensor_of(x);
  int64_t count;
  int64_t off = irt_key(x, na - 1, a + 1, &count);
  if (na - 1 == x->ndim) return irt_elbox(x, off);
  return irt_tensor(x->dtype, x->ndim - (na - 1), x->shape + (na - 1),
                    (const char*)x->data + (size_t)off * irt_esize(x->dtype));
}

static inline irt_t irt_additem(int na, const irt_t* a) {
  irt_t x = irt_tensor_of(a[0]), v = a[1];
  irt_obj* t = (irt_obj*)irt_copy(x);
  int ni = na - 2;
  int64_t count;
  int64_t off = irt_key(x, ni, a + 2, &count);
  if (!irt_isfloat(t->dtype)) irt_fail("additem on a tensor that is not of floats");
  irt_shape s;
  s.ndim = x->ndim - ni;
  for (int k = 0; k < s.ndim; ++k) s.shape[k] = x->shape[ni + k];
  if (v->kind == IRT_TENSOR) {
    irt_t vs[1] = {v};
    irt_shape b = irt_bshape(1, vs);
    if (b.ndim > s.ndim) irt_fail("ValueError: could not broadcast");
  }
  for (int64_t k = 0; k < count; ++k) {
    double e = irt_el(v, irt_boff(v, &s, k)).d;
    if (t->dtype == IRT_F8) ((double*)t->data)[off + k] = ((double*)t->data)[off + k] + e;
    else ((float*)t->data)[off + k] = ((float*)t->data)[off + k] + (float)e;
  }
  return t;
}

/* x summed over the dimensions broadcasting stretched, to like's shape. */
static inline irt_t irt_sum_to(int na, const irt_t* a) {
  (void)na;
  irt_t x = a[0], like = a[1];
  if (like->kind != IRT_TENSOR) {
    bool f32 = like->kind == 2;
    if (x->kind != IRT_TENSOR) return f32 ? irt_box_f((float)x->d) : x;
    if (x->dtype == IRT_F8) {
      double s = irt_sumd((const double*)x->data, x->n, 0);
      return f32 ? irt_box_f((float)s) : irt_box_d(s);
    }
    if (x->dtype != IRT_F4) irt_fail("sum_to of a tensor that is not of floats");
    float s = irt_sumf((const float*)x->data, x->n, 0);
    return f32 || like->kind != 3 ? irt_box_f(s) : irt_box_d(s);
  }
  x = irt_tensor_of(x);
  if (!irt_isfloat(x->dtype)) irt_fail("sum_to of a tensor that is not of floats");
  if (x->ndim == like->ndim && memcmp(x->shape, like->shape, sizeof(int64_t) * (size_t)x->ndim) == 0) return x;
  int lead = x->ndim - like->ndim;
  if (lead < 0) irt_fail("sum_to: more dimensions than the tensor has");
  int64_t m = like->n;
  irt_obj* out = irt_new(x->dtype, like->ndim, like->shape);
  bool f8 = x->dtype == IRT_F8;
  if (memcmp(x->shape + lead, like->shape, sizeof(int64_t) * (size_t)like->ndim) == 0) {
    if (x->n == 0) return out;
    if (f8) irt_colsumd((const double*)x->data, x->n / m, m, (double*)out->data, 0);
    else irt_colsumf((const float*)x->data, x->n / m, m, (float*)out->data, 0);
    return out;
  }
  int64_t strides[32], s = 1;
  for (int d = x->ndim - 1; d >= 0; --d) {
    int64_t full = d < lead ? 1 : like->shape[d - lead];
    strides[d] = full == 1 ? 0 : s;
    s *= full;
  }
  int64_t inner = x->ndim ? x->shape[x->ndim - 1] : 1;
  int64_t rows = inner ? x->n / inner : 0;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t rem = r, ot = 0;
    for (int d = x->ndim - 2; d >= 0; --d) {
      ot += rem % x->shape[d] * strides[d];
      rem /= x->shape[d];
    }
    int64_t ox = r * inner;
    if (f8) {
      double *o = (double*)out->data;
      const double* v = (const double*)x->data;
      if (strides[x->ndim - 1] == 0) o[ot] = o[ot] + irt_sumd(v + ox, inner, ox);
      else for (int64_t i = 0; i < inner; ++i) o[ot + i] = o[ot + i] + v[ox + i];
    } else {
      float *o = (float*)out->data;
      const float* v = (const float*)x->data;
      if (strides[x->ndim - 1] == 0) o[ot] = o[ot] + irt_sumf(v + ox, inner, ox);
      else for (int64_t i = 0; i < inner; ++i) o[ot + i] = o[ot + i] + v[ox + i];
    }
  }
  return out;
}

/* x (plus zero of its type) broadcast to like's shape. */
static inline irt_t irt_broadcast_to(int na, const irt_t* a) {
  (void)na;
  irt_t x = a[0], like = a[1];
  if (like->kind != IRT_TENSOR) return x;
  if (x->kind == IRT_TENSOR && x->ndim == like->ndim &&
      memcmp(x->shape, like->shape, sizeof(int64_t) * (size_t)x->ndim) == 0) return x;
  int dt = x->kind == IRT_TENSOR ? x->dtype : x->kind == 2 ? IRT_F4 : IRT_F8;
  irt_shape s;
  s.ndim = like->ndim;
  memcpy(s.shape, like->shape, sizeof(int64_t) * (size_t)like->ndim);
  irt_obj* out = irt_new(dt, like->ndim, like->shape);
  for (int64_t k = 0; k < out->n; ++k) {
    irt_s e = irt_el(x, irt_boff(x, &s, k));
    if (dt == IRT_F8) ((double*)out->data)[k] = e.d + 0.0;
    else if (dt == IRT_F4) ((float*)out->data)[k] = (float)e.d + 0.0f;
    else irt_store(out, k, e);
  }
  return out;
}

static inline irt_t irt_fill(int na, const irt_t* a) {
  int64_t dims[32];
  int nd = irt_dims(na - 1, a + 1, dims);
  irt_t v = a[0];
  if (!irt_isnum(v)) irt_fail("fill with a value that is not a number");
  irt_obj* out = irt_new(v->kind, nd, dims);
  for (int64_t k = 0; k < out->n; ++k) irt_store(out, k, irt_el(v, 0));
  return out;
}
static inline irt_t irt_zeros(int na, const irt_t* a) {
  int64_t dims[32];
  int nd = irt_dims(na, a, dims);
  return irt_new(IRT_F8, nd, dims);
}
static inline irt_t irt_ones(int na, const irt_t* a) {
  int64_t dims[32];
  int nd = irt_dims(na, a, dims);
  irt_obj* out = irt_new(IRT_F8, nd, dims);
  for (int64_t k = 0; k < out->n; ++k) ((double*)out->data)[k] = 1.0;
  return out;
}
static inline irt_t irt_size(int na, const irt_t* a) {
  irt_t x = a[0];
  int nd = x->kind == IRT_TENSOR ? x->ndim : 0;
  if (na == 1) {
    irt_t items[32];
    for (int k = 0; k < nd && k < 32; ++k) items[k] = irt_box_i(x->shape[k]);
    return irt_tuple(nd, items);
  }
  int64_t k = irt_index(a[1]);
  return irt_box_i(k <= nd ? x->shape[k - 1] : 1);
}
static inline irt_t irt_length(int na, const irt_t* a) {
  (void)na;
  irt_t x = a[0];
  return irt_box_i(x->kind == IRT_TUPLE || x->kind == IRT_TENSOR ? x->n : 1);
}

/* The elements first, first + step, ... up to last (1-based) along a
   dimension of n: their count, and in *from the 0-based first one. */
static inline int64_t irt_range(int64_t n, int64_t first, int64_t last, int64_t step, int64_t* from) {
  *from = 0;
  if (step == 0) irt_fail("ValueError: slice step cannot be zero");
  if (step > 0 ? last < first : last > first) return 0;
  int64_t start = first - 1, stop = last - 1 + (step > 0 ? 1 : -1), count = 0;
  if (step > 0) {
    if (stop > n) stop = n;
    if (start < 0) start = 0;
    for (int64_t i = start; i < stop; i += step) ++count;
  } else {
    if (start > n - 1) start = n - 1;
    for (int64_t i = start; i > stop && i >= 0; i += step) ++count;
  }
  *from = start;
  return count;
}

/* slice (unslice = 0): x along dimension d; unslice: t into zeros shaped as x. */
static inline irt_t irt_slicing(int na, const irt_t* a, int unslice) {
  irt_t t = unslice ? irt_tensor_of(a[0]) : NULL, x = irt_tensor_of(a[unslice]);
  const irt_t* b = a + unslice + 1;
  int d = (int)irt_index(b[0]) - 1;
  if (d < 0 || d >= x->ndim) irt_fail("IndexError: no such dimension");
  int64_t step = na - unslice > 4 ? irt_index(b[3]) : 1, from;
  int64_t count = irt_range(x->shape[d], irt_index(b[1]), irt_index(b[2]), step, &from);
  int64_t outer = 1, inner = 1, shape[32];
  for (int k = 0; k < x->ndim; ++k) {
    if (k < d) outer *= x->shape[k];
    if (k > d) inner *= x->shape[k];
    shape[k] = k == d ? count : x->shape[k];
  }
  if (!unslice) {
    irt_obj* out = irt_new(x->dtype, x->ndim, shape);
    size_t es = irt_esize(x->dtype);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t j = 0; j < count; ++j)
        memcpy((char*)out->data + (size_t)((o * count + j) * inner) * es,
               (const char*)x->data + (size_t)((o * x->shape[d] + from + j * step) * inner) * es,
               (size_t)inner * es);
    return out;
  }
  irt_obj* out = irt_new(t->dtype, x->ndim, x->shape);
  irt_shape ks;
  ks.ndim = x->ndim;
  memcpy(ks.shape, shape, sizeof(int64_t) * (size_t)x->ndim);
  int64_t k = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < count; ++j)
      for (int64_t i = 0; i < inner; ++i, ++k) {
        int64_t at = (o * x->shape[d] + from + j * step) * inner + i;
        irt_s e = irt_el(t, irt_boff(t, &ks, k));
        if (t->dtype == IRT_F8) ((double*)out->data)[at] = 0.0 + e.d;
        else if (t->dtype == IRT_F4) ((float*)out->data)[at] = 0.0f + (float)e.d;
        else irt_store(out, at, e);
      }
  return out;
}
static inline irt_t irt_slice(int na, const irt_t* a) { return irt_slicing(na, a, 0); }
static inline irt_t irt_unslice(int na, const irt_t* a) { return irt_slicing(na, a, 1); }

/* Tensors joined along dimension a[0], in the type that holds them all. */
static inline irt_t irt_cat(int na, const irt_t* a) {
  int d = (int)irt_index(a[0]) - 1;
  bool f64 = false, f32 = false, ints = false;
  for (int j = 1; j < na; ++j) {
    irt_t x = irt_tensor_of(a[j]);
    f64 |= x->dtype == IRT_F8;
    f32 |= x->dtype == IRT_F4;
    ints |= x->dtype == IRT_I8 || x->dtype == IRT_I4;
  }
  int dt = f64 || (f32 && ints) ? IRT_F8 : f32 ? IRT_F4 : ints ? IRT_I8 : IRT_B1;
  irt_t x0 = a[1];
  if (d < 0 || d >= x0->ndim) irt_fail("AxisError: no such dimension");
  int64_t shape[32], total = 0, outer = 1, inner = 1;
  for (int j = 1; j < na; ++j) {
    if (a[j]->ndim != x0->ndim) irt_fail("ValueError: cat of tensors of different dimensions");
    for (int k = 0; k < x0->ndim; ++k)
      if (k != d && a[j]->shape[k] != x0->shape[k]) irt_fail("ValueError: cat of tensors of different shapes");
    total += a[j]->shape[d];
  }
  for (int k = 0; k < x0->ndim; ++k) {
    shape[k] = k == d ? total : x0->shape[k];
    if (k < d) outer *= shape[k];
    if (k > d) inner *= shape[k];
  }
  irt_obj* out = irt_new(dt, x0->ndim, shape);
  int64_t k = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int j = 1; j < na; ++j) {
      int64_t block = a[j]->shape[d] * inner;
      for (int64_t i = 0; i < block; ++i) {
        irt_s e = irt_el(a[j], o * block + i);
        if (dt == IRT_F4 && e.k == 1) e.d = (double)(float)e.i, e.k = 2;
        irt_store(out, k++, e);
      }
    }
  return out;
}

/* An elementwise operation's result: a tensor of `dtype` of the shape its
   operands broadcast to. */
static inline irt_obj* irt_ew_new(int dtype, int na, const irt_t* a, irt_shape* s) {
  *s = irt_bshape(na, a);
  return irt_new(dtype, s->ndim, s->shape);
}
/* Whether an elementwise operation computes in a float type (its operands'
   tensors all of floats): the numbers take the tensors' type first. */
static inline int irt_ew_float(int na, const irt_t* a) {
  int dt = IRT_F4;
  for (int j = 0; j < na; ++j) {
    if (a[j]->kind != IRT_TENSOR) continue;
    if (!irt_isfloat(a[j]->dtype)) return -1;
    if (a[j]->dtype == IRT_F8) dt = IRT_F8;
  }
  return dt;
}

/* The parameters a program takes: a tensor in irt-trace's notation, of the
   element type and number of dimensions the trace recorded ([1.5, -0.5]
   for a vector, [1 2; 3 4] for a matrix). */
static inline irt_t irt_parse(const char* text, int dtype, int ndim) {
  size_t len = strlen(text), cap = len / 2 + 1;
  char* buf = (char*)irt_alloc(len + 1);
  void* data = irt_alloc(cap * 8);
  int64_t n = 0, rows = 1;
  const char* p = text;
  while (*p) {
    if (*p == ';') ++rows;
    if (*p == '[' || *p == ']' || *p == ',' || *p == ';' || *p == ' ' || *p == '\t' || *p == '\n') {
      ++p;
      continue;
    }
    size_t k = 0;
    while (p[k] && !strchr("[],; \t\n", p[k])) ++k;
    memcpy(buf, p, k);
    buf[k] = 0;
    p += k;
    char* end = buf;
    switch (dtype) {
      case IRT_B1: ((bool*)data)[n] = strcmp(buf, "true") == 0 || strcmp(buf, "1") == 0; end = buf + k; break;
      case IRT_I8: ((int64_t*)data)[n] = (int64_t)strtoll(buf, &end, 10); break;
      case IRT_I4: ((int32_t*)data)[n] = (int32_t)strtol(buf, &end, 10); break;
      case IRT_F4:
        for (size_t q = 1; q + 1 < k; ++q)
          if (buf[q] == 'f' && (buf[q - 1] == '.' || (buf[q - 1] >= '0' && buf[q - 1] <= '9'))) buf[q] = 'e';
        ((float*)data)[n] = strtof(buf, &end);
        if (strcmp(end, "32") == 0) end += 2; /* Inf32, NaN32 */
        break;
      default: ((double*)data)[n] = strtod(buf, &end); break;
    }
    if (end == buf || *end) irt_fail("an argument that is not a tensor of the recorded type");
    ++n;
  }
  int64_t shape[2] = {ndim == 2 ? rows : n, ndim == 2 ? n / rows : 1};
  if ((ndim == 2 && n % rows != 0) || ndim > 2 || (ndim == 0 && n != 1)) irt_fail("an argument of other dimensions than recorded");
  return irt_tensor(dtype, ndim, shape, data);
}

/* Writes a value: printing = 1 as the tokens check_c.py reads ("Tensor
   Float64 2 3 4 0x... ...", "Tuple 2 ..."), 0 in irt-trace's notation. */
static inline void irt_write(irt_t v, int tokens) {
  static const char* names[] = {"Bool", "Int64", "Float32", "Float64", "Int32"};
  irt_t stack[64];
  int64_t next[64];
  int depth = 0;
  stack[0] = v;
  next[0] = 0;
  for (;;) {
    irt_t x = stack[depth];
    if (x->kind == IRT_TUPLE) {
      if (next[depth] == 0) printf(tokens ? " Tuple %lld" : "(", (long long)x->n);
      if (next[depth] < x->n) {
        if (!tokens && next[depth] > 0) printf(", ");
        if (depth + 1 == 64) irt_fail("tuples nested too deep");
        stack[depth + 1] = irt_item(x, next[depth]++);
        next[++depth] = 0;
        continue;
      }
      if (!tokens) printf(x->n == 1 ? ",)" : ")");
    } else if (x->kind == IRT_TENSOR) {
      if (tokens) {
        printf(" Tensor %s %d", names[x->dtype], x->ndim);
        for (int d = 0; d < x->ndim; ++d) printf(" %lld", (long long)x->shape[d]);
      } else {
        printf("[");
      }
      int64_t cols = x->ndim == 2 ? x->shape[1] : 0;
      for (int64_t k = 0; k < x->n; ++k) {
        irt_s e = irt_el(x, k);
        if (!tokens && k > 0) printf(cols && k % cols == 0 ? "; " : cols ? " " : ", ");
        if (tokens && e.k >= 2) {
          if (e.k == 2) { float f = (float)e.d; uint32_t b; memcpy(&b, &f, 4); printf(" 0x%08x", b); }
          else { uint64_t b; memcpy(&b, &e.d, 8); printf(" 0x%016llx", (unsigned long long)b); }
        } else if (e.k == 0) {
          if (tokens) printf(" %d", (int)e.i); else printf("%s", e.i ? "true" : "false");
        } else if (e.k == 1) {
          printf(tokens ? " %lld" : "%lld", (long long)e.i);
        } else {
          printf(e.k == 2 ? "%.9g" : "%.17g", e.d);
        }
      }
      if (!tokens) printf("]");
    } else {
      irt_s e = irt_el(x, 0);
      if (tokens) printf(" %s", names[x->kind]);
      if (tokens && e.k >= 2) {
        if (e.k == 2) { uint32_t b; memcpy(&b, &x->f, 4); printf(" 0x%08x", b); }
        else { uint64_t b; memcpy(&b, &e.d, 8); printf(" 0x%016llx", (unsigned long long)b); }
      } else if (e.k == 0) {
        if (tokens) printf(" %d", (int)e.i); else printf("%s", e.i ? "true" : "false");
      } else if (e.k == 1) {
        printf(tokens ? " %lld" : "%lld", (long long)e.i);
      } else {
        printf(e.k == 2 ? "%.9g" : "%.17g", e.d);
      }
    }
    if (depth == 0) break;
    --depth;
  }
}

/* The recorded values, one line each, when IRT_PRINT_VALUES is defined. */
#ifdef IRT_PRINT_VALUES
static inline void irt_print_b(uint64_t id, bool v) { printf("%llu Bool %d\n", (unsigned long long)id, v); }
static inline void irt_print_i(uint64_t id, int64_t v) { printf("%llu Int64 %lld\n", (unsigned long long)id, (long long)v); }
static inline void irt_print_f(uint64_t id, float v) { uint32_t b; memcpy(&b, &v, 4); printf("%llu Float32 0x%08x\n", (unsigned long long)id, b); }
static inline void irt_print_d(uint64_t id, double v) { uint64_t b; memcpy(&b, &v, 8); printf("%llu Float64 0x%016llx\n", (unsigned long long)id, (unsigned long long)b); }
static inline void irt_print_t(uint64_t id, irt_t v) { printf("%llu", (unsigned long long)id); irt_write(v, 1); printf("\n"); }
#define IRT_VALUE(id, v) _Generic((v), bool: irt_print_b, int64_t: irt_print_i, float: irt_print_f, double: irt_print_d, irt_t: irt_print_t)(id, v)
#else
#define IRT_VALUE(id, v) ((void)(v))
#endif
static inline bool irt_lt(int c) { return c == -1; }
static inline bool irt_le(int c) { return c == -1 || c == 0; }
static inline bool irt_gt(int c) { return c == 1; }
static inline bool irt_ge(int c) { return c == 1 || c == 0; }
static inline bool irt_eq(int c) { return c == 0; }
static inline bool irt_ne(int c) { return c != 0; }
)C";

// The helper of the prelude for a standard operation of `arity` operands.
std::string_view Helper(std::string_view op, uint32_t arity) {
  struct Row {
    std::string_view op;
    uint32_t arity;
    std::string_view helper;
  };
  static constexpr Row kRows[] = {
      {"+", 2, "add"},         {"-", 2, "sub"},       {"-", 1, "neg"},
      {"*", 2, "mul"},         {"/", 2, "div"},       {"^", 2, "pow_"},
      {"<", 2, "lt"},          {"<=", 2, "le"},       {">", 2, "gt"},
      {">=", 2, "ge"},         {"==", 2, "eq"},       {"!=", 2, "ne"},
      {"!", 1, "not_"},        {"&", 2, "and_"},      {"|", 2, "or_"},
      {"xor", 2, "xor"},       {"div", 2, "idiv"},    {"rem", 2, "rem"},
      {"mod", 2, "mod"},       {"fld", 2, "fld"},     {"min", 2, "min_"},
      {"max", 2, "max_"},      {"abs", 1, "abs_"},    {"sign", 1, "sign"},
      {"zero", 1, "zero"},     {"one", 1, "one"},     {"identity", 1, "identity"},
      {"ifelse", 3, "ifelse"}, {"atan2", 2, "atan2"}, {"hypot", 2, "hypot"},
  };
  for (const Row& r : kRows) {
    if (r.op == op && r.arity == arity) return r.helper;
  }
  static constexpr std::string_view kMath[] = {"sin",  "cos",   "tan",   "exp",   "log",    "sqrt",
                                               "tanh", "atan",  "log1p", "expm1", "lgamma", "sinh",
                                               "cosh", "asin",  "acos",  "asinh", "acosh",  "atanh",
                                               "log2", "log10", "exp2",  "cbrt",  "erf",    "erfc"};
  if (arity == 1) {
    for (std::string_view m : kMath) {
      if (m == op) return m;
    }
  }
  return {};
}

// The helper of the prelude for a standard operation on tensors (also
// called with numbers, which it treats as libtrace does), or empty.
std::string_view TensorHelper(std::string_view op, uint32_t arity) {
  struct Row {
    std::string_view op;
    uint32_t min, max;
    std::string_view helper;
  };
  static constexpr Row kRows[] = {
      {"matmul", 2, 2, "matmul"},       {"dot", 2, 2, "dot"},
      {"transpose", 1, 1, "transpose"}, {"sum", 1, 2, "sum_"},
      {"mean", 1, 2, "mean"},           {"maximum", 1, 2, "maximum"},
      {"minimum", 1, 2, "minimum"},     {"reshape", 2, 99, "reshape"},
      {"getindex", 2, 99, "getindex"},  {"getitem", 2, 99, "getitem"},
      {"addindex", 3, 99, "addindex"},  {"additem", 3, 99, "additem"},
      {"sum_to", 2, 2, "sum_to"},       {"broadcast_to", 2, 2, "broadcast_to"},
      {"fill", 1, 99, "fill"},          {"zeros", 0, 99, "zeros"},
      {"ones", 0, 99, "ones"},          {"cat", 3, 99, "cat"},
      {"slice", 4, 5, "slice_"},        {"unslice", 5, 6, "unslice"},
      {"size", 1, 2, "size"},           {"length", 1, 1, "length"},
      {"tuple", 0, 99, "tuple_"},
  };
  for (const Row& r : kRows) {
    if (r.op == op && arity >= r.min && arity <= r.max) return r.helper;
  }
  return {};
}

bool IsIdentifier(std::string_view s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char ch : s) {
    bool ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '_';
    if (!ok) return false;
  }
  return true;
}

// The prelude's code of a tensor's element type: "f8", "f4", "i8", "i4", "b1".
std::string_view DTypeCode(DType t) {
  switch (t) {
    case DType::kF64:
      return "f8";
    case DType::kF32:
      return "f4";
    case DType::kI64:
      return "i8";
    case DType::kI32:
      return "i4";
    case DType::kBool:
      return "b1";
  }
  return "f8";
}

// Element i of an integer or Bool tensor, exactly.
int64_t TensorInt(const Tensor& t, int64_t i) {
  size_t size = DTypeSize(t.dtype);
  size_t off = static_cast<size_t>(i) * size;
  if (off + size > t.data.size()) return 0;
  if (t.dtype == DType::kI64) {
    int64_t v;
    std::memcpy(&v, t.data.data() + off, 8);
    return v;
  }
  if (t.dtype == DType::kI32) {
    int32_t v;
    std::memcpy(&v, t.data.data() + off, 4);
    return v;
  }
  return t.data[off] != 0 ? 1 : 0;
}

// A tensor as the prelude's tensor("f8", (3, 4), [...]): its elements in
// row-major order, floats as the shortest decimal that reads back to them
// (a Float32 element as the double that equals it), NaN and infinities by
// their bits.
void AppendPyTensor(std::string& out, const Tensor& t) {
  out += "tensor(\"";
  out += DTypeCode(t.dtype);
  out += "\", (";
  for (size_t d = 0; d < t.shape.size(); ++d) {
    out += std::to_string(t.shape[d]);
    out += t.shape.size() == 1 ? ",)" : d + 1 < t.shape.size() ? ", " : ")";
  }
  if (t.shape.empty()) out += ")";
  out += ", [";
  const int64_t n = t.numel();
  for (int64_t i = 0; i < n; ++i) {
    if (i > 0) out += ", ";
    switch (t.dtype) {
      case DType::kF64:
      case DType::kF32: {
        double d = t.at(i);
        if (std::isfinite(d)) {
          out += FormatDouble(d);
        } else {
          out += fmt::format("f64(0x{:016x})", std::bit_cast<uint64_t>(d));
        }
        break;
      }
      case DType::kBool:
        out += TensorInt(t, i) != 0 ? "True" : "False";
        break;
      default:
        out += fmt::format("{}", TensorInt(t, i));
        break;
    }
  }
  out += "])";
}

// A value as a Python expression that evaluates to it bit for bit; false
// for what the prelude has no type for (tensors, strings that are not UTF-8).
bool AppendPyValue(std::string& out, const Value& v) {
  // Tuples are written with an explicit stack: the format lets them nest 64 deep.
  struct Item {
    const Value* v;
    size_t next;  // for a tuple: the next item to write
  };
  std::vector<Item> stack{{&v, 0}};
  while (!stack.empty()) {
    Item& it = stack.back();
    const Value& x = *it.v;
    if (x.kind() == VKind::kTuple) {
      const auto& items = x.tuple();
      if (it.next == 0) out += '(';
      if (it.next == items.size()) {
        if (items.size() == 1) out += ',';
        out += ')';
        stack.pop_back();
        continue;
      }
      if (it.next > 0) out += ", ";
      const Value* child = &items[it.next++];
      stack.push_back({child, 0});
      continue;
    }
    stack.pop_back();
    switch (x.kind()) {
      case VKind::kNothing:
        out += "None";
        break;
      case VKind::kBool:
        out += x.as_bool() ? "True" : "False";
        break;
      case VKind::kI64:
        out += std::to_string(x.as_i64());
        break;
      case VKind::kF64: {
        double d = x.as_f64();
        if (std::isfinite(d)) {
          out += FormatDouble(d);
        } else {
          out += fmt::format("f64(0x{:016x})", x.bits());
        }
        break;
      }
      case VKind::kF32:
        out += fmt::format("f32(0x{:08x})", static_cast<uint32_t>(x.bits()));
        break;
      case VKind::kString: {
        std::string q = JsonQuote(x.str());
        if (q.size() != x.str().size() + 2 && q.find("\\ufffd") != std::string::npos) return false;
        out += q;
        break;
      }
      case VKind::kFunction:
        out += "Fn(" + JsonQuote(x.str()) + ")";
        break;
      case VKind::kTensor:
        AppendPyTensor(out, x.tensor());
        break;
      default:
        return false;
    }
  }
  return true;
}

// The C code of a number's literal; false for what is not a number C holds.
bool AppendCNumber(std::string& out, const Value& v) {
  switch (v.kind()) {
    case VKind::kBool:
      out += v.as_bool() ? "true" : "false";
      return true;
    case VKind::kI64:
      if (v.as_i64() == INT64_MIN) {
        out += "INT64_MIN";
      } else {
        out += "INT64_C(" + std::to_string(v.as_i64()) + ")";
      }
      return true;
    case VKind::kF64: {
      double d = v.as_f64();
      if (std::isfinite(d)) {
        out += fmt::format("{:a}", d);
      } else {
        out += fmt::format("irt_f64(UINT64_C(0x{:016x}))", v.bits());
      }
      return true;
    }
    case VKind::kF32:
      out += fmt::format("irt_f32(UINT32_C(0x{:08x}))", static_cast<uint32_t>(v.bits()));
      return true;
    default:
      return false;
  }
}

// The prelude's constant of a tensor's element type.
std::string_view CDType(DType t) {
  switch (t) {
    case DType::kF64:
      return "IRT_F8";
    case DType::kF32:
      return "IRT_F4";
    case DType::kI64:
      return "IRT_I8";
    case DType::kI32:
      return "IRT_I4";
    case DType::kBool:
      return "IRT_B1";
  }
  return "IRT_F8";
}

// A tensor as irt_tensor(IRT_F8, 2, (const int64_t[]){3, 4}, (const
// double[]){...}): its elements in row-major order, floats as hexadecimal
// literals (NaN and infinities by their bits).
void AppendCTensor(std::string& out, const Tensor& t) {
  static constexpr std::string_view kTypes[] = {"double", "float", "int64_t", "int32_t", "bool"};
  std::string_view type = t.dtype == DType::kF64   ? kTypes[0]
                          : t.dtype == DType::kF32 ? kTypes[1]
                          : t.dtype == DType::kI64 ? kTypes[2]
                          : t.dtype == DType::kI32 ? kTypes[3]
                                                   : kTypes[4];
  out += "irt_tensor(";
  out += CDType(t.dtype);
  out += ", " + std::to_string(t.shape.size()) + ", (const int64_t[]){";
  for (size_t d = 0; d < t.shape.size(); ++d) out += (d ? ", " : "") + std::to_string(t.shape[d]);
  if (t.shape.empty()) out += "0";
  out += "}, (const ";
  out += type;
  out += "[]){";
  const int64_t n = t.numel();
  for (int64_t i = 0; i < n; ++i) {
    if (i > 0) out += ", ";
    switch (t.dtype) {
      case DType::kF64: {
        double d = t.at(i);
        if (std::isfinite(d)) {
          out += fmt::format("{:a}", d);
        } else {
          out += fmt::format("irt_f64(UINT64_C(0x{:016x}))", std::bit_cast<uint64_t>(d));
        }
        break;
      }
      case DType::kF32: {
        float f = static_cast<float>(t.at(i));
        if (std::isfinite(f)) {
          out += fmt::format("{:a}f", static_cast<double>(f));
        } else {
          out += fmt::format("irt_f32(UINT32_C(0x{:08x}))", std::bit_cast<uint32_t>(f));
        }
        break;
      }
      case DType::kBool:
        out += TensorInt(t, i) != 0 ? "true" : "false";
        break;
      default: {
        int64_t v = TensorInt(t, i);
        out += v == INT64_MIN ? std::string("INT64_MIN") : fmt::format("INT64_C({})", v);
        break;
      }
    }
  }
  if (n == 0) out += "0";
  out += "})";
}

// A C expression that evaluates to `v` exactly: a number as a literal, a
// tensor or a tuple as an irt_t; false for what C cannot hold.
bool AppendCValue(std::string& out, const Value& v) {
  // Tuples are written with an explicit stack: the format lets them nest 64 deep.
  struct Item {
    const Value* v;
    size_t next;  // for a tuple: the next item to write
  };
  std::vector<Item> stack{{&v, 0}};
  while (!stack.empty()) {
    Item& it = stack.back();
    const Value& x = *it.v;
    const bool boxed = stack.size() > 1;  // a tuple's item is an irt_t
    if (x.kind() == VKind::kTuple) {
      const auto& items = x.tuple();
      if (it.next == 0) out += "irt_tuple(" + std::to_string(items.size()) + ", (irt_t[]){";
      if (it.next == items.size()) {
        out += items.empty() ? "NULL})" : "})";
        stack.pop_back();
        continue;
      }
      if (it.next > 0) out += ", ";
      const Value* child = &items[it.next++];
      stack.push_back({child, 0});
      continue;
    }
    stack.pop_back();
    if (x.kind() == VKind::kTensor) {
      AppendCTensor(out, x.tensor());
      continue;
    }
    if (boxed) out += "IRT_BOX(";
    if (!AppendCNumber(out, x)) return false;
    if (boxed) out += ")";
  }
  return true;
}

// The C type of a value kind; empty for kinds C code here cannot hold.
std::string_view CType(VKind k) {
  switch (k) {
    case VKind::kBool:
      return "bool";
    case VKind::kI64:
      return "int64_t";
    case VKind::kF32:
      return "float";
    case VKind::kF64:
      return "double";
    case VKind::kTensor:
    case VKind::kTuple:
      return "irt_t";
    default:
      return {};
  }
}

// The C expression of a standard operation whose recorded result is of kind
// `r`: each operand is converted to the type the operation computes in
// (scalar.cc's rules), so the expression's type is the result's.
std::string COp(std::string_view op, const std::vector<std::string>& a, VKind r) {
  const size_t n = a.size();
  const bool fl = r == VKind::kF64 || r == VKind::kF32;
  const std::string t(CType(r));
  const std::string sfx = r == VKind::kF32 ? "f" : "";
  auto cast = [&](const std::string& type, const std::string& x) {
    return "((" + type + ")(" + x + "))";
  };
  auto i = [&](size_t k) { return cast("int64_t", a[k]); };
  auto f = [&](size_t k) { return cast(t, a[k]); };
  auto d = [&](size_t k) { return cast("double", a[k]); };
  auto call = [](std::string_view fn, std::initializer_list<std::string> xs) {
    std::string e(fn);
    e += '(';
    size_t k = 0;
    for (const std::string& x : xs) e += (k++ ? ", " : "") + x;
    return e + ")";
  };
  if (n == 2 && (op == "+" || op == "-" || op == "*")) {
    if (r == VKind::kI64) {
      return call(op == "+" ? "irt_addi" : op == "-" ? "irt_subi" : "irt_muli", {i(0), i(1)});
    }
    if (fl) return "(" + f(0) + " " + std::string(op) + " " + f(1) + ")";
  }
  if (n == 2 && op == "/" && fl) return "(" + f(0) + " / " + f(1) + ")";
  if (n == 2 && op == "^") {
    if (r == VKind::kI64) return call("irt_ipow", {i(0), i(1)});
    if (r == VKind::kBool) return "(" + i(1) + " == 0 || (" + a[0] + "))";
    if (r == VKind::kF64) return call("pow", {d(0), d(1)});
    if (r == VKind::kF32) {
      return "(IRT_K(" + a[1] + ") <= 1 ? (float)pow(" + d(0) + ", " + d(1) + ") : powf(" + f(0) +
             ", " + f(1) + "))";
    }
  }
  static constexpr std::pair<std::string_view, std::string_view> kCompare[] = {
      {"<", "irt_lt"},  {"<=", "irt_le"}, {">", "irt_gt"},
      {">=", "irt_ge"}, {"==", "irt_eq"}, {"!=", "irt_ne"}};
  for (const auto& [o, fn] : kCompare) {
    if (n == 2 && op == o && r == VKind::kBool) {
      return std::string(fn) + "(IRT_CMP(" + a[0] + ", " + a[1] + "))";
    }
  }
  if (n == 1 && op == "!" && r == VKind::kBool) return "(!(" + a[0] + "))";
  if (n == 2 && (op == "&" || op == "|" || op == "xor")) {
    std::string e = "(" + i(0) + (op == "&" ? " & " : op == "|" ? " | " : " ^ ") + i(1) + ")";
    if (r == VKind::kBool) return "(" + e + " != 0)";
    if (r == VKind::kI64) return e;
  }
  static constexpr std::pair<std::string_view, int> kDivisions[] = {
      {"div", 0}, {"rem", 1}, {"fld", 2}, {"mod", 3}};
  for (const auto& [o, kind] : kDivisions) {
    if (n != 2 || op != o) continue;
    std::string k = std::to_string(kind);
    if (r == VKind::kI64) return call("irt_idiv", {i(0), i(1), k});
    if (r == VKind::kBool) return "(" + call("irt_idiv", {i(0), i(1), k}) + " != 0)";
    if (fl) return call("irt_fdiv" + sfx, {f(0), f(1), k});
  }
  if (n == 2 && (op == "min" || op == "max")) {
    bool mx = op == "max";
    if (r == VKind::kBool) return "((" + a[0] + ")" + (mx ? " || " : " && ") + "(" + a[1] + "))";
    if (r == VKind::kI64) {
      return "(" + i(0) + (mx ? " > " : " < ") + i(1) + " ? " + i(0) + " : " + i(1) + ")";
    }
    if (fl) return cast(t, call(mx ? "irt_fmax" : "irt_fmin", {d(0), d(1)}));
  }
  if (n == 1) {
    if (op == "-") {
      if (r == VKind::kI64) return call("irt_negi", {i(0)});
      if (fl) return "(-" + f(0) + ")";
    }
    if (op == "abs") {
      if (r == VKind::kBool) return "(" + a[0] + ")";
      if (r == VKind::kI64) return call("irt_absi", {i(0)});
      if (fl) return call("fabs" + sfx, {f(0)});
    }
    if (op == "sign") {
      if (r == VKind::kI64) return call("irt_signi", {i(0)});
      if (fl) return call(r == VKind::kF32 ? "irt_signf" : "irt_signd", {f(0)});
    }
    if (op == "zero" || op == "one") {
      bool one = op == "one";
      if (r == VKind::kBool) return one ? "true" : "false";
      if (r == VKind::kI64) return one ? "INT64_C(1)" : "INT64_C(0)";
      if (fl) return cast(t, one ? "1" : "0");
    }
    if (op == "identity" && !t.empty()) return f(0);
  }
  if (n == 3 && op == "ifelse" && !t.empty()) {
    return "((" + a[0] + ") ? " + f(1) + " : " + f(2) + ")";
  }
  if (fl && n == 2 && (op == "atan2" || op == "hypot"))
    return call(std::string(op) + sfx, {f(0), f(1)});
  if (fl && n == 1 && !Helper(op, 1).empty() && Helper(op, 1) == op) {
    return call(std::string(op) + sfx, {f(0)});
  }
  return {};
}

// What a language contributes to the straight-line code.
class CodeLang {
 public:
  virtual ~CodeLang() = default;
  virtual std::string_view flag() const = 0;  // "--python"
  virtual std::string Prelude() const = 0;
  virtual bool Literal(std::string& out, const Value& v) const = 0;
  /// The function's first lines; `params` are the root call's arguments.
  virtual std::string Header(const std::string& fn, std::string_view op,
                             const std::vector<Value>& params, VKind result) const = 0;
  /// "n7 = e" with its comment; `v` is the recorded value (its type).
  virtual std::string Assign(NodeId id, const Value& v, const std::string& e,
                             const std::string& comment) const = 0;
  virtual std::string Comment(const std::string& text) const = 0;
  /// The expression of a standard operation; empty when there is none.
  virtual std::string Op(std::string_view op, const std::vector<std::string>& args,
                         const Value& result) const = 0;
  virtual std::string Guard(const std::string& cond, bool when, const std::string& where) const = 0;
  virtual std::string Return(NodeId id) const = 0;
  virtual std::string Footer(const std::string& fn, const std::vector<Value>& params,
                             VKind result) const = 0;
  /// Whether function values are left out (C has no type for them).
  virtual bool SkipsFunctions() const = 0;
  /// Whether the function can take `v` (a literal of it) as an argument.
  virtual bool TakesArgument(const Value& v) const {
    std::string s;
    return Literal(s, v);
  }
};

class PythonLang : public CodeLang {
 public:
  std::string_view flag() const override { return "--python"; }
  std::string Prelude() const override {
    return "# Generated by irt-export --python: the recorded run as straight-line code.\n" +
           std::string(kPythonPrelude);
  }
  bool Literal(std::string& out, const Value& v) const override { return AppendPyValue(out, v); }
  std::string Header(const std::string& fn, std::string_view op, const std::vector<Value>& params,
                     VKind) const override {
    std::string s = "\n\ndef " + fn + "(";
    for (size_t j = 0; j < params.size(); ++j) s += (j ? ", a" : "a") + std::to_string(j + 1);
    return s + "):\n    \"\"\"" + DisplayString(op) + ", as the trace recorded it.\"\"\"\n";
  }
  std::string Assign(NodeId id, const Value&, const std::string& e,
                     const std::string& comment) const override {
    return "    n" + std::to_string(id) + " = " + e + "  # " + comment + "\n";
  }
  std::string Comment(const std::string& text) const override { return "    # " + text + "\n"; }
  std::string Op(std::string_view op, const std::vector<std::string>& args,
                 const Value& result) const override {
    std::string e;
    std::string_view h = Helper(op, static_cast<uint32_t>(args.size()));
    if (!h.empty() && result.kind() == VKind::kTensor) {
      // Elementwise on tensors: the scalar helper on each element.
      e = "ew(\"" + std::string(DTypeCode(result.tensor().dtype)) + "\", " + std::string(h);
      for (const std::string& a : args) e += ", " + a;
      return e + ")";
    }
    if (h.empty()) h = TensorHelper(op, static_cast<uint32_t>(args.size()));
    if (h.empty() || (result.kind() == VKind::kTuple && op != "size" && op != "tuple")) return {};
    e = std::string(h) + "(";
    for (size_t j = 0; j < args.size(); ++j) e += (j ? ", " : "") + args[j];
    return e + ")";
  }
  std::string Guard(const std::string& cond, bool when, const std::string& where) const override {
    return "    if bool(" + cond + ") != " + (when ? "True" : "False") +
           ":\n        raise Diverged(\"" + where + "\")\n";
  }
  std::string Return(NodeId id) const override {
    return "    return n" + std::to_string(id) + "\n";
  }
  std::string Footer(const std::string& fn, const std::vector<Value>&, VKind) const override {
    return "\n\nif __name__ == \"__main__\":\n    import sys\n    print(" + fn +
           "(*[eval(a, {\"f64\": f64, \"f32\": f32}) for a in sys.argv[1:]]))\n";
  }
  bool SkipsFunctions() const override { return false; }
};

class CLang : public CodeLang {
 public:
  std::string_view flag() const override { return "--c"; }
  std::string Prelude() const override {
    return "/* Generated by irt-export --c: the recorded run as straight-line code.\n"
           "   cc -std=c11 -DIRT_MAIN file.c -lm builds a program that prints the result. */\n" +
           std::string(kCPrelude) + kernels_;
  }
  bool Literal(std::string& out, const Value& v) const override { return AppendCValue(out, v); }
  std::string Header(const std::string& fn, std::string_view op, const std::vector<Value>& params,
                     VKind result) const override {
    std::string s = "\n/* " + CommentText(DisplayString(op)) + ", as the trace recorded it. */\n";
    s += std::string(CType(result)) + " " + fn + "(";
    for (size_t j = 0; j < params.size(); ++j) {
      s += (j ? ", " : "") + std::string(CType(params[j].kind())) + " a" + std::to_string(j + 1);
    }
    if (params.empty()) s += "void";
    return s + ") {\n";
  }
  std::string Assign(NodeId id, const Value& v, const std::string& e,
                     const std::string& comment) const override {
    std::string n = "n" + std::to_string(id);
    return "  const " + std::string(CType(v.kind())) + " " + n + " = " + e + ";  IRT_VALUE(" +
           std::to_string(id) + ", " + n + ");  /* " + CommentText(comment) + " */\n";
  }
  std::string Comment(const std::string& text) const override {
    return "  /* " + CommentText(text) + " */\n";
  }
  std::string Op(std::string_view op, const std::vector<std::string>& args,
                 const Value& result) const override {
    const uint32_t n = static_cast<uint32_t>(args.size());
    std::string_view h = Helper(op, n);
    if (!h.empty() && result.kind() != VKind::kTensor) return COp(op, args, result.kind());
    std::string fn;
    if (!h.empty()) {
      fn = Kernel(op, n, result.tensor().dtype);
    } else {
      h = TensorHelper(op, n);
      if (h.empty() || (result.kind() == VKind::kTuple && op != "size" && op != "tuple")) return {};
      fn = "irt_" + std::string(h.substr(0, h.find_last_not_of('_') + 1));
    }
    if (fn.empty()) return {};
    std::string e = fn + "(" + std::to_string(n) + ", ";
    if (n == 0) e += "NULL";
    for (uint32_t j = 0; j < n; ++j) e += (j ? ", IRT_BOX(" : "(irt_t[]){IRT_BOX(") + args[j] + ")";
    if (n > 0) e += "}";
    e += ")";
    switch (result.kind()) {
      case VKind::kBool:
        return "irt_ub(" + e + ")";
      case VKind::kI64:
        return "irt_ui(" + e + ")";
      case VKind::kF32:
        return "irt_uf(" + e + ")";
      case VKind::kF64:
        return "irt_ud(" + e + ")";
      case VKind::kTensor:
      case VKind::kTuple:
        return e;
      default:
        return {};
    }
  }
  std::string Guard(const std::string& cond, bool when, const std::string& where) const override {
    return "  if ((bool)(" + cond + ") != " + (when ? "true" : "false") +
           ") irt_fail(\"Diverged: " + CommentText(where) + "\");\n";
  }
  std::string Return(NodeId id) const override { return "  return n" + std::to_string(id) + ";\n"; }
  std::string Footer(const std::string& fn, const std::vector<Value>& params,
                     VKind result) const override {
    std::string s = "}\n\n#ifdef IRT_MAIN\nint main(int argc, char** argv) {\n";
    s += "  if (argc != " + std::to_string(params.size() + 1) +
         ") {\n    fprintf(stderr, \"usage: %s";
    for (size_t j = 0; j < params.size(); ++j) s += " a" + std::to_string(j + 1);
    s += "\\n\", argv[0]);\n    return 2;\n  }\n";
    std::string call = fn + "(";
    for (size_t j = 0; j < params.size(); ++j) {
      std::string arg = "argv[" + std::to_string(j + 1) + "]";
      switch (params[j].kind()) {
        case VKind::kBool:
          call += (j ? ", " : "") + ("strcmp(" + arg + ", \"true\") == 0");
          break;
        case VKind::kI64:
          call += (j ? ", " : "") + ("(int64_t)strtoll(" + arg + ", NULL, 10)");
          break;
        case VKind::kF32:
          call += (j ? ", " : "") + ("strtof(" + arg + ", NULL)");
          break;
        case VKind::kTensor:
          call += (j ? ", " : "") +
                  ("irt_parse(" + arg + ", " + std::string(CDType(params[j].tensor().dtype)) +
                   ", " + std::to_string(params[j].tensor().shape.size()) + ")");
          break;
        default:
          call += (j ? ", " : "") + ("strtod(" + arg + ", NULL)");
          break;
      }
    }
    call += ")";
    switch (result) {
      case VKind::kBool:
        s += "  printf(\"%s\\n\", " + call + " ? \"true\" : \"false\");\n";
        break;
      case VKind::kI64:
        s += "  printf(\"%lld\\n\", (long long)" + call + ");\n";
        break;
      case VKind::kF32:
        s += "  printf(\"%.9g\\n\", (double)" + call + ");\n";
        break;
      case VKind::kTensor:
      case VKind::kTuple:
        s += "  irt_write(" + call + ", 0);\n  printf(\"\\n\");\n";
        break;
      default:
        s += "  printf(\"%.17g\\n\", " + call + ");\n";
        break;
    }
    return s + "  return 0;\n}\n#endif\n";
  }
  bool SkipsFunctions() const override { return true; }
  bool TakesArgument(const Value& v) const override {
    switch (v.kind()) {
      case VKind::kBool:
      case VKind::kI64:
      case VKind::kF32:
      case VKind::kF64:
        return true;
      case VKind::kTensor:
        return v.tensor().shape.size() <= 2;
      default:
        return false;
    }
  }

 private:
  // The kernels of the elementwise operations met so far, one per
  // operation, operand count and element type of the result, each a
  // function written after the prelude (the first pass meets them all).
  mutable std::string kernels_;
  mutable std::vector<std::pair<std::string, std::string>> kernel_names_;

  // The kernel of elementwise `op` on `n` operands giving a tensor of
  // `dtype`: the scalar expression of COp on each element (the operands
  // in the result's type when it is a float, as libtrace's kernels take
  // them); empty when COp has none.
  std::string Kernel(std::string_view op, uint32_t n, DType dtype) const {
    std::string key = std::string(op) + "/" + std::to_string(n) + "/" + std::string(CDType(dtype));
    for (const auto& [k, name] : kernel_names_) {
      if (k == key) return name;
    }
    const bool fl = dtype == DType::kF64 || dtype == DType::kF32;
    const VKind r = dtype == DType::kF64    ? VKind::kF64
                    : dtype == DType::kF32  ? VKind::kF32
                    : dtype == DType::kBool ? VKind::kBool
                                            : VKind::kI64;
    const std::string t(CType(r));
    std::string body, expr;
    static constexpr std::pair<std::string_view, std::string_view> kCompare[] = {
        {"<", "irt_lt"},  {"<=", "irt_le"}, {">", "irt_gt"},
        {">=", "irt_ge"}, {"==", "irt_eq"}, {"!=", "irt_ne"}};
    for (const auto& [o, cmp] : kCompare) {
      if (n == 2 && op == o) {
        // Each element compared exactly as the number of its own type.
        expr = std::string(cmp) + "(irt_cmp(e0.k, e0.i, e0.d, e1.k, e1.i, e1.d))";
      }
    }
    if (expr.empty()) {
      std::vector<std::string> xs;
      for (uint32_t j = 0; j < n; ++j) {
        std::string e = "e" + std::to_string(j);
        body += "    const " + t + " x" + std::to_string(j) + " = (" + t + ")" +
                (fl ? "(" + e + ".d)" : "(" + e + ".k >= 2 ? (int64_t)" + e + ".d : " + e + ".i)") +
                ";\n    (void)x" + std::to_string(j) + ";\n";
        xs.push_back("x" + std::to_string(j));
      }
      expr = COp(op, xs, r);
      if (expr.empty()) return {};
    }
    std::string name = "irt_ew" + std::to_string(kernel_names_.size() + 1);
    kernel_names_.emplace_back(key, name);
    std::string s =
        "\n/* Elementwise " + CommentText(DisplayString(op)) + " of " + std::to_string(n) +
        " operands, giving a tensor of " + std::string(DTypeName(dtype)) + ". */\nstatic irt_t " +
        name + "(int na, const irt_t* a) {\n  irt_shape s;\n  irt_obj* r = irt_ew_new(" +
        std::string(CDType(dtype)) + ", na, a, &s);\n  for (int64_t k = 0; k < r->n; ++k) {\n";
    for (uint32_t j = 0; j < n; ++j) {
      std::string js = std::to_string(j);
      s += "    const irt_s e" + js + " = irt_el(a[" + js + "], irt_boff(a[" + js + "], &s, k));\n";
    }
    s += body + "    IRT_STORE(r, k, (" + t + ")(" + expr + "));\n  }\n  return r;\n}\n";
    kernels_ += s;
    return name;
  }

  // Text inside a C comment or string: no "*/", no quotes or backslashes.
  static std::string CommentText(const std::string& s) {
    std::string out;
    for (size_t k = 0; k < s.size(); ++k) {
      char ch = s[k];
      if (ch == '*' && k + 1 < s.size() && s[k + 1] == '/') {
        out += "* /";
        ++k;
      } else if (ch == '"' || ch == '\\') {
        out += '\'';
      } else {
        out += ch;
      }
    }
    return out;
  }
};

// One open call of the code being written.
struct CodeFrame {
  std::vector<std::string> jump_args;  // the operands of the last jump of this body
  NodeId last_jump = kNoNode;
  uint32_t params = 0;  // the call's operands (the root's parameters)
};

// What the first pass learns for the second: the kind of the result.
struct CodeFacts {
  VKind result = VKind::kNone;
};

// Writes the code of the trace in `stream` to `out`, or with out == nullptr
// only checks that every node can be written and fills `facts`.
Status Generate(ChunkStream& stream, const CodeLang& lang, Output* out, CodeFacts* facts) {
  std::vector<CodeFrame> code;
  std::vector<Value> params;
  std::string buf, sig_name;
  const std::string& name = stream.name();
  const std::string flag(lang.flag());
  auto fail = [&](const RawNode& node, const Place& place, const std::string& what) -> Status {
    return DataError(name + ": node " + std::to_string(node.id()) +
                     (place.has_path ? " (" + std::string(place.path) + ")" : "") + ": " + what);
  };
  auto expr = [&](const RawNode& node, uint32_t code_j, uint32_t* ref, std::string* e) -> bool {
    if (code_j == 0) {
      *e = "n" + std::to_string(node.ref((*ref)++));
      return true;
    }
    e->clear();
    return lang.Literal(*e, node.chunk().literal(code_j));
  };
  buf += lang.Prelude();
  Status s = Walk(
      stream,
      [&](const RawNode& node, const Place& place, std::vector<ExportFrame>&, uint32_t&) -> Status {
        if (out != nullptr && buf.size() >= (1 << 16)) {
          out->Write(buf);
          buf.clear();
          if (out->failed()) return IoError("write failed");
        } else if (out == nullptr) {
          buf.clear();
        }
        const NodeKind kind = node.kind();
        uint32_t ref = 0;
        std::vector<std::string> args;
        uint32_t n = node.num_operands();
        bool cond = kind == NodeKind::kJump && node.has_condition();
        for (uint32_t j = 0; j < n; ++j) {
          std::string e;
          if (!expr(node, node.operand_code(j), &ref, &e)) {
            return fail(node, place,
                        "an operand that " + flag + " cannot write (" +
                            TypeName(node.chunk().literal(node.operand_code(j))) + ")");
          }
          args.push_back(std::move(e));
        }
        std::string loc;
        AppendLocation(loc, node.location());
        const std::string comment = loc + (place.has_path ? " " + std::string(place.path) : "");
        const Value recorded = node.value();
        auto assign = [&](const std::string& e) -> Status {
          std::string lit;
          if (!lang.Literal(lit, recorded)) {
            return fail(node, place,
                        "a value that " + flag + " cannot write (" + TypeName(recorded) + ")");
          }
          buf += lang.Assign(node.id(), recorded, e, comment);
          return Status::Ok();
        };
        auto literal = [&](const std::string& note) -> Status {
          std::string e;
          if (!lang.Literal(e, recorded)) {
            return fail(node, place,
                        "a value that " + flag + " cannot write (" + TypeName(recorded) + ")");
          }
          buf += lang.Assign(node.id(), recorded, e, comment + note);
          return Status::Ok();
        };
        switch (kind) {
          case NodeKind::kCall: {
            if (place.depth == 0) {
              sig_name = IsIdentifier(node.op()) ? std::string(node.op()) : "traced";
              for (uint32_t j = 0; j < n; ++j) {
                uint32_t c = node.operand_code(j);
                Value v = c == 0 ? Value() : node.chunk().literal(c);
                std::string lit;
                if (c == 0 || !lang.TakesArgument(v)) {
                  return fail(node, place,
                              "an argument that " + flag + " cannot take (" +
                                  (c == 0 ? std::string("a reference") : TypeName(v)) + ")");
                }
                params.push_back(v);
              }
              buf += lang.Header(sig_name, node.op(), params,
                                 facts != nullptr ? facts->result : VKind::kNone);
            } else {
              std::string text = "call " + DisplayString(node.op()) + "(";
              for (size_t j = 0; j < args.size(); ++j) text += (j ? ", " : "") + args[j];
              buf += lang.Comment(text + ")  " + comment);
            }
            code.emplace_back();
            code.back().params = n;
            return Status::Ok();
          }
          case NodeKind::kArgument: {
            uint32_t k = node.aux();
            if (k != 0) {
              CodeFrame& f = code.back();
              if (n != 1 || node.operand_code(0) != 0 || node.ref(0) != f.last_jump ||
                  k > f.jump_args.size()) {
                return fail(node, place, "a block argument that does not follow its jump");
              }
              return assign(f.jump_args[k - 1]);
            }
            if (node.vkind() == VKind::kFunction && lang.SkipsFunctions()) {
              buf += lang.Comment(comment + ": the function " + DisplayString(recorded.str()));
              return Status::Ok();
            }
            if (n >= 1) return assign(args[0]);
            if (place.depth == 1 && node.vkind() != VKind::kFunction) {
              // The root's argument %k is parameter k - 1 (%1 is the function
              // itself), so a slice that drops an argument keeps the others'.
              uint32_t pos = node.location().pos;
              uint32_t k1 = pos >= 2 && pos - 1 <= code.back().params ? pos - 1 : 0;
              if (k1 == 0) return fail(node, place, "an argument of the root call out of place");
              return assign("a" + std::to_string(k1));
            }
            return literal("");
          }
          case NodeKind::kConstant:
            return literal("");
          case NodeKind::kPrimitive: {
            if (node.op() == "rand" || node.op() == "randn") {
              return literal(", " + std::string(node.op()) + "() as drawn");
            }
            std::string e = lang.Op(node.op(), args, recorded);
            if (e.empty()) {
              return fail(node, place,
                          flag + " has no code for ⟨" + DisplayString(node.op()) + "⟩ of " +
                              std::to_string(n) + " operands giving " + TypeName(recorded));
            }
            return assign(e);
          }
          case NodeKind::kJump: {
            CodeFrame& f = code.back();
            f.last_jump = node.id();
            f.jump_args.assign(args.begin(), args.end() - (cond ? 1 : 0));
            if (cond && node.operand_code(n - 1) == 0) {
              buf += lang.Guard(args.back(), (node.flags() & 2) != 0,
                                std::string(place.has_path ? place.path : "") + " " + loc);
            }
            return Status::Ok();
          }
          case NodeKind::kReturn: {
            if (n != 1) return fail(node, place, "a return without one operand");
            IRT_RETURN_IF_ERROR(assign(args[0]));
            if (place.depth == 1) {
              buf += lang.Return(node.id());
              if (facts != nullptr && out == nullptr) facts->result = node.vkind();
            }
            code.pop_back();
            return Status::Ok();
          }
          case NodeKind::kError:
            return fail(node, place, "the run failed here; " + flag + " writes complete runs only");
          default:
            return fail(node, place,
                        "a special node ($(" + DisplayString(node.op()) + ")): " + flag +
                            " has no code for it");
        }
      });
  if (!s.ok()) return s;
  if (out == nullptr) return Status::Ok();
  buf += lang.Footer(sig_name, params, facts != nullptr ? facts->result : VKind::kNone);
  out->Write(buf);
  return Status::Ok();
}

Status ExportCode(const std::string& path, const CodeLang& lang, Progress* progress, Output& out) {
  TwoPassInput input;
  IRT_RETURN_IF_ERROR(input.Prepare(path));
  CodeFacts facts;
  // Both streams are opened first, so that a progress count has both passes
  // in its total from the start.
  IRT_ASSIGN_OR_RETURN(ChunkStream first, input.Open(progress));
  IRT_ASSIGN_OR_RETURN(ChunkStream second, input.Open(progress));
  IRT_RETURN_IF_ERROR(Generate(first, lang, nullptr, &facts));
  return Generate(second, lang, &out, &facts);
}

}  // namespace

Status ExportPython(const std::string& path, const ExportOptions& opts, Output& out) {
  return ExportCode(path, PythonLang(), opts.progress, out);
}

Status ExportC(const std::string& path, const ExportOptions& opts, Output& out) {
  return ExportCode(path, CLang(), opts.progress, out);
}

}  // namespace irt::internal
