"""The SSA form the lowering builds (irtrace._lower): values, statements,
branches and blocks."""


class Const:
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


UNDEF = Const(None)  # a variable not assigned on some path: None there


class Val:
    ssa = 0


class Param(Val):
    def __init__(self, index, name, line, col):
        self.index, self.name, self.line, self.col = index, name, line, col


class Phi(Val):
    def __init__(self, block, var):
        self.block, self.var, self.ops, self.replaced = block, var, [], None


class Stmt(Val):
    """kind: 'op' (operator: pyop is its Python form), 'call' (callee
    resolved at run time), 'method' (a method of the first operand),
    'global' (a global or closure value, recorded as a Constant)."""

    kwnames = ()  # of a call: the keywords of its last len(kwnames) args
    strict = False  # a NumPy lowering's operand: an array only (a method's receiver)

    def __init__(self, kind, name, args, node, fn, pyop=None, callee=None):
        self.kind, self.name, self.args, self.pyop, self.callee = kind, name, args, pyop, callee
        self.line, self.col = fn.pos(node)
        self.block = None


class Branch:
    def __init__(self, target, cond, node, fn, ret=None):
        self.target, self.cond, self.ret = target, cond, ret  # ret: the returned operand
        self.line, self.col = fn.pos(node)
        self.args = []
        self.pos = 0


class Block:
    def __init__(self):
        self.stmts, self.branches, self.preds = [], [], []
        self.sealed, self.incomplete, self.defs, self.phis = False, {}, {}, []
        self.number = 0
