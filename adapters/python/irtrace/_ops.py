"""Names under which calls to functions without traced source are recorded.

A function whose meaning matches an operation of the standard set
(man/irt-ops.7.md) for the number of arguments given is recorded under that
name, so irt-grad and irt-replay understand it; any other under its
qualified Python name ("math.pow", "numpy.linalg.norm", "builtins.len").
"""
import builtins
import math
import random

try:
    import numpy as np
except ImportError:  # the package needs NumPy, but the table does not
    np = None

_UNARY = ["sin", "cos", "tan", "sinh", "cosh", "tanh", "exp", "expm1", "log", "log10", "log2",
          "log1p", "sqrt", "cbrt", "exp2"]
_MATH_ALIASES = {"asin": "asin", "acos": "acos", "atan": "atan", "asinh": "asinh",
                 "acosh": "acosh", "atanh": "atanh", "erf": "erf", "erfc": "erfc",
                 "lgamma": "lgamma", "fabs": "abs"}
_NP_ALIASES = {"arcsin": "asin", "arccos": "acos", "arctan": "atan", "arcsinh": "asinh",
               "arccosh": "acosh", "arctanh": "atanh", "abs": "abs", "absolute": "abs",
               "negative": "-", "sign": "sign"}
_NP_BINARY = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/", "true_divide": "/",
              "power": "^", "maximum": "max", "minimum": "min",
              "arctan2": "atan2", "hypot": "hypot", "less": "<", "less_equal": "<=",
              "greater": ">", "greater_equal": ">=", "equal": "==", "not_equal": "!="}


def _table():
    t = {}

    def put(f, name, *arities):
        if f is not None:
            t[f] = (name, set(arities))

    for n in _UNARY:
        put(getattr(math, n, None), n, 1)
    for n, std in _MATH_ALIASES.items():
        put(getattr(math, n, None), std, 1)
    put(math.atan2, "atan2", 2)
    put(math.hypot, "hypot", 2)
    put(builtins.abs, "abs", 1)
    put(builtins.max, "max", 2)
    put(builtins.min, "min", 2)
    put(random.random, "rand", 0)
    if np is not None:
        for n in _UNARY:
            put(getattr(np, n, None), n, 1)
        for n, std in _NP_ALIASES.items():
            put(getattr(np, n, None), std, 1)
        for n, std in _NP_BINARY.items():
            put(getattr(np, n, None), std, 2)
        put(np.sum, "sum", 1)
        put(np.mean, "mean", 1)
        put(np.max, "maximum", 1)
        put(np.min, "minimum", 1)
        put(np.transpose, "transpose", 1)
        put(np.where, "ifelse", 3)  # elementwise choice, NumPy's broadcasting and promotion
        put(np.zeros_like, "zero", 1)
        put(np.ones_like, "one", 1)
        put(np.reshape, "reshape", 2)  # row-major (order="C", the default)
        put(np.random.random, "rand", 0)
        put(np.random.rand, "rand", 0)
        put(np.random.randn, "randn", 0)
        put(np.random.standard_normal, "randn", 0)
    return t


STANDARD = _table()
# Methods of NumPy arrays with a standard meaning (receiver first).
METHODS = {"sum": ("sum", 1), "mean": ("mean", 1), "max": ("maximum", 1),
           "min": ("minimum", 1), "transpose": ("transpose", 1), "reshape": ("reshape", None)}


# Methods and functions that change a value in place. A trace records
# values: the nodes recorded from the value before the change would hold
# what it was, and a derivative through the change would be lost, silently.
# Such a call stops the run (InPlaceChange).
_MUTATORS = {
    list: {"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse",
           "__setitem__", "__delitem__", "__iadd__", "__imul__"},
    dict: {"update", "pop", "popitem", "clear", "setdefault", "__setitem__", "__delitem__"},
    set: {"add", "discard", "remove", "pop", "clear", "update", "intersection_update",
          "difference_update", "symmetric_difference_update"},
    bytearray: {"append", "extend", "insert", "pop", "remove", "clear", "reverse"},
}
_MUTATING_FUNCTIONS = {random.shuffle}
if np is not None:
    _MUTATORS[np.ndarray] = {"fill", "sort", "resize", "put", "itemset", "partition",
                             "setfield", "__setitem__", "__iadd__", "__isub__", "__imul__",
                             "__itruediv__"}
    _MUTATING_FUNCTIONS |= {np.random.shuffle, np.copyto, np.put, np.place, np.putmask,
                            np.fill_diagonal}


