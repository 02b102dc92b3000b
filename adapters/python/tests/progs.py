# Programs the tests record (they need source in a file to be traced).
import math

import numpy as np

import irtrace


def powsum(x, n):
    r = 0.0
    for i in range(n):
        r = r + x ** i
    return r


def newton_sqrt(a):  # data-dependent while loop
    x = a
    while abs(x * x - a) > 1e-12:
        x = 0.5 * (x + a / x)
    return x


def rec(x, d):  # recursion with an early return
    if d == 0:
        return math.sin(x)
    return rec(1.0001 * x + 0.5 * math.cos(x), d - 1) + x


def early(x, n):  # break, continue and an early return
    s = 0.0
    for i in range(n):
        if i == 1:
            continue
        if s > 100.0:
            break
        s = s + math.exp(x) * i
    if s < 0.0:
        return -s
    return s * x


def down(x):
    s = 0.0
    for i in range(5, 0, -2):
        s = s + x * i
    return s


def deep(x, d):
    if d == 0:
        return x
    return deep(x * 1.0, d - 1)


def mlp(X, W, b):
    return np.sum(np.tanh(X @ W + b))


def big(x):
    return x * 10 ** 30


def mutate(a):
    b = np.exp(a)
    return b


def sq_at(x, i):
    return x[i] * x[i]


def sum_sq_calls(x, n):  # an array passed to a call per iteration
    s = 0.0
    for i in range(n):
        s = s + sq_at(x, i)
    return s


@irtrace.primitive
def doubles(x):  # one primitive, unseen inside: out= in traced code is refused (InPlaceChange)
    np.multiply(x, 2.0, out=x)


def sum_sq_doubling(x, n):  # the same, the array doubled in place after each call
    s = 0.0
    for i in range(n):
        s = s + sq_at(x, i)
        doubles(x)
    return s


def unpacks(x, t):  # a, b = t: as many items as targets, or Python's ValueError
    a, b = t
    return a * x + b


def unpacks_nested(x, t):
    (a, b), c = t
    for u, v in [(x, a), (b, x)]:
        c = c + u * v
    return c


def squares(x, v):
    return np.square(x) + np.sum(np.square(v)) + np.square(3)


def writes_out(x):
    y = np.zeros(3)
    np.multiply(x, 2.0, out=y)
    return np.sum(y)


def inv(x):
    return 1.0 / x


CALLS = 0


def uses_with(x):
    with open("/dev/null"):
        pass
    return x


def rosen_vec(x):  # Rosenbrock with slices, as NumPy code writes it
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def slices(A, v, i, k):  # every form of slice the adapter lowers
    r = A[i, 1:]  # an integer, then a slice
    c = A[::-1, :2]  # two dimensions, one step negative
    w = v[k:-k:2]  # bounds from variables and negative ones
    t = (1.0, 2.0, 3.0, 4.0)[1::2]  # a tuple
    e = v[5:100]  # clamped to the length, empty here
    return np.sum(r * r) + np.sum(c) * np.sum(w) + t[0] * t[1] + np.sum(e) + np.sum(A[:, :])


def column(A, j):
    c = A[1:, j]  # a slice, then an index
    return np.sum(c * c) + np.sum(A[0, ::2] ** 2) * 0.0 + np.sum(A[:1, j] ** 2)


def newaxis(x):
    return x[:, None]


def pairwise(X, mu, i):  # broadcasting through new axes, as vectorized models write it
    D = X[:, None, :] - mu[None, :, :]  # (n, k, d)
    r = X[i, None, :] * mu[np.newaxis]  # (1, k, d)... broadcast with (k, d)
    c = X[:, 0][:, np.newaxis] + mu[:, 1][None]
    return np.sum(D * D) + np.sum(r) + np.sum(c ** 2) + np.sum(X[None])


def newaxis_var(x, i):
    return x[i]


def weighted(w, xs, ys):  # zip, zip of three under enumerate, one name for a zip's items
    s = 0.0
    for x, y in zip(xs, ys):
        s = s + x * y
    for i, (a, b, c) in enumerate(zip(w, xs, ys)):
        s = s + i * a * b * c
    for p in zip(w, ys):
        s = s + p[0] / p[1]
    return s


def polar(r, t):
    return r * math.cos(t), r * math.sin(t)


def dist_polar(r, t):  # a helper's tuple, unpacked
    x, y = polar(r, t)
    return x * x + 2.0 * y * y


def appends(x):  # a list changed in place: its earlier node would be stale
    acc = list()
    for i in range(3):
        acc.append(x * i)
    return acc[1] + acc[2]


def shuffles(a):
    np.random.shuffle(a)
    return np.sum(a)


