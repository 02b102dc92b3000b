import ctypes
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


def _key(idx):
    """Python's index of getitem's operands: None takes a whole dimension."""
    return tuple(slice(None) if i is None else _index(i) for i in idx)


def getitem(x, *idx):
    """Python's x[i, ...], 0-based; a sub-tensor when fewer indices than dimensions."""
    if isinstance(x, tuple):
        return x[_index(idx[0])]
    sub = x[_key(idx)]
    if len(idx) == x.ndim and None not in idx:
        return _items(np.asarray(sub).reshape(1))[0]
    return np.array(sub)


def additem(x, v, *idx):
    t = x.copy()
    key = _key(idx)
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


def _part(v):
    return None if v is None else _index(v)


def _pyslice(d, start, stop, step, ndim):
    idx = [slice(None)] * ndim
    idx[_index(d) - 1] = slice(_part(start), _part(stop), _part(step))
    return tuple(idx)


def getslice(x, d, start, stop, step=None):
    """Python's x[start:stop:step] along dimension d; of a tuple when d = 1."""
    if isinstance(x, tuple):
        if _index(d) != 1:
            raise IndexError("getslice: a tuple has one dimension")
        return x[slice(_part(start), _part(stop), _part(step))]
    return np.array(x[_pyslice(d, start, stop, step, x.ndim)])


def ungetslice(t, x, d, start, stop, step=None):
    out = np.zeros(x.shape, dtype=t.dtype)
    key = _pyslice(d, start, stop, step, x.ndim)
    out[key] = out[key] + t
    return out


def cumsum(x, d=None):
    if x.ndim != 1 and d is None:
        raise ValueError("cumsum: a tensor of %d dimensions needs the dimension" % x.ndim)
    dt = x.dtype if x.dtype.kind == "f" else np.int64
    return np.cumsum(x, axis=0 if d is None else _index(d) - 1, dtype=dt)


def collect(t):
    dts = [np.asarray(v).dtype for v in t]
    f64 = any(d == np.float64 for d in dts)
    f32 = any(d == np.float32 for d in dts)
    ints = any(d.kind == "i" for d in dts)
    dt = np.float64 if f64 or (f32 and ints) else np.float32 if f32 else \
        np.int64 if ints else np.bool_
    return np.array(t, dtype=dt)


def cat(d, *xs):
    if isinstance(xs[0], tuple):  # tuples: one dimension, joined
        if _index(d) != 1 or not all(isinstance(x, tuple) for x in xs):
            raise TypeError("cat: tuples are joined along dimension 1, with tuples only")
        return sum(xs, ())
    f64 = any(x.dtype == np.float64 for x in xs)
    f32 = any(x.dtype == np.float32 for x in xs)
    ints = any(x.dtype.kind == "i" for x in xs)
    dt = np.float64 if f64 or (f32 and ints) else np.float32 if f32 else \
        np.int64 if ints else np.bool_
    return np.concatenate([x.astype(dt) for x in xs], axis=_index(d) - 1)