class InPlaceChange(TypeError):
    """A call that changes a value in place, which a trace cannot record."""


def check_not_in_place(f, recv, kwnames=()):
    """Raises InPlaceChange for a method of `recv` (None for a function
    call) or a function that changes a value in place, or writes into an
    array given as `out=` (NumPy's ufuncs and reductions)."""
    if "out" in kwnames:
        what = qualified(f) + "(out=)"
    elif recv is not None:
        names = _MUTATORS.get(type(recv))
        name = getattr(f, "__name__", "")
        if names is None or name not in names:
            return
        what = f"{type(recv).__name__}.{name}"
    else:
        try:
            if f not in _MUTATING_FUNCTIONS:
                return
        except TypeError:  # an unhashable callable
            return
        what = qualified(f)
    raise InPlaceChange(
        f"irtrace does not trace {what}: it changes a value in place, so the values "
        f"recorded from it before would be stale and derivatives through it lost; compute "
        f"without changing values in place (acc = acc + [v] grows a list; accumulate in a "
        f"variable, or work on whole NumPy arrays)")


def qualified(f):
    """The qualified Python name of a callable."""
    self = getattr(f, "__self__", None)
    name = getattr(f, "__name__", None) or type(f).__name__
    if self is not None and not isinstance(self, type(math)):
        t = type(self)
        mod = t.__module__
        return (f"{t.__qualname__}" if mod == "builtins" else f"{mod}.{t.__qualname__}") + \
            f".{name}"
    if np is not None and isinstance(f, np.ufunc):
        return f"numpy.{name}"
    mod = getattr(f, "__module__", None) or (self.__name__ if self is not None else None)
    qual = getattr(f, "__qualname__", name)
    return f"{mod}.{qual}" if mod else qual


def op_name(f, nargs):
    """The recorded name of a call of f with nargs arguments."""
    try:
        entry = STANDARD.get(f)
    except TypeError:  # unhashable callable
        entry = None
    if entry is not None and nargs in entry[1]:
        return entry[0]
    return qualified(f)


def method_name(f, recv, nargs):
    """The recorded name of a method call recv.name(...) (nargs counts recv)."""
    name = getattr(f, "__name__", "")
    if np is not None and isinstance(recv, np.ndarray) and name in METHODS:
        std, arity = METHODS[name]
        if nargs == arity or (arity is None and nargs >= 2):  # None: any number of operands
            return std
    return op_name(f, nargs)


# Operators whose recorded name depends on their operands' values (the
# operation the standard set has for them, if any): a function of the
# operand values giving (name, the operands recorded, or None for all):
# an index of an operand kept, or a 1-tuple holding a literal.
def _matmul(a, b, other="numpy.matmul"):
    if np is not None and isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        if a.ndim == 2 and b.ndim in (1, 2):
            return "matmul", None  # the standard matmul: a vector is a column
        if a.ndim == 1 and b.ndim == 1:
            return "dot", None
    return other, None  # a vector on the left is a row: not the standard matmul


def _dot(a, b):
    # np.dot: as @ for vectors and matrices, NumPy's dot otherwise (which
    # is not matmul for more dimensions).
    return _matmul(a, b, "numpy.dot")


def _attr_t(x, attr):
    if np is not None and isinstance(x, np.ndarray):
        if x.ndim == 2:
            return "transpose", (0,)
        if x.ndim < 2:
            return "identity", (0,)
        return "numpy.ndarray.T", (0,)
    return "getattr", None


