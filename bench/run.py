#!/usr/bin/env python3
"""irtrace benchmarks: the workloads of perf-baselines.md traced by our IR adapter.

Prints one figure per line, in a stable form meant for diffing and grepping:

    <workload> <figure> <value> <unit>

Every time is a whole process (wall time from start to reap, os.wait4), the
median of --runs runs after one warm-up; peak memory is the child's maximum
resident set (from /usr/bin/time). Each workload is also traced to a
zstd-compressed file (`*_zst` figures: -o FILE.zst). Traces go to a scratch
directory (--work, default build-bench/work) and are left there for other
tools' benchmarks. With --quick the sizes are small and the ADOL-C ratios
(`*_vs_adolc`, against the full-size runs) mean nothing.

Usage: bench/run.py [--bin build-release/bin] [--quick] [--only W1,W2,...]
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import time

from benchlib import emit, run, write_npy_f64

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent

# ADOL-C tape-plus-values bytes for the same workloads (perf-baselines.md:
# tape bytes/op + Taylor bytes/op, times ADOL-C's op count).
ADOLC_BYTES = {
    "W1": (13.0 + 8.0) * 2_000_023,
    "W2": (11.8 + 8.8) * 10_000_083,
    "W3": (13.0 + 15.2) * 180_010,
}


def timed(cmd, runs, stdout=subprocess.DEVNULL):
    run(cmd, stdout)  # warm-up
    results = [run(cmd, stdout) for _ in range(runs)]
    return statistics.median(r[0] for r in results), max(r[1] for r in results)


def workload_trace(name, bin_dir, work, ir, fn, args, runs, expect=None):
    out = work / f"{name.lower()}.fb"
    trace = [str(bin_dir / "irt-trace"), str(ir), fn, *args, "-o", str(out)]
    t, rss = timed(trace, runs)
    check = json.loads(subprocess.run([str(bin_dir / "irt-check"), "--json", str(out)],
                                      check=True, capture_output=True).stdout)
    nodes = check["nodes"]
    size = out.stat().st_size
    emit(name, "nodes", nodes, "nodes")
    emit(name, "trace_time", t * 1e3, "ms")
    emit(name, "trace_ns_per_node", t * 1e9 / nodes, "ns")
    emit(name, "trace_peak", rss, "MiB")
    emit(name, "bytes", size, "B")
    emit(name, "bytes_per_node", size / nodes, "B")
    if name in ADOLC_BYTES:
        emit(name, "adolc_tape_plus_values", ADOLC_BYTES[name], "B")
        emit(name, "bytes_vs_adolc", size / ADOLC_BYTES[name], "x")
    # The same trace zstd-compressed (irt-trace -o FILE.zst).
    zst = work / f"{name.lower()}.fb.zst"
    t, rss = timed(trace[:-1] + [str(zst)], runs)
    zsize = zst.stat().st_size
    emit(name, "trace_zst_time", t * 1e3, "ms")
    emit(name, "trace_zst_peak", rss, "MiB")
    emit(name, "bytes_zst", zsize, "B")
    if name in ADOLC_BYTES:
        emit(name, "bytes_zst_vs_adolc", zsize / ADOLC_BYTES[name], "x")
    t, rss = timed([str(bin_dir / "irt-check"), str(zst)], runs)
    emit(name, "check_zst_time", t * 1e3, "ms")
    t, rss = timed([str(bin_dir / "irt-check"), str(out)], runs)
    emit(name, "check_time", t * 1e3, "ms")
    emit(name, "check_ns_per_node", t * 1e9 / nodes, "ns")
    emit(name, "check_peak", rss, "MiB")
    t, rss = timed([str(bin_dir / "irt-print"), "--levels", "2", str(out)], runs)
    emit(name, "print_levels2_time", t * 1e3, "ms")
    emit(name, "print_levels2_peak", rss, "MiB")
    if expect is not None:
        p = subprocess.run([str(bin_dir / "irt-print"), "--levels", "1", "--json", str(out)],
                           check=True, capture_output=True)
        value = json.loads(p.stdout)["root"]["value"]
        emit(name, "value_rel_error", abs(value - expect) / abs(expect), "1")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=str(ROOT / "build-release" / "bin"))
    ap.add_argument("--work", default=str(ROOT / "build-bench" / "work"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="small sizes, one run")
    ap.add_argument("--only", default="W1,W2,W3,BIG")
    args = ap.parse_args()
    bin_dir = pathlib.Path(args.bin)
    work = pathlib.Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    only = set(args.only.split(","))
    runs = 1 if args.quick else args.runs
    scale = 100 if args.quick else 1

    if "W1" in only:
        n = 1_000_000 // scale
        workload_trace("W1", bin_dir, work, HERE / "ir/w1_powsum.ir", "h", ["0.999999", str(n)],
                       runs, None if args.quick else 632120.74276078737)
    if "W2" in only:
        n = 1_000_000 // scale
        x = work / f"w2_x_{n}.npy"
        write_npy_f64(x, [0.5 + 0.001 * (i % 100) for i in range(n)])
        workload_trace("W2", bin_dir, work, HERE / "ir/w2_rosenbrock.ir", "rosen",
                       [f"@{x}", str(n)], runs, None if args.quick else 6302760.1788175106)
    if "W3" in only:
        d = 30_000 // scale
        workload_trace("W3", bin_dir, work, HERE / "ir/w3_recursion.ir", "g", ["0.5", str(d)],
                       runs, None if args.quick else 47131.932052345037)
    if "BIG" in only:
        k = 1 if args.quick else 14
        out = work / "big.fb"
        t, rss = timed([str(bin_dir / "irt-trace"), str(HERE / "ir/bigtop.ir"), "main", str(k),
                        "1000000", "-o", str(out)], 1 if args.quick else 1)
        nodes = int(json.loads(subprocess.run([str(bin_dir / "irt-check"), "--json", str(out)],
                                              check=True, capture_output=True).stdout)["nodes"])
        emit("BIG", "nodes", nodes, "nodes")
        emit("BIG", "trace_time", t * 1e3, "ms")
        emit("BIG", "trace_ns_per_node", t * 1e9 / nodes, "ns")
        emit("BIG", "trace_peak", rss, "MiB")
        emit("BIG", "bytes", out.stat().st_size, "B")
        emit("BIG", "bytes_per_node", out.stat().st_size / nodes, "B")
        t, rss = timed([str(bin_dir / "irt-print"), "--levels", "2", str(out)], runs)
        emit("BIG", "print_levels2_time", t * 1e3, "ms")
        emit("BIG", "print_levels2_peak", rss, "MiB")
        t, rss = timed([str(bin_dir / "irt-check"), str(out)], 1)
        emit("BIG", "check_time", t * 1e3, "ms")
        emit("BIG", "check_ns_per_node", t * 1e9 / nodes, "ns")
        emit("BIG", "check_peak", rss, "MiB")


if __name__ == "__main__":
    main()
