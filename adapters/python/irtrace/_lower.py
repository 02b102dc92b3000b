"""Lowering of a Python function's AST to IRTools-style SSA blocks.

The function's source (inspect.getsource) is parsed with `ast` and turned
into blocks with block arguments at loop headers and joins, by Braun et
al.'s construction ("Simple and Efficient Construction of Static Single
Assignment Form", 2013; Myia does the same for Python). The result gives
the IR text stored in the trace, the control-flow facts of the format and
the static description (block, SSA id, operands, source position) of every
node the function's calls record. Unsupported syntax is refused here,
before anything runs, with file:line:col, the construct and a hint.
"""
import ast
import builtins
import copy
import inspect
import json
import math
import textwrap

from . import _ops
from ._numpy import NumpyLowering
from ._ssa import UNDEF, Block, Branch, Const, Param, Phi, Stmt


class UnsupportedSyntax(SyntaxError):
    """A construct the Python adapter does not trace (see irtrace's README)."""


# Binary operators: Python's symbol, the standard operation recorded.
BINOPS = {
    ast.Add: ("+", "+"), ast.Sub: ("-", "-"), ast.Mult: ("*", "*"), ast.Div: ("/", "/"),
    ast.Pow: ("**", "^"), ast.MatMult: ("@", "matmul"), ast.FloorDiv: ("//", "fld"),
    ast.Mod: ("%", "mod"), ast.BitAnd: ("&", "&"), ast.BitOr: ("|", "|"),
    ast.BitXor: ("^", "xor"),
}
CMPOPS = {
    ast.Lt: ("<", "<"), ast.LtE: ("<=", "<="), ast.Gt: (">", ">"), ast.GtE: (">=", ">="),
    ast.Eq: ("==", "=="), ast.NotEq: ("!=", "!="), ast.Is: ("is", "is"),
    ast.IsNot: ("is not", "is not"), ast.In: ("in", "in"), ast.NotIn: ("not in", "not in"),
}
INFIX = {"+", "-", "*", "/", "^", "<", "<=", ">", ">=", "==", "!=", "&", "|"}

UNSUPPORTED_STMTS = {
    ast.Try: ("'try' statements", "move the try into a helper that is not traced"),
    ast.With: ("'with' statements", "move the with block into a helper"),
    ast.Raise: ("'raise' statements", "raise from a helper, or let a primitive fail"),
    ast.Assert: ("'assert' statements", "use an if with a helper that raises"),
    ast.Global: ("'global' declarations", "pass the value as an argument"),
    ast.Nonlocal: ("'nonlocal' declarations", "pass the value as an argument"),
    ast.Delete: ("'del' statements", "leave the variable alone"),
    ast.Import: ("imports inside a traced function", "import at module level"),
    ast.ImportFrom: ("imports inside a traced function", "import at module level"),
    ast.FunctionDef: ("nested 'def'", "define the helper at module level"),
    ast.AsyncFunctionDef: ("'async def'", "trace a synchronous function"),
    ast.ClassDef: ("'class' inside a traced function", "define the class at module level"),
    ast.AsyncFor: ("'async for'", "trace a synchronous function"),
    ast.AsyncWith: ("'async with'", "trace a synchronous function"),
}
if hasattr(ast, "Match"):
    UNSUPPORTED_STMTS[ast.Match] = ("'match' statements", "use if/elif/else")
if hasattr(ast, "TryStar"):
    UNSUPPORTED_STMTS[ast.TryStar] = ("'try' statements", "move the try into a helper")

UNSUPPORTED_EXPRS = {
    ast.Lambda: ("lambda", "define the function at module level"),
    ast.ListComp: ("list comprehensions (but in sum(...))", "use a for loop over range"),
    ast.SetComp: ("set comprehensions", "use a for loop over range"),
    ast.DictComp: ("dict comprehensions", "use a for loop over range"),
    ast.GeneratorExp: ("generator expressions (but in sum(...))", "use a for loop over range"),
    ast.Yield: ("'yield' (generators)", "trace a function that returns its result"),
    ast.YieldFrom: ("'yield from' (generators)", "trace a function that returns its result"),
    ast.Await: ("'await'", "trace a synchronous function"),
    ast.NamedExpr: ("assignment expressions (:=)", "assign in a statement of its own"),
    ast.Starred: ("starred arguments", "pass the arguments one by one"),
    ast.Dict: ("dict displays", "build the dict in a helper"),
    ast.Set: ("set displays", "build the set in a helper"),
    ast.JoinedStr: ("f-strings", "format the text in a helper"),
}


# ---------------------------------------------------------------------------
# The SSA form (irtrace._ssa)

def joins(op, operand):
    """Whether `a + b` with this operand may join sequences: a list or tuple
    display (`acc + [v]`, `t + (v,)`), named by the values when it runs."""
    return isinstance(op, ast.Add) and isinstance(operand, (ast.List, ast.Tuple))


def is_boolean(node):
    """Whether an expression's value is a bool whatever its operands: a
    comparison, a `not`, a bool literal, and/or of such."""
    if isinstance(node, ast.Compare) or (isinstance(node, ast.Constant) and
                                         isinstance(node.value, bool)):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return True
    return isinstance(node, ast.BoolOp) and all(is_boolean(x) for x in node.values)


