#!/usr/bin/env python3
"""irt-replay on 10^7-node traces: nodes re-evaluated and time, against a
fresh irt-trace of the same program at the new values.

Workloads (bench/ir/replay_tail.ir and testdata/ir/loop.ir):

  tail-1%     tail(x, n): x enters only the last 1% of the nodes; --set @2
              (x) re-evaluates that 1%; compared with irt-trace at the new x
  inner-1%    loop.ir: one x^i value 99% of the way through the loop is set;
              its forward slice is the rest of the loop's accumulator
  all         loop.ir: x itself is set; every iteration depends on it (the
              worst case: the whole trace is evaluated again)
  tensor      W2 (bench/ir/w2_rosenbrock.ir, N = 625,000: 10^7 nodes): the
              vector x is set from a .npy file with one element changed;
              every getindex reads the new x (decoded once, not once per
              element), and the sum after the element changes

Every replayed trace whose program can be traced at the new values is
checked against that fresh trace with irt-diff (--ignore-meta args: the
adapter's note of its command line). Figures, one per line:

    <workload> <figure> <value> <unit>

Times are whole processes (wall time, start to reap), the median of --runs
runs after one warm-up. Memory: the peak resident set, and the peak of its
anonymous part (heap; the rest is the input file mapped by the reader and
the page cache), sampled from /proc every 2 ms.

Usage: bench/replay_bench.py [--bin build/bin] [--work DIR] [--runs N] [--only W,...]
"""
import argparse
import os
import pathlib
import re
import statistics
import subprocess
import sys
import time

from benchlib import write_npy_f64

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent


def run(cmd, stdout=subprocess.DEVNULL):
    """Runs cmd; returns (seconds, peak RSS MiB, peak anonymous RSS MiB, stderr text)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=stdout, stderr=subprocess.PIPE)
    anon = 0
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
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode not in (0, 1):
        sys.exit(f"bench: {' '.join(map(str, cmd))} failed ({p.returncode}): {err.strip()}")
    return dt, usage.ru_maxrss / 1024.0, anon / 1024.0, err


def median_run(cmd, runs):
    run(cmd)  # warm-up
    results = [run(cmd) for _ in range(runs)]
    times = [r[0] for r in results]
    i = times.index(statistics.median(times)) if runs % 2 == 1 else 0
    return results[i], statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=str(ROOT / "build" / "bin"))
    ap.add_argument("--work", default=str(ROOT / "build-bench" / "replay"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--only", default="")
    args = ap.parse_args()
    bin_ = pathlib.Path(args.bin)
    work = pathlib.Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    only = set(args.only.split(",")) if args.only else None
    tool = lambda name: str(bin_ / name)

    n2 = 625000
    x = [0.5 + 0.001 * (k % 100) for k in range(n2)]
    write_npy_f64(work / "w2_x.npy", x)
    x[n2 // 2] += 0.25
    write_npy_f64(work / "w2_x2.npy", x)
    workloads = [
        # name, module, function, args, --set, fresh args (None: no fresh equivalent)
        ("tail-1%", HERE / "ir" / "replay_tail.ir", "tail", ["0.5", "1237500"], "@2=0.25",
         ["0.25", "1237500"]),
        ("inner-1%", ROOT / "testdata" / "ir" / "loop.ir", "loop", ["0.999999"],
         "@3/@9900010=0.5", None),
        ("all", ROOT / "testdata" / "ir" / "loop.ir", "loop", ["0.999999"], "@2=0.9999",
         ["0.9999"]),
        ("tensor", HERE / "ir" / "w2_rosenbrock.ir", "rosen", [f"@{work / 'w2_x.npy'}", str(n2)],
         f"@2=@{work / 'w2_x2.npy'}", [f"@{work / 'w2_x2.npy'}", str(n2)]),
    ]
    failed = 0
    for name, module, fn, targs, change, fresh_args in workloads:
        if only and name not in only:
            continue
        src = work / f"{name}.fb"
        out = work / f"{name}-replayed.fb"
        fresh = work / f"{name}-fresh.fb"
        subprocess.run([tool("irt-trace"), "-o", str(src), str(module), fn] + targs, check=True)
        (r, t) = median_run([tool("irt-replay"), "-v", "--set", change, "-o", str(out), str(src)],
                            args.runs)
        m = re.search(r"re-evaluated (\d+) nodes, visited (\d+) of (\d+); (\d+) changed; "
                      r"rebuilt (\d+) of (\d+) chunks", r[3])
        if not m:
            sys.exit(f"replay_bench: {name}: no summary in: {r[3]}")
        evaluated, visited, nodes, changed, rebuilt, chunks = map(int, m.groups())
        print(f"{name} nodes {nodes} nodes")
        print(f"{name} re-evaluated {evaluated} nodes")
        print(f"{name} re-evaluated-share {100.0 * evaluated / nodes:.2f} %")
        print(f"{name} visited {visited} nodes")
        print(f"{name} changed {changed} nodes")
        print(f"{name} chunks-rebuilt {rebuilt}/{chunks} chunks")
        print(f"{name} replay-time {t:.3f} s")
        print(f"{name} replay-peak-rss {r[1]:.0f} MiB")
        print(f"{name} replay-peak-anon {r[2]:.0f} MiB")
        if fresh_args is not None:
            (f, tf) = median_run([tool("irt-trace"), "-o", str(fresh), str(module), fn] + fresh_args,
                                 args.runs)
            print(f"{name} fresh-trace-time {tf:.3f} s")
            print(f"{name} replay/fresh {t / tf:.2f} x")
            d = subprocess.run([tool("irt-diff"), "--stat", "--ignore-meta", "args", str(out),
                                str(fresh)], capture_output=True, text=True)
            same = d.returncode == 0
            print(f"{name} equals-fresh-trace {'yes' if same else 'NO'} -")
            failed += 0 if same else 1
        sys.stdout.flush()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
