#!/usr/bin/env python3
"""irt-dot on a recursion 10^6 calls deep (testdata/ir/deep.ir): time and
peak memory per depth drawn.

`irt-dot --max-nodes 0 --levels N` draws the top N levels of the recursion
as N - 1 nested clusters of 8 nodes each. Time and memory should grow
linearly with N; the output does not quite (each line is indented to its
cluster's depth, so its bytes grow as N^2), and its size is printed too.
Nothing is asserted (the machine is shared). Figures, one per line, as
bench/run.py prints them:

    dot-levels-<N> <figure> <value> <unit>

Times are whole processes (wall time, start to reap), the median of --runs
runs; the peak is the child's maximum resident set (from /usr/bin/time),
the largest of the runs. The output goes to a file in --work.

Usage: bench/dot_bench.py [--bin build-release/bin] [--work DIR] [--runs N]
                          [--levels 500,1000,2000,5000]
"""
import argparse
import os
import pathlib
import statistics
import time

from benchlib import emit, run

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=str(ROOT / "build-release" / "bin"))
    ap.add_argument("--work", default=str(ROOT / "build-bench" / "dot"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--levels", default="500,1000,2000,5000")
    args = ap.parse_args()
    bin_dir = pathlib.Path(args.bin)
    work = pathlib.Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    trace = work / "deep.fb"
    if not trace.exists():
        with open(os.devnull, "wb") as null:
            run([str(bin_dir / "irt-trace"), str(ROOT / "testdata" / "ir" / "deep.ir"), "deep",
                 "-o", str(trace)], null)
    out = work / "deep.dot"
    for levels in (int(s) for s in args.levels.split(",")):
        name = f"dot-levels-{levels}"
        cmd = [str(bin_dir / "irt-dot"), "--max-nodes", "0", "--levels", str(levels), str(trace)]
        results = []
        for _ in range(args.runs):
            with open(out, "wb") as f:
                results.append(run(cmd, f))
        t = statistics.median(r[0] for r in results)
        emit(name, "time", t * 1e3, "ms")
        emit(name, "time_per_level", t * 1e6 / levels, "us")
        emit(name, "peak", max(r[1] for r in results), "MiB")
        emit(name, "output", out.stat().st_size / 2**20, "MiB")


if __name__ == "__main__":
    main()
