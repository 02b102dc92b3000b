"""Gradients of recorded Python programs against PyTorch's autograd.

Each program of torch_progs.py is recorded with irtrace.track on NumPy
arrays and Python floats, and differentiated from its trace with
irtrace.grad (libtrace's engine, the one irt-grad runs), in reverse mode
and in forward mode along a random tangent. The same source is then run
again on float64 torch tensors, with `np` and `math` rebound to the torch
functions of the same meaning (TORCH_NP, TORCH_MATH), and differentiated
by torch.autograd: backward() for reverse mode, forward_ad's dual numbers
for forward mode. Results and derivatives must agree to 1e-12, relative to
the largest magnitude of the value compared (for a scalar: relative).

PyTorch is Debian's python3-torch. Without it the module is skipped, except
when CI=true: then it fails, so that a CI run never passes without it.
"""
import os
import subprocess
import sys
import types

import numpy as np
import pytest

try:
    import torch
    from torch.autograd import forward_ad
    MISSING = None
except ImportError as e:
    MISSING = str(e)
if MISSING is not None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true and PyTorch is not importable ({MISSING}): install python3-torch",
                    pytrace=False)
    pytest.skip(f"PyTorch is not importable ({MISSING}); install python3-torch to compare with it",
                allow_module_level=True)

sys.path.insert(0, os.path.dirname(__file__))
import irtrace  # noqa: E402
import torch_progs  # noqa: E402

BIN = os.environ.get("IRT_BIN", "")
RTOL = 1e-12

# The NumPy and math functions torch_progs.py calls, as torch functions.
TORCH_NP = types.SimpleNamespace(
    sum=torch.sum, mean=torch.mean, max=torch.max, tanh=torch.tanh, exp=torch.exp,
    log=torch.log, sqrt=torch.sqrt, sin=torch.sin, transpose=lambda a: a.t())


def _scalar(f):  # math's functions also take Python floats
    return lambda x: f(torch.as_tensor(x, dtype=torch.float64))


TORCH_MATH = types.SimpleNamespace(sin=_scalar(torch.sin), cos=_scalar(torch.cos),
                                   exp=_scalar(torch.exp))


def torch_twin():
    """torch_progs.py's source run again, its globals np and math rebound."""
    path = torch_progs.__file__
    with open(path) as f:
        src = f.read()
    ns = {"__name__": "torch_progs_on_torch", "__file__": path}
    exec(compile(src, path, "exec"), ns)
    ns["np"], ns["math"] = TORCH_NP, TORCH_MATH
    return ns


TWIN = torch_twin()


def rng_args():
    r = np.random.default_rng(2024)

    def n(*shape, s=1.0):
        return r.normal(size=shape) * s

    return [
        ("powsum", (1.3, 6)),
        ("newton_sqrt", (2.7,)),
        ("rec", (0.3, 20)),
        ("early", (0.4, 1.7, 8)),
        ("early", (0.9, -0.6, 8)),  # the other return, breaking out early
        ("euler", (0.8, 1.5, 0.07)),
        ("piecewise", (0.7, 0.4)),
        ("piecewise", (-0.3, 0.05)),
        ("horner", (n(6), 0.8)),
        ("indexed", (n(4), n(4, 4))),
        ("mlp", (n(5, 3), n(3, 4), n(4), n(4, 2))),
        ("logsumexp", (n(6, 3), n(3, 1))),
        ("mpow_sum", (n(3, 3, s=0.5), n(3, 3))),
        ("descend", (n(3, 1), n(5, 3, s=0.5), n(5, 1))),
        ("rows", (n(3, 4), n(4) ** 2)),
        ("knots", ([0.1, 0.5, 0.9, 1.4], 0.7)),
    ]


CASES = rng_args()
IDS = [f"{name}-{i}" for i, (name, _) in enumerate(CASES)]


