#!/usr/bin/env python3
"""Prints tensor literals for irt-trace, one a line, for the golden cases.

  tensor_args.py [--step A] SHAPE[f32] ...

Each SHAPE (like 7x5, or 9x6f32 for Float32) gives a tensor of that shape
whose elements are 2 sin(A k + 0.3) (A = 1.7 by default; k = 1, 2, ...
across the line),
in irt-trace's notation: [a, b] for a vector, [a b; c d] for a matrix.
"""
import math
import sys


def main():
    k, step, specs = 0, 1.7, sys.argv[1:]
    if specs[:1] == ["--step"]:
        step, specs = float(specs[1]), specs[2:]
    for spec in specs:
        f32 = spec.endswith("f32")
        dims = [int(d) for d in spec.removesuffix("f32").split("x")]
        suffix = "f0" if f32 else ""

        def nxt():
            nonlocal k
            k += 1
            return repr(math.sin(step * k + 0.3) * 2) + suffix
        if len(dims) == 1:
            print("[" + ", ".join(nxt() for _ in range(dims[0])) + "]")
        else:
            print("[" + "; ".join(" ".join(nxt() for _ in range(dims[1]))
                                  for _ in range(dims[0])) + "]")


if __name__ == "__main__":
    main()
