#!/usr/bin/env python3
"""Slice, stats and dot benchmarks on the W1-W3 traces and a 10^8-node trace.

Traces the workloads of perf-baselines.md with irt-trace (bench/ir/*.ir),
plus bigtop.ir's main(20, 1000000) (about 10^8 nodes, generated here and
left in --work, never committed), then times whole processes:

  stats              irt-stats TRACE
  slice_back         irt-slice -b @ (the root's result, within the root call)
  slice_back_t       irt-slice -b @ --through-calls
  slice_back_tc      irt-slice -b @ --through-calls --control
  slice_fwd_t        irt-slice -F @2 --through-calls (forward from the first argument)
  dot_levels2        irt-dot --levels 2 (BIG only: must not read the whole trace)

Slices are written as traces to a pipe to /dev/null. Prints one figure per
line, "<workload> <figure> <value> <unit>": the median wall time of --runs
runs after one warm-up, nodes per second (trace nodes / time), peak resident
memory from /usr/bin/time (which includes the clean file pages of the mapped
trace the process touched: opening a 2.9 GB trace maps about 0.9 GB of them).

Usage: bench/slice_bench.py [--bin build-release/bin] [--work DIR] [--quick] [--only W1,BIG]
"""
import argparse
import pathlib
import statistics
import subprocess
import time

from benchlib import emit, run, write_npy_f64

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent


def timed(cmd, runs):
    run(cmd, who="slice_bench")  # warm-up (and page cache)
    results = [run(cmd, who="slice_bench") for _ in range(runs)]
    return statistics.median(r[0] for r in results), max(r[1] for r in results), results[-1][2]


def nodes_of(bin_dir, trace):
    out = subprocess.run([str(bin_dir / "irt-stats"), "--json", "--top", "0", str(trace)],
                         check=True, capture_output=True).stdout.decode()
    import json
    return json.loads(out)["nodes"]


def bench(name, bin_dir, trace, runs, dot=False):
    nodes = nodes_of(bin_dir, trace)
    emit(name, "nodes", nodes, "nodes")
    cases = [
        ("stats", [bin_dir / "irt-stats", trace]),
        ("slice_back", [bin_dir / "irt-slice", "-v", "-b", "@", trace]),
        ("slice_back_t", [bin_dir / "irt-slice", "-v", "-b", "@", "-t", trace]),
        ("slice_back_tc", [bin_dir / "irt-slice", "-v", "-b", "@", "-t", "-c", trace]),
        ("slice_fwd_t", [bin_dir / "irt-slice", "-v", "-F", "@2", "-t", trace]),
    ]
    for figure, cmd in cases:
        t, rss, err = timed([str(c) for c in cmd], runs)
        emit(name, figure + "_time", t * 1e3, "ms")
        emit(name, figure + "_nodes_per_s", nodes / t, "nodes/s")
        emit(name, figure + "_peak", rss, "MiB")
        if "nodes selected" in err:
            selected = int(err.split(": ")[-1].split(" nodes selected")[0])
            emit(name, figure + "_selected", selected, "nodes")
    if dot:
        t, rss, _ = timed([str(bin_dir / "irt-dot"), "--levels", "2", str(trace)], runs)
        emit(name, "dot_levels2_time", t * 1e3, "ms")
        emit(name, "dot_levels2_peak", rss, "MiB")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=str(ROOT / "build-release" / "bin"))
    ap.add_argument("--work", default=str(ROOT / "build-bench" / "slice"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="small sizes, one run")
    ap.add_argument("--only", default="W1,W2,W3,BIG")
    args = ap.parse_args()
    bin_dir = pathlib.Path(args.bin).resolve()
    work = pathlib.Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    only = set(args.only.split(","))
    runs = 1 if args.quick else args.runs
    scale = 100 if args.quick else 1

    def trace(out, ir, fn, fargs):
        t0 = time.perf_counter()
        subprocess.run([str(bin_dir / "irt-trace"), str(HERE / "ir" / ir), fn, *fargs,
                        "-o", str(out)], check=True)
        return time.perf_counter() - t0

    if "W1" in only:
        out = work / "w1.fb"
        trace(out, "w1_powsum.ir", "h", ["0.999999", str(1_000_000 // scale)])
        bench("W1", bin_dir, out, runs)
    if "W2" in only:
        n = 1_000_000 // scale
        x = work / f"w2_x_{n}.npy"
        write_npy_f64(x, [0.5 + 0.001 * (i % 100) for i in range(n)])
        out = work / "w2.fb"
        trace(out, "w2_rosenbrock.ir", "rosen", [f"@{x}", str(n)])
        bench("W2", bin_dir, out, runs)
    if "W3" in only:
        out = work / "w3.fb"
        trace(out, "w3_recursion.ir", "g", ["0.5", str(30_000 // scale)])
        bench("W3", bin_dir, out, runs)
    if "BIG" in only:
        out = work / "big.fb"
        t = trace(out, "bigtop.ir", "main", ["1" if args.quick else "20", "1000000"])
        emit("BIG", "trace_time", t * 1e3, "ms")
        emit("BIG", "bytes", out.stat().st_size, "B")
        bench("BIG", bin_dir, out, 1 if not args.quick else runs, dot=True)


if __name__ == "__main__":
    main()
