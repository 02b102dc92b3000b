"""Tests of the Python adapter: recording, reading, gradients, failures."""
import math
import os
import subprocess
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
import irtrace  # noqa: E402
import progs  # noqa: E402
from central import central  # noqa: E402

BIN = os.environ.get("IRT_BIN", "")


def check(path):
    if BIN:
        r = subprocess.run([os.path.join(BIN, "irt-check"), str(path)], capture_output=True,
                           text=True)
        assert r.returncode == 0, r.stdout + r.stderr


def grad_of(tmp_path, f, *args):
    path = tmp_path / "t.fb"
    t = irtrace.track(f, *args, out=path)
    check(path)
    return t, irtrace.grad(path)


def test_powsum_for_range(tmp_path):
    t, g = grad_of(tmp_path, progs.powsum, 1.3, 6)
    assert t.result == progs.powsum(1.3, 6)
    want = sum(i * 1.3 ** (i - 1) for i in range(1, 6))
    assert abs(g.derivatives[0] - want) < 1e-10
    assert g.derivatives[1] is None


def test_while_newton(tmp_path):
    t, g = grad_of(tmp_path, progs.newton_sqrt, 2.0)
    assert abs(t.result - math.sqrt(2.0)) < 1e-12
    # The derivative of the recorded iterations (converged): 1 / (2 sqrt(a)).
    assert abs(g.derivatives[0] - 0.5 / math.sqrt(2.0)) < 1e-10


def test_recursion_matches_finite_differences(tmp_path):
    t, g = grad_of(tmp_path, progs.rec, 0.3, 20)
    h = 1e-6
    fd = (progs.rec(0.3 + h, 20) - progs.rec(0.3 - h, 20)) / (2 * h)
    assert abs(g.derivatives[0] - fd) < 1e-7
    # The analytic derivative by the chain rule, computed alongside.
    x, dx, acc = 0.3, 1.0, 0.0
    for _ in range(20):
        acc += dx
        x, dx = 1.0001 * x + 0.5 * math.cos(x), (1.0001 - 0.5 * math.sin(x)) * dx
    acc += math.cos(x) * dx
    assert abs(g.derivatives[0] - acc) < 1e-10


def test_break_continue_early_return(tmp_path):
    t, g = grad_of(tmp_path, progs.early, 0.7, 6)
    assert t.result == progs.early(0.7, 6)
    s = sum(math.exp(0.7) * i for i in range(6) if i != 1)
    assert abs(g.derivatives[0] - (s * 0.7 + s)) < 1e-10  # d(s x)/dx = ds/dx x + s, ds/dx = s
    t, g = grad_of(tmp_path, progs.down, 2.0)
    assert t.result == 18.0 and abs(g.derivatives[0] - 9.0) < 1e-12


def test_forward_mode_equals_reverse(tmp_path):
    t, g = grad_of(tmp_path, progs.powsum, 0.9, 5)
    fwd = irtrace.grad(tmp_path / "t.fb", forward={2: 1.0})
    assert abs(fwd.tangent - g.derivatives[0]) < 1e-12


def test_deep_recursion(tmp_path):
    depth = 5000  # beyond Python's default recursion limit of 1000
    t = irtrace.track(progs.deep, 1.5, depth, out=tmp_path / "d.fb")
    check(tmp_path / "d.fb")
    assert t.result == 1.5
    n, levels = t.root, 0
    while n.children and n.children[-2].is_call:
        n, levels = n.children[-2], levels + 1
    assert levels == depth


def test_reading_nodes():
    t = irtrace.track(progs.powsum, 2.0, 2)
    root = t.root
    assert root.kind == "Call" and root.op == "powsum" and root.value == 3.0
    kids = root.children
    assert [k.kind for k in kids[:4]] == ["Argument", "Argument", "Argument", "Jump"]
    assert kids[1].value == 2.0 and kids[1].parent.id == root.id
    assert kids[1].location["line"] == progs.powsum.__code__.co_firstlineno
    jump = [k for k in kids if k.kind == "Jump"][-1]
    assert jump.operands[-1][0] == "ref"
    assert t.metadata["status"] == "ok"
    assert "function powsum" in t.ir("powsum")
    assert t.print(levels=2).startswith("⟨powsum⟩(⟨2.0⟩, ⟨2⟩, ()...) → 3.0::Float64\n")


