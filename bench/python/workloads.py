# W1 and W3 of bench/ (bench/ir/w1_powsum.ir, bench/ir/w3_recursion.ir,
# bench/cpp/workloads.h) written in Python, for bench/python_record_bench.py.
# The same source runs on Python floats (plain CPython and irtrace.track)
# and on torch tensors, with `math` rebound to torch's sin and cos.
import math


def powsum(x, n):  # W1: h(x, n) = sum of x^i for i = 0 .. n-1, a while loop
    r = 0.0
    i = 0
    while i < n:
        r = r + x ** i
        i = i + 1
    return r


def recursion(x, d):  # W3: g(x, 0) = sin x, g(x, d) = g(1.0001 x + 0.5 cos x, d - 1) + x
    if d == 0:
        return math.sin(x)
    return recursion(1.0001 * x + 0.5 * math.cos(x), d - 1) + x
