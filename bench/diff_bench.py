#!/usr/bin/env python3
"""irt-diff on large traces: time and memory of the streaming comparison.

Workloads (testdata/ir/loop.ir, powsum(x, n) recorded with 8 nodes per
iteration, inside one call):

  same-N       a trace of N nodes against a copy that differs in a handful of
               values near the end (one x^i replaced with irt-replay, and the
               accumulator values after it)
  iteration-N  powsum(x, n) against powsum(x, n + 1): one more iteration at
               the end (8 inserted nodes, found by the aligner)
  self-N       a trace against itself
  text-N       the text report (not --stat) of a trace against a copy whose
               input x is replayed at another value: every iteration's x^i
               and sum differ, so the report names about N/4 nodes and
               their operands' positions (N = 10^6 only)

for N = 10^6 and 10^7. Memory: the peak resident set, and the peak of its
anonymous part (heap), sampled from /proc every 2 ms; the rest of the
resident set is the two input files, mapped by the reader. Figures, one per
line:

    <workload> <figure> <value> <unit>

Usage: bench/diff_bench.py [--bin build/bin] [--work DIR] [--runs N] [--only W,...]
"""
import argparse
import os
import pathlib
import re
import statistics
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent


def run(cmd):
    """Runs cmd; returns (seconds, peak RSS MiB, peak anonymous RSS MiB, stdout, status)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    anon = 0
    out = b""
    while True:
        pid, status, usage = os.wait4(p.pid, os.WNOHANG)
        if pid != 0:
            break
        try:
            with open(f"/proc/{p.pid}/status") as f:
                m = re.search(r"RssAnon:\s+(\d+) kB", f.read())
            if m:
                anon = max(anon, int(m.group(1)))
        except OSError:
            pass
        time.sleep(0.002)
    dt = time.perf_counter() - t0
    out = p.stdout.read().decode(errors="replace")
    err = p.stderr.read().decode(errors="replace")
    p.stdout.close()
    p.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        sys.exit(f"bench: {' '.join(map(str, cmd))} failed ({code}): {err.strip()}")
    return dt, usage.ru_maxrss / 1024.0, anon / 1024.0, out, code


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=str(ROOT / "build" / "bin"))
    ap.add_argument("--work", default=str(ROOT / "build-bench" / "diff"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    bin_ = pathlib.Path(args.bin)
    work = pathlib.Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    only = set(args.only.split(",")) if args.only else None
    tool = lambda name: str(bin_ / name)
    loop = ROOT / "testdata" / "ir" / "loop.ir"
    for label, iterations in (("1e6", 125000), ("1e7", 1250000)):
        a = work / f"a-{label}.fb"
        b = work / f"b-{label}.fb"
        c = work / f"c-{label}.fb"
        subprocess.run([tool("irt-trace"), "-o", str(a), str(loop), "powsum", "0.999999",
                        str(iterations)], check=True)
        subprocess.run([tool("irt-trace"), "-o", str(c), str(loop), "powsum", "0.999999",
                        str(iterations + 1)], check=True)
        # x^i of the iteration 99% of the way through: position 10 + 8i.
        pos = 10 + 8 * (iterations * 99 // 100)
        subprocess.run([tool("irt-replay"), "--set", f"@{pos}=0.5", "-o", str(b), str(a)],
                       check=True)
        cases = [
            (f"same-{label}", [str(a), str(b)]),
            (f"iteration-{label}", ["--ignore-meta", "args", str(a), str(c)]),
            (f"self-{label}", [str(a), str(a)]),
        ]
        if label == "1e6":
            d = work / f"d-{label}.fb"
            subprocess.run([tool("irt-replay"), "--set", "@2=0.5", "-o", str(d), str(a)],
                           check=True)
            cases.append((f"text-{label}", [str(a), str(d)]))
        for name, argv in cases:
            if only and name not in only:
                continue
            report = work / "report.txt"
            text = name.startswith("text-")
            cmd = [tool("irt-diff")] + (["-o", str(report)] if text else ["--stat"]) + argv
            run(cmd)
            results = [run(cmd) for _ in range(args.runs)]
            times = [r[0] for r in results]
            r = results[times.index(sorted(times)[len(times) // 2])]
            if text:
                print(f"{name} report-bytes {report.stat().st_size} B")
                print(f"{name} exit-status {r[4]} -")
                print(f"{name} time {statistics.median(times):.3f} s")
                print(f"{name} peak-rss {r[1]:.0f} MiB")
                report.unlink()
                sys.stdout.flush()
                continue
            nodes = re.search(r"a: .*, (\d+) nodes", r[3]).group(1)
            changed = re.search(r"changed values:\s+(\d+)", r[3]).group(1)
            only_b = re.search(r"only in b:\s+(\d+) children", r[3]).group(1)
            print(f"{name} nodes {nodes} nodes")
            print(f"{name} changed-values {changed} nodes")
            print(f"{name} only-in-b {only_b} children")
            print(f"{name} exit-status {r[4]} -")
            print(f"{name} time {statistics.median(times):.3f} s")
            print(f"{name} ns-per-node {1e9 * statistics.median(times) / int(nodes):.0f} ns")
            print(f"{name} peak-rss {r[1]:.0f} MiB")
            print(f"{name} peak-anon {r[2]:.1f} MiB")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