def test_numpy_tensors_and_gradient(tmp_path):
    rng = np.random.default_rng(1)
    X, W, b = rng.normal(size=(3, 4)), rng.normal(size=(4, 2)), rng.normal(size=2)
    t, g = grad_of(tmp_path, progs.mlp, X, W, b)
    ops = [k.op for k in t.root.children if k.kind == "Primitive"]
    assert ops == ["matmul", "+", "tanh", "sum"]
    T = np.tanh(X @ W + b)
    assert np.allclose(g.derivatives[1], X.T @ (1 - T ** 2), atol=1e-12, rtol=0)
    assert np.allclose(g.derivatives[2], (1 - T ** 2).sum(axis=0), atol=1e-12, rtol=0)
    assert isinstance(t.root.children[1].value, np.ndarray)


def test_arrays_copied_when_recorded():
    a = np.array([1.0, 2.0])
    t = irtrace.track(progs.mutate, a)
    a[0] = 100.0
    t.result[0] = -1.0
    kids = t.root.children
    assert kids[1].value.tolist() == [1.0, 2.0]
    assert kids[2].value.tolist() == np.exp([1.0, 2.0]).tolist()


def test_array_passed_to_every_call_is_stored_once(tmp_path):
    # 2000 calls each receive the same 2000-element array: stored per
    # call, that is 32 MB; shared while unchanged, once per chunk.
    x = np.linspace(0.0, 1.0, 2000)
    path = tmp_path / "calls.fb"
    t, g = grad_of(tmp_path, progs.sum_sq_calls, x, 2000)
    irtrace.track(progs.sum_sq_calls, x, 2000, out=path)
    assert path.stat().st_size < 2_000_000
    assert t.result == progs.sum_sq_calls(x, 2000)
    assert np.array_equal(g.derivatives[0], 2 * x)
    # An array changed in place between calls is recorded as it was at each.
    y = np.array([1.0, 2.0, 3.0])
    t = irtrace.track(progs.sum_sq_doubling, y, 3)
    seen = [k.children[1].value.tolist() for k in t.root.children if k.kind == "Call"]
    assert seen == [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [4.0, 8.0, 12.0]]
    assert t.result == 1.0 + 16.0 + 144.0


def test_int_that_does_not_fit(tmp_path):
    with pytest.raises(OverflowError, match=r"progs.py:\d+:\d+: the int .* does not fit in Int64"):
        irtrace.track(progs.big, 3, out=tmp_path / "b.fb")
    check(tmp_path / "b.fb")
    assert irtrace.load(tmp_path / "b.fb").metadata["status"] == "failed"


def test_exception_reaches_caller_unchanged(tmp_path):
    with pytest.raises(ZeroDivisionError) as e:
        irtrace.track(progs.inv, 0.0, out=tmp_path / "z.fb")
    assert str(e.value) == "float division by zero"
    check(tmp_path / "z.fb")
    t = irtrace.load(tmp_path / "z.fb")
    assert t.metadata["status"] == "failed"
    assert t.root.children[-1].kind == "Error"
    assert t.root.children[-1].metadata["error"] == "ZeroDivisionError: float division by zero"


def test_unsupported_syntax_refused_before_running():
    with pytest.raises(irtrace.UnsupportedSyntax, match=r"progs.py:\d+:\d+: 'with' statements"):
        irtrace.track(progs.uses_with, 1.0)
    assert progs.CALLS == 0


