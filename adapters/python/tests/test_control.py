"""Tests of short-circuits, conditional expressions, for loops over
sequences, keyword arguments, contexts and @irtrace.primitive."""
import itertools
import math
import os
import random
import subprocess
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
import irtrace  # noqa: E402
import progs_control as pc  # noqa: E402

BIN = os.environ.get("IRT_BIN", "")


def tool(*args):
    r = subprocess.run([os.path.join(BIN, args[0]), *map(str, args[1:])], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def recorded(tmp_path, f, *args, **kw):
    path = tmp_path / "t.fb"
    t = irtrace.track(f, *args, out=path, **kw)
    if BIN:
        tool("irt-check", path)
    return t, path


@pytest.mark.parametrize("x,y", list(itertools.product([-1.5, 0.0, 0.5, 2.0], [-1.0, 0.0, 3.0])))
def test_shortcut_values_match_python(tmp_path, x, y):
    t, path = recorded(tmp_path, pc.shortcut, x, y)
    assert t.result == pc.shortcut(x, y)
    assert t.root.value == pc.shortcut(x, y)


def test_shortcut_records_only_the_operands_evaluated(tmp_path):
    # x > 0 is false: `and` jumps to its join without evaluating y > 0.
    t, _ = recorded(tmp_path, pc.shortcut, -1.0, 5.0)
    text = t.print(levels=2)
    assert "⟨>⟩(@2, ⟨0⟩) → false" in text
    assert "⟨>⟩(@3, ⟨0⟩)" not in text
    # x is truthy: `or` takes x without recording y's side.
    t2, _ = recorded(tmp_path, pc.shortcut, 2.0, 5.0)
    assert "⟨>⟩(@3, ⟨0⟩) → true" in t2.print(levels=2)


def test_ifexp_and_boolop_ir_has_branches_and_block_arguments():
    ir = irtrace.ir(pc.shortcut)
    # Every decision is a conditional branch carrying the chosen value.
    assert ir.count("unless") == 5  # and: 1, or: 1, if-else: 1, or-or: 2
    assert "(%" in ir.split("function shortcut")[1]


@pytest.mark.parametrize("x", [-3.0, 0.2, 5.0, 40.0])
def test_clipped_gradient_matches_finite_differences(tmp_path, x):
    t, path = recorded(tmp_path, pc.clipped, x, -0.5, 1.0)
    assert t.result == pc.clipped(x, -0.5, 1.0)
    g = irtrace.grad(path)
    h = 1e-7
    fd = (pc.clipped(x + h, -0.5, 1.0) - pc.clipped(x - h, -0.5, 1.0)) / (2 * h)
    assert abs(g.derivatives[0] - fd) < 1e-6


@pytest.mark.parametrize("xs", [[1.0, -2.0, 3.0, 200.0, 4.0], (0.5, 0.25), [], np.array([2.0, -1.0, 3.0])])
def test_for_over_sequences(tmp_path, xs):
    t, _ = recorded(tmp_path, pc.over_seq, xs)
    assert t.result == pc.over_seq(xs)


def test_for_over_list_records_len_getitem_and_the_list_as_a_tuple(tmp_path):
    t, _ = recorded(tmp_path, pc.over_seq, [1.0, 2.0])
    text = t.print(levels=2)
    assert '(1.0, 2.0)::Tuple{Float64, Float64}  # python_type = "list"' in text
    # length, the standard operation, so that irt-replay and irt-export
    # compute it; a matrix's len (its rows) stays builtins.len.
    assert "⟨length⟩(@2) → 2::Int64" in text
    assert "⟨getitem⟩(@2, @5) → 1.0::Float64" in text
    A = np.arange(6.0).reshape(3, 2)
    rows = recorded(tmp_path, pc.over_rows, A, np.array([1.0, -1.0]))[0].print(levels=2)
    assert "⟨builtins.len⟩(@2) → 3::Int64" in rows


def test_for_over_enumerate_pairs_rows_and_strings(tmp_path):
    xs = [3.0, 4.0, 5.0]
    assert recorded(tmp_path, pc.over_enumerate, xs)[0].result == pc.over_enumerate(xs)
    pairs = ((1.0, 2.0), (3.0, 4.0), (5.0, 6.0))
    assert recorded(tmp_path, pc.over_pairs, pairs)[0].result == 44.0
    A, v = np.arange(6.0).reshape(3, 2), np.array([1.0, -1.0])
    t, path = recorded(tmp_path, pc.over_rows, A, v)
    assert t.result == pc.over_rows(A, v)
    # The gradient with respect to the matrix walked row by row.
    g = irtrace.grad(path)
    assert np.array_equal(g.derivatives[0], np.tile(v, (3, 1)))
    assert recorded(tmp_path, pc.over_str, "banana")[0].result == 3


def test_for_over_a_dict_is_refused_where_the_loop_starts(tmp_path):
    path = tmp_path / "t.fb"
    with pytest.raises(TypeError, match="not over dict"):
        irtrace.track(pc.over_dict, {1: 2}, out=path)
    if BIN:
        tool("irt-check", path)
    assert irtrace.load(path).metadata["status"] == "failed"


def test_keyword_arguments_bind_by_name(tmp_path):
    t, _ = recorded(tmp_path, pc.top, 1.5, k=3.0)
    assert t.result == pc.top(1.5, k=3.0)
    assert [c.value for c in t.root.children[1:3]] == [1.5, 3.0]
    # Defaults are recorded as arguments too.
    t, _ = recorded(tmp_path, pc.top, x=1.5)
    assert t.root.children[2].value == 2.0


def call_ops(t):
    return [(n.op, n.is_call) for n in t.root.children if n.kind in ("Call", "Primitive")]


def test_primitive_decorator_and_its_rule(tmp_path):
    t, path = recorded(tmp_path, pc.top, 1.5)
    assert ("softplus", False) in call_ops(t)
    g = irtrace.grad(path)
    want = 2 * 1.5 * 2.0 + 1 / (1 + math.exp(-1.5))
    assert abs(g.derivatives[0] - want) < 1e-14
    assert g.derivatives[1] == pc.mid(1.5)
    assert irtrace.rules().splitlines()[1] == "softplus(x) -> y"
    if BIN:  # irt-grad takes the same rules from a file
        rules = tmp_path / "p.rules"
        rules.write_text(irtrace.rules())
        assert str(want) in tool("irt-grad", "--rules", rules, path)


def test_context_max_depth(tmp_path):
    full, _ = recorded(tmp_path, pc.top, 1.5)
    assert ("mid", True) in call_ops(full)
    t, _ = recorded(tmp_path, pc.top, 1.5, context=irtrace.Context(max_depth=2))
    assert ("mid", False) in call_ops(t)
    assert t.result == full.result
    t, _ = recorded(tmp_path, pc.top, 1.5, context=irtrace.Context(max_depth=3))
    mid = next(n for n in t.root.children if n.op == "mid")
    assert mid.is_call and ("leaf", False) in [(n.op, n.is_call) for n in mid.children
                                               if n.kind in ("Call", "Primitive")]


def test_context_primitives_by_function_or_name(tmp_path):
    for p in (pc.mid, "mid"):
        t, _ = recorded(tmp_path, pc.top, 1.5, context=irtrace.Context(primitives=[p]))
        assert ("mid", False) in call_ops(t)


def test_context_can_recur_and_on_node(tmp_path):
    seen = []

    class Ctx(irtrace.Context):
        def can_recur(self, callee, level):
            seen.append((callee.__name__, level))
            return callee is not pc.leaf

        def on_node(self, node):
            if node.kind == "Primitive":
                return {"where": f"{node.function}:{node.line}", "op_seen": node.op}
            return None

    t, path = recorded(tmp_path, pc.top, 1.5, context=Ctx())
    assert seen == [("mid", 2), ("leaf", 3)]
    mid = next(n for n in t.root.children if n.op == "mid")
    leaf = next(n for n in mid.children if n.op == "leaf")
    assert not leaf.is_call
    assert leaf.metadata == {"where": f"mid:{pc.mid.__code__.co_firstlineno + 1}",
                             "op_seen": "leaf"}
    if BIN:
        assert 'op_seen = "leaf"' in tool("irt-print", "--levels", 3, path)


def test_context_tag_random(tmp_path):
    random.seed(1)
    np.random.seed(1)
    t, _ = recorded(tmp_path, pc.noisy, 2.0, context=irtrace.Context(tag_random=True))
    tags = {n.op: n.metadata.get("random") for n in t.root.children if n.kind == "Primitive"}
    assert tags["rand"] == "uniform" and tags["randn"] == "normal"
    t, _ = recorded(tmp_path, pc.noisy, 2.0)
    assert all("random" not in n.metadata for n in t.root.children)


def test_context_is_checked():
    with pytest.raises(TypeError, match="irtrace.Context"):
        irtrace.track(pc.top, 1.0, context={"max_depth": 1})
    with pytest.raises(ValueError, match="max_depth"):
        irtrace.Context(max_depth=-1)


def test_numpy_indexing_is_getitem_with_its_rule(tmp_path):
    A = np.arange(1.0, 7.0).reshape(2, 3)
    t, path = recorded(tmp_path, pc.pick, A, 1, 2)
    assert t.result == pc.pick(A, 1, 2)
    text = t.print(levels=2)
    assert "⟨getitem⟩(@2, @3, @4) → 6.0::Float64" in text
    assert "⟨getitem⟩(@2, ⟨-1⟩) → [4.0, 5.0, 6.0]::Vector{Float64}" in text
    g = irtrace.grad(path)
    want = np.zeros_like(A)
    want[1, 2] += 2 * A[1, 2]
    want[-1] += 1.0
    assert np.array_equal(g.derivatives[0], want)
    if BIN:  # replay recomputes getitem at other values
        r = tmp_path / "r.fb"
        tool("irt-replay", "--set", "@2=[1.0 2.0 3.0; 4.0 5.0 7.0]", "-o", r, path)
        assert "→ 65.0::Float64" in tool("irt-print", r).splitlines()[0]


def test_keyword_arguments_in_calls(tmp_path):
    A = np.arange(6.0).reshape(2, 3)
    t, path = recorded(tmp_path, pc.keywords, A, 1.5)
    assert t.result == pc.keywords(A, 1.5)
    ir = irtrace.ir(pc.keywords)
    assert "numpy.cumprod(%4, axis=0)" in ir and "Main.scaled(%3, shift=" in ir
    assert "sum(%2, axis=1, keepdims=true)" in ir and "numpy.squeeze(%12, axis=1)" in ir
    text = t.print(levels=2)
    # Library calls with keywords keep their names (but reductions along an
    # axis, which are standard); calls of traced functions bind keywords to
    # parameters, defaults included.
    assert "⟨numpy.cumprod(axis=)⟩(@4, ⟨0⟩) → [1.0 2.0 3.0; 4.0 10.0 18.0]::Matrix{Float64}" \
        in text
    assert "⟨sum⟩(@2, ⟨2⟩) → [3.0; 12.0;;]" in text
    assert "⟨getitem⟩(@12, ⟨nothing⟩, ⟨0⟩) → [3.0, 12.0]" in text
    calls = [n for n in t.root.children if n.op == "scaled"]
    assert [[a.value for a in c.children[1:4]] for c in calls] == [[1.5, 2.0, 30.0],
                                                                   [1.5, 3.0, 0.0]]
    g = irtrace.grad(path, wrt=[3])
    assert g.derivatives == [None, 5.0]


def test_keyword_argument_errors_are_python_errors(tmp_path):
    with pytest.raises(TypeError, match="unexpected keyword argument 'y'"):
        pc.bad_keyword(1.0)
    path = tmp_path / "t.fb"
    with pytest.raises(TypeError, match="unexpected keyword argument 'y'"):
        irtrace.track(pc.bad_keyword, 1.0, out=path)
    assert irtrace.load(path).metadata["status"] == "failed"
    with pytest.raises(TypeError, match="multiple values for argument 'x'"):
        irtrace.track(pc.scaled, 1.0, x=2.0)


def test_vectors_in_matmul_dot_and_transpose(tmp_path):
    rng = np.random.default_rng(3)
    A, x, y = rng.normal(size=(3, 2)), rng.normal(size=2), rng.normal(size=3)
    t, path = recorded(tmp_path, pc.vectors, A, x, y)
    assert t.result == pc.vectors(A, x, y)
    ops = [n.op for n in t.root.children if n.kind == "Primitive"]
    assert ops == ["matmul", "transpose", "matmul", "dot", "*", "sum", "+", "identity", "dot", "+"]
    g = irtrace.grad(path)
    # Analytic: f = y'Ax + x'A'Ax + x'x.
    assert np.allclose(g.derivatives[0], np.outer(y, x) + 2 * A @ np.outer(x, x), rtol=1e-13)
    assert np.allclose(g.derivatives[1], A.T @ y + 2 * A.T @ A @ x + 2 * x, rtol=1e-13)
    assert np.allclose(g.derivatives[2], A @ x, rtol=1e-13)
    if BIN:  # replay recomputes them at other values
        r = tmp_path / "r.fb"
        tool("irt-replay", "--set", "@4=[1.0, 2.0, 3.0]", "-o", r, path)
        want = pc.vectors(A, x, np.array([1.0, 2.0, 3.0]))
        assert f"→ {want!r}::Float64" in tool("irt-print", r).splitlines()[0]


def test_row_vector_times_matrix_keeps_numpys_name(tmp_path):
    x, A = np.array([1.0, 2.0]), np.arange(6.0).reshape(2, 3)
    t, _ = recorded(tmp_path, pc.row_times_matrix, x, A)
    assert t.result == pc.row_times_matrix(x, A)
    assert "⟨numpy.matmul⟩(@2, @3) → [6.0, 9.0, 12.0]" in t.print(levels=2)
