#!/usr/bin/env python3
"""What the progress line costs: the long-running tools with it and without.

Traces W1 (powsum, 8x10^6 nodes; bench/ir/w1_powsum.ir) and times whole
processes, each the best of --runs rounds after a warm-up round (a round
runs every variant of a tool once, so that load from elsewhere falls on all
of them alike):

  off   stderr a pipe: no progress line (what scripts and the other
        benchmarks see; the library's counting is a null pointer test)
  on    stderr a pseudo-terminal and IRT_PROGRESS_DELAY_MS=0: the line is
        drawn from the first chunk on, redrawn up to ten times a second
  base  (with --base-bin) the same commands with the tools of another build,
        say one from before the progress line, stderr a pipe

for irt-trace, irt-check, irt-slice -b @ -t, irt-diff, irt-grad and
irt-export --speedscope. Prints one figure per line, "<tool> <figure>
<value> <unit>", with the ratio on/off (and off/base).

Usage: bench/progress_bench.py [--bin build-release/bin] [--base-bin DIR] [--runs 5] [--quick]
                               [--only irt-slice,irt-diff]
"""
import argparse
import os
import pathlib
import pty
import subprocess
import threading
import time

from benchlib import emit

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent


def run_once(cmd, tty):
    """Wall time of one run of cmd; stderr on a pseudo-terminal when tty."""
    env = dict(os.environ, IRT_PROGRESS_DELAY_MS="0")
    env.pop("NO_COLOR", None)
    if not tty:
        t0 = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
                       check=True)
        return time.perf_counter() - t0
    master, slave = pty.openpty()
    drawn = []

    def drain():
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:
                break
            if not data:
                break
            drawn.append(len(data))

    reader = threading.Thread(target=drain)
    reader.start()
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=slave, env=env)
    os.close(slave)
    code = p.wait()
    dt = time.perf_counter() - t0
    reader.join()
    os.close(master)
    if code != 0:
        raise SystemExit(f"progress_bench: {' '.join(cmd)} failed ({code})")
    if not drawn:
        raise SystemExit(f"progress_bench: {' '.join(cmd)} drew no progress line")
    return dt


def best(variants, runs):
    """The best time of each (cmd, tty) over `runs` rounds, after one warm-up
    round; a round runs every variant once, so that load from elsewhere on
    the machine falls on all of them alike."""
    times = [[] for _ in variants]
    for r in range(runs + 1):
        for i, (cmd, tty) in enumerate(variants):
            t = run_once(cmd, tty)
            if r > 0:
                times[i].append(t)
    return [min(t) for t in times]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=str(ROOT / "build-release" / "bin"))
    ap.add_argument("--base-bin", default="")
    ap.add_argument("--work", default=str(ROOT / "build-bench" / "progress"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="a 100 times smaller W1, one run")
    ap.add_argument("--only", default="", help="tools to time, e.g. irt-slice,irt-diff")
    args = ap.parse_args()
    work = pathlib.Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    runs = 1 if args.quick else args.runs
    n = str(1_000_000 // (100 if args.quick else 1))
    w1 = work / "w1.fb"
    ir = str(HERE / "ir" / "w1_powsum.ir")
    subprocess.run([str(pathlib.Path(args.bin) / "irt-trace"), "-o", str(w1), ir, "h",
                    "0.999999", n], check=True)
    cases = [
        ("irt-trace", ["-o", str(work / "out.fb"), ir, "h", "0.999999", n]),
        ("irt-check", [str(w1)]),
        ("irt-slice", ["-b", "@", "-t", "-o", str(work / "slice.fb"), str(w1)]),
        ("irt-diff", ["--stat", str(w1), str(w1)]),
        ("irt-grad", [str(w1)]),
        ("irt-export", ["--speedscope", "-o", str(work / "profile.json"), str(w1)]),
    ]
    for tool, tool_args in cases:
        if args.only and tool not in args.only.split(","):
            continue
        cmd = [str(pathlib.Path(args.bin) / tool)] + tool_args
        variants = [(cmd, False), (cmd, True)]
        if args.base_bin:
            variants.append(([str(pathlib.Path(args.base_bin) / tool)] + tool_args, False))
        off, on, *base = best(variants, runs)
        emit(tool, "off_time", off * 1e3, "ms")
        emit(tool, "on_time", on * 1e3, "ms")
        emit(tool, "on_over_off", on / off, "ratio")
        if base:
            emit(tool, "base_time", base[0] * 1e3, "ms")
            emit(tool, "off_over_base", off / base[0], "ratio")


if __name__ == "__main__":
    main()
