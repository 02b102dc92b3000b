#!/usr/bin/env python3
"""Runs the code irt-export --python wrote and compares it with a trace.

  check_python.py CODE.py TRACE.jsonl [ARG...]

Calls the function of CODE.py (named as the trace's root call) with ARGs
(Python literals; default: the trace's recorded arguments, from the root
call's line of TRACE.jsonl, which irt-export --jsonl wrote), takes the
function's variables when it returns (n7 holds node 7's value) and compares
each with the value TRACE.jsonl records for that node, bit for bit: floats
by their bit patterns (a NaN by being NaN), Float32 as Float32, integers
and Bools by type and value. Every node with a value must have its
variable. Prints "N values equal bit for bit" or the first difference
(exit 1). Needs NumPy (Debian's python3-numpy).
"""
import importlib.util
import json
import math
import struct
import sys

import numpy as np


def expected(value, typ):
    if typ in ("Float64", "Float32"):
        if isinstance(value, str):
            x = {"NaN": math.nan, "Inf": math.inf, "-Inf": -math.inf}[value]
        else:
            x = float(value)
        return np.float32(x) if typ == "Float32" else x
    return value


def same(got, value, typ):
    if typ == "Float64":
        if type(got) is not float:
            return False
        want = expected(value, typ)
        if math.isnan(want):
            return math.isnan(got)
        return struct.pack("<d", got) == struct.pack("<d", want)
    if typ == "Float32":
        if type(got) is not np.float32:
            return False
        want = expected(value, typ)
        if math.isnan(want):
            return math.isnan(got)
        return got.tobytes() == want.tobytes()
    if typ == "Int64":
        return type(got) is int and got == value
    if typ == "Bool":
        return type(got) is bool and got == value
    if typ == "Nothing":
        return got is None
    if typ == "String":
        return got == value
    if typ.startswith("typeof("):
        return getattr(got, "name", None) == value["function"]
    if typ.startswith("Tuple"):
        return False  # not written by --python yet
    return False


def main():
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    spec = importlib.util.spec_from_file_location("exported", sys.argv[1])
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    rows = [json.loads(line) for line in open(sys.argv[2])]
    root = rows[0]
    name = root["op"] if root["op"] and root["op"].isidentifier() else "traced"
    fn = getattr(mod, name)
    if len(sys.argv) > 3:
        args = [eval(a, {"f64": mod.f64, "f32": mod.f32}) for a in sys.argv[3:]]
    else:
        args = [expected(a["const"], a["type"]) for a in root["args"]]
    seen = {}

    def profile(frame, event, arg):
        if event == "return" and frame.f_code is fn.__code__:
            seen.update(frame.f_locals)
    sys.setprofile(profile)
    try:
        result = fn(*args)
    finally:
        sys.setprofile(None)
    count = 0
    for row in rows:
        if "value" not in row:
            continue
        var = "n%d" % row["id"]
        if var not in seen:
            print("node %d (%s): no variable %s" % (row["id"], row["path"], var))
            sys.exit(1)
        if not same(seen[var], row["value"], row["type"]):
            print("node %d (%s): %r, but the trace has %s %s" % (
                row["id"], row["path"], seen[var], json.dumps(row["value"]), row["type"]))
            sys.exit(1)
        count += 1
    last = rows[-1]
    if not same(result, last["value"], last["type"]):
        print("result %r, but the trace has %s" % (result, json.dumps(last["value"])))
        sys.exit(1)
    print("%d values equal bit for bit" % count)


if __name__ == "__main__":
    main()
