"""The NumPy calls the lowering records as standard operations (a part of
irtrace._lower's Lowerer): reductions along an axis, new axes, clip,
outer, var and std, norm, ravel, concatenate, stack and array. Each
records the standard operations that NumPy's own definition of the call
performs, with the values NumPy computes (the program's result is
unchanged bit for bit); names and literal operands that depend on the
values (a dimension, a shape) are read when it runs (_ops's namers)."""
import ast

from . import _ops
from ._ssa import Const, Stmt


class NumpyLowering:
    """Methods of Lowerer (self.expr, self.emit, self.literal, self.resolve
    and self.fail are Lowerer's)."""

    def axis_args(self, e, first):
        """(axis, keepdims) of a reduction along one axis, `f(x, axis[,
        keepdims])` or `x.f(axis[, keepdims])` with literal arguments (by
        position or by name; `first`: the positional index of the axis), or
        None for any other call."""
        if any(isinstance(a, ast.Starred) for a in e.args) or len(e.args) > first + 2:
            return None
        given = dict(zip(["axis", "keepdims"], e.args[first:]))
        for k in e.keywords:
            if k.arg not in ("axis", "keepdims") or k.arg in given:
                return None
            given[k.arg] = k.value
        if len(e.args) < first or "axis" not in given:
            return None
        axis, keep = self.literal(given["axis"]), self.literal(given.get("keepdims"))
        if type(axis) is not int or ("keepdims" in given and type(keep) is not bool):
            return None
        return axis, bool(keep)

    def lower_axis(self, e, x, axis, keepdims, std, callee=None, method=None, npfn=None,
                   strict=False):
        """np.sum(x, axis=k) and the like (x.sum(axis=k); mean, max, min):
        the standard reduction along dimension d (1-based, from x's number
        of dimensions when it runs), which keeps the dimension as NumPy's
        keepdims=True does; then, unless keepdims, getitem(s, nothing...,
        0) drops it, as NumPy does. Both computed by NumPy (npfn: the
        reduction as numpy.<npfn>, not the callee)."""
        s = Stmt("op", std, [x, Const(axis), Const(True)], e, self, pyop="reduce",
                 callee=callee if method is None else method)
        s.kwnames = ("axis", "keepdims")
        s.method, s.std, s.npfn, s.strict = method is not None, std, npfn, strict
        # The IR text names it as a keyword call is named (ir_call_name).
        s.ir_name = method if method is not None else "numpy." + npfn if npfn else \
            _ops.qualified(self.resolve(callee[1].split(".")))
        s.fallback = None if method is not None else s.ir_name + "(axis=, keepdims=)"
        s = self.emit(s)
        if keepdims:
            return s
        drop = Stmt("op", "getitem", [s, Const(axis)], e, self, pyop="dropaxis")
        drop.kwnames = ("axis",)
        drop.ir_name = "numpy.squeeze"
        return self.emit(drop)

    def lower_clip(self, e, callee):
        """np.clip(x, lo, hi): the standard max(x, lo), then min(., hi), as
        NumPy defines it (np.minimum(np.maximum(x, lo), hi)); a literal
        None bound leaves its side out."""
        if len(e.args) != 3 or e.keywords:
            return None
        x, lo, hi = (self.expr(a) for a in e.args)
        for bound, std, pyop in ((lo, "max", "npmaximum"), (hi, "min", "npminimum")):
            if isinstance(bound, Const) and bound.value is None:
                continue
            x = self.emit(Stmt("op", std, [x, bound], e, self, pyop=pyop))
        return x

    def lower_outer(self, e, callee):
        """np.outer(a, b): a as a column times b as a row, NumPy's own
        definition (multiply(a.ravel()[:, None], b.ravel()[None, :]))."""
        if len(e.args) != 2 or e.keywords:
            return None
        a, b = (self.expr(x) for x in e.args)
        col = self.emit(self.flat(e, a, "column"))
        row = self.emit(self.flat(e, b, "row"))
        return self.emit(Stmt("op", "*", [col, row], e, self, pyop="*"))

    def lower_norm(self, e, callee):
        """np.linalg.norm(x): sqrt(dot(v, v)) of x raveled, NumPy's own
        steps for the 2-norm of real numbers."""
        if len(e.args) != 1 or e.keywords:
            return None
        v = self.emit(self.flat(e, self.expr(e.args[0]), "ravel"))
        d = self.emit(Stmt("op", "dot", [v, v], e, self, pyop="npdot"))
        return self.emit(Stmt("op", "sqrt", [d], e, self, pyop="npsqrt"))

    def lower_ravel(self, e, callee):
        """np.ravel(x): reshape(x, n)."""
        if len(e.args) != 1 or e.keywords:
            return None
        return self.emit(self.flat(e, self.expr(e.args[0]), "ravel"))

    def flat(self, e, x, how):
        """reshape(x, dims), x raveled to a vector, a column or a row (dims
        read from the value when it runs), computed by NumPy."""
        s = Stmt("op", "reshape", [x], e, self, pyop="flat", callee=how)
        s.method = False
        s.ir_name = {"ravel": "numpy.ravel", "column": "numpy.outer.column",
                     "row": "numpy.outer.row"}[how]
        return s

    def lower_var(self, e, callee, std=False, method=False):
        """np.var(x) (np.std(x): its sqrt), also along an axis and as x.var():
        mean((x - mean(x)) * (x - mean(x))), the additions and divisions
        NumPy's own _var makes (the inner mean keeping the axis)."""
        first = 0 if method else 1
        axis = None
        if len(e.args) != first or e.keywords:
            axis = self.axis_args(e, first)
            if axis is None:
                return None
        x = self.expr(e.func.value if method else e.args[0])

        def mean(v, keepdims):
            if axis is None:
                s = Stmt("op", "mean", [v], e, self, pyop="npmean")
                s.strict = method
                return self.emit(s)
            return self.lower_axis(e, v, axis[0], keepdims, "mean", npfn="mean", strict=method)
        m = mean(x, True)
        d = self.emit(Stmt("op", "-", [x, m], e, self, pyop="-"))
        q = self.emit(Stmt("op", "*", [d, d], e, self, pyop="*"))
        v = mean(q, axis is not None and axis[1])
        if std:
            v = self.emit(Stmt("op", "sqrt", [v], e, self, pyop="npsqrt"))
        return v

    def lower_std(self, e, callee):
        return self.lower_var(e, callee, std=True)

    def lower_cumsum(self, e, callee, method=False):
        """np.cumsum(x[, axis]) and x.cumsum([axis]): the standard cumsum
        along axis + 1 (of a vector without an axis), named when it runs
        (NumPy flattens a tensor given no axis: that keeps NumPy's name)."""
        first = 0 if method else 1
        if len(e.args) > first + 1 or len(e.args) < first or \
                any(k.arg != "axis" for k in e.keywords) or len(e.keywords) + len(e.args) > first + 1:
            return None
        given = e.args[first:] + [k.value for k in e.keywords]
        axis = self.literal(given[0]) if given else None
        if given and type(axis) is not int:
            return None
        x = self.expr(e.func.value if method else e.args[0])
        s = Stmt("op", "cumsum", [x, Const(axis)], e, self, pyop="cumsum",
                 callee=callee if not method else "cumsum")
        s.method = method
        s.kwnames = ("axis",)
        s.ir_name = "cumsum" if method else "numpy.cumsum"
        return self.emit(s)

    def sequence_args(self, e, keywords):
        """The items of a call's first argument, a list or tuple display of
        at least one item, and its literal keywords by name (axis by
        position too), or None for any other call."""
        if not 1 <= len(e.args) <= 2 or not isinstance(e.args[0], (ast.List, ast.Tuple)) or \
                not e.args[0].elts or any(isinstance(x, ast.Starred) for x in e.args[0].elts):
            return None
        given = dict(zip(["axis"], e.args[1:]))
        for k in e.keywords:
            if k.arg not in keywords or k.arg in given:
                return None
            given[k.arg] = k.value
        lits = {k: self.literal(v) for k, v in given.items()}
        if any(type(v) is not int for v in lits.values()):
            return None
        return e.args[0].elts, lits

    def join(self, e, items, axis, callee):
        """cat along axis + 1 of the items, two at a time (cat's rule takes
        two tensors), as NumPy's concatenate joins them."""
        v = items[0]
        for x in items[1:]:
            s = Stmt("op", "cat", [v, x, Const(axis)], e, self, pyop="concatenate",
                     callee=callee)
            s.kwnames = ("axis",)
            s.ir_name = "numpy.concatenate"
            v = self.emit(s)
        return v

    def lower_concatenate(self, e, callee):
        """np.concatenate([a, b, ...], axis=k): cat(k + 1, a, b), then with
        c, and so on, the dimension from the rank when it runs."""
        got = self.sequence_args(e, ("axis",))
        if got is None or len(got[0]) < 2:
            return None
        items, lits = got
        return self.join(e, [self.expr(x) for x in items], lits.get("axis", 0), callee)

    def lower_stack(self, e, callee, array=False):
        """np.stack([a, b, ...], axis=k), and np.array([a, b, ...]) (axis
        0, no other argument): each item with a new dimension k (a number
        as fill(x, 1), an array reshaped), then joined along it."""
        got = self.sequence_args(e, ("axis",) if not array else ())
        if got is None or (array and len(e.args) != 1):
            return None
        items, lits = got
        axis = lits.get("axis", 0)
        lifted = []
        for x in items:
            v = None
            if array and isinstance(x, (ast.List, ast.Tuple)):  # a row: np.array of it
                inner = ast.copy_location(ast.Call(func=e.func, args=[x], keywords=[]), x)
                v = self.lower_stack(inner, callee, array=True)
            s = Stmt("op", "reshape", [v or self.expr(x), Const(axis)], e, self, pyop="lift")
            s.kwnames = ("axis",)
            s.ir_name = "numpy.expand_dims"
            lifted.append(self.emit(s))
        return self.join(e, lifted, axis, callee)

    def lower_array(self, e, callee):
        return self.lower_stack(e, callee, array=True)

    def lower_new_axes(self, e, parts, new):
        """x[:, None] and the like: x indexed by the parts that are not new
        axes (as lower_subscript does), then reshape to the result's
        dimensions (read from the value when it runs: a 1 for each new
        axis), computed by NumPy's own indexing."""
        if any(isinstance(p, (ast.Starred)) or (isinstance(p, ast.Constant) and
                                                 p.value is Ellipsis) for p in parts):
            self.fail(new[0], "new axes (None, np.newaxis) with '...' in an index",
                      "write each dimension's ':'")
        rest = [p for p in parts if not any(p is q for q in new)]
        if rest and not all(isinstance(p, ast.Slice) and p.lower is None and p.upper is None
                            and p.step is None for p in rest):
            inner = ast.Subscript(value=e.value, ctx=ast.Load(),
                                  slice=rest[0] if len(rest) == 1 else
                                  ast.Tuple(elts=rest, ctx=ast.Load()))
            ast.copy_location(inner, e)
            v = self.lower_subscript(inner)
        else:
            v = self.expr(e.value)
        # Each part as the reshape sees it: s, a dimension kept (a slice);
        # i, one dropped (an integer); n, a new axis.
        kinds = "".join("n" if any(p is q for q in new) else "s" if isinstance(p, ast.Slice)
                        else "i" for p in parts)
        s = Stmt("op", "reshape", [v], e, self, pyop="newaxis")
        s.kinds = kinds
        s.ir_name = "numpy.expand_dims"
        return self.emit(s)
