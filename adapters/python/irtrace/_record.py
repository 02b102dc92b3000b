"""Recording: the instrumented code of each lowered function and the driver.

Each lowered function (irtrace._lower) becomes a generator function,
generated as Python source and compiled with compile(): it runs the SSA
blocks as a state machine, computes every value with Python's own
operators and functions, and appends each node through the writer. A call
of a traced function is a `yield` to the driver, which keeps the call
stack in a list: recursion depth is bounded by memory, not by Python's
recursion limit.
"""
import functools
import sysconfig
import types

from . import _context, _lower, _native, _ops

K_ARG, K_CONST, K_PRIM, K_CALL = (_native.KIND_ARGUMENT, _native.KIND_CONSTANT,
                                   _native.KIND_PRIMITIVE, _native.KIND_CALL)
K_JUMP, K_RETURN, K_ERROR = _native.KIND_JUMP, _native.KIND_RETURN, _native.KIND_ERROR
KIND_NAMES = {K_ARG: "Argument", K_CONST: "Constant", K_PRIM: "Primitive", K_CALL: "Call",
              K_JUMP: "Jump", K_RETURN: "Return", K_ERROR: "Error"}  # as Node.kind says

_SAFE_LITERALS = (int, float, bool, str, type(None))

_LIBRARY_DIRS = tuple({p for k in ("stdlib", "platstdlib", "purelib", "platlib")
                       for p in [sysconfig.get_paths().get(k)] if p} |
                      {"/usr/lib/python3/dist-packages", __file__.rsplit("/", 1)[0]})

_lowered = {}  # code object -> Lowered, or None (not traced)


def traceable(f):
    """Whether the Python function f is traced (lowered and recorded with
    its body): it has source, outside the standard library and
    site-packages, and is no generator or coroutine."""
    code = f.__code__
    fname = code.co_filename
    return not (code.co_flags & (0x20 | 0x80 | 0x100 | 0x200)) and \
        not fname.startswith("<") and not fname.startswith(_LIBRARY_DIRS)


def lowered(f):
    """The lowered form of a traced function, or None for one recorded as a primitive."""
    code = f.__code__
    try:
        return _lowered[code]
    except KeyError:
        pass
    lf = None
    if traceable(f):
        lf = _lower.lower(f)
        _generate(lf)
    _lowered[code] = lf
    return lf


def target(f):
    """What the driver runs for a call of f: its lowered form, or None
    (recorded as a primitive)."""
    if type(f) is not types.FunctionType or hasattr(f, "__irtrace_primitive__"):
        return None
    return lowered(f)


# ---------------------------------------------------------------------------
# Code generation

def _v(a, consts):
    if isinstance(a, _lower.Const):
        v = a.value
        if type(v) in _SAFE_LITERALS and not (type(v) is float and (v != v or v in (
                float("inf"), float("-inf")))):
            return repr(v)
        consts.append(v)
        return f"_irt_C[{len(consts) - 1}]"
    return f"_irt_v{a.ssa}"


def _refs(args):
    """The references of a node's operands, as trailing call arguments."""
    return "".join(f", _irt_n{a.ssa}" for a in args if not isinstance(a, _lower.Const))


def _nodes(args):
    return "(" + "".join(("None" if isinstance(a, _lower.Const) else f"_irt_n{a.ssa}") + ", "
                         for a in args) + ")"


def _specs_operands(args):
    return [(a.value,) if isinstance(a, _lower.Const) else None for a in args]


_BIN = {"+", "-", "*", "/", "**", "@", "//", "%", "&", "|", "^", "<", "<=", ">", ">=", "==",
        "!=", "is", "is not", "in", "not in"}


_NEW_AXIS = "irtrace does not trace None (a new axis) as an index; reshape instead"


