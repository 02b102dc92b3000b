"""IRTracker.jl's graph API on the nodes of irtrace.load: the examples of
IRTracker's README (its f, h and geom are tests/golden/python/seed.py),
and the queries checked against a plain reading of the operands."""
import gc
import math
import os
import random
import sys

import numpy as np
import pytest

HERE = os.path.dirname(__file__)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "tests", "golden", "python"))
import irtrace  # noqa: E402
import seed  # noqa: E402


def lines(nodes):
    return [repr(n) for n in nodes]


@pytest.fixture
def f_node(tmp_path):
    irtrace.track(seed.f, 1.0, out=tmp_path / "f.fb")
    return irtrace.load(tmp_path / "f.fb").root


def test_readme_children_and_parent(f_node):
    node = f_node
    assert repr(node) == "⟨f⟩(⟨1.0⟩, ()...) → 1.8414709848078965::Float64"
    assert lines(node.children) == [
        "@1: [Arg:§1:%1] f::typeof(f)",
        "@2: [Arg:§1:%2] 1.0::Float64",
        "@3: [§1:%3] ⟨sin⟩(@2) → 0.8414709848078965::Float64",
        "@4: [§1:%4] ⟨+⟩(@3, @2) → 1.8414709848078965::Float64",
        "@5: [§1:&1] return @4 → 1.8414709848078965::Float64",
    ]
    assert node.children[3].parent == node          # getparent(node[4]) === node
    assert node.parent is None
    assert [c.position for c in node.children] == [1, 2, 3, 4, 5]
    assert node.position is None and node.path == "@"


def test_readme_referenced_and_backward(f_node):
    node = f_node.children
    # referenced(node[5]), backward(node[5])
    assert lines(node[4].referenced()) == [
        "@4: [§1:%4] ⟨+⟩(@3, @2) → 1.8414709848078965::Float64"]
    assert lines(node[4].backward()) == [
        "@4: [§1:%4] ⟨+⟩(@3, @2) → 1.8414709848078965::Float64",
        "@3: [§1:%3] ⟨sin⟩(@2) → 0.8414709848078965::Float64",
        "@2: [Arg:§1:%2] 1.0::Float64",
    ]
    # referenced(node[5], numbered = true), referenced(node[4], numbered = true)
    assert [(i, n.position) for i, n in node[4].referenced(numbered=True)] == [(1, 4)]
    assert [(i, n.position) for i, n in node[3].referenced(numbered=True)] == [(2, 3), (3, 2)]
    assert node[3].referenced(numbered=True)[0][1] == node[2]


def test_readme_dependents_and_forward(f_node):
    node = f_node.children
    assert [n.position for n in node[1].dependents()] == [3, 4]
    assert lines(node[1].forward()) == [
        "@3: [§1:%3] ⟨sin⟩(@2) → 0.8414709848078965::Float64",
        "@4: [§1:%4] ⟨+⟩(@3, @2) → 1.8414709848078965::Float64",
        "@5: [§1:&1] return @4 → 1.8414709848078965::Float64",
    ]
    assert node[0].dependents() == [] and node[0].forward() == []


def test_readme_values_and_locations(f_node):
    node = f_node.children
    assert node[2].value == math.sin(1.0)                       # getvalue(node[3])
    assert node[2].op == "sin" and node[2].kind == "Primitive"  # getfunction(node[3])
    assert node[2].referenced()[0].value == 1.0                 # getvalue.(getarguments(node[3]))
    loc = node[3].location                                      # getlocation(node[4]) == §1:%4
    assert (loc["block"], loc["pos"], loc["is_branch"]) == (1, 4, False)
    assert f_node.value == math.sin(1.0) + 1.0


def oracle(body):
    """Referenced within one body from the raw operands (global ids), as a
    reference for the native queries: position by id, earlier nodes only."""
    pos = {}
    for i, c in enumerate(body):
        pos[c.id] = i
        if c.is_call:  # a use of a call's result refers to its closing node
            pos[c.children[-1].id] = i
    refs = []
    for i, c in enumerate(body):
        r = []
        for kind, v in c.operands:
            if kind == "ref" and v in pos and pos[v] < i and pos[v] not in r:
                r.append(pos[v])
        refs.append(r)
    return refs


