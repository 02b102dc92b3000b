#!/usr/bin/env python3
"""irt-grad on the workloads W1-W4 of perf-baselines.md: correctness and cost.

For each workload it writes the inputs (.npy for W2 and W4), traces the IR
program with irt-trace, differentiates the trace with irt-grad (whole
process: open, check, forward pass, sweep), and checks the value and the
gradient checksums against the reference figures (relative 1e-10 for W1-W3,
1e-9 for W4). Figures are printed one per line, as bench/run.py does:

    <workload> <figure> <value> <unit>

Times are whole processes (wall time from start to reap, os.wait4), the
median of --runs runs after one warm-up; peak memory is the child's maximum
resident set; the in-process phases are irt-grad -v's (from the median run).
With --check only the verification lines are printed, deterministically
(the golden test tests/golden/irt-grad/workloads.cmd runs that).

Usage: bench/grad_bench.py [--bin build-release/bin] [--work DIR] [--runs N]
                           [--only W1,W2,W3,W4] [--check]
"""
import argparse
import json
import math
import os
import pathlib
import re
import shutil
import statistics
import struct
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent

# perf-baselines.md, section 2.
REFERENCE = {
    "W1": {"value": 632120.74276078737, "grad": 264241117652.46646},
    "W2": {"value": 6302760.1788175106, "sum": -5733183.6065172218, "sum_abs": 6006171.265075176,
           "sum_cos": -28.00336589595, "first": -51.2, "last": 48.2792},
    "W3": {"value": 47131.932052345037, "grad": 2.6974280488061728},
    "W4": {"value": -1.2095964529703298, "sum": 640.27328067255667, "sum_abs": 27519.485412043319,
           "sum_cos": 112.36621973544, "g7": 0.0036167685995269622, "b3_9": 64.0},
}
TOLERANCE = {"W1": 1e-10, "W2": 1e-10, "W3": 1e-10, "W4": 1e-9}


