"""Programs as people write them (real_progs.py), recorded and
differentiated, against central differences of the programs themselves."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import irtrace  # noqa: E402
from central import central  # noqa: E402
import real_progs as rp  # noqa: E402


def check(f, args, wrt, tmp_path):
    t = irtrace.track(f, *args, out=tmp_path / "t.fb")
    assert t.result == f(*args)
    g = irtrace.grad(tmp_path / "t.fb").derivatives
    for i in wrt:
        assert np.allclose(np.asarray(g[i]), central(f, args, i), rtol=1e-5, atol=1e-6), i
    return g


def test_logistic_loss(tmp_path):
    rng = np.random.default_rng(0)
    X, w = rng.normal(size=(5, 3)), rng.normal(size=3)
    y = (rng.random(5) > 0.5).astype(float)
    check(rp.logistic_loss, (w, 0.1, X, y), [0, 1], tmp_path)


def test_mlp_parameters_as_a_tuple_of_arrays(tmp_path):
    rng = np.random.default_rng(1)
    params = (rng.normal(size=(4, 3)), rng.normal(size=4), rng.normal(size=(2, 4)),
              rng.normal(size=2))
    xs = [rng.normal(size=3) for _ in range(3)]
    ys = [rng.normal(size=2) for _ in range(3)]
    t = irtrace.track(rp.loss, params, xs, ys, out=tmp_path / "t.fb")
    assert t.result == rp.loss(params, xs, ys)
    g = irtrace.grad(tmp_path / "t.fb").derivatives[0]
    assert isinstance(g, tuple) and len(g) == 4
    for k in range(4):
        def f(p, k=k):
            pp = list(params)
            pp[k] = p
            return rp.loss(tuple(pp), xs, ys)
        assert np.allclose(g[k], central(f, [params[k]], 0), rtol=1e-5, atol=1e-6), k


def test_mixture_over_a_list_of_data(tmp_path):
    check(rp.gmm_like, (np.array([0.1, 0.5]), np.array([1.0, 2.0]), [0.3, -0.2, 1.5]), [0, 1, 2],
          tmp_path)


def test_softmax_cross_entropy(tmp_path):
    rng = np.random.default_rng(2)
    check(rp.softmax_xent, (rng.normal(size=(4, 3)), rng.normal(size=3), 2), [0, 1], tmp_path)


def test_replays_and_exports(tmp_path):
    # len(xs) and the loops' lengths are the standard length: the trace
    # replays with other parameters and exports as Python that computes it.
    import subprocess
    bin_dir = os.environ.get("IRT_BIN", "")
    if not bin_dir:
        return
    path = tmp_path / "g.fb"
    data = [0.3, -0.2, 1.5]
    irtrace.track(rp.gmm_like, np.array([0.1, 0.5]), np.array([1.0, 2.0]), data, out=path)
    r = subprocess.run([os.path.join(bin_dir, "irt-replay"), "--set", "@2=[0.2, 0.4]", str(path)],
                       capture_output=True)
    assert r.returncode == 0, r.stderr
    (tmp_path / "r.fb").write_bytes(r.stdout)
    want = rp.gmm_like(np.array([0.2, 0.4]), np.array([1.0, 2.0]), data)
    # libtrace's sums and exp may round otherwise than NumPy's, by an ulp or two
    assert np.isclose(irtrace.load(tmp_path / "r.fb").root.value, want, rtol=1e-13, atol=0)
    rng = np.random.default_rng(1)
    params = (rng.normal(size=(4, 3)), rng.normal(size=4), rng.normal(size=(2, 4)),
              rng.normal(size=2))
    xs = tuple(rng.normal(size=3) for _ in range(3))
    ys = tuple(rng.normal(size=2) for _ in range(3))
    irtrace.track(rp.loss, params, list(xs), list(ys), out=tmp_path / "m.fb")
    code = tmp_path / "m.py"
    r = subprocess.run([os.path.join(bin_dir, "irt-export"), "--python", "-o", str(code),
                        str(tmp_path / "m.fb")], capture_output=True)
    assert r.returncode == 0, r.stderr
    ns = {}
    exec(compile(code.read_text(), str(code), "exec"), ns)
    f = next(v for k, v in ns.items() if k.startswith("loss"))
    # (within a few units in the last place: libtrace's Float64 matrix
    # products may fuse multiply-adds, irt-export(1) says)
    assert np.isclose(f(params, xs, ys), rp.loss(params, list(xs), list(ys)), rtol=1e-13, atol=0)


def test_nested_parameters(tmp_path):
    rng = np.random.default_rng(3)
    params = ((rng.normal(size=(3, 2)), rng.normal(size=3)),
              (rng.normal(size=(2, 3)), rng.normal(size=2)))
    x = rng.normal(size=2)
    t = irtrace.track(rp.nested_mlp, params, x, out=tmp_path / "t.fb")
    assert t.result == rp.nested_mlp(params, x)
    g = irtrace.grad(tmp_path / "t.fb").derivatives
    for i in range(2):
        for j in range(2):
            def f(p, i=i, j=j):
                layers = [list(layer) for layer in params]
                layers[i][j] = p
                return rp.nested_mlp(tuple(tuple(layer) for layer in layers), x)
            assert np.allclose(g[0][i][j], central(f, [params[i][j]], 0), rtol=1e-5,
                               atol=1e-6), (i, j)
    bin_dir = os.environ.get("IRT_BIN", "")
    if bin_dir:  # the backward pass written as a trace returns the same, bit for bit
        import subprocess
        r = subprocess.run([os.path.join(bin_dir, "irt-grad"), "--emit-trace",
                            str(tmp_path / "t.fb")], capture_output=True)
        assert r.returncode == 0, r.stderr
        (tmp_path / "g.fb").write_bytes(r.stdout)
        e = irtrace.load(tmp_path / "g.fb").root.value
        assert all(np.array_equal(e[0][i][j], g[0][i][j]) for i in range(2) for j in range(2))
        assert np.array_equal(e[1], g[1])


def test_where_and_reshape(tmp_path):
    x = np.array([0.5, -1.2, 2.0, -0.3])
    g = check(rp.leaky_blocks, (x,), [0], tmp_path)
    ops = [k.op for k in irtrace.load(tmp_path / "t.fb").root.children if k.kind == "Primitive"]
    assert "ifelse" in ops and ops.count("reshape") == 2
    assert g[0].shape == (4,)


def test_hmm_forward(tmp_path):
    rng = np.random.default_rng(3)
    logA = np.log(rng.dirichlet(np.ones(3), size=3))
    logpi = np.log(rng.dirichlet(np.ones(3)))
    check(rp.hmm_forward, (logA, logpi, rng.normal(size=(6, 3))), [0, 1, 2], tmp_path)


def test_kalman_likelihood(tmp_path):
    check(rp.kalman_loglik, (0.2, 0.5, [0.3, -0.1, 0.8, 0.4]), [0, 1, 2], tmp_path)


def test_stick_breaking(tmp_path):
    check(rp.stick_breaking, (np.array([0.3, 0.5, 0.2, 0.6]), 1.5), [0, 1], tmp_path)


def test_gmm_vectorized(tmp_path):
    rng = np.random.default_rng(4)
    check(rp.gmm_vectorized, (rng.normal(size=(5, 2)), rng.normal(size=(3, 2)), 0.2), [0, 1, 2],
          tmp_path)


def test_rbf_standardized(tmp_path):
    rng = np.random.default_rng(5)
    check(rp.rbf_standardized, (rng.normal(size=(4, 3)), 0.8), [0, 1], tmp_path)
