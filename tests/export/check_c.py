#!/usr/bin/env python3
"""Compiles the code irt-export --c wrote, runs it and compares it with a trace.

  check_c.py [--tolerance R] CODE.c TRACE.jsonl [ARG...]

Compiles CODE.c with cc (or $CC) -std=c11 -DIRT_MAIN -DIRT_PRINT_VALUES
(irt-export(1)'s command; no -O, which takes a quarter of -O1's time),
which makes the function print each node's value as it computes it ("7
Float64 0x...", "9 Tensor Float64 2 3 4 0x... ...", "12 Tuple 2 ..."),
runs it with ARGs (default: the trace's recorded arguments, from the root
call's line of TRACE.jsonl, which irt-export --jsonl wrote; a tensor in
irt-trace's notation) and compares every value with the one TRACE.jsonl
records, bit for bit: tensors by element type, shape and each element,
tuples item by item. Every node whose value C can hold (Bool, Int64,
Float32, Float64, tensors and tuples of them) must be printed. Prints "N
values equal bit for bit" or the first difference (exit 1); a program that
stops (a branch that diverges) has its message and status shown. With
--tolerance R, as check_python.py's: a float that differs passes when
|got - want| <= R * eps * max(1, |want|), and the values that needed it
are counted apart.
"""
import json
import math
import os
import struct
import subprocess
import sys
import tempfile

from check_python import tuple_types  # the same type names, parsed once

TOLERANCE = None
EPS = {"Float64": 2.0 ** -52, "Float32": 2.0 ** -23}


def arg_text(value, typ):
    if isinstance(value, dict) and "dtype" in value:
        items = [arg_text(v, value["dtype"]) for v in value["data"]]
        if len(value["shape"]) == 2:
            cols = value["shape"][1]
            return "[" + "; ".join(" ".join(items[r * cols:(r + 1) * cols])
                                   for r in range(value["shape"][0])) + "]"
        return "[" + ", ".join(items) + "]"
    if typ == "Bool":
        return "true" if value else "false"
    if isinstance(value, str):
        return {"NaN": "nan", "Inf": "inf", "-Inf": "-inf"}[value]
    return repr(value)


def want_float(value):
    if isinstance(value, str):
        return {"NaN": math.nan, "Inf": math.inf, "-Inf": -math.inf}[value]
    return float(value)


def same_number(text, value, typ):
    """1 when equal bit for bit, 2 when within the tolerance, 0 otherwise."""
    if typ in EPS:
        fmt, size = ("<d", "<Q") if typ == "Float64" else ("<f", "<I")
        got = struct.unpack(fmt, struct.pack(size, int(text, 16)))[0]
        want = want_float(value)
        if math.isnan(want):
            return int(math.isnan(got))
        if struct.pack(fmt, got) == struct.pack(fmt, want):
            return 1
        if TOLERANCE is not None and math.isfinite(got) and math.isfinite(want) and \
                abs(got - want) <= TOLERANCE * EPS[typ] * max(1.0, abs(want)):
            return 2
        return 0
    if typ in ("Int64", "Int32"):
        return int(int(text) == value)
    if typ == "Bool":
        return int((text == "1") == value)
    return 0


def compare(tokens, value, typ):
    """Reads one value from tokens (a list, consumed) and compares it: 1, 2 or 0."""
    head = tokens.pop(0)
    if head == "Tuple":
        n = int(tokens.pop(0))
        if not isinstance(value, dict) or "tuple" not in value or len(value["tuple"]) != n:
            return 0
        worst = 1
        for v, t in zip(value["tuple"], tuple_types(typ)):
            r = compare(tokens, v, t)
            if r == 0:
                return 0
            worst = max(worst, r)
        return worst
    if head == "Tensor":
        dtype, ndim = tokens.pop(0), int(tokens.pop(0))
        shape = [int(tokens.pop(0)) for _ in range(ndim)]
        n = math.prod(shape)
        elems = [tokens.pop(0) for _ in range(n)]
        if not isinstance(value, dict) or value.get("dtype") != dtype or value["shape"] != shape:
            return 0
        worst = 1
        for text, v in zip(elems, value["data"]):
            r = same_number(text, v, dtype)
            if r == 0:
                return 0
            worst = max(worst, r)
        return worst
    text = tokens.pop(0)
    if head != typ:
        return 0
    return same_number(text, value, typ)


def main():
    global TOLERANCE
    if len(sys.argv) > 2 and sys.argv[1] == "--tolerance":
        TOLERANCE = float(sys.argv[2])
        del sys.argv[1:3]
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    rows = [json.loads(line) for line in open(sys.argv[2])]
    root = rows[0]
    if len(sys.argv) > 3:
        args = sys.argv[3:]
    else:
        args = [arg_text(a["const"], a["type"]) for a in root["args"]]
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "run")
        cc = os.environ.get("CC", "cc")
        subprocess.run([cc, "-std=c11", "-Wall", "-Werror", "-Wno-unused-function",
                        "-DIRT_MAIN", "-DIRT_PRINT_VALUES", "-o", exe, sys.argv[1], "-lm"],
                       check=True)
        run = subprocess.run([exe] + args, capture_output=True, text=True)
    if run.returncode != 0:
        print("the program stopped (status %d): %s" % (run.returncode, run.stderr.strip()))
        sys.exit(1)
    printed = {}
    lines = run.stdout.splitlines()
    for line in lines[:-1]:
        node, rest = line.split(None, 1)
        printed[int(node)] = rest
    count = near = 0
    for row in rows:
        if "value" not in row or row.get("type") in ("Nothing", "String") or \
                str(row.get("type")).startswith("typeof("):
            continue
        if row["id"] not in printed:
            print("node %d (%s): not printed" % (row["id"], row["path"]))
            sys.exit(1)
        text = printed[row["id"]]
        try:
            r = compare(text.split(), row["value"], row["type"])
        except (IndexError, ValueError):
            r = 0
        if r == 0:
            print("node %d (%s): %.300s, but the trace has %.300s %s" % (
                row["id"], row["path"], text, json.dumps(row["value"]), row["type"]))
            sys.exit(1)
        near += r == 2
        count += r == 1
    result = lines[-1] if len(lines[-1]) <= 100 else lines[-1][:96] + " ..."
    if TOLERANCE is None:
        print("%d values equal bit for bit; result %s" % (count, result))
    else:
        print("%d values equal bit for bit, %d within %g eps; result %s" % (
            count, near, TOLERANCE, result))


if __name__ == "__main__":
    main()