def res(v):
    while isinstance(v, Phi) and v.replaced is not None:
        v = v.replaced
    return v


# ---------------------------------------------------------------------------
# Lowering

class Lowered:
    """A lowered function: blocks numbered from 1, SSA ids assigned."""


class Lowerer(NumpyLowering):
    def __init__(self, fn):
        self.fn = fn
        code = fn.__code__
        self.file = code.co_filename
        try:
            lines, first = inspect.getsourcelines(fn)
        except (OSError, TypeError) as e:
            raise UnsupportedSyntax(f"{self.file}: no source for {fn.__qualname__}: {e}") from None
        src = "".join(lines)
        indent = len(lines[0]) - len(lines[0].lstrip())
        self.line0, self.col0 = first - 1, indent
        self.src_lines = lines
        tree = ast.parse(textwrap.dedent(src))
        fdef = tree.body[0]
        if not isinstance(fdef, ast.FunctionDef):
            self.fail(fdef, "this kind of function (lambda or async)", "trace a plain 'def'")
        self.fdef = fdef
        self.free = set(code.co_freevars)
        self.blocks_placed = []
        self.loops = []
        self.nvars = 0

    def pos(self, node):
        return node.lineno + self.line0, node.col_offset + self.col0 + 1

    def fail(self, node, what, hint):
        line, col = self.pos(node)
        text = self.src_lines[node.lineno - 1].rstrip("\n") if node.lineno <= len(self.src_lines) else ""
        msg = (f"{self.file}:{line}:{col}: {what} are not supported in traced functions\n"
               f"    {line} | {text}\n    {' ' * len(str(line))} | {' ' * (col - 1)}^\n"
               f"hint: {hint}")
        raise UnsupportedSyntax(msg)

    # -- SSA variables (Braun et al.) --
    def write(self, var, block, v):
        block.defs[var] = v

    def read(self, var, block):
        if var in block.defs:
            return block.defs[var]
        if not block.sealed:
            v = Phi(block, var)
            block.incomplete[var] = v
            block.phis.append(v)
        elif len(block.preds) == 1:
            v = self.read(var, block.preds[0][0])
        elif not block.preds:
            v = UNDEF
        else:
            v = Phi(block, var)
            block.phis.append(v)
            block.defs[var] = v
            self.add_ops(v)
        block.defs[var] = v
        return v

    def add_ops(self, phi):
        for pred, _ in phi.block.preds:
            phi.ops.append(self.read(phi.var, pred))

    def seal(self, block):
        for phi in block.incomplete.values():
            self.add_ops(phi)
        block.incomplete = {}
        block.sealed = True

    def place(self, block):
        self.blocks_placed.append(block)
        self.cur = block

    def br(self, target, cond, node, ret=None):
        b = Branch(target, cond, node, self, ret)
        self.cur.branches.append(b)
        if target is not None:
            target.preds.append((self.cur, b))
        return b

    def emit(self, s):
        s.block = self.cur
        self.cur.stmts.append(s)
        return s

    # -- the function --
    def run(self):
        a = self.fdef.args
        if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs:
            self.fail(self.fdef, "'*args', '**kwargs', keyword-only and positional-only parameters",
                      "use plain positional parameters")
        assigned = {arg.arg for arg in a.args}
        in_comprehension = set()  # a comprehension's targets are its own, not the function's
        for node in ast.walk(self.fdef):
            if isinstance(node, ast.comprehension):
                in_comprehension.update(id(n) for n in ast.walk(node.target))
        for node in ast.walk(self.fdef):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and \
                    id(node) not in in_comprehension:
                assigned.add(node.id)
            if isinstance(node, ast.Name) and node.id.startswith("_irt_"):
                self.fail(node, "names starting with _irt_", "rename the variable")
        self.locals = assigned
        self.nsums = 0
        entry = Block()
        entry.sealed = True
        self.place(entry)
        self.params = [Param(0, self.fn.__qualname__, *self.pos(self.fdef))]
        for i, arg in enumerate(a.args):
            p = Param(i + 1, arg.arg, *self.pos(arg))
            self.params.append(p)
            self.write(arg.arg, entry, p)
        body = self.fdef.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            body = body[1:]  # the docstring
        self.body(body)
        if self.cur is not None:
            last = self.fdef.body[-1] if self.fdef.body else self.fdef
            self.br(None, None, last, ret=Const(None))
        return self.finish()

    def body(self, stmts):
        for s in stmts:
            if self.cur is None:
                return  # unreachable after a return, break or continue
            self.stmt(s)

    def stmt(self, s):
        t = type(s)
        if t in UNSUPPORTED_STMTS:
            what, hint = UNSUPPORTED_STMTS[t]
            self.fail(s, what, hint)
        if t is ast.Expr:
            if isinstance(s.value, ast.Constant):
                return
            self.expr(s.value)
        elif t is ast.Pass:
            pass
        elif t is ast.Assign:
            self.assign(s.targets, s.value)
        elif t is ast.AnnAssign:
            if s.value is None:
                return
            self.assign([s.target], s.value)
        elif t is ast.AugAssign:
            if not isinstance(s.target, ast.Name):
                self.fail(s, "augmented assignment to subscripts and attributes",
                          "assign to a plain variable")
            if type(s.op) not in BINOPS:
                self.fail(s, f"the operator {type(s.op).__name__}", "use a helper")
            pyop, name = BINOPS[type(s.op)]
            if joins(s.op, s.value):
                pyop = "+join"
            left = self.load_name(s.target)
            v = self.emit(Stmt("op", name, [left, self.expr(s.value)], s, self, pyop=pyop))
            self.write(s.target.id, self.cur, v)
        elif t is ast.If:
            self.lower_if(s)
        elif t is ast.While:
            self.lower_while(s)
        elif t is ast.For:
            self.lower_for(s)
        elif t is ast.Break:
            if not self.loops:
                self.fail(s, "'break' outside a loop", "remove it")
            self.br(self.loops[-1]["exit"], None, s)
            self.cur = None
        elif t is ast.Continue:
            if not self.loops:
                self.fail(s, "'continue' outside a loop", "remove it")
            self.next_iteration(self.loops[-1], s)
        elif t is ast.Return:
            v = Const(None) if s.value is None else self.expr(s.value)
            self.br(None, None, s, ret=v)
            self.cur = None
        else:
            self.fail(s, f"'{t.__name__}' statements", "move it into a helper")

    def assign(self, targets, value):
        """`a = b = v`, `a, b = v` and nested `(a, b), c = v`: v evaluated
        once, then each target bound in turn (tuple targets unpacked by
        getitem); `a, b = x, y` binds without making the tuple."""
        for tgt in targets:
            self.check_assign_target(tgt)
        t0 = targets[0]
        if len(targets) == 1 and isinstance(t0, (ast.Tuple, ast.List)) and \
                isinstance(value, ast.Tuple) and len(value.elts) == len(t0.elts):
            vals = [self.expr(e) for e in value.elts]
            for e, v in zip(t0.elts, vals):
                self.bind(e, v, value)
            return
        v = self.expr(value)
        for tgt in targets:
            self.bind(tgt, v, value)

    def check_assign_target(self, t):
        if isinstance(t, ast.Name):
            return
        if isinstance(t, (ast.Tuple, ast.List)):
            for e in t.elts:
                if isinstance(e, ast.Starred):
                    self.fail(e, "starred assignment targets", "index the sequence")
                self.check_assign_target(e)
            return
        self.fail(t, "assignment to subscripts and attributes (mutation)",
                  "compute the new value in a helper, or use NumPy functions")

    # -- control flow --
    def cond(self, test):
        return self.truth(test, self.expr(test))

    def truth(self, node, v):
        """The condition a branch tests for the value v of expression node:
        v itself when it is a comparison, a `not` or a literal, else bool(v)."""
        if is_boolean(node):
            return v
        return self.emit(Stmt("op", "bool", [v], node, self, pyop="bool"))

    def fresh(self, kind):
        """A variable of the lowering's own (not a Python name)."""
        self.nvars += 1
        return f".{kind}{self.nvars}"

    def lower_boolop(self, e):
        """`a and b` / `a or b`: each operand that decides the result jumps
        to a join block with its value as the block argument."""
        tmp = self.fresh("bool")
        join = Block()
        last = len(e.values) - 1
        for i, x in enumerate(e.values):
            v = self.expr(x)
            self.write(tmp, self.cur, v)
            if i == last:
                self.br(join, None, x)
                break
            c = self.truth(x, v)
            nxt = Block()
            if isinstance(e.op, ast.And):
                self.br(join, c, x)  # a false operand is the result
                self.br(nxt, None, x)
            else:
                self.br(nxt, c, x)  # a false operand: go on to the next
                self.br(join, None, x)
            self.seal(nxt)
            self.place(nxt)
        self.seal(join)
        self.place(join)
        return self.read(tmp, join)

    def lower_ifexp(self, e):
        """`x if c else y`: then and else blocks joined with the value."""
        c = self.cond(e.test)
        tmp = self.fresh("if")
        then_b, else_b, join = Block(), Block(), Block()
        self.br(else_b, c, e)
        self.br(then_b, None, e)
        for b, x in ((then_b, e.body), (else_b, e.orelse)):
            self.seal(b)
            self.place(b)
            self.write(tmp, self.cur, self.expr(x))
            self.br(join, None, x)
        self.seal(join)
        self.place(join)
        return self.read(tmp, join)

    def simple_return(self, stmts):
        if len(stmts) != 1 or not isinstance(stmts[0], ast.Return):
            return False
        v = stmts[0].value
        return v is None or isinstance(v, ast.Constant) or \
            (isinstance(v, ast.Name) and v.id in self.locals)

    def lower_if(self, s):
        c = self.cond(s.test)
        else_b = Block() if s.orelse else None
        join = Block()
        if self.simple_return(s.body):
            self.br(else_b or join, c, s)
            self.stmt(s.body[0])
        else:
            then_b = Block()
            self.br(else_b or join, c, s)
            self.br(then_b, None, s)
            self.seal(then_b)
            self.place(then_b)
            self.body(s.body)
            if self.cur is not None:
                self.br(join, None, s.body[-1])
        if else_b is not None:
            self.seal(else_b)
            self.place(else_b)
            self.body(s.orelse)
            if self.cur is not None:
                self.br(join, None, s.orelse[-1])
        self.seal(join)
        if join.preds:
            self.place(join)
        else:
            self.cur = None

    def loop(self, s, header, exit_b, c, info):
        body_b = Block()
        if isinstance(c, Const) and c.value is True:
            self.br(body_b, None, s)
        else:
            self.br(exit_b, c, s)
            self.br(body_b, None, s)
        self.seal(body_b)
        self.place(body_b)
        info.update(header=header, exit=exit_b)
        self.loops.append(info)
        if "counter" in info:
            i = self.read(info["counter"], self.cur)
            if info["index"] is not None:
                self.bind(info["index"], i, s.target)
            if info["item"] is not None:
                items = [self.emit(Stmt("op", "getitem", [q, i], s.target, self, pyop="[]"))
                         for q in info["seqs"]]
                t = info["item"]
                if not info["zip"]:
                    self.bind(t, items[0], s.target)
                elif isinstance(t, ast.Tuple) and len(t.elts) == len(items):
                    for e, v in zip(t.elts, items):
                        self.bind(e, v, s.target)
                else:  # one name for the items of zip(...): their tuple
                    self.bind(t, self.emit(Stmt("op", "tuple", items, s.target, self,
                                                pyop="tuple")), s.target)
        self.body(s.body)
        if self.cur is not None:
            self.next_iteration(info, s.body[-1])
        self.loops.pop()
        self.seal(header)
        self.seal(exit_b)
        if exit_b.preds:
            self.place(exit_b)
        else:
            self.cur = None

    def next_iteration(self, info, node):
        if "counter" in info:
            cur_i = self.read(info["counter"], self.cur)
            nxt = self.emit(Stmt("op", "+", [cur_i, Const(info["step"])], info["node"], self,
                                 pyop="+"))
            self.write(info["counter"], self.cur, nxt)
        self.br(info["header"], None, node)
        self.cur = None

    def lower_while(self, s):
        if s.orelse:
            self.fail(s, "'while ... else'", "use a flag variable")
        header, exit_b = Block(), Block()
        self.br(header, None, s)
        self.place(header)
        c = self.cond(s.test)
        self.loop(s, header, exit_b, c, {"node": s})

    def lower_for(self, s):
        """`for` over range(...) counts with a block argument; over
        enumerate(xs) or a sequence xs (list, tuple, str, range or array,
        checked when the loop starts) it counts up to len(xs), read once,
        and binds xs[i]; over zip(xs, ys, ...) (or enumerate of it), up to
        the shortest length, binding xs[i], ys[i], ..."""
        if s.orelse:
            self.fail(s, "'for ... else'", "use a flag variable")
        it = s.iter

        def builtin_call(name, nargs, node=None):
            node = it if node is None else node
            return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id == name and name not in self.locals and \
                not node.keywords and len(node.args) in nargs
        step = 1
        is_zip = False
        if builtin_call("range", (1, 2, 3)):
            args = it.args
            if len(args) == 3:
                st = self.literal(args[2])
                if not isinstance(st, int) or isinstance(st, bool) or st == 0:
                    self.fail(args[2], "range steps other than nonzero integer literals",
                              "use a while loop")
                step = st
            start = self.expr(args[0]) if len(args) >= 2 else Const(0)
            stop = self.expr(args[1] if len(args) >= 2 else args[0])
            seqs, index_target, item_target = [], s.target, None
        else:
            index_target = None
            seq_node, item_target = it, s.target
            if builtin_call("enumerate", (1,)):
                if not (isinstance(s.target, ast.Tuple) and len(s.target.elts) == 2):
                    self.fail(s.target, "'for' over enumerate(...) without a pair target",
                              "write 'for i, x in enumerate(xs)'")
                seq_node = it.args[0]
                index_target, item_target = s.target.elts
            if builtin_call("zip", range(1, 33), seq_node):
                if any(isinstance(a, ast.Starred) for a in seq_node.args):
                    self.fail(seq_node, "starred arguments", "pass the sequences one by one")
                is_zip, nodes = True, seq_node.args
            else:
                nodes = [seq_node]
            seqs = [self.expr(x) for x in nodes]
            start = Const(0)
            stop = None
            for q, x in zip(seqs, nodes):
                n = self.emit(Stmt("op", "builtins.len", [q], x, self, pyop="seqlen"))
                stop = n if stop is None else \
                    self.emit(Stmt("op", "min", [stop, n], seq_node, self, pyop="min"))
        self.check_target(index_target)
        self.check_target(item_target)
        counter = self.fresh("for")
        self.write(counter, self.cur, start)
        header, exit_b = Block(), Block()
        self.br(header, None, s)
        self.place(header)
        op = "<" if step > 0 else ">"
        c = self.emit(Stmt("op", op, [self.read(counter, header), stop], s, self, pyop=op))
        self.loop(s, header, exit_b, c, {"node": s, "counter": counter, "step": step,
                                         "index": index_target, "item": item_target,
                                         "seqs": seqs, "zip": is_zip})

    def check_target(self, t):
        if t is None or isinstance(t, ast.Name):
            return
        if isinstance(t, ast.Tuple):
            for e in t.elts:
                self.check_target(e)
            return
        self.fail(t, "'for' targets other than variables and tuples of them",
                  "bind variables, and index in the body")

    def bind(self, t, v, node):
        """Assigns v to the target t (a name, or a tuple of targets unpacked
        by getitem)."""
        if isinstance(t, ast.Name):
            self.write(t.id, self.cur, v)
            return
        for i, e in enumerate(t.elts):
            # The first item's read checks, as Python's unpacking does, that
            # v is a sequence of exactly len(t.elts) items.
            item = Stmt("op", "getitem", [v, Const(i)], node, self,
                        pyop="[]" if i > 0 else "unpack")
            item.unpack = len(t.elts)
            self.bind(e, self.emit(item), node)

    # -- expressions --
    def literal(self, e):
        if isinstance(e, ast.Constant):
            return e.value
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub) and \
                isinstance(e.operand, ast.Constant) and type(e.operand.value) in (int, float):
            return -e.operand.value
        return None

    def load_name(self, e):
        if e.id in self.locals:
            v = self.read(e.id, self.cur)
            if v is UNDEF:
                self.fail(e, f"reading '{e.id}' before any assignment",
                          "assign the variable first")
            return v
        return self.emit(Stmt("global", e.id, [], e, self,
                              callee=("cell" if e.id in self.free else "name", e.id)))

    def resolve(self, d):
        """The object a dotted global name (numpy.dot) stands for now, or None."""
        try:
            obj = self.fn.__globals__.get(d[0], getattr(builtins, d[0], None))
            for part in d[1:]:
                obj = getattr(obj, part)
            return obj
        except AttributeError:
            return None

    def dotted(self, e):
        """The dotted name of a global attribute chain (math.sin), or None."""
        parts = []
        while isinstance(e, ast.Attribute):
            parts.append(e.attr)
            e = e.value
        if isinstance(e, ast.Name) and e.id not in self.locals:
            parts.append(e.id)
            return list(reversed(parts))
        return None

    def expr(self, e):
        t = type(e)
        if t in UNSUPPORTED_EXPRS:
            what, hint = UNSUPPORTED_EXPRS[t]
            self.fail(e, what, hint)
        lit = self.literal(e)
        if lit is not None or (t is ast.Constant and e.value is None):
            if type(lit) not in (int, float, bool, str, type(None)):
                self.fail(e, f"literals of type {type(lit).__name__}", "make the value in a helper")
            return Const(lit)
        if t is ast.Name:
            return self.load_name(e)
        if t is ast.BoolOp:
            return self.lower_boolop(e)
        if t is ast.IfExp:
            return self.lower_ifexp(e)
        if t is ast.BinOp:
            if type(e.op) not in BINOPS:
                self.fail(e, f"the operator {type(e.op).__name__}", "use a helper")
            pyop, name = BINOPS[type(e.op)]
            if joins(e.op, e.left) or joins(e.op, e.right):
                pyop = "+join"
            a, b = self.expr(e.left), self.expr(e.right)
            return self.emit(Stmt("op", name, [a, b], e, self, pyop=pyop))
        if t is ast.UnaryOp:
            a = self.expr(e.operand)
            if isinstance(e.op, ast.USub):
                return self.emit(Stmt("op", "-", [a], e, self, pyop="neg"))
            if isinstance(e.op, ast.Not):
                return self.emit(Stmt("op", "!", [a], e, self, pyop="not"))
            if isinstance(e.op, ast.UAdd):
                return self.emit(Stmt("op", "identity", [a], e, self, pyop="pos"))
            return self.emit(Stmt("op", "operator.invert", [a], e, self, pyop="invert"))
        if t is ast.Compare:
            if len(e.ops) != 1:
                self.fail(e, "chained comparisons", "compare twice with nested ifs")
            pyop, name = CMPOPS[type(e.ops[0])]
            a, b = self.expr(e.left), self.expr(e.comparators[0])
            return self.emit(Stmt("op", name, [a, b], e, self, pyop=pyop))
        if t is ast.Tuple:
            return self.emit(Stmt("op", "tuple", [self.expr(x) for x in e.elts], e, self,
                                  pyop="tuple"))
        if t is ast.List:  # a list is recorded as the tuple of its items
            return self.emit(Stmt("op", "tuple", [self.expr(x) for x in e.elts], e, self,
                                  pyop="list"))
        if t is ast.Subscript:
            return self.lower_subscript(e)
        if t is ast.Attribute:
            d = self.dotted(e)
            if d is not None:
                return self.emit(Stmt("global", ".".join(d), [], e, self,
                                      callee=("cell" if d[0] in self.free else "name",
                                              ".".join(d))))
            a = self.expr(e.value)
            return self.emit(Stmt("op", "getattr", [a, Const(e.attr)], e, self, pyop="getattr"))
        if t is ast.Call and self.is_builtin(e.func, "sum") and 1 <= len(e.args) <= 2 and \
                not e.keywords and not isinstance(e.args[0], ast.Starred):
            return self.lower_sum(e)
        if t is ast.Call:
            if isinstance(e.func, ast.Name) and e.func.id == "len" and "len" not in self.locals \
                    and "len" not in self.free and len(e.args) == 1 and not e.keywords and \
                    self.fn.__globals__.get("len", len) is len:
                # len(x): the standard length where it means that (see _ops._seqlen).
                return self.emit(Stmt("op", "builtins.len", [self.expr(e.args[0])], e, self,
                                      pyop="len"))
            kwnames = []
            for k in e.keywords:
                if k.arg is None:
                    self.fail(k.value, "'**' arguments in calls", "pass the arguments by name")
                kwnames.append(k.arg)
            f = e.func
            if isinstance(f, ast.Attribute) and self.dotted(f) is None and \
                    f.attr in ("var", "std"):  # x.var(), x.std(axis=k): see lower_var
                v = self.lower_var(e, None, std=f.attr == "std", method=True)
                if v is not None:
                    return v
            if isinstance(f, ast.Attribute) and self.dotted(f) is None and f.attr == "cumsum":
                v = self.lower_cumsum(e, None, method=True)
                if v is not None:
                    return v
            if isinstance(f, ast.Attribute) and self.dotted(f) is None and \
                    f.attr in _ops.AXIS_METHODS:
                axis = self.axis_args(e, 0)
                if axis is not None:  # x.sum(axis=k): see lower_axis
                    return self.lower_axis(e, self.expr(f.value), *axis, _ops.AXIS_METHODS[f.attr],
                                           method=f.attr)
            if isinstance(f, ast.Attribute) and self.dotted(f) is None and not e.keywords and \
                    f.attr in ("ravel", "flatten", "dot") and \
                    len(e.args) == (f.attr == "dot") and \
                    not any(isinstance(a, ast.Starred) for a in e.args):
                # x.ravel(), x.flatten(): reshape(x, n); x.dot(y) as np.dot.
                args = [self.expr(f.value)] + [self.expr(a) for a in e.args]
                if f.attr == "dot":
                    return self.emit(Stmt("op", "numpy.ndarray.dot", args, e, self,
                                          pyop="dotmethod"))
                s = Stmt("op", "reshape", args, e, self, pyop="flat", callee=f.attr)
                s.method = True
                return self.emit(s)
            if isinstance(f, ast.Attribute) and self.dotted(f) is None:
                recv = self.expr(f.value)
                args = [recv] + [self.expr(x) for x in e.args]
                args += [self.expr(k.value) for k in e.keywords]
                s = Stmt("method", f.attr, args, e, self, callee=f.attr)
                s.kwnames = tuple(kwnames)
                return self.emit(s)
            d = self.dotted(f)
            if d is None:
                self.fail(e, "calls of computed functions", "call a function by its name")
            where = "cell" if d[0] in self.free else "name"
            lowering = _ops.LOWERED.get(self.resolve(d)) if where == "name" else None
            if lowering is not None and not any(isinstance(a, ast.Starred) for a in e.args):
                v = getattr(self, "lower_" + lowering)(e, (where, ".".join(d)))
                if v is not None:
                    return v
            std = _ops.AXIS_FUNCTIONS.get(self.resolve(d)) if where == "name" else None
            axis = self.axis_args(e, 1) if std is not None else None
            if axis is not None:  # np.sum(x, axis=k): see lower_axis
                return self.lower_axis(e, self.expr(e.args[0]), *axis, std,
                                       callee=(where, ".".join(d)))
            args = [self.expr(x) for x in e.args] + [self.expr(k.value) for k in e.keywords]
            resolved = self.resolve(d) if not kwnames and where == "name" else None
            literal_form = _ops.LITERAL_FORMS.get(resolved) if len(e.args) == 1 else None
            if literal_form is not None:
                # Recorded as the standard operation with a literal operand
                # (np.square(x) is x ^ 2), computed by the function itself.
                name, lit = literal_form
                return self.emit(Stmt("op", name, args + [Const(lit)], e, self,
                                      pyop="call1", callee=(where, ".".join(d))))
            by_value, arity = _ops.NAMED_BY_OPERANDS.get(resolved, (None, None))
            by_value = by_value if len(e.args) == arity else None
            if by_value is not None:
                # Named by its operands' values when it runs, as `@` is.
                return self.emit(Stmt("op", by_value, args, e, self, pyop=by_value,
                                      callee=(where, ".".join(d))))
            s = Stmt("call", ".".join(d), args, e, self, callee=(where, ".".join(d)))
            s.kwnames = tuple(kwnames)
            return self.emit(s)
        self.fail(e, f"'{t.__name__}' expressions", "move the computation into a helper")

    def lower_subscript(self, e):
        """x[i], x[i, j], and slices: x[a:b:c] is getslice(x, 1, a, b, c)
        (None for a part left out); a subscript with slices and integers is
        one getslice per dimension sliced, then getitem of the integers with
        nothing for each slice (Python's `:`). A ':' alone records nothing."""
        parts = e.slice.elts if isinstance(e.slice, ast.Tuple) else [e.slice]
        new = [p for p in parts if (isinstance(p, ast.Constant) and p.value is None) or
               (isinstance(p, ast.Attribute) and p.attr == "newaxis" and
                self.dotted(p) is not None)]
        if new:
            return self.lower_new_axes(e, parts, new)
        if not any(isinstance(p, ast.Slice) for p in parts):
            if isinstance(e.slice, ast.Tuple):
                idx = [self.expr(x) for x in parts]
                return self.emit(Stmt("op", "getitem", [self.expr(e.value)] + idx, e, self,
                                      pyop="[,]"))
            a = self.expr(e.value)
            return self.emit(Stmt("op", "getitem", [a, self.expr(e.slice)], e, self, pyop="[]"))
        v = self.expr(e.value)
        # Every part is evaluated in order, as Python does, before any indexing.
        vals = []
        for p in parts:
            if isinstance(p, ast.Slice):
                vals.append([Const(None) if b is None else self.expr(b)
                             for b in (p.lower, p.upper, p.step)])
            else:
                vals.append(self.expr(p))
        for d, (p, b) in enumerate(zip(parts, vals), start=1):
            if isinstance(p, ast.Slice) and not all(isinstance(x, Const) and x.value is None
                                                    for x in b):
                v = self.emit(Stmt("op", "getslice", [v, Const(d)] + b, p, self, pyop="slice"))
        idx = [Const(None) if isinstance(p, ast.Slice) else x for p, x in zip(parts, vals)]
        while idx and isinstance(idx[-1], Const) and idx[-1].value is None and \
                isinstance(parts[len(idx) - 1], ast.Slice):
            idx.pop()  # a whole dimension at the end is what getitem leaves anyway
        if idx:  # x[i, :, j,]: a list refuses it, as Python does
            v = self.emit(Stmt("op", "getitem", [v] + idx, e, self, pyop="[i,]"))
        return v

    # NumPy functions lowered to standard operations (_ops.LOWERED): each
    # takes the call and its callee, and returns the value, or None to
    # leave the call as it is (other arguments than it handles).

    def is_builtin(self, f, name):
        """Whether the callee f is Python's builtin `name` (not shadowed)."""
        return isinstance(f, ast.Name) and f.id == name and name not in self.locals and \
            name not in self.free and \
            self.fn.__globals__.get(name, getattr(builtins, name)) is getattr(builtins, name)

    def lower_sum(self, e):
        """sum(xs[, start]), sum(f(x) for x in xs if c) and sum([...]) as the
        loop Python's sum is: the start (0), plus each item in turn. A
        generator's or comprehension's variables are its own (renamed)."""
        self.nsums += 1
        k = self.nsums
        acc = f".sum{k}"
        it = e.args[0]
        if isinstance(it, (ast.GeneratorExp, ast.ListComp)):
            gens, elt = it.generators, it.elt
        else:  # for an item in xs
            item = f".sum{k}.item"
            gens = [ast.comprehension(target=ast.Name(id=item, ctx=ast.Store()), iter=it,
                                      ifs=[], is_async=0)]
            elt = ast.Name(id=item, ctx=ast.Load())
            self.locals.add(item)
        ren = {}
        for g in gens:
            if g.is_async:
                self.fail(it, "async comprehensions", "trace a synchronous function")
            for n in ast.walk(g.target):
                if isinstance(n, ast.Name) and n.id not in ren and not n.id.startswith("."):
                    ren[n.id] = f".sum{k}.{n.id}"
        self.locals.update(ren.values())

        class Rename(ast.NodeTransformer):
            def visit_Name(self, n):
                return ast.copy_location(ast.Name(id=ren.get(n.id, n.id), ctx=n.ctx), n)

        def renamed(node):
            return Rename().visit(copy.deepcopy(node))

        body = [ast.Assign(targets=[ast.Name(id=acc, ctx=ast.Store())],
                           value=ast.BinOp(left=ast.Name(id=acc, ctx=ast.Load()), op=ast.Add(),
                                           right=renamed(elt)))]
        for i in range(len(gens) - 1, -1, -1):
            g = gens[i]
            for c in reversed(g.ifs):
                body = [ast.If(test=renamed(c), body=body, orelse=[])]
            # The first iterable is evaluated where the sum is, the others inside.
            body = [ast.For(target=renamed(g.target), iter=g.iter if i == 0 else renamed(g.iter),
                            body=body, orelse=[])]
        loop = body[0]
        for n in ast.walk(loop):
            if not hasattr(n, "lineno"):
                ast.copy_location(n, e)
        self.locals.add(acc)
        start = self.expr(e.args[1]) if len(e.args) == 2 else Const(0)
        self.write(acc, self.cur, start)
        self.stmt(loop)
        if self.cur is None:
            self.fail(e, "a sum whose loop does not end", "compute the sum in a helper")
        return self.read(acc, self.cur)

    # -- the result --
    def finish(self):
        # Remove trivial phis (all operands the same value or the phi itself).
        phis = [p for b in self.blocks_placed for p in b.phis]
        changed = True
        while changed:
            changed = False
            for p in phis:
                if p.replaced is not None:
                    continue
                ops = {id(res(o)): res(o) for o in p.ops}
                ops.pop(id(p), None)
                if len(ops) <= 1:
                    p.replaced = next(iter(ops.values())) if ops else UNDEF
                    changed = True
        out = Lowered()
        out.fn = self.fn
        out.name = self.fn.__qualname__
        out.file = self.file
        out.line, out.col = self.pos(self.fdef)
        out.params = self.params
        out.blocks = self.blocks_placed
        ssa = 0
        for p in self.params:
            ssa += 1
            p.ssa = ssa
        for i, b in enumerate(out.blocks):
            b.number = i + 1
            b.args = [p for p in b.phis if p.replaced is None] if i > 0 else []
            for p in b.args:
                ssa += 1
                p.ssa = ssa
                p.line, p.col = (b.branches[0].line, b.branches[0].col) if b.branches else \
                    (out.line, out.col)
            for s in b.stmts:
                ssa += 1
                s.ssa = ssa
                s.args = [res(a) for a in s.args]
            for k, br in enumerate(b.branches):
                br.pos = k + 1
                br.block_number = b.number
                if br.cond is not None:
                    br.cond = res(br.cond)
                if br.ret is not None:
                    br.ret = res(br.ret)
                if br.target is not None:
                    edge = next(j for j, (_, e) in enumerate(br.target.preds) if e is br)
                    br.args = [res(p.ops[edge]) for p in br.target.phis if p.replaced is None]
        for b in out.blocks:
            for s in b.stmts:
                for a in s.args:
                    if a is UNDEF:
                        self.fail_at(s, "a variable that may be unassigned here")
        for b in out.blocks:
            for s in b.stmts:
                if s.kind == "call":
                    s.ir_name = self.ir_call_name(s)
        out.nssa = ssa
        out.ir = ir_text(out)
        out.control_flow = control_flow(out)
        return out

    def ir_call_name(self, s):
        """The callee as the IR text names it, from what the name means now:
        Main.<standard operation>, Main.<function> for a traced function,
        else the qualified Python name (the callee is resolved again at
        run time; the IR text is for reading and for irt-trace)."""
        import builtins
        import types
        from . import _ops
        where, dotted = s.callee
        head, *rest = dotted.split(".")
        if where == "cell":
            return dotted
        g = self.fn.__globals__
        obj = g[head] if head in g else getattr(builtins, head, None)
        for r in rest:
            obj = getattr(obj, r, None)
        if obj is None:
            return dotted
        from . import _context, _record
        marked = _context.primitive_name(obj)
        if marked is not None:
            return "Main." + marked
        if type(obj) is types.FunctionType and _record.traceable(obj):
            return "Main." + obj.__qualname__
        if s.kwnames:
            return _ops.qualified(obj)
        name = _ops.op_name(obj, len(s.args))
        return "Main." + name if name != _ops.qualified(obj) else name

    def fail_at(self, s, what):
        raise UnsupportedSyntax(f"{self.file}:{s.line}:{s.col}: {what}")