def test_slices_record_getslice_and_differentiate(tmp_path):
    x = np.array([0.5, 1.2, -0.3, 2.0, 0.7])
    t, g = grad_of(tmp_path, progs.rosen_vec, x)
    assert t.result == progs.rosen_vec(x)
    kids = [k for k in t.root.children if k.kind == "Primitive"]
    assert [k.op for k in kids[:2]] == ["getslice", "getslice"]
    assert kids[0].operands[1:] == [("literal", 1), ("literal", 1), ("literal", None),
                                    ("literal", None)]
    h = 1e-6
    fd = [(progs.rosen_vec(x + h * e) - progs.rosen_vec(x - h * e)) / (2 * h)
          for e in np.eye(len(x))]
    assert np.allclose(g.derivatives[0], fd, rtol=1e-7, atol=1e-6)
    # The analytic gradient.
    want = np.zeros_like(x)
    want[1:] += 200 * (x[1:] - x[:-1] ** 2)
    want[:-1] += -400 * x[:-1] * (x[1:] - x[:-1] ** 2) - 2 * (1 - x[:-1])
    assert np.allclose(g.derivatives[0], want, rtol=1e-13, atol=1e-12)


def test_slices_of_every_form(tmp_path):
    A = np.arange(12.0).reshape(3, 4) / 7.0
    v = np.linspace(-1.0, 1.0, 9)
    t, g = grad_of(tmp_path, progs.slices, A, v, 1, 2)
    assert t.result == progs.slices(A, v, 1, 2)
    for k in (0, 1):
        fd = central(progs.slices, [A, v, 1, 2], k)
        assert np.allclose(g.derivatives[k], fd, rtol=1e-7, atol=1e-7)
    # The trace re-computes under irt-replay at other bounds: the slice of
    # v[k:-k:2] follows k.
    if BIN:
        path = tmp_path / "t.fb"
        irtrace.track(progs.slices, A, v, 1, 2, out=path)
        r = subprocess.run([os.path.join(BIN, "irt-replay"), "--set", "@5=3", str(path)],
                           capture_output=True)
        assert r.returncode == 0, r.stderr
        replayed = tmp_path / "r.fb"
        replayed.write_bytes(r.stdout)
        assert irtrace.load(replayed).root.value == progs.slices(A, v, 1, 3)


def test_columns_and_mixed_subscripts(tmp_path):
    A = np.arange(12.0).reshape(3, 4) / 7.0
    t, g = grad_of(tmp_path, progs.column, A, 2)
    assert t.result == progs.column(A, 2)
    prims = [(k.op, k.operands) for k in t.root.children if k.kind == "Primitive"]
    # A[1:, j]: the rows sliced, then the column taken with nothing for the rows.
    assert prims[:2] == [("getslice", [("ref", 2), ("literal", 1), ("literal", 1),
                                       ("literal", None), ("literal", None)]),
                         ("getitem", [("ref", 4), ("literal", None), ("ref", 3)])]
    want = np.zeros_like(A)
    want[:, 2] = 2 * A[:, 2]
    assert np.array_equal(g.derivatives[0], want)


def test_new_axes(tmp_path):
    # x[:, None] was refused: it is x indexed by the other parts, then
    # reshaped to the result's dimensions.
    t = irtrace.track(progs.newaxis, np.array([1.0, 2.0]))
    assert t.result.shape == (2, 1)
    kids = [k for k in t.root.children if k.kind == "Primitive"]
    assert [(k.op, k.operands) for k in kids] == \
        [("reshape", [("ref", 2), ("literal", 2), ("literal", 1)])]
    rng = np.random.default_rng(3)
    X, mu = rng.normal(size=(4, 3)), rng.normal(size=(2, 3))
    t, g = grad_of(tmp_path, progs.pairwise, X, mu, 1)
    assert t.result == progs.pairwise(X, mu, 1)
    for i in (0, 1):
        fd = central(progs.pairwise, [X, mu, 1], i)
        assert np.allclose(g.derivatives[i], fd, rtol=1e-7, atol=1e-7)
    # A None index from a variable stops the run when it comes.
    with pytest.raises(TypeError, match="does not trace None .* as an index"):
        irtrace.track(progs.newaxis_var, np.ones(2), None)
    assert irtrace.track(progs.newaxis_var, np.ones(2), 1).result == 1.0