def _pyexpr(s, x):
    op = s.pyop
    if op in _BIN:
        return f"{x[0]} {op} {x[1]}"
    if op == "+join":
        return f"{x[0]} + {x[1]}"
    if op in _ops.BY_OPERANDS_NAMES:  # a function named by its operands: the call
        return f"{_callee(s)}({', '.join(x)})"
    return {"neg": lambda: f"-{x[0]}", "not": lambda: f"not {x[0]}", "pos": lambda: f"+{x[0]}",
            "invert": lambda: f"~{x[0]}", "bool": lambda: f"_irt_bool({x[0]})",
            "seqlen": lambda: f"_irt_seqlen({x[0]})",
            "len": lambda: f"len({x[0]})",
            "call1": lambda: f"{_callee(s)}({x[0]})",
            "unpack": lambda: f"_irt_unpack({x[0]}, {s.unpack})[{x[1]}]",
            "reduce": lambda: (f"_irt_arr({x[0]}, True).{s.callee}" if s.method else
                               f"_irt_np.{s.npfn}" if s.npfn else _callee(s)) +
            (f"(axis={x[1]}, keepdims=True)" if s.method else
             f"(_irt_arr({x[0]}, {s.strict}), axis={x[1]}, keepdims=True)"),
            "dropaxis": lambda: f"_irt_drop({x[0]}, {x[1]})",
            "npmaximum": lambda: f"_irt_np.maximum(_irt_arr({x[0]}, False), {x[1]})",
            "npmean": lambda: f"_irt_np.mean(_irt_arr({x[0]}, {s.strict}))",
            "npsqrt": lambda: f"_irt_np.sqrt({x[0]})",
            "npdot": lambda: f"_irt_np.dot({x[0]}, {x[1]})",
            "dotmethod": lambda: f"{x[0]}.dot({x[1]})",
            "flat": lambda: f"{x[0]}.{s.callee}()" if s.method else
            f"_irt_np.ravel({x[0]})" if s.callee == "ravel" else
            f"_irt_np.ravel({x[0]})[:, None]" if s.callee == "column" else
            f"_irt_np.ravel({x[0]})[None, :]",
            "concatenate": lambda: f"_irt_np.concatenate([{x[0]}, {x[1]}], axis={x[2]})",
            "lift": lambda: f"_irt_np.expand_dims(_irt_np.asarray({x[0]}), {x[1]})",
            "cumsum": lambda: (f"{x[0]}.cumsum(" if s.method else f"{_callee(s)}({x[0]}, ") +
            f"axis={x[1]})",
            "npminimum": lambda: f"_irt_np.minimum(_irt_arr({x[0]}, False), {x[1]})",
            "newaxis": lambda: f"{x[0]}[" + "".join(
                {"s": ":, ", "n": "None, ", "i": ""}[c] for c in s.kinds) + "]",
            "min": lambda: f"({x[0]} if {x[0]} <= {x[1]} else {x[1]})",
            "tuple": lambda: "(" + "".join(a + ", " for a in x) + ")",
            "list": lambda: "[" + "".join(a + ", " for a in x) + "]",
            "[]": lambda: f"{x[0]}[{x[1]}]",
            "[,]": lambda: f"{x[0]}[" + ", ".join(x[1:]) + "]",
            "[i,]": lambda: f"{x[0]}[" + ", ".join(
                ":" if isinstance(a, _lower.Const) and a.value is None else v
                for a, v in zip(s.args[1:], x[1:])) + ",]",
            "slice": lambda: f"{x[0]}[{':, ' * (s.args[1].value - 1)}{x[2]}:{x[3]}:{x[4]}]",
            "getattr": lambda: f"_irt_getattr({x[0]}, {x[1]})"}[op]()


def _callee(s):
    where, dotted = s.callee
    head, *rest = dotted.split(".")
    base = f"_irt_cell_{head}.cell_contents" if where == "cell" else head
    return ".".join([base] + rest)


def _callargs(s, x, skip=0):
    """The argument list of a call statement (without its first `skip`
    operands, a method's receiver): positional, then keywords."""
    npos = len(x) - len(s.kwnames)
    return ", ".join(x[skip:npos] + [f"{k}={v}" for k, v in zip(s.kwnames, x[npos:])])


