# Programs with short-circuits, conditional expressions, for loops over
# sequences, and contexts (test_control.py records them).
import math
import random

import numpy as np

import irtrace


def shortcut(x, y):
    a = x > 0 and y > 0
    b = x or y
    c = x if x > y else y
    d = x > 1 or y > 1 or x + y > 1
    return (a, b, c, d)


def clipped(x, lo, hi):  # a ternary inside arithmetic, and/or in a while
    r = (lo if x < lo else x) * 2.0
    n = 0
    while n < 50 and (r > hi or r < -hi):
        r = r * 0.5
        n = n + 1
    return r + (hi if n > 3 else lo)


def over_seq(xs):
    s = 0.0
    for x in xs:
        if x < 0:
            continue
        if x > 100:
            break
        s = s + x * x
    return s


def over_enumerate(xs):
    s = 0.0
    for i, x in enumerate(xs):
        s = s + i * x
    return s


def over_pairs(pairs):
    t = 0.0
    for a, b in pairs:
        t = t + a * b
    return t


def over_rows(A, v):
    s = 0.0
    for row in A:
        s = s + np.sum(row * v)
    return s


def over_str(s):
    n = 0
    for ch in s:
        if ch == "a":
            n = n + 1
    return n


def over_dict(d):
    s = 0
    for k in d:
        s = s + k
    return s


@irtrace.primitive(rule="""
softplus(x) -> y
  dy = dx / (1 + exp(-x))
  dx = dy / (1 + exp(-x))
""")
def softplus(x):
    try:  # unsupported syntax in a primitive is never lowered
        return math.log1p(math.exp(x))
    except OverflowError:
        return x


def leaf(x):
    return x * x


def mid(x):
    return leaf(x) + 1.0


def top(x, k=2.0):
    return mid(x) * k + softplus(x)


def noisy(x):
    return x * random.random() + np.random.randn()


def pick(A, i, j):
    return A[i, j] * A[i][j] + np.sum(A[-1])


def scaled(x, k=2.0, shift=0.0):
    return x * k + shift


def keywords(A, x):
    col = np.cumprod(A + 1.0, axis=0)[-1] - A[1] * A[0] - 1.0
    m = A.sum(axis=1)
    return scaled(x, shift=np.sum(col) + np.sum(m)) + scaled(k=3.0, x=x)


def bad_keyword(x):
    return scaled(x, y=2.0)


def vectors(A, x, y):
    z = A @ x  # a matrix times a vector: the standard matmul
    w = A.T @ z
    return z @ y + np.sum(w * x) + x.T @ x


def row_times_matrix(x, A):
    return np.sum(x @ A)  # NumPy's row semantics: recorded as numpy.matmul
