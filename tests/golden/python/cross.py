# Programs of standard operations only (tests/golden/python/crosscheck.cmd):
# the IR the Python adapter emits for them re-runs under irt-trace.
import math


def clip(x, lo, hi):
    return lo if x < lo else (hi if x > hi else x)


def bump(x, n):
    s = 0.0
    k = 0
    while k < n and (s < 10.0 or x < 0.0):
        s = s + clip(math.sin(x * k), -0.5, 0.5) * x
        k = k + 1
    for i in range(n):
        if i > 2 or s > 1.0:
            continue
        s = s * 1.5
    return s


def fact(n):
    if n <= 1:
        return 1
    return n * fact(n - 1)