def _generate(lf):
    """Generates and compiles lf's instrumented generator function."""
    specs = []  # (kind, op, block, pos, aux, line, col, has_cond, taken_when, operands)
    lines = []
    linemap = {}
    consts = []
    sites = []  # call sites: (block, pos, line, col, operands)

    def spec(*s):
        specs.append(s)
        return len(specs) - 1

    def emit(text, info, indent):
        lines.append("    " * indent + text)
        linemap[len(lines)] = info

    params = lf.params
    entry = ("entry", params[0])
    emit("def _irt_run(_irt_A, _irt_M, _irt_K, _irt_D, _irt_T, _irt_F, _irt_V, _irt_N):", entry, 1)
    if len(params) > 1:  # the arguments' values and nodes (None: a literal)
        emit("".join(f"_irt_v{p.ssa}, " for p in params[1:]) + "= _irt_V", entry, 2)
        emit("".join(f"_irt_n{p.ssa}, " for p in params[1:]) + "= _irt_N", entry, 2)
    c = spec(K_ARG, "", 1, 1, 0, lf.line, lf.col, False, False, [])
    emit(f"_irt_n1 = _irt_A(_irt_K[{c}], _irt_F)", entry, 2)
    for p in params[1:]:
        lit = spec(K_ARG, "", 1, p.ssa, 0, p.line, p.col, False, False, [])
        ref = spec(K_ARG, "", 1, p.ssa, 0, p.line, p.col, False, False, [None])
        emit(f"_irt_n{p.ssa} = _irt_A(_irt_K[{lit}], _irt_v{p.ssa}) if _irt_n{p.ssa} is None "
             f"else _irt_A(_irt_K[{ref}], _irt_v{p.ssa}, _irt_n{p.ssa})", entry, 2)
    emit("_irt_b = 1", entry, 2)
    emit("while True:", entry, 2)
    for bi, b in enumerate(lf.blocks):
        emit(f"{'if' if bi == 0 else 'elif'} _irt_b == {b.number}:", ("block", b), 3)
        for s in b.stmts:
            info = ("stmt", s)
            x = [_v(a, consts) for a in s.args]
            namer = _ops.OPERAND_NAMED.get(s.pyop if s.kind == "op" else None)
            if s.pyop == "flat":
                namer = functools.partial(_ops.flat_dims, s.callee)
            if s.pyop == "newaxis":
                namer = functools.partial(_ops.new_axes, s.kinds)
            if s.pyop == "reduce":
                namer = functools.partial(_ops.axis_reduction, s.std, s.fallback,
                                          s.callee if s.method else None)
            if namer is not None and s.pyop == "getattr" and s.args[1].value != "T":
                namer = None
            if namer is not None:  # an operator whose name depends on its operands' values
                sites.append((b.number, s.ssa, s.line, s.col, _specs_operands(s.args), False,
                              (), namer))
                emit(f"_irt_v{s.ssa} = {_pyexpr(s, x)}", info, 4)
                emit(f"_irt_n{s.ssa} = _irt_A(_irt_D({len(sites) - 1}, None, "
                     f"({''.join(a + ', ' for a in x)})), _irt_v{s.ssa}{_refs(s.args)})", info, 4)
                continue
            if s.kind in ("op", "global"):
                kind = K_PRIM if s.kind == "op" else K_CONST
                cls = spec(kind, s.name if s.kind == "op" else "", b.number, s.ssa, 0, s.line,
                           s.col, False, False, _specs_operands(s.args))
                rhs = _pyexpr(s, x) if s.kind == "op" else _callee(s)
                if s.pyop in ("[]", "[,]", "[i,]"):
                    # getitem's nothing is ':', so a None index (a new axis) is not one.
                    var = [v for a, v in zip(s.args[1:], x[1:]) if not isinstance(a, _lower.Const)]
                    if var:
                        emit(f"if {' or '.join(v + ' is None' for v in var)}: "
                             f"raise TypeError({_NEW_AXIS!r})", info, 4)
                emit(f"_irt_v{s.ssa} = {rhs}", info, 4)
                emit(f"_irt_n{s.ssa} = _irt_A(_irt_K[{cls}], _irt_v{s.ssa}{_refs(s.args)})",
                     info, 4)
                continue
            sites.append((b.number, s.ssa, s.line, s.col, _specs_operands(s.args),
                          s.kind == "method", s.kwnames, None))
            site = len(sites) - 1
            if s.kind == "method":
                emit(f"_irt_f = {x[0]}.{s.callee}", info, 4)
                emit(f"_irt_v{s.ssa} = _irt_f({_callargs(s, x, 1)})", info, 4)
                emit(f"_irt_n{s.ssa} = _irt_A(_irt_D({site}, _irt_f, {x[0]}), _irt_v{s.ssa}"
                     f"{_refs(s.args)})", info, 4)
                continue
            emit(f"_irt_f = {_callee(s)}", info, 4)
            emit("_irt_t = _irt_T(_irt_f)", info, 4)
            emit("if _irt_t is not None:", info, 4)
            emit(f"_irt_v{s.ssa}, _irt_n{s.ssa} = yield (_irt_t, _irt_f, {site}, "
                 f"({''.join(a + ', ' for a in x)}), {_nodes(s.args)}, ({_refs(s.args)[2:]}"
                 f"{',' if _refs(s.args) else ''}))", info, 5)
            emit("else:", info, 4)
            emit(f"_irt_v{s.ssa} = _irt_f({_callargs(s, x)})", info, 5)
            emit(f"_irt_n{s.ssa} = _irt_A(_irt_D({site}, _irt_f, None), _irt_v{s.ssa}"
                 f"{_refs(s.args)})", info, 5)
        for br in b.branches:
            info = ("branch", br)
            if br.target is None:
                cls = spec(K_RETURN, "", b.number, br.pos, 0, br.line, br.col, False, False,
                           _specs_operands([br.ret]))
                v = _v(br.ret, consts)
                emit(f"return ({v}, _irt_A(_irt_K[{cls}], {v}{_refs([br.ret])}))", info, 4)
                break
            ops = list(br.args) + ([br.cond] if br.cond is not None else [])
            cls = spec(K_JUMP, "", b.number, br.pos, br.target.number, br.line, br.col,
                       br.cond is not None, False, _specs_operands(ops))
            ind = 4
            if br.cond is not None:
                emit(f"if not {_v(br.cond, consts)}:", info, 4)
                ind = 5
            emit(f"_irt_j = _irt_M(_irt_K[{cls}]{_refs(ops)})", info, ind)
            targs = br.target.args
            if targs:
                lhs = "".join(f"_irt_v{p.ssa}, " for p in targs)
                rhs = "".join(_v(a, consts) + ", " for a in br.args)
                emit(f"{lhs}= {rhs}", info, ind)
                for k, p in enumerate(targs):
                    bc = spec(K_ARG, "", br.target.number, p.ssa, k + 1, p.line, p.col, False,
                              False, [None])
                    emit(f"_irt_n{p.ssa} = _irt_A(_irt_K[{bc}], _irt_v{p.ssa}, _irt_j)",
                         info, ind)
            emit(f"_irt_b = {br.target.number}", info, ind)
            emit("continue", info, ind)
            if br.cond is None:
                break
    emit("yield  # unreachable: makes every instrumented function a generator", entry, 2)
    cells = [f"_irt_cell_{n}" for n in lf.fn.__code__.co_freevars]
    helpers = "_irt_C, _irt_bool, _irt_getattr, _irt_seqlen, _irt_unpack, _irt_drop, _irt_np, " \
        "_irt_arr"
    src = (f"def _irt_factory({helpers}{''.join(', ' + c for c in cells)}):\n"
           + "\n".join(lines) + "\n    return _irt_run\n")
    code = compile(src, f"<irtrace {lf.name}>", "exec")
    ns = {}
    exec(code, {"__builtins__": __builtins__}, ns)
    factory = types.FunctionType(ns["_irt_factory"].__code__, lf.fn.__globals__, "_irt_factory")
    closure = lf.fn.__closure__ or ()
    lf.gen = factory(consts, bool, getattr, _seqlen, _unpack, _drop, _ops.np, _arr, *closure)
    lf.nargs = len(params) - 1
    lf.gen_code = lf.gen.__code__
    lf.specs = specs
    lf.sites = sites
    lf.linemap = linemap
    lf.source = src