def test_tuples_from_helpers_differentiate(tmp_path):
    # A helper returning a tuple: the derivative used to be a silent 0.
    r, th = 1.3, 0.4
    t, g = grad_of(tmp_path, progs.dist_polar, r, th)
    assert t.result == progs.dist_polar(r, th)
    c, s = math.cos(th), math.sin(th)
    assert abs(g.derivatives[0] - (2 * r * c * c + 4 * r * s * s)) < 1e-13
    assert abs(g.derivatives[1] - 2 * r * r * s * c) < 1e-13
    fw = irtrace.grad(tmp_path / "t.fb", forward={2: 1.0})
    assert abs(fw.tangent - g.derivatives[0]) < 1e-13


def test_for_over_zip(tmp_path):
    w = np.array([0.5, -1.0, 2.0])
    xs, ys = [1.0, 2.0, 3.0, 4.0], (0.5, 0.25, 2.0, 8.0, 9.0)
    t, g = grad_of(tmp_path, progs.weighted, w, xs, ys)
    assert t.result == progs.weighted(w, xs, ys)
    h = 1e-6
    fd = [(progs.weighted(w + h * e, xs, ys) - progs.weighted(w - h * e, xs, ys)) / (2 * h)
          for e in np.eye(3)]
    assert np.allclose(g.derivatives[0], fd, rtol=1e-8, atol=1e-8)
    assert np.allclose(g.derivatives[0], [2.0, 4.5, 12.5], rtol=1e-15, atol=0)
    # Lists of numbers are differentiable arguments: tuples of derivatives.
    assert g.derivatives[1] == (0.5, 0.0, 10.0, 8.0)  # y_i + i w_i y_i
    assert g.derivatives[2] == (-1.0, 16.0, 14.5, 4.0, 0.0)  # x_i + i w_i x_i - w_i / y_i^2
    fw = irtrace.grad(tmp_path / "t.fb", forward={3: (0.0, 0.0, 1.0, 0.0)})
    assert fw.tangent == 10.0


def test_changes_in_place_stop_the_run(tmp_path):
    # acc.append(v) left the list's node holding (): the derivative through
    # it came out 0.0. Such a call now stops the run, and the trace says so.
    with pytest.raises(irtrace.InPlaceChange, match=r"does not trace list\.append: it changes"):
        irtrace.track(progs.appends, 1.5, out=tmp_path / "a.fb")
    check(tmp_path / "a.fb")
    t = irtrace.load(tmp_path / "a.fb")
    assert t.metadata["status"] == "failed"
    assert t.root.children[-1].metadata["error"].startswith("InPlaceChange: ")
    with pytest.raises(TypeError, match=r"numpy\.random\..*shuffle"):
        irtrace.track(progs.shuffles, np.arange(3.0))


def test_list_argument_sliced(tmp_path):
    xs = [1.0, 2.0, 3.0, 4.0]
    t, g = grad_of(tmp_path, progs.tail_sum, xs)
    assert t.result == progs.tail_sum(xs)
    assert g.derivatives[0] == (0.0, 5.0, 6.0, 9.0)  # 2 x_i for i >= 1, + 1 for x3 and x1
    assert irtrace.grad(tmp_path / "t.fb", forward={2: (0.0, 1.0, 0.0, 0.0)}).tangent == 5.0
    if BIN:
        r = subprocess.run([os.path.join(BIN, "irt-grad"), "--emit-trace", str(tmp_path / "t.fb")],
                           capture_output=True)
        assert r.returncode == 0, r.stderr
        (tmp_path / "g.fb").write_bytes(r.stdout)
        assert irtrace.load(tmp_path / "g.fb").root.value == (0.0, 5.0, 6.0, 9.0)


def test_list_displays(tmp_path):
    t, g = grad_of(tmp_path, progs.norm_of_list, 1.5, -2.0)
    assert t.result == progs.norm_of_list(1.5, -2.0)
    kids = [k for k in t.root.children if k.kind == "Primitive"]
    assert kids[1].op == "tuple" and kids[1].metadata["python_type"] == "list"
    # tail_sum([x, y, xy]) = y^2 + (xy)^2 + xy + x
    x, y = 1.5, -2.0
    assert abs(g.derivatives[0] - (2 * x * y * y + y + 1)) < 1e-12
    assert abs(g.derivatives[1] - (2 * y + 2 * x * x * y + x)) < 1e-12


