"""Contexts (what is recorded, after IRTracker.jl's) and primitives.

A Context decides, for each call of a traced Python function, whether the
call is recorded with its body or as one Primitive node (`can_recur`), and
which metadata each recorded node gets (`on_node`). The built-in options
are `max_depth`, `primitives` and `tag_random`; a subclass overrides the
methods for anything else.

`@irtrace.primitive` marks a user function as one primitive everywhere,
optionally with its derivative rule (irt-grad's rule syntax), which
`irtrace.grad` then uses and `irtrace.rules()` returns for irt-grad --rules.
"""
import textwrap
import types


class NodeInfo:
    """One recorded node, as Context.on_node sees it."""

    __slots__ = ("id", "kind", "op", "function", "line", "col", "value")

    def __init__(self, id, kind, op, function, line, col, value):
        self.id, self.kind, self.op, self.function = id, kind, op, function
        self.line, self.col, self.value = line, col, value

    def __repr__(self):
        return (f"NodeInfo(id={self.id}, kind={self.kind!r}, op={self.op!r}, "
                f"function={self.function!r}, line={self.line}, col={self.col})")


class Context:
    """What irtrace.track records.

    max_depth: calls at this nesting level or deeper are recorded as one
      Primitive node (their values still computed); the root call is level
      1, its calls level 2; 0: no limit.
    primitives: functions (or their qualified names) recorded as Primitive
      nodes wherever they are called.
    tag_random: random draws (`rand`, `randn`) get metadata random =
      "uniform" / "normal".
    """

    def __init__(self, max_depth=0, primitives=(), tag_random=False):
        if not isinstance(max_depth, int) or isinstance(max_depth, bool) or max_depth < 0:
            raise ValueError(f"max_depth must be an int >= 0, not {max_depth!r}")
        self.max_depth = max_depth
        self.primitives = set()
        self._primitive_names = set()
        for p in primitives:
            if isinstance(p, str):
                self._primitive_names.add(p)
            else:
                self.primitives.add(p)
        self.tag_random = bool(tag_random)

    def can_recur(self, callee, level):
        """Whether the call of `callee` (a traced Python function) at nesting
        `level` is recorded with its body. The default applies max_depth and
        primitives."""
        if self.max_depth and level >= self.max_depth:
            return False
        return callee not in self.primitives and callee.__qualname__ not in self._primitive_names

    def on_node(self, node):
        """Called after each node is recorded with a NodeInfo; returns the
        metadata to attach to it (a dict of str to values) or None."""
        return None

    def _wants_nodes(self):
        return type(self).on_node is not Context.on_node


_rules = {}  # primitive name -> (rule text, where it was given)


def primitive(fn=None, *, name=None, rule=None):
    """Marks a function as one primitive: its calls are recorded as a
    Primitive node named `name` (default: the function's __name__), never
    with their body. `rule` is its derivative rule in irt-grad's syntax
    (see irt-grad(1)), used by irtrace.grad and listed by irtrace.rules().

        @irtrace.primitive(rule='''
        softplus(x) -> y
          dy = dx / (1 + exp(-x))
          dx = dy / (1 + exp(-x))
        ''')
        def softplus(x): return math.log1p(math.exp(x))
    """
    def mark(f):
        if not callable(f):
            raise TypeError(f"irtrace.primitive marks functions, not {type(f).__name__}")
        n = name or getattr(f, "__name__", None)
        if not n or not n.isidentifier():
            raise ValueError(f"irtrace.primitive: the name {n!r} is not an identifier")
        if rule is not None:
            code = getattr(f, "__code__", None)
            where = f"{code.co_filename}:{code.co_firstlineno}" if code else n
            _rules[n] = (textwrap.dedent(rule).strip("\n") + "\n", where)
        try:
            f.__irtrace_primitive__ = n
        except AttributeError:
            raise TypeError(f"irtrace.primitive cannot mark {f!r}") from None
        return f
    return mark(fn) if fn is not None else mark


def primitive_name(f):
    """The name a function marked with @primitive is recorded under, or None."""
    return getattr(f, "__irtrace_primitive__", None) if type(f) is types.FunctionType else None


def rules():
    """The derivative rules given to @irtrace.primitive, as rules-file text
    (for irt-grad --rules FILE)."""
    return "".join(f"# {where}\n{text.strip()}\n\n" for text, where in _rules.values())


def rule_sources():
    """(text, origin) of each rule given to @irtrace.primitive."""
    return [(text, where) for text, where in _rules.values()]