def _seqlen(xs):
    """len(xs) for the sequences a traced `for` walks by index."""
    if isinstance(xs, (list, tuple, str, range)) or \
            (_ops.np is not None and isinstance(xs, _ops.np.ndarray) and xs.ndim > 0):
        return len(xs)
    raise TypeError(f"irtrace traces 'for' loops over ranges, lists, tuples, strings and "
                    f"arrays (of at least one dimension), not over {type(xs).__name__}")


def _unpack(xs, n):
    """xs of `a, b, ... = xs` (n targets), checked as Python's unpacking
    checks it. The targets are then bound by indexing, which reads the
    items iteration would only for the types accepted here."""
    if isinstance(xs, (list, tuple, str, range)) or \
            (_ops.np is not None and isinstance(xs, _ops.np.ndarray) and xs.ndim > 0):
        m = len(xs)
        if m > n:
            raise ValueError(f"too many values to unpack (expected {n})")
        if m < n:
            raise ValueError(f"not enough values to unpack (expected {n}, got {m})")
        return xs
    raise TypeError(f"irtrace unpacks tuples, lists, strings, ranges and arrays (of at least "
                    f"one dimension) into several targets, not {type(xs).__name__}; convert "
                    f"it with tuple(...) first")


def _arr(x, strict):
    """x, checked to be what a NumPy call the lowering takes apart (axis
    reductions, var, clip) computes on as NumPy's own definition says: an
    array, or (not strict: a function's operand) a list, tuple or number.
    NumPy hands other objects to their own methods (np.var(d) calls
    d.var()), and a method of another object is not NumPy's."""
    np = _ops.np
    if isinstance(x, np.ndarray) or (not strict and (isinstance(x, (list, tuple, bool, int, float))
                                                     or isinstance(x, np.generic))):
        return x
    raise TypeError(f"irtrace records this NumPy call on arrays"
                    f"{'' if strict else ', lists, tuples and numbers'}, not on "
                    f"{type(x).__name__} (call it in a helper marked irtrace.primitive)")