def test_refused_call_writes_no_file(tmp_path):
    # Arguments that do not bind, or no source: nothing ran, no trace file
    # (it used to be a trace of no nodes, which irt-check called ok).
    with pytest.raises(TypeError, match="missing required argument"):
        irtrace.track(progs.powsum, 1.0, out=tmp_path / "a.fb")
    with pytest.raises(TypeError, match="not a Python function with source"):
        irtrace.track(len, [1], out=tmp_path / "b.fb")
    assert list(tmp_path.iterdir()) == []


def test_sum_of_generators_and_comprehensions(tmp_path):
    xs, w = [1.0, -2.0, 3.0], 0.5
    t, g = grad_of(tmp_path, progs.sums, xs, w)
    assert t.result == progs.sums(xs, w)  # Python's sum, the same additions in the same order
    # d/dx_i = w + 2 x_i [x_i > 0] + 1 + 3 w;  d/dw = sum(xs) + 3 sum(xs)
    want = tuple(w + (2 * x if x > 0 else 0.0) + 1 + 3 * w for x in xs)
    assert g.derivatives[0] == want
    assert g.derivatives[1] == 4 * sum(xs)
    ops = [k.op for k in t.root.children if k.kind == "Primitive"]
    assert "builtins.sum" not in ops


def test_np_dot_and_matmul_named_by_their_operands(tmp_path):
    rng = np.random.default_rng(4)
    W, v, u = rng.normal(size=(3, 4)), rng.normal(size=4), rng.normal(size=4)
    t = irtrace.track(progs.dots, W, v, u, out=tmp_path / "t.fb")
    check(tmp_path / "t.fb")
    assert t.result == progs.dots(W, v, u)
    ops = [k.op for k in t.root.children if k.kind == "Primitive"]
    # a vector on the left of a matrix is NumPy's row, not the standard matmul
    assert [o for o in ops if o in ("dot", "matmul", "numpy.matmul")] == \
        ["dot", "matmul", "matmul", "numpy.matmul"]


def test_np_dot_gradients(tmp_path):
    rng = np.random.default_rng(5)
    W, v = rng.normal(size=(3, 4)), rng.normal(size=4)
    t, g = grad_of(tmp_path, progs.dot_loss, W, v)
    assert np.allclose(g.derivatives[0], np.outer(np.ones(3), v) + np.outer(2 * W @ v, v))
    assert np.allclose(g.derivatives[1], W.T @ np.ones(3) + 2 * W.T @ (W @ v) + 2 * v)


def test_unpacking_checks_the_count(tmp_path):
    # a, b = t took the first two items of a longer t where Python raises.
    t, g = grad_of(tmp_path, progs.unpacks, 1.5, (2.0, 0.5))
    assert t.result == progs.unpacks(1.5, (2.0, 0.5))
    assert g.derivatives == [2.0, (1.5, 1.0)]
    for bad, msg in [((1.0, 2.0, 3.0), r"too many values to unpack \(expected 2\)"),
                     ((1.0,), r"not enough values to unpack \(expected 2, got 1\)")]:
        with pytest.raises(ValueError, match=msg):
            progs.unpacks(1.5, bad)  # Python's own words
        with pytest.raises(ValueError, match=msg):
            irtrace.track(progs.unpacks, 1.5, bad, out=tmp_path / "bad.fb")
        check(tmp_path / "bad.fb")
        assert irtrace.load(tmp_path / "bad.fb").metadata["status"] == "failed"
    # A dict unpacks into its keys: not what reading items by index gives.
    with pytest.raises(TypeError, match=r"irtrace unpacks tuples, .* not dict"):
        irtrace.track(progs.unpacks, 1.5, {"a": 1.0, "b": 2.0})
    # Nested targets and a loop's pairs are checked the same way.
    x, a, b, c = 1.5, 2.0, -1.0, 0.25
    t, g = grad_of(tmp_path, progs.unpacks_nested, x, ((a, b), c))
    assert t.result == progs.unpacks_nested(x, ((a, b), c))
    assert g.derivatives == [a + b, ((x, x), 1.0)]
    with pytest.raises(ValueError, match="too many values"):
        irtrace.track(progs.unpacks_nested, x, ((a, b, 3.0), c))