def lower(fn):
    """Lowers a Python function (see the module's docstring)."""
    return Lowerer(fn).run()


# ---------------------------------------------------------------------------
# IR text and control-flow facts

def literal_text(v):
    if v is None:
        return "nothing"
    if v is True or v is False:
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "Inf" if v > 0 else "-Inf"
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v)
    return repr(v)


def operand_text(a):
    return literal_text(a.value) if isinstance(a, Const) else f"%{a.ssa}"


def stmt_text(s, name):
    args = [operand_text(a) for a in s.args]
    if s.kind == "global":
        return f"Main.{s.name}"
    if name.startswith("Main.") and name[5:] in INFIX and len(args) == 2:
        name = name[5:]
    if name in INFIX and len(args) == 2:
        return f"{args[0]} {name} {args[1]}"
    if name == "-" and len(args) == 1:
        return f"-{args[0]}"
    if name == "!" and len(args) == 1:
        return f"!{args[0]}"
    npos = len(args) - len(s.kwnames)
    args = args[:npos] + [f"{k}={a}" for k, a in zip(s.kwnames, args[npos:])]
    return f"{name}({', '.join(args)})"


def ir_text(lf):
    lines = [f"# {lf.file}:{lf.line}", f"function {lf.name}"]
    for b in lf.blocks:
        vars_ = lf.params if b.number == 1 else b.args
        head = f"{b.number}:" + (f" ({', '.join('%' + str(p.ssa) for p in vars_)})" if vars_ else "")
        lines.append(head)
        for s in b.stmts:
            lines.append(f"  %{s.ssa} = {stmt_text(s, getattr(s, 'ir_name', s.name))}")
        for br in b.branches:
            if br.target is None:
                lines.append(f"  return {operand_text(br.ret)}")
                continue
            t = f"  br {br.target.number}"
            if br.args:
                t += f" ({', '.join(operand_text(a) for a in br.args)})"
            if br.cond is not None:
                t += f" unless {operand_text(br.cond)}"
            lines.append(t)
    lines.append("end")
    return "\n".join(lines) + "\n"


def control_flow(lf):
    facts = []
    for b in lf.blocks:
        for br in b.branches:
            if br.target is None:
                facts.append((b.number, br.pos, 0, False, 0, False))
            else:
                cond = br.cond is not None
                ssa = br.cond.ssa if cond and not isinstance(br.cond, Const) else 0
                facts.append((b.number, br.pos, br.target.number, cond, ssa, False))
    return len(lf.blocks), facts