def _drop(v, axis):
    """NumPy's v[:, ..., 0] along `axis`: a reduction's kept dimension dropped."""
    if _ops.np is not None and isinstance(v, _ops.np.ndarray) and -v.ndim <= axis < v.ndim:
        return v[(slice(None),) * (axis % v.ndim) + (0,)]
    return _ops.np.squeeze(v, axis=axis)


# ---------------------------------------------------------------------------
# The driver

class _FnRun:
    """What one run knows of one lowered function: its class ids."""

    def __init__(self, run, lf):
        w = run.writer
        self.run, self.lf = run, lf
        self.K = [run.define(lf.name, *s) for s in lf.specs]
        self.dyn = {}  # (site, callable, kind) -> class
        self.by_name = {}  # (site, recorded name, kind) -> class
        w.register_function(lf.name, lf.ir)
        w.register_control_flow(lf.name, *lf.control_flow)

    def D(self, site, f, recv, kind=K_PRIM):
        """The class of a call at `site` recorded as a primitive (or, with
        kind=K_CALL, as a nested call of the traced function f)."""
        if f is not None:
            c = self.dyn.get((site, f, kind))
            if c is not None:
                return c
        b, pos, line, col, operands, method, kwnames, namer = self.lf.sites[site]
        marked = None if f is None else _context.primitive_name(f)
        if f is not None and kind == K_PRIM and marked is None:
            _ops.check_not_in_place(f, recv if method else None, kwnames)
        if namer is not None:  # recv: the operator's operand values
            name, keep = namer(*recv)
            if keep is not None:
                operands = [i if isinstance(i, tuple) else operands[i] for i in keep]
        elif marked is not None:
            name = marked
        elif kind == K_CALL or lowered_or_none(f) is not None:
            name = f.__qualname__  # a traced function, recorded with or without its body
        elif kwnames:  # no standard meaning: the name says the keywords
            name = _ops.qualified(f) + "(" + ", ".join(k + "=" for k in kwnames) + ")"
        elif method:
            name = _ops.method_name(f, recv, len(operands))
        else:
            name = _ops.op_name(f, len(operands))
        # A namer's literal operands may differ from run to run of the site.
        key = (site, name, kind, tuple(operands) if namer is not None else None)
        c = self.by_name.get(key)
        if c is None:
            c = self.run.define(self.lf.name, kind, name, b, pos, 0, line, col, False, False,
                                operands)
            self.by_name[key] = c
        if f is not None and not method and type(f) is not types.MethodType:
            try:  # (a bound method would keep its receiver: found by name each time)
                self.dyn[(site, f, kind)] = c
            except TypeError:  # an unhashable callable
                pass
        return c


