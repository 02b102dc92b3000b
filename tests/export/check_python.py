#!/usr/bin/env python3
"""Runs the code irt-export --python wrote and compares it with a trace.

  check_python.py [--tolerance R] CODE.py TRACE.jsonl [ARG...]

Calls the function of CODE.py (named after the trace's root call) with ARGs
(Python literals; default: the trace's recorded arguments, from the root
call's line of TRACE.jsonl, which irt-export --jsonl wrote), takes the
function's variables when it returns (n7 holds node 7's value) and compares
each with the value TRACE.jsonl records for that node, bit for bit: floats
by their bit patterns (a NaN by being NaN), Float32 as Float32, integers
and Bools by type and value. Every node with a value must have its
variable. Tensors must be NumPy arrays of the recorded element type and
shape whose elements are equal bit for bit, tuples tuples of such items.
Prints "N values equal bit for bit" or the first difference (exit 1).
With --tolerance R, a float (or a tensor's float element) that differs
passes when |got - want| <= R * eps * max(1, |want|), eps the machine
epsilon of its type (2^-52 for Float64, 2^-23 for Float32), and the values
that needed it are counted apart ("N values equal bit for bit, M within R
eps"): for matrix
products whose order of additions libtrace's kernel picks at run time (see
irt-export(1)). Needs NumPy (Debian's python3-numpy).
"""
import importlib.util
import json
import math
import re
import struct
import sys

import numpy as np


DTYPES = {"Float64": np.float64, "Float32": np.float32, "Int64": np.int64, "Int32": np.int32,
          "Bool": np.bool_}


def number(value, typ):
    if isinstance(value, str):
        x = {"NaN": math.nan, "Inf": math.inf, "-Inf": -math.inf}[value]
    else:
        x = float(value)
    return np.float32(x) if typ == "Float32" else x


def tuple_types(typ):
    """The item types of "Tuple{A, B{C, D}}"."""
    inner, items, depth, start = typ[len("Tuple{"):-1], [], 0, 0
    for i, ch in enumerate(inner):
        depth += ch == "{"
        depth -= ch == "}"
        if ch == "," and depth == 0:
            items.append(inner[start:i].strip())
            start = i + 1
    if inner.strip():
        items.append(inner[start:].strip())
    return items


def expected(value, typ):
    """The recorded value as the generated code holds it."""
    if isinstance(value, dict) and "dtype" in value:
        dt = DTYPES[value["dtype"]]
        data = [number(v, "Float64") for v in value["data"]] if dt in (np.float64, np.float32) \
            else value["data"]
        return np.array(data, dtype=np.float64 if dt == np.float32 else dt).astype(dt).reshape(
            value["shape"])
    if isinstance(value, dict) and "tuple" in value:
        return tuple(expected(v, t) for v, t in zip(value["tuple"], tuple_types(typ)))
    if typ in ("Float64", "Float32"):
        return number(value, typ)
    return value


TOLERANCE = None
NEAR = [False]  # whether the value compared last needed the tolerance


def same_float(got, want):
    if math.isnan(want):
        return math.isnan(got)
    if np.array(got).tobytes() == np.array(want).tobytes():
        return True
    if TOLERANCE is not None and math.isfinite(got) and math.isfinite(want) and \
            abs(float(got) - float(want)) <= TOLERANCE * float(np.finfo(np.array(want).dtype).eps) * \
            max(1.0, abs(float(want))):
        NEAR[0] = True
        return True
    return False


def same(got, value, typ):
    if isinstance(value, dict) and "dtype" in value:
        want = expected(value, typ)
        if not isinstance(got, np.ndarray) or got.dtype != want.dtype or got.shape != want.shape:
            return False
        if want.dtype.kind != "f":
            return bool(np.array_equal(got, want))
        return all(same_float(g, w) for g, w in zip(got.ravel(), want.ravel()))
    if isinstance(value, dict) and "tuple" in value:
        types = tuple_types(typ)
        return type(got) is tuple and len(got) == len(value["tuple"]) and all(
            same(g, v, t) for g, v, t in zip(got, value["tuple"], types))
    if typ == "Float64":
        return type(got) is float and same_float(got, number(value, typ))
    if typ == "Float32":
        return type(got) is np.float32 and same_float(got, number(value, typ))
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
    return False


def main():
    global TOLERANCE
    if len(sys.argv) > 2 and sys.argv[1] == "--tolerance":
        TOLERANCE = float(sys.argv[2])
        del sys.argv[1:3]
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    spec = importlib.util.spec_from_file_location("exported", sys.argv[1])
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    rows = [json.loads(line) for line in open(sys.argv[2])]
    root = rows[0]
    # The function the file's footer calls: the root call's name, or that
    # name with "_" appended when the prelude's namespace has it.
    name = re.search(r'^    print\((\w+)\(', open(sys.argv[1]).read(), re.M).group(1)
    want = root["op"] if root["op"] and root["op"].isidentifier() else "traced"
    if not name.startswith(want) or name.strip("_") != want.strip("_"):
        print("the function is %s, not named after %s" % (name, want))
        sys.exit(1)
    fn = getattr(mod, name)
    if len(sys.argv) > 3:
        args = [eval(a, {"f64": mod.f64, "f32": mod.f32, "tensor": mod.tensor})
                for a in sys.argv[3:]]
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
    count = near = 0
    for row in rows:
        if "value" not in row:
            continue
        var = "n%d" % row["id"]
        if var not in seen:
            print("node %d (%s): no variable %s" % (row["id"], row["path"], var))
            sys.exit(1)
        NEAR[0] = False
        if not same(seen[var], row["value"], row["type"]):
            print("node %d (%s): %.300r, but the trace has %.300s %s" % (
                row["id"], row["path"], seen[var], json.dumps(row["value"]), row["type"]))
            sys.exit(1)
        near += NEAR[0]
        count += not NEAR[0]
    last = rows[-1]
    if not same(result, last["value"], last["type"]):
        print("result %r, but the trace has %s" % (result, json.dumps(last["value"])))
        sys.exit(1)
    if TOLERANCE is None:
        print("%d values equal bit for bit" % count)
    else:
        print("%d values equal bit for bit, %d within %g eps" % (count, near, TOLERANCE))


if __name__ == "__main__":
    main()
