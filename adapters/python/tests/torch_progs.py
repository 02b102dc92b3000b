# Programs whose gradients test_torch.py checks against PyTorch. Each is
# written once, for NumPy and math; test_torch.py runs this same source a
# second time on torch tensors, with `np` and `math` rebound to torch's
# functions of the same meaning (TORCH_NP, TORCH_MATH there).
import math

import numpy as np


def powsum(x, n):  # a for loop over range
    r = 0.0
    for i in range(n):
        r = r + x ** i
    return r


def newton_sqrt(a):  # a while loop whose trip count depends on the data
    x = a
    while abs(x * x - a) > 1e-12 * a:
        x = 0.5 * (x + a / x)
    return x


def rec(x, d):  # recursion with an early return
    if d == 0:
        return math.sin(x)
    return rec(1.0001 * x + 0.5 * math.cos(x), d - 1) + x


def early(x, y, n):  # break, continue, two returns
    s = 0.0
    for i in range(n):
        if i == 1:
            continue
        if s > 20.0:
            break
        s = s + math.exp(x * i) * y
    if s < 0.0:
        return -s * y
    return s * x


def euler(k, x0, h):  # a while loop on a float clock, the step count data-dependent
    t = 0.0
    x = x0
    while t < 1.0:
        x = x + h * (-k * x + math.sin(t))
        t = t + h
    return x * x


def piecewise(x, y):  # x if c else y, and/or, builtin max/min/abs
    z = x * y if x > y else y - x
    if x > 0.0 and y > 0.0:
        z = z + max(x, y) * min(x, y)
    if x < -10.0 or abs(y) > 0.1:
        z = z * abs(y)
    return z


def horner(c, x):  # for over an array's elements
    r = 0.0
    for ci in c:
        r = r * x + ci
    return r


def indexed(v, A):  # 0-based indexing of a vector and of a matrix
    s = 0.0
    for i in range(len(v) - 1):
        s = s + v[i] * v[i + 1] + A[i, i + 1] * v[i]
    return s + A[1, 0] ** 2


def mlp(X, W1, b1, W2):  # matmul, broadcasting a row vector, reductions
    H = np.tanh(X @ W1 + b1)
    return np.mean((H @ W2) ** 2) + 0.01 * np.sum(W1 * W1)


def logsumexp(X, w):  # max, broadcasting a column, exp/log, transpose
    Z = X @ w
    m = np.max(Z)
    return m + np.log(np.sum(np.exp(Z - m))) + np.sum(np.transpose(Z) @ X)


def mpow(A, k):  # recursion over matrices: A^k by squaring
    if k == 1:
        return A
    if k % 2 == 0:
        B = mpow(A, k // 2)
        return B @ B
    return A @ mpow(A, k - 1)


def mpow_sum(A, C):
    return np.sum(mpow(A, 5) * C)


def descend(w, X, y):  # gradient descent until the data say stop
    g = np.transpose(X) @ (X @ w - y)
    steps = 0
    while np.sum(g * g) > 1e-3 and steps < 100:  # 15 steps here
        w = w - 0.3 * g
        g = np.transpose(X) @ (X @ w - y)
        steps = steps + 1
    return np.sum(w * w)


def rows(X, v):  # for over a matrix's rows, elementwise functions
    s = 0.0
    k = 0
    for r in X:
        s = s + np.sum(np.sqrt(r * r + v) * np.sin(r)) * (k + 1)
        k = k + 1
    return s


def knots(xs, x):  # for over a list of floats, enumerate, early return
    acc = 0.0
    for i, xi in enumerate(xs):
        if xi > x:
            return acc + (x - xi) ** 3
        acc = acc + xi * x / (i + 1)
    return acc