def is_float(a):
    return isinstance(a, float) or (isinstance(a, np.ndarray) and a.dtype == np.float64)


def close(got, want, what):
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    scale = float(np.max(np.abs(want))) if want.size else 0.0
    err = float(np.max(np.abs(got - want))) if want.size else 0.0
    assert err <= RTOL * scale, f"{what}: |irtrace - torch| = {err:.3g}, scale {scale:.3g}\n" \
                                f"irtrace: {got}\ntorch:   {want}"


def to_torch(a, requires_grad=False):
    if is_float(a):
        return torch.tensor(a, dtype=torch.float64, requires_grad=requires_grad)
    return a


def tangents_for(args):
    r = np.random.default_rng(7)
    return [(float(r.normal()) if isinstance(a, float) else r.normal(size=a.shape))
            if is_float(a) else None for a in args]


def torch_reverse(name, args):
    xs = [to_torch(a, True) for a in args]
    y = TWIN[name](*xs)
    y.backward()
    grads = [None if not is_float(a) else
             (x.grad.numpy() if x.grad is not None else np.zeros(np.shape(a)))
             for a, x in zip(args, xs)]
    return y.item(), grads


def torch_forward(name, args, tangents):
    with forward_ad.dual_level():
        xs = [forward_ad.make_dual(to_torch(a), to_torch(t)) if t is not None else a
              for a, t in zip(args, tangents)]
        y = TWIN[name](*xs)
        tan = forward_ad.unpack_dual(y).tangent
        return 0.0 if tan is None else tan.item()


@pytest.mark.parametrize("name,args", CASES, ids=IDS)
def test_reverse_and_forward_equal_torch(tmp_path, name, args):
    f = getattr(torch_progs, name)
    path = tmp_path / "t.fb"
    t = irtrace.track(f, *args, out=path)
    assert t.metadata["status"] == "ok"
    assert t.result == f(*args)
    if BIN:
        r = subprocess.run([os.path.join(BIN, "irt-check"), str(path)], capture_output=True,
                           text=True)
        assert r.returncode == 0, r.stdout + r.stderr

    want_y, want_g = torch_reverse(name, args)
    close(t.result, want_y, f"{name}: result")

    g = irtrace.grad(path)
    assert len(g.derivatives) == len(args)
    for i, (a, d, w) in enumerate(zip(args, g.derivatives, want_g)):
        if is_float(a):
            assert d is not None, f"{name}: argument {i + 1} has no derivative"
            close(d, w, f"{name}: reverse, argument {i + 1}")
        else:
            assert d is None or isinstance(a, list), f"{name}: argument {i + 1} is not float"
    if BIN:  # irt-grad itself prints what irtrace.grad computed
        r = subprocess.run([os.path.join(BIN, "irt-grad"), str(path)], capture_output=True,
                           text=True)
        assert r.returncode == 0, r.stderr
        assert r.stdout == g.text

    tangents = tangents_for(args)
    fwd = irtrace.grad(path, forward={i + 2: v for i, v in enumerate(tangents) if v is not None})
    close(fwd.tangent, torch_forward(name, args, tangents), f"{name}: forward")
    # Forward and reverse of the same trace: the tangent is <gradient, direction>.
    dot = sum(float(np.sum(np.asarray(d) * v)) for d, v in zip(g.derivatives, tangents)
              if v is not None)
    assert abs(fwd.tangent - dot) <= 1e-10 * max(1.0, abs(dot))


def test_twin_is_the_same_program():
    """The torch run executes torch_progs.py's own functions: every global
    it rebinds is one the NumPy run looks up, and the twin computes the
    same values as NumPy on the same inputs."""
    for name, args in CASES:
        want = getattr(torch_progs, name)(*args)
        got = TWIN[name](*[to_torch(a) for a in args])
        close(float(got), want, f"{name}: value on torch")
    assert TWIN["powsum"].__code__.co_code == torch_progs.powsum.__code__.co_code
