# The seed's programs written in Python, for the golden cases of
# tests/golden/python (irtrace.track records them).
import math
import random


def f(x):
    return math.sin(x) + x


def h(x, n):
    r = 0.0
    i = 0
    while i < n:
        r = r + x ** i
        i = i + 1
    return r


def geom(n, beta):
    if random.random() < beta:
        return n
    return geom(n + 1, beta)


def g2(x):
    if x * x > 1.0:
        return math.log(-1.0)
    return x


def g1(x):
    y = g2(x + 0.5)
    return y * 2.0


def fails(x):
    return g1(x) + 1.0


def unsupported(x):
    try:
        return 1.0 / x
    except ZeroDivisionError:
        return 0.0


def relu_sum(xs, w):  # for over a list, x if c else y: not in the seed
    s = 0.0
    for x in xs:
        s = s + (x * w if x * w > 0.0 else 0.0)
    return s