def tail_sum(xs):  # a list argument, sliced
    s = 0.0
    for x in xs[1:]:
        s = s + x * x
    for x in xs[::-2]:
        s = s + x
    return s


def norm_of_list(x, y):  # a list display, passed to a helper, read back
    return tail_sum([x, y, x * y])


x_global = 100.0  # read as a global: a comprehension's variable of the same name does not hide it


def sums(xs, w):  # sum over a generator, a filtered list comprehension, a sequence, two fors
    a = sum(x_global * w for x_global in xs)
    b = sum([v * v for v in xs if v > 0], 0.5)
    c = sum(xs)
    d = sum(u * v for u in xs for v in (w, 2.0 * w))
    return a + b + c + d + x_global


def dots(W, v, u):  # np.dot and np.matmul, named as @ is by their operands
    return np.dot(v, u) + np.sum(np.dot(W, v)) + np.sum(np.matmul(W, v)) + \
        np.sum(np.matmul(u[:2], W[:2, :]))


def dot_loss(W, v):
    y = np.dot(W, v)
    return np.sum(y) + np.dot(y, y) + np.dot(v, v)


def grows(x, n):  # a list grown by joining, as the in-place append is refused
    acc = []
    for i in range(n):
        acc = acc + [x * i]
    t = (x,) + (2.0 * x, 3.0)
    acc += [x * x]
    return acc[1] * acc[-1] + t[1] + (acc + [x])[-1]


def adds_list(v):
    return v + [1.0, 2.0]


def axes(X, y, T):  # reductions along one axis, as NumPy programs write them
    e = np.exp(X - np.max(X, axis=1, keepdims=True))
    p = e / np.sum(e, axis=1, keepdims=True)
    m = X.mean(axis=0)
    s = np.sum(X, axis=-1)
    u = np.sum(T, 1) * np.min(T, axis=-2)  # (2, 4) from a (2, 3, 4) tensor
    return np.sum(p * y) + np.sum(m * m) + np.sum(s) + X.sum(1)[0] + \
        np.sum(u) + np.sum(np.mean(s, axis=0))


def axes_of_list(rows):
    return np.sum(rows, axis=0)


def clipped(p, x):  # a probability kept off 0 and 1, as log-likelihoods do
    q = np.clip(p, 1e-3, 1.0 - 1e-3)
    return np.sum(np.log(q)) + np.clip(x, 0.0, None) + np.clip(x, None, 0.5)


def numpy_idioms(a, b, A, x):  # NumPy functions that are standard operations in disguise
    r = a.dot(b) + np.sum(A.ravel() ** 2) + np.sum(A.flatten() * np.ravel(A))
    z = np.zeros_like(a) + np.ones_like(a) * float(x) + float(a[0])
    o = np.outer(a, b[:2])
    c = np.concatenate([a, b]) @ np.concatenate((b, a))
    C = np.concatenate([A, A * x], axis=1)
    n = np.linalg.norm(a) + np.linalg.norm(A) * x + np.sum(np.var(A, axis=0)) + A.var() + \
        np.sum(A.std(axis=1, keepdims=True) * A) + np.sum(np.std(A, -1)) + \
        np.cumsum(a) @ b + np.sum(np.cumsum(A, axis=1) * A.cumsum(0)) + np.sum(A.cumsum(axis=-1))
    return r + np.sum(z) + np.sum(o * o) + c + np.var(a) + np.std(b) * x + np.sum(C ** 2) + n


def builds_arrays(x, y, a, b):  # arrays built from numbers and arrays
    v = np.array([x, y * x, 2.0])
    M = np.array([[x, y], [y, 1.0]])
    S = np.stack([a, b]) + np.stack((b, a), axis=1).T
    c = np.concatenate([a, b, a * y])
    return v @ v + np.sum(M @ M) + np.sum(S * S) + c @ c + np.sum(np.array([a]))


def powers(x, y):  # math.pow is C's pow in binary64: ^, but of two integers
    return math.pow(x, 3) + math.pow(2, x) + math.pow(x, y) + math.pow(2, 3)


def grows_array(x, n):  # a list grown by joining, then made an array
    acc = []
    for i in range(n):
        acc = acc + [x ** i]
    v = np.array(acc)
    w = np.asarray(v) * np.array(v)
    return v @ w + np.sum(np.asarray((x, 2.0)))


class Dist:  # an object with NumPy-like methods of its own
    def __init__(self, v):
        self.v = v

    def var(self, axis=None):
        return 2.0 * self.v

    def sum(self, axis=None):
        return 3.0 * self.v


def dist_var(x):
    return np.var(Dist(x)) + Dist(x).var()


def dist_sum_axis(x):
    return Dist(x).sum(axis=0)


def list_var(xs):
    return np.var(xs) + np.sum(xs, axis=0)