def _seqlen(xs):
    # len(xs), a loop's or a call's: the standard length of a tuple (a list) or a vector,
    # which irt-replay and irt-export can compute; a matrix's len counts
    # rows, not elements, and a str's characters: Python's name for those.
    if isinstance(xs, (tuple, list)) or (np is not None and isinstance(xs, np.ndarray) and
                                         xs.ndim == 1):
        return "length", None
    return "builtins.len", None


# Reductions along one axis (np.sum(x, axis=k), x.sum(axis=k)), lowered
# to the standard reduction along dimension d, which keeps the dimension,
# then getitem(s, nothing..., 0), which drops it (_lower.lower_axis).
AXIS_FUNCTIONS = {}
AXIS_METHODS = {"sum": "sum", "mean": "mean", "max": "maximum", "min": "minimum"}
if np is not None:
    AXIS_FUNCTIONS = {np.sum: "sum", np.mean: "mean", np.max: "maximum", np.min: "minimum",
                      np.amax: "maximum", np.amin: "minimum"}


def axis_reduction(std, fallback, method, x, axis, keepdims):
    """The name and operands of reduce(x, axis, keepdims=True) (a namer):
    the standard reduction along dimension axis + 1 of an array, else the
    call's qualified name with its three operands."""
    if np is not None and isinstance(x, np.ndarray) and -x.ndim <= axis < x.ndim:
        return std, (0, (axis % x.ndim + 1,))
    if method is not None:
        fallback = qualified(getattr(x, method)) + "(axis=, keepdims=)"
    return fallback, None


def drop_axis(v, axis):
    """The name and operands of NumPy's v[:, ..., 0] along `axis` (a namer):
    the standard getitem with nothing for each dimension before it."""
    if np is not None and isinstance(v, np.ndarray) and -v.ndim <= axis < v.ndim:
        return "getitem", (0,) + ((None,),) * (axis % v.ndim) + ((0,),)
    return "numpy.squeeze(axis=)", None


def new_axes(kinds, v):
    """The name and operands of v[...] with new axes (a namer; `kinds`:
    each part of the index, s a slice, i an integer, n a new axis, after v
    was indexed by the s and i parts): reshape to the result's dimensions."""
    if np is None or not isinstance(v, np.ndarray) or v.ndim < kinds.count("s"):
        raise TypeError(f"irtrace indexes arrays with new axes (None), not "
                        f"{type(v).__name__}")
    dims, k = [], 0
    for c in kinds:
        if c == "n":
            dims.append(1)
        elif c == "s":
            dims.append(v.shape[k])
            k += 1
    dims += v.shape[k:]
    return "reshape", (0,) + tuple((int(d),) for d in dims)


def flat_dims(how, v):
    """The name and operands of v raveled (a namer): reshape to (n,), or
    to a column (n, 1) or a row (1, n) for np.outer."""
    if np is None or not isinstance(v, np.ndarray):
        return {"ravel": "numpy.ravel", "column": "numpy.outer.column",
                "row": "numpy.outer.row"}.get(how, f"numpy.ndarray.{how}"), None
    n = (int(v.size),)
    return "reshape", (0,) + {"column": (n, (1,)), "row": ((1,), n)}.get(how, (n,))


def concatenate(a, b, axis):
    """The name and operands of np.concatenate([a, b], axis=k) (a namer):
    cat along dimension k + 1 of arrays."""
    if np is not None and isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and \
            -a.ndim <= axis < a.ndim:
        return "cat", ((axis % a.ndim + 1,), 0, 1)
    return "numpy.concatenate(axis=)", None


def lift(x, axis):
    """The name and operands of x with a new dimension at `axis` (a namer,
    for np.stack and np.array): a number as fill(x, 1); an array reshaped."""
    if np is not None and isinstance(x, np.ndarray) and -x.ndim - 1 <= axis <= x.ndim:
        shape = list(x.shape)
        shape.insert(axis % (x.ndim + 1), 1)
        return "reshape", (0,) + tuple((int(d),) for d in shape)
    if isinstance(x, (bool, int, float)) or (np is not None and isinstance(x, np.generic)):
        if axis in (0, -1):
            return "fill", (0, (1,))
    return "numpy.expand_dims(axis=)", None