def test_np_square_is_a_power(tmp_path):
    v = np.array([1.0, -2.0, 0.5])
    t, g = grad_of(tmp_path, progs.squares, 1.5, v)
    assert t.result == progs.squares(1.5, v)
    ops = [k.op for k in t.root.children if k.kind == "Primitive"]
    assert ops.count("^") == 3 and "numpy.square" not in ops
    assert g.derivatives[0] == 3.0
    assert np.array_equal(g.derivatives[1], 2 * v)


def test_out_argument_stops_the_run(tmp_path):
    # np.multiply(x, 2.0, out=y) changed y where the trace held its zeros:
    # the derivative through y came out 0.
    with pytest.raises(irtrace.InPlaceChange, match=r"numpy\.multiply\(out=\)"):
        irtrace.track(progs.writes_out, np.ones(3), out=tmp_path / "o.fb")
    check(tmp_path / "o.fb")


def test_sequences_joined(tmp_path):
    # acc + [v] and t + (v,) recorded `+`, which has no tuple meaning in
    # the standard set: irt-grad and irt-replay stopped. They are now cat.
    x = 1.5
    t, g = grad_of(tmp_path, progs.grows, x, 3)
    assert t.result == progs.grows(x, 3)
    ops = [k.op for k in t.root.children if k.kind == "Primitive"]
    assert ops.count("cat") == 6 and "+" in ops  # 3 in the loop; its counter keeps +
    assert g.derivatives[0] == 3 * x * x + 2.0 + 1.0  # d/dx (x * x^2 + 2x + x)
    if BIN:
        r = subprocess.run([os.path.join(BIN, "irt-replay"), "--set", "@2=2.0", "-o",
                            str(tmp_path / "r.fb"), str(tmp_path / "t.fb")], capture_output=True)
        assert r.returncode == 0, r.stderr
        assert irtrace.load(tmp_path / "r.fb").root.value == progs.grows(2.0, 3)
    # An array plus a list display stays the elementwise +.
    v = np.array([1.0, 2.0])
    tv = irtrace.track(progs.adds_list, v, out=tmp_path / "v.fb")
    assert np.array_equal(tv.result, progs.adds_list(v))
    assert "cat" not in [k.op for k in tv.root.children if k.kind == "Primitive"]


def test_reductions_along_an_axis(tmp_path):
    # np.sum(x, axis=k) recorded numpy.sum(axis=), which has no derivative.
    rng = np.random.default_rng(7)
    X, T = rng.normal(size=(2, 3)), rng.normal(size=(2, 3, 4))
    y = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    t, g = grad_of(tmp_path, progs.axes, X, y, T)
    assert t.result == progs.axes(X, y, T)
    ops = [k.op for k in t.root.children if k.kind == "Primitive"]
    assert not [o for o in ops if o.startswith("numpy.")]
    for i in (0, 2):
        fd = central(progs.axes, [X, y, T], i)
        assert np.allclose(g.derivatives[i], fd, rtol=1e-7, atol=1e-7)
    if BIN:  # and the trace replays at another X as Python computes
        X2 = X + 0.25
        r = subprocess.run([os.path.join(BIN, "irt-replay"), "--set",
                            "@2=[" + "; ".join(" ".join(repr(v) for v in row) for row in X2) + "]",
                            "-o", str(tmp_path / "r.fb"), str(tmp_path / "t.fb")],
                           capture_output=True)
        assert r.returncode == 0, r.stderr
        assert np.isclose(irtrace.load(tmp_path / "r.fb").root.value, progs.axes(X2, y, T),
                          rtol=1e-13, atol=0)
    # Not an array: NumPy's name, every operand kept (its result is one).
    t = irtrace.track(progs.axes_of_list, [[1.0, 2.0], [3.0, 4.0]])
    assert list(t.result) == [4.0, 6.0]
    assert [k.op for k in t.root.children if k.kind == "Primitive"] == \
        ["numpy.sum(axis=, keepdims=)", "getitem"]


