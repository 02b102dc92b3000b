# Python programs for the examples of irtrace-python(1) and the golden
# cases of `python3 -m irtrace trace` (tests/golden/python/cli-*.cmd).
import math
import random

import numpy as np


def f(x):
    return math.sin(x) + x


def h(x, n):
    r = 0.0
    i = 0
    while i < n:
        r = r + x ** i
        i = i + 1
    return r


def sumsq(a, scale, square):
    if square:
        return np.sum(a * a) * scale
    return np.sum(a) * scale


def geom(n, beta):
    if random.random() < beta:
        return n
    return geom(n + 1, beta)


def fails(x):
    return math.log(x - 2.0)
