#!/usr/bin/env python3
"""Compiles the code irt-export --c wrote, runs it and compares it with a trace.

  check_c.py CODE.c TRACE.jsonl [ARG...]

Compiles CODE.c with cc (or $CC) -std=c11 -DIRT_MAIN -DIRT_PRINT_VALUES,
which makes the function print each node's value as it computes it ("7
Float64 0x..."), runs it with ARGs (default: the trace's recorded
arguments, from the root call's line of TRACE.jsonl, which irt-export
--jsonl wrote) and compares every value with the one TRACE.jsonl records,
bit for bit. Every node whose value C can hold (Bool, Int64, Float32,
Float64) must be printed. Prints "N values equal bit for bit" or the first
difference (exit 1); a program that stops (a branch that diverges) has its
message and status shown.
"""
import json
import math
import os
import struct
import subprocess
import sys
import tempfile

C_TYPES = ("Bool", "Int64", "Float32", "Float64")


def arg_text(value, typ):
    if typ == "Bool":
        return "true" if value else "false"
    if isinstance(value, str):
        return {"NaN": "nan", "Inf": "inf", "-Inf": "-inf"}[value]
    return repr(value)


def same(text, value, typ):
    if typ == "Float64" or typ == "Float32":
        fmt, size = ("<d", "<Q") if typ == "Float64" else ("<f", "<I")
        bits = int(text, 16)
        got = struct.unpack(fmt, struct.pack(size, bits))[0]
        if isinstance(value, str):
            want = {"NaN": math.nan, "Inf": math.inf, "-Inf": -math.inf}[value]
        else:
            want = float(value)
        if math.isnan(want):
            return math.isnan(got)
        return struct.pack(size, bits) == struct.pack(fmt, want)
    if typ == "Int64":
        return int(text) == value
    return (text == "1") == value


def main():
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
        node, typ, text = line.split()
        printed[int(node)] = (typ, text)
    count = 0
    for row in rows:
        if row.get("type") not in C_TYPES:
            continue
        if row["id"] not in printed:
            print("node %d (%s): not printed" % (row["id"], row["path"]))
            sys.exit(1)
        typ, text = printed[row["id"]]
        if typ != row["type"] or not same(text, row["value"], row["type"]):
            print("node %d (%s): %s %s, but the trace has %s %s" % (
                row["id"], row["path"], typ, text, json.dumps(row["value"]), row["type"]))
            sys.exit(1)
        count += 1
    print("%d values equal bit for bit; result %s" % (count, lines[-1]))


if __name__ == "__main__":
    main()