def write_npy(path, shape, values):
    header = "{'descr': '<f8', 'fortran_order': False, 'shape': (%s), }" % (
        "".join("%d, " % d for d in shape) if len(shape) != 1 else "%d," % shape[0])
    header = header + " " * (63 - (len(header) + 10) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%dd" % len(values), *values))


def read_npy(path):
    data = pathlib.Path(path).read_bytes()
    assert data[:6] == b"\x93NUMPY", path
    major = data[6]
    if major == 1:
        hlen = struct.unpack("<H", data[8:10])[0]
        start = 10 + hlen
    else:
        hlen = struct.unpack("<I", data[8:12])[0]
        start = 12 + hlen
    header = data[start - hlen:start].decode()
    assert "'<f8'" in header, header
    n = (len(data) - start) // 8
    return list(struct.unpack("<%dd" % n, data[start:start + 8 * n]))


def run(cmd, stdout=subprocess.DEVNULL):
    """Runs cmd: (seconds, peak RSS MiB, stderr)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=stdout, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    dt = time.perf_counter() - t0
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"grad_bench: {' '.join(map(str, cmd))} failed ({code}): {err.strip()}")
    return dt, usage.ru_maxrss / 1024.0, err


def timed(cmd, runs):
    run(cmd)  # warm-up (page cache, first-touch)
    results = sorted((run(cmd) for _ in range(runs)), key=lambda r: r[0])
    mid = results[len(results) // 2]
    return mid[0], max(r[1] for r in results), mid[2]


def cpu_ms(cmd, runs):
    """Median CPU time (user + system, ms) of cmd by perf stat's task-clock, or None.

    On a shared machine CPU time is steadier than wall time."""
    if not shutil.which("perf"):
        return None
    values = []
    for _ in range(runs):
        p = subprocess.run(["perf", "stat", "-x,", "-e", "task-clock", *cmd],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        for line in p.stderr.splitlines():
            fields = line.split(",")
            if len(fields) > 2 and fields[2].startswith("task-clock"):
                values.append(float(fields[0]))
    return statistics.median(values) if values else None


def emit(workload, figure, value, unit):
    if isinstance(value, float):
        value = f"{value:.6g}" if abs(value) < 1e6 else f"{value:.0f}"
    print(f"{workload} {figure} {value} {unit}", flush=True)


def prepare(name, work, quick):
    """The IR program, function, arguments and --wrt for a workload."""
    if name == "W1":
        return HERE / "ir/w1_powsum.ir", "h", ["0.999999", "10000" if quick else "1000000"], None
    if name == "W2":
        n = 10000 if quick else 1000000
        x = work / f"w2_x_{n}.npy"
        if not x.exists():
            write_npy(x, [n], [0.5 + 0.001 * (i % 100) for i in range(n)])
        return HERE / "ir/w2_rosenbrock.ir", "rosen", [f"@{x}", str(n)], None
    if name == "W3":
        return HERE / "ir/w3_recursion.ir", "g", ["0.5", "300" if quick else "30000"], None
    if name == "W4":
        names = []
        files = {"X": ([64, 512], [math.sin(0.001 * (b * 512 + k + 1)) for b in range(64) for k in range(512)])}
        dims = [(512, 512), (512, 512), (512, 10)]
        for l, (i, o) in enumerate(dims, start=1):
            files[f"W{l}"] = ([i, o], [0.05 * math.cos(0.37 * m + l) for m in range(i * o)])
            files[f"b{l}"] = ([o], [0.01 * math.sin(j + l) for j in range(o)])
        for key in ["X", "W1", "b1", "W2", "b2", "W3", "b3"]:
            path = work / f"w4_{key}.npy"
            if not path.exists():
                write_npy(path, *files[key])
            names.append(f"@{path}")
        return HERE / "ir/w4_mlp.ir", "mlp", names, "@3,@4,@5,@6,@7,@8"
    raise ValueError(name)


def verify(name, result, grads, quick):
    """(figure, value, expected, relative error) for a workload."""
    out = [("value", result, REFERENCE[name]["value"])]
    if name in ("W1", "W3"):
        out.append(("gradient", grads[0][0], REFERENCE[name]["grad"]))
    else:
        g = [v for grad in grads for v in grad]
        ref = REFERENCE[name]
        out.append(("sum_g", math.fsum(g), ref["sum"]))
        out.append(("sum_abs_g", math.fsum(abs(v) for v in g), ref["sum_abs"]))
        out.append(("sum_g_cos_k", math.fsum(v * math.cos(k) for k, v in enumerate(g)), ref["sum_cos"]))
        if name == "W2":
            out.append(("g_first", g[0], ref["first"]))
            out.append(("g_last", g[-1], ref["last"]))
        else:
            out.append(("g_7", g[7], ref["g7"]))
            out.append(("g_b3_9", grads[-1][9], ref["b3_9"]))
    return [(f, v, e, abs(v - e) / abs(e)) for f, v, e in out]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=str(ROOT / "build-release" / "bin"))
    ap.add_argument("--work", default=str(ROOT / "build-bench" / "grad"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--only", default="W1,W2,W3,W4")
    ap.add_argument("--check", action="store_true", help="verification lines only")
    ap.add_argument("--quick", action="store_true", help="small sizes (no reference figures)")
    ap.add_argument("--inputs-only", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--verify", help=argparse.SUPPRESS)
    ap.add_argument("--value", type=float, help=argparse.SUPPRESS)
    ap.add_argument("--positions", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.verify:
        name = args.verify
        prefix = str(pathlib.Path(args.work) / f"{name.lower()}_grad@")
        grads = [read_npy(f"{prefix}{p}.npy") for p in args.positions.split(",")]
        print(json.dumps(verify(name, args.value, grads, False)))
        return
    bin_dir = pathlib.Path(args.bin)
    work = pathlib.Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    if args.inputs_only:
        for name in args.only.split(","):
            prepare(name, work, args.quick)
        return
    # The inputs are written by a child process, so that this one stays small:
    # a forked child's peak resident set counts the parent's pages until exec.
    subprocess.run([sys.executable, __file__, "--inputs-only", "--work", str(work), "--only",
                    args.only] + (["--quick"] if args.quick else []), check=True)
    failed = 0
    for name in args.only.split(","):
        ir, fn, fargs, wrt = prepare(name, work, args.quick)
        trace = work / f"{name.lower()}.fb"
        trace_cmd = [str(bin_dir / "irt-trace"), str(ir), fn, *fargs, "-o", str(trace)]
        prefix = str(work / f"{name.lower()}_grad@")
        grad_cmd = [str(bin_dir / "irt-grad"), "-v", "--json", "--max-elements", "1",
                    "--npy", prefix, str(trace)]
        if wrt:
            grad_cmd[1:1] = ["--wrt", wrt]
        if args.check:
            run(trace_cmd)
            _, _, err = run(grad_cmd)
        else:
            t, rss, _ = timed(trace_cmd, args.runs)
            nodes = int(re.search(r'"nodes":(\d+)', subprocess.run(
                [str(bin_dir / "irt-check"), "--json", str(trace)], check=True,
                capture_output=True, text=True).stdout).group(1))
            emit(name, "nodes", nodes, "nodes")
            emit(name, "trace_time", t * 1e3, "ms")
            emit(name, "trace_peak", rss, "MiB")
            emit(name, "trace_bytes", trace.stat().st_size, "B")
            emit(name, "trace_bytes_per_node", trace.stat().st_size / nodes, "B")
            t, rss, err = timed(grad_cmd, args.runs)
            emit(name, "grad_time", t * 1e3, "ms")
            emit(name, "grad_peak", rss, "MiB")
            m = re.search(r"(\d+) active, (\d+) rule applications; open ([\d.]+) ms, forward pass "
                          r"([\d.]+) ms, sweep ([\d.]+) ms, write [\d.]+ ms; peak memory ([\d.]+)",
                          err)
            if m:
                emit(name, "active_nodes", int(m.group(1)), "nodes")
                emit(name, "grad_open", float(m.group(3)), "ms")
                emit(name, "grad_forward_pass", float(m.group(4)), "ms")
                emit(name, "grad_sweep", float(m.group(5)), "ms")
                emit(name, "grad_peak_self", float(m.group(6)), "MiB")
            cpu = cpu_ms(grad_cmd, args.runs)
            if cpu is not None:
                emit(name, "grad_cpu", cpu, "ms")
        out = json.loads(subprocess.run(grad_cmd, check=True, capture_output=True, text=True).stdout)
        result = out["value"]
        if args.quick:
            emit(name, "value", result, "1")
            continue
        positions = [d["pos"] for d in out["derivatives"] if d["differentiable"]]
        # Read the gradients in a child process (this one stays small, see above).
        figures = json.loads(subprocess.run(
            [sys.executable, __file__, "--verify", name, "--work", str(work), "--value", repr(result),
             "--positions", ",".join(map(str, positions))],
            check=True, capture_output=True, text=True).stdout)
        for figure, value, expected, rel in figures:
            ok = rel <= TOLERANCE[name]
            failed += 0 if ok else 1
            if args.check:
                print(f"{name} {figure}: {'ok' if ok else 'FAIL'} (relative error "
                      f"{'below' if ok else 'above'} {TOLERANCE[name]:g})"
                      + ("" if ok else f" {value!r} vs {expected!r}"))
            else:
                emit(name, f"{figure}_rel_error", rel, "1")
    if failed:
        sys.exit(f"grad_bench: {failed} figures differ from the reference")


if __name__ == "__main__":
    main()
