"""irtrace for Python: record what a Python function really did as an
extended Wengert list in irtrace's trace format, and read traces back.

    import irtrace
    t = irtrace.track(h, 2.0, 2, out="h.fb")   # runs h(2.0, 2) and records it
    print(t.print(levels=2))                   # irt-print --levels 2 h.fb
    irtrace.grad(t).derivatives                # irt-grad h.fb

See README.md ("Recording Python programs") for the supported subset.
"""
import os

from . import _native
from ._context import Context, NodeInfo, primitive, rules
from ._lower import UnsupportedSyntax
from ._native import Int64Overflow, TraceError
from ._ops import InPlaceChange

__all__ = ["track", "load", "grad", "ir", "rules", "primitive", "Context", "NodeInfo", "Trace",
           "Gradient", "UnsupportedSyntax", "TraceError", "Int64Overflow", "InPlaceChange"]
__version__ = getattr(_native, "__version__", "0")

_RULES = os.path.join(os.path.dirname(__file__), "default.rules")


class Trace:
    """A trace read through libtrace: `.root` is the root call's node;
    nodes have children, parent, value, kind, op, location, metadata,
    position, path and IRTracker's graph API: referenced(numbered=False),
    backward(), dependents(), forward()."""

    def __init__(self, native, path=None):
        self._t = native
        self.path = path
        self.result = None

    @property
    def root(self):
        return self._t.root

    @property
    def metadata(self):
        return self._t.metadata

    @property
    def size(self):
        return self._t.size

    @property
    def producer(self):
        return self._t.producer

    def node(self, path):
        """The node at "@8/@4" (as irt-print --node takes it); "@" is the root."""
        return self._t.node(path)

    def print(self, levels=0, node="", meta=True):
        """The listing irt-print gives (--levels, --node, --no-meta)."""
        return self._t.print(levels, node, meta)

    def json(self, levels=0):
        return self._t.json(levels)

    def ir(self, name):
        """The IR text stored for function `name`, or None."""
        return self._t.function_ir(name)


def load(path):
    """Opens a trace file (any irtrace trace, also .zst)."""
    return Trace(_native.Trace.open(os.fspath(path)), os.fspath(path))


def track(f, *args, out=None, context=None, **kwargs):
    """Runs f(*args, **kwargs) and records its execution. Returns the Trace
    (its `.result` is f's result); with `out`, the trace is also that file.
    Keyword arguments are bound to f's parameters by name (the trace's root
    arguments are positional). `context` (an irtrace.Context) decides what
    is recorded. An exception inside f is re-raised after the trace (at
    `out`) is completed with Error nodes and status "failed". Unsupported
    syntax in f, or in a function it calls by name, raises
    UnsupportedSyntax before f runs."""
    from . import _record
    if context is not None and not isinstance(context, Context):
        raise TypeError(f"irtrace.track: context must be an irtrace.Context, not "
                        f"{type(context).__name__}")
    if kwargs:
        import inspect
        bound = inspect.signature(f).bind(*args, **kwargs)
        bound.apply_defaults()
        args = bound.args
    _prelower(f)
    path = os.fspath(out) if out is not None else None
    result, data = _record.record(f, args, path, __version__, context)
    if path is not None:
        t = load(path)
    else:
        t = Trace(_native.Trace.from_bytes(data, "<memory>"))
    t.result = result
    return t


def _prelower(f):
    """Lowers f and the traced functions it names, transitively, so that
    unsupported syntax is reported before anything runs."""
    import ast
    import types
    from . import _record
    seen = set()
    todo = [f]
    while todo:
        g = todo.pop()
        if type(g) is not types.FunctionType or g.__code__ in seen or \
                hasattr(g, "__irtrace_primitive__"):
            continue
        seen.add(g.__code__)
        lf = _record.lowered(g)
        if lf is None:
            continue
        for b in lf.blocks:
            for s in b.stmts:
                if s.kind == "call":
                    where, dotted = s.callee
                    if where != "name":
                        continue
                    head, *rest = dotted.split(".")
                    obj = g.__globals__.get(head)
                    for r in rest:
                        obj = getattr(obj, r, None)
                    todo.append(obj)
    del ast


def ir(f):
    """The IRTools-style IR the trace of f carries."""
    from . import _record
    lf = _record.lowered(f)
    if lf is None:
        raise TypeError(f"{f!r} is not traced (no source, or library code)")
    return lf.ir


class Gradient:
    """Derivatives of a trace's result: `.result`, `.derivatives` (one per
    root argument: None when it is not differentiable), `.text` (exactly
    irt-grad's output)."""

    def __init__(self, d):
        self.function = d["function"]
        self.result = d["result"]
        self.arguments = [a for a in d["arguments"] if a["pos"] >= 2]
        self.derivatives = [a["derivative"] if a["differentiable"] else None
                            for a in self.arguments]
        self.tangent = d["tangent"]
        self.text = d["text"]

    def __repr__(self):
        return self.text


def grad(trace, wrt=(), forward=None, rules=None):
    """Reverse mode (or forward mode with `forward={pos: tangent}`) through
    libtrace's engine, as irt-grad: `trace` is a Trace or a path; `wrt`
    root positions as irt-grad's --wrt (2 is the first argument). `rules`
    is a rules file used instead of the shipped one; the rules given to
    @irtrace.primitive are added on top."""
    from . import _context
    if not isinstance(trace, Trace):
        trace = load(trace)
    tangents = sorted((forward or {}).items())
    d = _native.grad(trace._t, os.fspath(rules) if rules else _RULES, list(wrt), bool(forward),
                     tangents, _context.rule_sources())
    return Gradient(d)
