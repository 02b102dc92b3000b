#!/usr/bin/python3
"""The Python adapter's recording cost, next to PyTorch autograd's.

W1 (powsum, a while loop of x^i) and W3 (recursion, one Python call per
level) written in Python (bench/python/workloads.py) are run, in one
process and one thread, as:

  plain          the function on Python floats, plain CPython
  track          irtrace.track(f, x, n, out=FILE): lowering, recording, the
                 trace file written and opened again
  track_memory   irtrace.track(f, x, n): the trace kept in memory
  torch          the same source on a 0-dim float64 torch tensor with
                 requires_grad (math rebound to torch.sin/cos): the forward
                 pass building autograd's graph, the leaf included

and prints one figure per line, "<workload> <figure> <value> <unit>":
times (best of --runs), the trace's nodes and bytes, autograd's graph
nodes (backward functions, leaves not counted), the cost per recorded node
(or graph node) over plain CPython, and per step (loop iteration or
recursion level), with a last line comparing irtrace and PyTorch per step:

    W1 over-plain/step  irtrace 1234 ns  torch 5678 ns  ratio 0.217

A trace node and a graph node are not the same unit (irtrace records the
integer counter, comparisons, jumps and block arguments; autograd only the
differentiable operations), so the per-step figure is the fair comparison.
The first line is the machine's load (/proc/loadavg) when the run starts.

Before any figure, the results are checked: irtrace's equals plain
CPython's exactly, PyTorch's to 1e-12 relative. --check runs small sizes
once and prints only those checks (a smoke test; no timing).

Usage: /usr/bin/python3 bench/python_record_bench.py [--build build-release]
           [--work DIR] [--runs N] [--only W1,W3] [--n N] [--depth D]
           [--peers torch|none] [--check]
"""
import argparse
import gc
import os
import pathlib
import sys
import time
import types

os.environ.setdefault("OMP_NUM_THREADS", "1")

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
from benchlib import emit  # noqa: E402

WORKLOADS = HERE / "python" / "workloads.py"
# W1: x, default n (bench/ uses 10^6; autograd's graph of that takes GBs);
# W3: x, default depth (bench/ uses 30000).
W1_X, W1_N = 0.999999, 100000
W3_X, W3_D = 0.5, 10000
CHECK_SIZES = {"W1": 1000, "W3": 100}


def load(math_module=None):
    """bench/python/workloads.py as a namespace; with math_module, its
    global `math` rebound (the torch run)."""
    ns = {"__name__": "python_workloads", "__file__": str(WORKLOADS)}
    exec(compile(WORKLOADS.read_text(), str(WORKLOADS), "exec"), ns)
    if math_module is not None:
        ns["math"] = math_module
    return ns


def best(fn, runs):
    """(best seconds of runs calls of fn, fn's last result); the previous
    result is freed and garbage collected before each timed call."""
    result, times = None, []
    for _ in range(runs):
        result = None
        gc.collect()
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return min(times), result


def graph_nodes(y):
    """autograd's backward functions reachable from y (leaves excluded),
    counted without recursion."""
    seen, todo = {}, [y.grad_fn]  # id -> node: a node kept keeps its id unique
    while todo:
        f = todo.pop()
        if f is None or id(f) in seen or type(f).__name__ == "AccumulateGrad":
            continue
        seen[id(f)] = f
        todo.extend(g for g, _ in f.next_functions)
    return len(seen)