def test_clip(tmp_path):
    p = np.array([0.5, 1e-5, 0.9999, 0.2])
    t, g = grad_of(tmp_path, progs.clipped, p, 0.75)
    assert t.result == progs.clipped(p, 0.75)
    ops = [k.op for k in t.root.children if k.kind == "Primitive"]
    assert ops.count("max") == 2 and ops.count("min") == 2 and "numpy.clip" not in ops
    assert np.array_equal(g.derivatives[0], [2.0, 0.0, 0.0, 5.0])  # 1/p where not clipped
    assert g.derivatives[1] == 1.0  # max(x, 0) grows with x; min(x, 0.5) is 0.5


def test_numpy_functions_as_standard_operations(tmp_path):
    # Each recorded numpy.<name>, which has no derivative rule: a.dot(b),
    # ravel and flatten, zeros_like and ones_like, float(x) of a float,
    # np.outer, np.var, np.std, np.concatenate. Now standard operations,
    # with the values NumPy computes (the result equal bit for bit).
    rng = np.random.default_rng(11)
    a, b, A = rng.normal(size=3), rng.normal(size=3), rng.normal(size=(2, 3))
    all_standard(tmp_path, progs.numpy_idioms, [a, b, A, 0.8])


def all_standard(tmp_path, f, args):
    """f(*args) recorded with no operation under a library's name (no "."),
    its result Python's bit for bit, each derivative central differences'."""
    t, g = grad_of(tmp_path, f, *args)
    assert t.result == f(*args)
    ops = [k.op for k in t.root.children if k.kind == "Primitive"]
    assert not [o for o in ops if "." in o], ops
    for i in range(len(args)):
        assert np.allclose(g.derivatives[i], central(f, args, i), rtol=1e-7, atol=1e-7), i


def test_arrays_built_from_numbers_and_arrays(tmp_path):
    # np.array([x, y]) of numbers, of rows, np.stack, np.concatenate of
    # three: numpy.array and numpy.stack had no derivative rule.
    rng = np.random.default_rng(12)
    all_standard(tmp_path, progs.builds_arrays,
                 [0.7, -1.3, rng.normal(size=3), rng.normal(size=3)])


def test_math_pow(tmp_path):
    t, g = grad_of(tmp_path, progs.powers, 1.5, 0.5)
    assert t.result == progs.powers(1.5, 0.5)
    assert [k.op for k in t.root.children if k.kind == "Primitive"][:5] == \
        ["^", "^", "+", "^", "+"]
    assert "math.pow" in [k.op for k in t.root.children if k.kind == "Primitive"]
    x, y = 1.5, 0.5
    assert math.isclose(g.derivatives[0], 3 * x * x + math.log(2) * 2 ** x + y * x ** (y - 1),
                        rel_tol=1e-14)
    assert math.isclose(g.derivatives[1], math.log(x) * x ** y, rel_tol=1e-14)


def test_array_of_a_grown_list(tmp_path):
    # np.array(acc) of a list a loop grew: numpy.array had no rule.
    x = 1.3
    t, g = grad_of(tmp_path, progs.grows_array, x, 4)
    assert t.result == progs.grows_array(x, 4)
    ops = [k.op for k in t.root.children if k.kind == "Primitive"]
    assert ops.count("collect") == 2 and ops.count("identity") == 2
    # sum of x^(3i) for i < 4, plus x + 2: 3i x^(3i - 1), plus 1
    assert math.isclose(g.derivatives[0], sum(3 * i * x ** (3 * i - 1) for i in range(4)) + 1,
                        rel_tol=1e-14)


def test_numpy_lowerings_only_for_arrays(tmp_path):
    # np.var(d) calls d.var() when d is no array, and d.sum(axis=0) is d's
    # own method: what the lowering computes as NumPy's definition would be
    # another computation. Such a call stops the run; a list is an array.
    for f in (progs.dist_var, progs.dist_sum_axis):
        with pytest.raises(TypeError, match="irtrace records this NumPy call on arrays"):
            irtrace.track(f, 1.5)
    t = irtrace.track(progs.list_var, [1.0, 2.0, 4.0])
    assert t.result == progs.list_var([1.0, 2.0, 4.0])