def check_against_oracle(call):
    body = call.children
    refs = oracle(body)
    n = len(body)
    for i, c in enumerate(body):
        assert [x.position - 1 for x in c.referenced()] == refs[i]
        seen, todo = set(), list(refs[i])
        while todo:
            p = todo.pop()
            if p not in seen:
                seen.add(p)
                todo.extend(refs[p])
        assert [x.position - 1 for x in c.backward()] == sorted(seen, reverse=True)
        assert [x.position - 1 for x in c.dependents()] == [q for q in range(n) if i in refs[q]]
        reach = {i}
        for q in range(i + 1, n):
            if any(r in reach for r in refs[q]):
                reach.add(q)
        assert [x.position - 1 for x in c.forward()] == sorted(reach - {i})
        assert all(x.parent == call for x in c.referenced())


def test_h_loop_against_oracle(tmp_path):
    irtrace.track(seed.h, 2.0, 3, out=tmp_path / "h.fb")
    root = irtrace.load(tmp_path / "h.fb").root
    check_against_oracle(root)
    ret = root.children[-1]
    # The return depends on x and on every jump that carried r around the
    # loop; on n only through the branches (control, not data).
    back = ret.backward()
    assert root.children[1] in back and root.children[2] not in back
    assert [b.position for b in back if b.kind == "Jump"] == [28, 20, 12, 4]


def test_geom_nested_calls(tmp_path):
    random.seed(2)
    irtrace.track(seed.geom, 1, 0.5, out=tmp_path / "g.fb")
    t = irtrace.load(tmp_path / "g.fb")
    root = t.root
    call = root.children[7]                  # @8: ⟨geom⟩(@7, @3) → 3
    assert call.is_call and call.value == 3
    assert [n.position for n in call.referenced()] == [7, 3]
    assert [(i, n.position) for i, n in call.referenced(numbered=True)] == [(2, 7), (3, 3)]
    assert [n.position for n in call.dependents()] == [9]
    inner = t.node("@8/@8/@5")
    assert inner.path == "@8/@8/@5" and inner.parent.path == "@8/@8"
    assert repr(inner) == "@5: [§1:%5] ⟨<⟩(@4, @3) → true::Bool"
    # Queries stay within the call holding the node (IRTracker's semantics).
    assert [n.position for n in inner.backward()] == [4, 3]
    assert inner.forward() == [] and inner.dependents() == []  # its branch was not taken
    assert [n.path for n in t.node("@8/@8/@4").forward()] == ["@8/@8/@5"]
    assert [n.path for n in t.node("@8/@8/@2").forward()] == ["@8/@8/@6"]  # return @2
    for c in (root, call, t.node("@8/@8")):
        check_against_oracle(c)
    with pytest.raises(KeyError):
        t.node("@8/@20")
    with pytest.raises(KeyError):
        t.node("@2/@1")


def test_nodes_are_hashable_and_compare_by_identity(f_node):
    a = f_node.children[2]
    b = f_node.children[3].referenced()[0]
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != f_node.children[1]


def scale(a, k):
    return a * k


def test_tensor_values_are_read_in_place(tmp_path):
    a = np.arange(12.0).reshape(3, 4)
    irtrace.track(scale, a, 2.0, out=tmp_path / "s.fb")
    t = irtrace.load(tmp_path / "s.fb")
    v = t.root.children[3].value
    assert isinstance(v, np.ndarray) and v.dtype == np.float64 and v.shape == (3, 4)
    assert (v == a * 2.0).all()
    # A view of the trace's mapped bytes: not copied, read-only, and it
    # keeps the trace open after every other reference is gone.
    assert not v.flags.owndata and not v.flags.writeable
    with pytest.raises(ValueError):
        v[0, 0] = 1.0
    del t
    gc.collect()
    assert v.sum() == a.sum() * 2.0
    r = irtrace.load(tmp_path / "s.fb").root
    assert (r.value == a * 2.0).all()           # a call's value: its Return's
    for dt in (np.float32, np.int64, np.int32, np.bool_):
        b = np.array([[1, 0], [3, 4]], dtype=dt)
        irtrace.track(scale, b, 1, out=tmp_path / "d.fb")
        got = irtrace.load(tmp_path / "d.fb").root.children[1].value
        assert got.dtype == b.dtype and (got == b).all()