def agree(a, b, rtol):
    return abs(a - b) <= rtol * abs(b)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default=str(ROOT / "build-release"),
                    help="the build whose python/ holds the irtrace package")
    ap.add_argument("--work", default=str(ROOT / "build-bench" / "python-record"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--only", default="W1,W3")
    ap.add_argument("--n", type=int, default=W1_N, help="W1's n")
    ap.add_argument("--depth", type=int, default=W3_D, help="W3's depth")
    ap.add_argument("--peers", default="torch", help="torch or none")
    ap.add_argument("--check", action="store_true", help="small sizes, the checks only")
    args = ap.parse_args()

    sys.path.insert(0, str(pathlib.Path(args.build) / "python"))
    import irtrace

    torch = None
    if args.peers == "torch":
        try:
            import torch
        except ImportError:
            print("torch skipped: install python3-torch (Debian's, for /usr/bin/python3)")
        else:
            torch.set_num_threads(1)

    if args.check:
        args.runs, args.n, args.depth = 1, CHECK_SIZES["W1"], CHECK_SIZES["W3"]
    work = pathlib.Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 2 * args.depth + 1000))

    py = load()
    tw = None if torch is None else load(types.SimpleNamespace(sin=torch.sin, cos=torch.cos))
    cases = {"W1": ("powsum", W1_X, args.n), "W3": ("recursion", W3_X, args.depth)}
    if not args.check:
        with open("/proc/loadavg") as f:
            print("load", f.read().split(maxsplit=3)[:3], "cpus", os.cpu_count(), flush=True)
    failed = False
    for w in [w for w in args.only.split(",") if w]:
        name, x, n = cases[w]
        f = py[name]
        path = work / f"{w.lower()}.fb"
        plain_s, y = best(lambda: f(x, n), args.runs)
        track_s, t = best(lambda: irtrace.track(f, x, n, out=path), args.runs)
        nodes, size = t.size, path.stat().st_size
        same = t.result == y
        t = None
        mem_s, tm = best(lambda: irtrace.track(f, x, n), args.runs)
        same = same and tm.result == y and tm.size == nodes
        tm = None
        print(f"{w} check irtrace result {'==' if same else '!='} plain CPython's {y!r}"
              f" ({'agree' if same else 'DISAGREE'})", flush=True)
        failed |= not same
        if torch is not None:
            def torch_run():
                return tw[name](torch.tensor(x, dtype=torch.float64, requires_grad=True), n)
            torch_s, ty = best(torch_run, args.runs)
            ops = graph_nodes(ty)
            ok = agree(ty.item(), y, 1e-12)
            ty = None
            print(f"{w} check torch result within 1e-12 of plain CPython's"
                  f" ({'agree' if ok else 'DISAGREE'})", flush=True)
            failed |= not ok
        if args.check:
            continue
        emit(w, "steps", n, "iterations" if w == "W1" else "levels")
        emit(w, "plain", plain_s * 1e3, "ms")
        emit(w, "track", track_s * 1e3, "ms")
        emit(w, "track_memory", mem_s * 1e3, "ms")
        emit(w, "nodes", nodes, "trace nodes")
        emit(w, "bytes", size, "B")
        emit(w, "ns/node", (track_s - plain_s) / nodes * 1e9, "ns (track over plain)")
        emit(w, "ns/node_memory", (mem_s - plain_s) / nodes * 1e9, "ns (track_memory over plain)")
        irt_step = (track_s - plain_s) / n * 1e9
        emit(w, "ns/step", irt_step, f"ns (track over plain, {nodes / n:.3g} nodes per step)")
        if torch is not None:
            emit(w, "torch", torch_s * 1e3, "ms")
            emit(w, "torch_ops", ops, "graph nodes")
            emit(w, "torch_ns/op", (torch_s - plain_s) / ops * 1e9, "ns (torch over plain)")
            torch_step = (torch_s - plain_s) / n * 1e9
            emit(w, "torch_ns/step", torch_step, f"ns (torch over plain, {ops / n:.3g} ops per step)")
            print(f"{w} over-plain/node  irtrace {(track_s - plain_s) / nodes * 1e9:.0f} ns  torch"
                  f" {(torch_s - plain_s) / ops * 1e9:.0f} ns (per op)  ratio"
                  f" {(track_s - plain_s) / nodes / ((torch_s - plain_s) / ops):.3g}")
            print(f"{w} over-plain/step  irtrace {irt_step:.0f} ns  torch {torch_step:.0f} ns  ratio"
                  f" {irt_step / torch_step:.3g}", flush=True)
    if failed:
        sys.exit("python_record_bench: results disagree")


if __name__ == "__main__":
    main()