def lowered_or_none(f):
    return lowered(f) if type(f) is types.FunctionType else None


class Run:
    def __init__(self, writer, context=None):
        self.writer = writer
        self.started = False  # the root call is recorded
        self.fns = {}
        self.stack = []
        self.ctx = context
        self.info = None  # class -> (kind, op, function, line, col), when nodes are watched
        self.T = target
        self.fast_append, self.fast_mark = writer.fast_append(), writer.fast_mark()
        self.A, self.M = self.fast_append, self.fast_mark
        if context is not None:
            self.T = self.target_in_context
            if context.tag_random or context._wants_nodes():
                self.info = {}
                self.A, self.M = self.append_watched, self.mark_watched

    def define(self, function, kind, op, block, pos, aux, line, col, has_cond, taken, operands):
        c = self.writer.define_class(kind, op, block, pos, aux, line, col, has_cond, taken,
                                     operands)
        if self.info is not None:
            self.info[c] = (KIND_NAMES[kind], op, function, line, col)
        return c

    def target_in_context(self, f):
        lf = target(f)
        if lf is None or self.ctx.can_recur(f, len(self.stack) + 1):
            return lf
        return None

    def watched(self, cls, nid, value):
        kind, op, function, line, col = self.info[cls]
        w = self.writer
        if self.ctx.tag_random and op in ("rand", "randn"):
            w.add_meta("random", "uniform" if op == "rand" else "normal")
        meta = self.ctx.on_node(_context.NodeInfo(nid, kind, op, function, line, col, value))
        if meta:
            for k, v in meta.items():
                w.add_meta(str(k), v)

    def append_watched(self, cls, value, *refs):
        nid = self.fast_append(cls, value, *refs)
        self.watched(cls, nid, value)
        return nid

    def mark_watched(self, cls, *refs):
        nid = self.fast_mark(cls, *refs)
        self.watched(cls, nid, None)
        return nid

    def start(self, lf, f, vals, nodes, kwnames=()):
        """The generator that runs a call of lf, and the argument values."""
        if kwnames or len(vals) != lf.nargs:
            vals, nodes = self.bind(lf, f, vals, nodes, kwnames)
        fr = self.fns.get(lf)
        if fr is None:
            fr = self.fns[lf] = _FnRun(self, lf)
        return fr, lf.gen(self.A, self.M, fr.K, fr.D, self.T, f, vals, nodes), vals

    @staticmethod
    def bind(lf, f, vals, nodes, kwnames):
        """Binds a call's arguments (positional, then kwnames) to lf's
        parameters as Python does, defaults included."""
        names = [p.name for p in lf.params[1:]]
        n = len(names)
        npos = len(vals) - len(kwnames)
        if npos > n:
            raise TypeError(f"{lf.name}() takes {n} positional arguments but {npos} were given")
        bound = list(zip(vals[:npos], nodes[:npos])) + [None] * (n - npos)
        for k, name in enumerate(kwnames):
            if name not in names:
                raise TypeError(f"{lf.name}() got an unexpected keyword argument '{name}'")
            j = names.index(name)
            if bound[j] is not None:
                raise TypeError(f"{lf.name}() got multiple values for argument '{name}'")
            bound[j] = (vals[npos + k], nodes[npos + k])
        defaults = f.__defaults__ or ()
        for j in range(n):
            if bound[j] is None:
                d = j - (n - len(defaults))
                if d < 0:
                    raise TypeError(f"{lf.name}() missing required argument: '{names[j]}'")
                bound[j] = (defaults[d], None)
        return tuple(v for v, _ in bound), tuple(x for _, x in bound)

    def run(self, f, args):
        lf = target(f)
        if lf is None:
            raise TypeError(f"irtrace.track: {f!r} is not a Python function with source")
        fr, gen, vals = self.start(lf, f, tuple(args), (None,) * len(args))
        root = self.define("", K_CALL, lf.name, 0, 0, 0, lf.line, lf.col, False, False,
                           [(v,) for v in vals])
        self.M(root)
        self.started = True
        stack = self.stack
        stack.append((gen, lf, fr))
        push, pop, start, mark = stack.append, stack.pop, self.start, self.M
        resume = _native.resume
        send, throw = None, None
        while True:
            gen, lf, fr = stack[-1]
            try:
                if throw is None:
                    req = resume(gen, send)  # a call (6 items) or the return (2)
                else:
                    exc, throw = throw, None
                    req = gen.throw(exc)
            except StopIteration as e:  # a return after a throw
                req = e.value
            except BaseException as e:
                raise self.fail(stack, e)
            if len(req) == 2:
                pop()
                if not stack:
                    return req[0]
                send = req
                continue
            t, callee, site, cvals, cnodes, refs = req
            try:
                cfr, cgen, cvals = start(t, callee, cvals, cnodes, lf.sites[site][6])
                mark(fr.D(site, callee, None, K_CALL), *refs)
            except BaseException as e:  # raised where the call is
                throw = e
                continue
            push((cgen, t, cfr))
            send = None

    def fail(self, stack, exc):
        """Closes every open call with an Error node; returns what to raise."""
        w = self.writer
        first = True
        outer = exc
        for gen, lf, fr in reversed(stack):
            info = None
            if gen.gi_frame is not None:
                info = lf.linemap.get(gen.gi_frame.f_lineno)
            else:
                tb = exc.__traceback__
                while tb is not None:
                    if tb.tb_frame.f_code is lf.gen_code:
                        info = lf.linemap.get(tb.tb_lineno)
                    tb = tb.tb_next
            block, pos, aux, line, col, op = 1, 1, 0, lf.line, lf.col, ""
            if info is not None and info[0] == "stmt":
                s = info[1]
                block, pos, line, col, op = s.block.number, s.ssa, s.line, s.col, s.name
            elif info is not None and info[0] == "branch":
                br = info[1]
                block, pos, aux, line, col = br.block_number, br.pos, 1, br.line, br.col
                op = "return" if br.target is None else "br"
            if first and isinstance(exc, _native.Int64Overflow):
                outer = OverflowError(f"{lf.file}:{line}:{col}: {exc}")
                outer.__cause__ = exc
            c = self.define(lf.name, K_ERROR, op, block, pos, aux, line, col, False, False, [])
            w.mark(c, ())  # not shown to on_node: the run is over
            if first:
                w.add_meta("error", f"{type(outer).__name__}: {outer}")
            first = False
        w.add_trace_meta("status", "failed")
        w.add_trace_meta("error", f"{type(outer).__name__}: {outer}")
        w.add_trace_meta("function", stack[0][1].name)
        return outer


def record(f, args, path, producer_version, context=None):
    """Runs f(*args) and records it; returns (result, trace bytes or None)."""
    w = _native.Writer(path or "", "irtrace-python", producer_version)
    r = Run(w, context)
    try:
        result = r.run(f, tuple(args))
    except BaseException:
        if r.started:  # the run failed: the trace ends with its Error nodes
            try:
                w.finish()
            except _native.TraceError:
                pass
        # Refused before the root call started (no source, arguments that do
        # not bind): the writer is dropped unfinished, and no file is written.
        del w, r
        raise
    w.add_trace_meta("status", "ok")
    w.add_trace_meta("function", f.__qualname__)
    data = w.finish()
    return result, data