def cumsum_name(x, axis):
    """The name and operands of np.cumsum(x, axis) (a namer): the standard
    cumsum along axis + 1 of an array (of a vector without an axis)."""
    if np is not None and isinstance(x, np.ndarray):
        if axis is None and x.ndim == 1:
            return "cumsum", (0,)
        if axis is not None and -x.ndim <= axis < x.ndim:
            return "cumsum", (0, (axis % x.ndim + 1,))
    return "numpy.cumsum(axis=)", None


def _join(a, b):
    # a + b of two tuples or two lists joins them: the standard cat along a
    # tuple's one dimension (a literal 1 first); anything else is `+`.
    if (type(a) is tuple and type(b) is tuple) or (type(a) is list and type(b) is list):
        return "cat", ((1,), 0, 1)
    return "+", None


def _mathpow(x, y):
    # math.pow(x, y) is C's pow in binary64, as the standard ^ of a float
    # (and of an integer to a float power); of two integers, ^ would give
    # an integer where math.pow gives a float.
    ints = all(type(v) in (int, bool) or (np is not None and isinstance(v, np.integer))
               for v in (x, y))
    return ("math.pow", None) if ints else ("^", None)


def _number(v):
    return type(v) in (bool, int, float) or \
        (np is not None and type(v) in (np.bool_, np.int64, np.float32, np.float64))


def _collect(fallback):
    # np.array(xs), np.asarray(xs): of a list or tuple of numbers, the
    # standard collect (NumPy's dtype rule is collect's); of an array, a
    # copy of it or itself (identity); of anything else NumPy's name.
    def namer(x):
        if np is not None and isinstance(x, np.ndarray):
            return "identity", None
        if isinstance(x, (list, tuple)) and x and all(_number(v) for v in x):
            return "collect", None
        return fallback, None
    return namer


def _float(x):
    # float(x) of a float is x itself; of anything else a conversion.
    return ("identity", None) if isinstance(x, float) else ("builtins.float", None)


OPERAND_NAMED = {"+join": _join, "dropaxis": drop_axis, "@": _matmul, "getattr": _attr_t,
                 "seqlen": _seqlen, "len": _seqlen, "numpy.dot": _dot, "numpy.matmul": _matmul,
                 "dotmethod": _dot, "builtins.float": _float, "math.pow": _mathpow,
                 "numpy.array": _collect("numpy.array"),
                 "numpy.asarray": _collect("numpy.asarray"), "concatenate": concatenate,
                 "lift": lift, "cumsum": cumsum_name}
# Functions of two operands recorded as operators whose name depends on
# their values: np.dot and np.matmul as `@` is (matmul, dot, or NumPy's
# name for a vector on the left). Resolved where the function is lowered.
NAMED_BY_OPERANDS = {builtins.float: ("builtins.float", 1),  # -> (name, operands)
                     math.pow: ("math.pow", 2)}
# Functions of one operand that are a standard operation with a literal
# second operand: recorded as that operation, computed by the function.
LITERAL_FORMS = {}
if np is not None:
    NAMED_BY_OPERANDS.update({np.dot: ("numpy.dot", 2), np.matmul: ("numpy.matmul", 2),
                              np.array: ("numpy.array", 1), np.asarray: ("numpy.asarray", 1)})
    LITERAL_FORMS = {np.square: ("^", 2)}
BY_OPERANDS_NAMES = {name for name, _ in NAMED_BY_OPERANDS.values()}
# NumPy functions lowered to standard operations by _lower (lower_<name>).
LOWERED = {}
if np is not None:
    LOWERED = {np.clip: "clip", np.outer: "outer", np.ravel: "ravel", np.var: "var",
               np.std: "std", np.concatenate: "concatenate", np.stack: "stack",
               np.array: "array", np.linalg.norm: "norm", np.cumsum: "cumsum"}
