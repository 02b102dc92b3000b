#!/usr/bin/env python3
"""irtrace against peer AD tools on the workloads W1-W5: correctness and cost.

For each workload it writes the inputs (.npy for W2, W4 and W5), records the
workload as a trace with each irtrace producer (today irt-trace on
bench/ir/), differentiates the trace with irt-grad (whole process: open,
check, forward pass, sweep), and checks the value and the gradient checksums
against the reference figures (relative 1e-10 for W1-W3, 1e-9 for W4 and
W5). Forward mode is checked and timed the same way: irt-grad --mode forward
along all-ones (every element of every differentiated argument 1), whose
tangent is the sum of the gradient's elements.
irtrace's own figures are printed one per line, as bench/run.py does:

    <workload> <figure> <value> <unit>

Then it runs the peers (bench/peers/: ADOL-C, PyTorch with Debian's
reference BLAS, and PyTorch with OpenBLAS on W4 and W5, where the matrix
products are) on the same workload,
checks that their gradient agrees with irtrace's (relative 1e-9, in the
maximum norm; ADOL-C's tangent along all-ones from its stored tape,
fos_forward, too) and prints one comparison per line, irtrace's figure first and
the ratio irtrace / peer (above 1: irtrace is slower or bigger):

    W1 record       irtrace 139.0 ms  adolc 42.0 ms  ratio 3.31

Times are the best of --runs (whole processes: wall time from start to reap,
os.wait4, after one warm-up; in-process phases: each peer's best run, and
irt-grad -v's phases from irtrace's best run); peak memory is the child's
maximum resident set. The peer programs are built when missing (ADOL-C's
with CMake in build-bench/peers/, or taken from the build with
-DIRT_BENCH=ON); a peer whose packages are missing is skipped with a note.
With --check only the verification lines are printed, deterministically
(the golden test tests/golden/irt-grad/workloads.cmd runs that).

Usage: bench/grad_bench.py [--bin build-release/bin] [--work DIR] [--runs N]
                           [--only W1,W2,W3,W4,W5]
                           [--peers adolc,torch,torch-openblas|none]
                           [--adolc-w4] [--quick] [--check]
"""
import argparse
import dataclasses
import json
import math
import os
import pathlib
import random
import re
import shutil
import statistics
import struct
import subprocess
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
# Sizes (full, --quick): W1 n, W2 N, W3 depth, W4 batch, W5 sequence length.
SIZES = {"W1": (1000000, 10000), "W2": (1000000, 10000), "W3": (30000, 300), "W4": (64, 64),
         "W5": (1024, 64)}
# Debian's OpenBLAS (libopenblas0-pthread) as a BLAS that PyTorch loads in
# place of the reference one: the peer torch-openblas, one thread.
OPENBLAS_DIR = pathlib.Path("/usr/lib/x86_64-linux-gnu/openblas-pthread")
# Relative agreement required between irtrace's gradient and a peer's.
PEER_TOLERANCE = 1e-9

# perf-baselines.md, section 2.
REFERENCE = {
    "W1": {"value": 632120.74276078737, "grad": 264241117652.46646},
    "W2": {"value": 6302760.1788175106, "sum": -5733183.6065172218, "sum_abs": 6006171.265075176,
           "sum_cos": -28.00336589595, "first": -51.2, "last": 48.2792},
    "W3": {"value": 47131.932052345037, "grad": 2.6974280488061728},
    "W4": {"value": -1.2095964529703298, "sum": 640.27328067255667, "sum_abs": 27519.485412043319,
           "sum_cos": 112.36621973544, "g7": 0.0036167685995269622, "b3_9": 64.0},
    # W5 has no published figures: these are PyTorch's (bench/peers/torch_peer.py
    # W5, torch 1.13 on Debian 12), the gradient with respect to main and extra.
    "W5": {"value": 0.007585078725969127, "sum": 0.0015707430140498486,
           "sum_abs": 0.025245694736861578, "sum_cos": -0.002977736478938853,
           "first": 3.97231216740301e-08, "last": -0.0008730786129048736},
}
TOLERANCE = {"W1": 1e-10, "W2": 1e-10, "W3": 1e-10, "W4": 1e-9, "W5": 1e-9}


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


def run(cmd, stdout=subprocess.DEVNULL, cwd=None, env=None):
    """Runs cmd: (seconds, peak RSS MiB, stderr, stdout if it is a pipe)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=stdout, stderr=subprocess.PIPE, cwd=cwd, env=env)
    _, status, usage = os.wait4(p.pid, 0)
    dt = time.perf_counter() - t0
    err = p.stderr.read().decode(errors="replace")
    p.stderr.close()
    out = None
    if p.stdout is not None:  # one line from a peer: it fits the pipe
        out = p.stdout.read().decode(errors="replace")
        p.stdout.close()
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"grad_bench: {' '.join(map(str, cmd))} failed ({code}): {err.strip()}")
    return dt, usage.ru_maxrss / 1024.0, err, out


def timed(cmd, runs, cwd=None, env=None, stdout=subprocess.DEVNULL):
    """Best of runs after a warm-up: (seconds, peak RSS MiB, stderr of the best
    run, every run's (stderr, stdout))."""
    run(cmd, cwd=cwd, env=env)  # warm-up (page cache, first-touch)
    results = sorted((run(cmd, stdout=stdout, cwd=cwd, env=env) for _ in range(runs)),
                     key=lambda r: r[0])
    return results[0][0], max(r[1] for r in results), results[0][2], [r[2:] for r in results]


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
    n = SIZES[name][1 if quick else 0]
    if name == "W1":
        return HERE / "ir/w1_powsum.ir", "h", ["0.999999", str(n)], None
    if name == "W2":
        x = work / f"w2_x_{n}.npy"
        if not x.exists():
            write_npy(x, [n], [0.5 + 0.001 * (i % 100) for i in range(n)])
        return HERE / "ir/w2_rosenbrock.ir", "rosen", [f"@{x}", str(n)], None
    if name == "W3":
        return HERE / "ir/w3_recursion.ir", "g", ["0.5", str(n)], None
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
    if name == "W5":
        names = []
        for key, values in lstm_data(n).items():
            path = work / f"w5_{key}_{n}.npy"
            if not path.exists():
                write_npy(path, [len(values)], values)
            names.append(f"@{path}")
        return HERE / "ir/w5_lstm.ir", "lstm", names, "@2,@3"
    raise ValueError(name)


def lstm_data(c, b=14, layers=2):
    """W5's inputs, ADBench's LSTM layout as flat vectors: seeded uniform
    draws in [-1, 1) from Python's Mersenne Twister (the same on every
    machine; bench/peers/torch_peer.py draws them the same way)."""
    rng = random.Random(20260514)
    draw = lambda k: [2.0 * rng.random() - 1.0 for _ in range(k)]
    return {"main": draw(layers * 8 * b), "extra": draw(3 * b), "state": draw(layers * 2 * b),
            "seq": draw(c * b)}


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
        if name in ("W2", "W5"):
            out.append(("g_first", g[0], ref["first"]))
            out.append(("g_last", g[-1], ref["last"]))
        else:
            out.append(("g_7", g[7], ref["g7"]))
            out.append(("g_b3_9", grads[-1][9], ref["b3_9"]))
    return [(f, v, e, abs(v - e) / abs(e)) for f, v, e in out]


def max_relative_difference(files_a, files_b):
    """max |a - b| / max |b| over the gradients in two lists of .npy files."""
    a = [v for f in files_a for v in read_npy(f)]
    b = [v for f in files_b for v in read_npy(f)]
    if len(a) != len(b):
        return math.inf
    scale = max((abs(v) for v in b), default=0.0)
    diff = max((abs(x - y) for x, y in zip(a, b)), default=0.0)
    return diff / scale if scale else diff


@dataclasses.dataclass
class Context:
    bin: pathlib.Path
    work: pathlib.Path
    runs: int
    quick: bool
    check: bool  # verification only: one run of everything, no timing


@dataclasses.dataclass
class Recorded:
    """A workload recorded as an irtrace trace by one producer."""
    trace: pathlib.Path
    record_ms: float  # best of --runs
    peak_mib: float
    wrt: str | None = None  # irt-grad --wrt, None for every argument


def record_ir(name, ctx):
    """irt-trace on bench/ir/: the record time is the whole irt-trace process."""
    ir, fn, fargs, wrt = prepare(name, ctx.work, ctx.quick)
    trace = ctx.work / f"{name.lower()}.fb"
    cmd = [str(ctx.bin / "irt-trace"), str(ir), fn, *fargs, "-o", str(trace)]
    t, rss = (run(cmd) if ctx.check else timed(cmd, ctx.runs))[:2]
    return Recorded(trace, t * 1e3, rss, wrt)


def record_cpp(name, ctx):
    """The C++ recording front end (bench/cpp/, irt-record-bench): the
    workload written with irt/record.h, recorded in process; the record time
    is the recording alone (best of --runs), writing the trace included."""
    if ctx.quick or name == "W5":
        return None  # irt-record-bench records W1-W4 at the full sizes only
    bench = ctx.bin.parent / "bench" / "irt-record-bench"
    out_dir = ctx.work / "cpp"
    out_dir.mkdir(exist_ok=True)
    runs = 1 if ctx.check else ctx.runs
    out = subprocess.run([str(bench), "--runs", str(runs), "--out", str(out_dir), name],
                         check=True, capture_output=True, text=True).stdout
    ms = float(re.search(rf"^{name} record +([\d.]+) ms", out, re.M).group(1))
    wrt = "@3,@4,@5,@6,@7,@8" if name == "W4" else None
    return Recorded(out_dir / f"{name}.fb", ms, 0.0, wrt)


# The programs that record a workload as a trace; everything after the
# recording (irt-grad, the reference check, the peers) is the same for each,
# and each gets its own row in the comparisons: irt-trace on the IR of
# bench/ir/, and the C++ front end on bench/cpp/. Another producer is one
# more entry: a function (workload, Context) -> Recorded (or None to skip)
# that writes the trace under ctx.work and reports its record time.
PRODUCERS = [("irtrace", record_ir), ("irtrace-cpp", record_cpp)]


@dataclasses.dataclass
class Differentiated:
    """irt-grad on one producer's trace."""
    record: Recorded
    whole_ms: float  # irt-grad, whole process
    phases_ms: float | None  # forward pass + sweep, in process (irt-grad -v)
    sweep_ms: float | None  # the reverse sweep alone (irt-grad -v)
    grads: list  # the gradient .npy files, in argument order
    warm_ms: float | None = None  # forward pass + sweep, best of --runs in one process
    warm_sweep_ms: float | None = None  # the sweep alone, the same way
    cold_ms: float | None = None  # forward pass + sweep, the best of --runs fresh processes
    cold_sweep_ms: float | None = None  # the sweep alone, the same way
    tangent: float | None = None  # forward mode along all-ones
    tangent_ms: float | None = None  # irt-grad --mode forward, whole process
    tangent_pass_ms: float | None = None  # its forward pass, in process (irt-grad -v)


@dataclasses.dataclass
class PeerRun:
    record_ms: float  # in process, best of --runs
    gradient_ms: float  # in process: ADOL-C gradient() (replay + reverse), torch backward()
    whole_ms: float  # one record + one gradient, whole process
    cold_ms: float  # the gradient of a fresh process (--whole), best of --runs processes
    tape_bytes: int | None  # tape plus the values kept for the reverse sweep
    grad: pathlib.Path
    form: str
    tangent: float | None = None  # along all-ones from the stored tape (ADOL-C's fos_forward)
    tangent_ms: float | None = None  # in process, best of --runs


def peer_fields(stdout):
    return dict(kv.split("=", 1) for kv in stdout.split() if "=" in kv)


def adolc_program(ctx, build_dir):
    """The ADOL-C peer program, built if needed, or None with a note."""
    built = ctx.bin / "irt-peer-adolc"  # configured with -DIRT_BENCH=ON
    if built.exists():
        return built
    p = subprocess.run(["cmake", "-S", str(HERE / "peers"), "-B", str(build_dir), "-G", "Ninja",
                        "-DCMAKE_BUILD_TYPE=Release"], capture_output=True, text=True)
    if p.returncode != 0:
        print(f"# adolc: skipped, bench/peers does not configure (without ADOL-C: "
              f"apt-get install libadolc-dev); cmake -S bench/peers -B {build_dir} says why",
              flush=True)
        return None
    p = subprocess.run(["cmake", "--build", str(build_dir)], capture_output=True, text=True)
    if p.returncode != 0:
        print(f"# adolc: skipped, bench/peers does not build:\n{p.stdout[-2000:]}", flush=True)
        return None
    return build_dir / "bin" / "irt-peer-adolc"


def run_peer(peer, cmd, name, ctx, cwd=None, env=None):
    size = SIZES[name][1 if ctx.quick else 0]
    grad = ctx.work / f"{name.lower()}_{peer}_grad.npy"
    args = [*cmd, name, "--size", str(size)]
    p = subprocess.run([*args, "--runs", str(ctx.runs), "--grad", str(grad)], cwd=cwd,
                       check=True, capture_output=True, text=True, env=env)
    f = peer_fields(p.stdout)
    # Each --whole run records once and computes its first gradient: the
    # peer's cold figure, as irt-grad's phases are in a fresh process.
    whole, _, _, outs = timed([*args, "--whole"], ctx.runs, cwd=cwd, env=env,
                              stdout=subprocess.PIPE)
    cold = min(float(peer_fields(out)["gradient_ms"]) for _, out in outs)
    tape = int(f["tape_bytes"]) + int(f["value_bytes"]) if "tape_bytes" in f else None
    tangent = (float(f["tangent"]), float(f["tangent_ms"])) if "tangent" in f else (None, None)
    return PeerRun(float(f["record_ms"]), float(f["gradient_ms"]), whole * 1e3, cold, tape, grad,
                   f.get("form", "scalar"), *tangent)


def number(value, unit):
    if unit == "B":
        return f"{value:.0f} B"
    return f"{value:.1f} {unit}" if value >= 10 else f"{value:.3g} {unit}"


def compare(name, measure, label, mine, peer, theirs, unit="ms"):
    print(f"{name} {measure:<13} {label} {number(mine, unit)}  {peer} {number(theirs, unit)}  "
          f"ratio {mine / theirs:.3g}", flush=True)


def differentiate(name, label, rec, ctx):
    """Runs irt-grad on a recorded trace, prints irtrace's figures and checks the
    value and gradient against the reference: (Differentiated, failed count)."""
    fig = (lambda f: f) if label == "irtrace" else (lambda f: f"{label}_{f}")
    bin_dir, work = ctx.bin, ctx.work
    prefix = str(work / f"{name.lower()}_{label}_grad@")
    grad_cmd = [str(bin_dir / "irt-grad"), "-v", "--json", "--max-elements", "1",
                "--npy", prefix, str(rec.trace)]
    if rec.wrt:
        grad_cmd[1:1] = ["--wrt", rec.wrt]
    whole_ms = phases_ms = sweep_ms = warm_ms = warm_sweep_ms = cold_ms = cold_sweep_ms = None
    check = ctx.check
    repeat_failed = 0
    if check:
        run(grad_cmd)
        repeat_failed = repeat_check(name, label, rec, ctx)
    else:
        nodes = int(re.search(r'"nodes":(\d+)', subprocess.run(
            [str(bin_dir / "irt-check"), "--json", str(rec.trace)], check=True,
            capture_output=True, text=True).stdout).group(1))
        size = rec.trace.stat().st_size
        emit(name, fig("nodes"), nodes, "nodes")
        emit(name, fig("trace_time"), rec.record_ms, "ms")
        emit(name, fig("trace_peak"), rec.peak_mib, "MiB")
        emit(name, fig("trace_bytes"), size, "B")
        emit(name, fig("trace_bytes_per_node"), size / nodes, "B")
        t, rss, err, outs = timed(grad_cmd, ctx.runs)
        whole_ms = t * 1e3
        emit(name, fig("grad_time"), whole_ms, "ms")
        emit(name, fig("grad_peak"), rss, "MiB")
        phases = r"(\d+) active, (\d+) rule applications; open ([\d.]+) ms, forward pass " \
                 r"([\d.]+) ms, sweep ([\d.]+) ms, write [\d.]+ ms; peak memory ([\d.]+)"
        m = re.search(phases, err)
        every = [re.search(phases, e) for e, _ in outs]
        if all(every):
            # The best of the fresh processes, phase by phase (the peers' cold figure).
            cold_ms = min(float(x.group(4)) + float(x.group(5)) for x in every)
            cold_sweep_ms = min(float(x.group(5)) for x in every)
            emit(name, fig("grad_cold_phases"), cold_ms, "ms")
            emit(name, fig("grad_cold_sweep"), cold_sweep_ms, "ms")
        if m:
            phases_ms = float(m.group(4)) + float(m.group(5))
            sweep_ms = float(m.group(5))
            emit(name, fig("active_nodes"), int(m.group(1)), "nodes")
            emit(name, fig("grad_open"), float(m.group(3)), "ms")
            emit(name, fig("grad_forward_pass"), float(m.group(4)), "ms")
            emit(name, fig("grad_sweep"), float(m.group(5)), "ms")
            emit(name, fig("grad_peak_self"), float(m.group(6)), "MiB")
        cpu = cpu_ms(grad_cmd, ctx.runs)
        if cpu is not None:
            emit(name, fig("grad_cpu"), cpu, "ms")
        warm_ms, warm_sweep_ms = warm(name, fig, rec, ctx)
        if label == "irtrace":
            emit_trace(name, rec, ctx)
    out = json.loads(subprocess.run(grad_cmd, check=True, capture_output=True, text=True).stdout)
    result = out["value"]
    positions = [d["pos"] for d in out["derivatives"] if d["differentiable"]]
    grads = [f"{prefix}{p}.npy" for p in positions]
    failed = repeat_failed
    if ctx.quick:
        emit(name, fig("value"), result, "1")
    else:
        # Read the gradients in a child process (this one stays small, see main).
        figures = json.loads(subprocess.run(
            [sys.executable, __file__, "--verify", name, "--value", repr(result),
             "--grads", ",".join(grads)], check=True, capture_output=True, text=True).stdout)
        for figure, value, expected, rel in figures:
            ok = rel <= TOLERANCE[name]
            failed += 0 if ok else 1
            if check:
                who = "" if label == "irtrace" else f"{label} "
                print(f"{name} {who}{figure}: {'ok' if ok else 'FAIL'} (relative error "
                      f"{'below' if ok else 'above'} {TOLERANCE[name]:g})"
                      + ("" if ok else f" {value!r} vs {expected!r}"))
            else:
                emit(name, fig(f"{figure}_rel_error"), rel, "1")
    tangent, tangent_ms, tangent_pass_ms, bad = forward_mode(name, label, rec, ctx)
    return Differentiated(rec, whole_ms, phases_ms, sweep_ms, grads, warm_ms, warm_sweep_ms,
                          cold_ms, cold_sweep_ms, tangent, tangent_ms,
                          tangent_pass_ms), failed + bad


def forward_mode(name, label, rec, ctx):
    """irt-grad --mode forward along all-ones (the tangent of every element of
    every differentiated argument 1): the tangent is the sum of the gradient's
    elements, checked against the reference's. Prints irtrace's figures (or
    the verdict with --check): (tangent, whole ms, forward pass ms, failed)."""
    fig = (lambda f: f) if label == "irtrace" else (lambda f: f"{label}_{f}")
    cmd = [str(ctx.bin / "irt-grad"), "-v", "--json", "--max-elements", "1", "--mode", "forward"]
    for pos in (rec.wrt or "@2").split(","):
        cmd += ["--tangent", f"{pos}=1.0"]
    cmd.append(str(rec.trace))
    if ctx.check:
        t = None
        out = run(cmd, stdout=subprocess.PIPE)[3]
    else:
        t, _, err, outs = timed(cmd, ctx.runs, stdout=subprocess.PIPE)
        out = outs[0][1]
        m = re.search(r"forward pass ([\d.]+) ms", err)
        emit(name, fig("tangent_time"), t * 1e3, "ms")
        if m:
            emit(name, fig("tangent_forward_pass"), float(m.group(1)), "ms")
    tangent = json.loads(out)["derivative"]
    if ctx.quick:
        return tangent, None if t is None else t * 1e3, None, 0
    ref = REFERENCE[name]["grad" if name in ("W1", "W3") else "sum"]
    rel = abs(tangent - ref) / abs(ref)
    ok = rel <= TOLERANCE[name]
    if ctx.check:
        who = "" if label == "irtrace" else f"{label} "
        print(f"{name} {who}tangent: {'ok' if ok else 'FAIL'} (relative error "
              f"{'below' if ok else 'above'} {TOLERANCE[name]:g})"
              + ("" if ok else f" {tangent!r} vs {ref!r}"))
        return tangent, None, None, 0 if ok else 1
    emit(name, fig("tangent_rel_error"), rel, "1")
    return tangent, t * 1e3, float(m.group(1)) if m else None, 0 if ok else 1


# The workloads whose backward pass is written once, not --runs times: W2's
# emitted trace is about 1 GB (10^6 elements of x, each getindex's adjoint
# kept as a scalar, the gradient joined by 20 levels of cat) and takes tens
# of seconds.
EMIT_ONCE = {"W2"}


def emit_trace(name, rec, ctx):
    """irt-grad --emit-trace, whole process: the backward pass written as a trace."""
    out = ctx.work / f"{name.lower()}_emitted.fb"
    cmd = [str(ctx.bin / "irt-grad"), "--emit-trace", "-o", str(out), str(rec.trace)]
    if rec.wrt:
        cmd[1:1] = ["--wrt", rec.wrt]
    t, rss, _, _ = timed(cmd, 1 if name in EMIT_ONCE else ctx.runs)
    emit(name, "emit_time", t * 1e3, "ms")
    emit(name, "emit_peak", rss, "MiB")
    emit(name, "emit_bytes", out.stat().st_size, "B")
    out.unlink()


def warm(name, fig, rec, ctx):
    """irt-grad-bench: the gradient computed --runs times in one process, as the
    peers measure theirs; (forward + sweep, sweep), best of the runs, or Nones
    when the program was not built."""
    program = ctx.bin.parent / "bench" / "irt-grad-bench"
    if not program.exists():
        return None, None
    cmd = [str(program), "--runs", str(max(2, ctx.runs))] + (
        ["--wrt", rec.wrt] if rec.wrt else []) + [str(rec.trace)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    best = {m.group(1): float(m.group(2)) for m in re.finditer(
        r"^(\w+)\s+first\s+[\d.]+ ms\s+best\s+([\d.]+) ms", out, re.M)}
    emit(name, fig("grad_warm_forward_pass"), best["forward"], "ms")
    emit(name, fig("grad_warm_sweep"), best["sweep"], "ms")
    return best["forward"] + best["sweep"], best["sweep"]


def repeat_check(name, label, rec, ctx):
    """irt-grad-bench --runs 3 (when built): the gradient computed three times
    in one process, the later runs reusing the memory the earlier ones freed,
    must be bit-identical to the first run's. Prints the verdict; 1 if not."""
    program = ctx.bin.parent / "bench" / "irt-grad-bench"
    if not program.exists():
        return 0
    cmd = [str(program), "--runs", "3"] + (["--wrt", rec.wrt] if rec.wrt else []) + [
        str(rec.trace)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    who = "" if label == "irtrace" else f"{label} "
    if done.returncode == 0:
        print(f"{name} {who}in-process repeats: ok (3 runs, bit-identical value and derivatives)")
        return 0
    print(f"{name} {who}in-process repeats: FAIL ({done.stderr.strip()})")
    return 1


def compare_peer(name, label, mine, peer, theirs):
    """Prints whether the gradients agree and, if they do, the comparisons;
    returns False when they disagree."""
    rel = json.loads(subprocess.run(
        [sys.executable, __file__, "--compare", ",".join(mine.grads), str(theirs.grad)],
        check=True, capture_output=True, text=True).stdout)
    agree = rel <= PEER_TOLERANCE
    form = {"scalar": " (0-dim tensors)", "vectors": " (vectors of 14)"}.get(
        theirs.form, " (whole tensors)") if peer.startswith("torch") else ""
    print(f"{name} grad-check    {label} vs {peer}{form}: max relative difference {rel:.2g} "
          f"{'<=' if agree else '>'} {PEER_TOLERANCE:g}, "
          f"{'agree' if agree else 'DISAGREE (no figures)'}", flush=True)
    if not agree:
        return False
    compare(name, "record", label, mine.record.record_ms, peer, theirs.record_ms)
    if mine.phases_ms is not None:
        compare(name, "gradient", label, mine.phases_ms, peer, theirs.gradient_ms)
    if mine.sweep_ms is not None and peer.startswith("torch"):
        # The reverse sweep alone against backward(), which is one too.
        compare(name, "sweep", label, mine.sweep_ms, peer, theirs.gradient_ms)
    if mine.warm_ms is not None:
        # Measured as the peer measures itself: best of --runs in one process.
        compare(name, "gradient-warm", label, mine.warm_ms, peer, theirs.gradient_ms)
        if peer.startswith("torch"):
            compare(name, "sweep-warm", label, mine.warm_sweep_ms, peer, theirs.gradient_ms)
    if mine.cold_ms is not None:
        # Both in a fresh process: irt-grad's phases against the peer's
        # first gradient after its first recording, best of --runs each.
        compare(name, "gradient-cold", label, mine.cold_ms, peer, theirs.cold_ms)
        if peer.startswith("torch"):
            compare(name, "sweep-cold", label, mine.cold_sweep_ms, peer, theirs.cold_ms)
    compare(name, "grad-whole", label, mine.whole_ms, peer, theirs.gradient_ms)
    compare(name, "total-whole", label, mine.record.record_ms + mine.whole_ms, peer,
            theirs.whole_ms)
    if theirs.tangent is not None and mine.tangent is not None:
        # Forward mode from the stored record: irt-grad's forward pass (in
        # process) and its whole process against ADOL-C's fos_forward.
        rel = abs(mine.tangent - theirs.tangent) / max(abs(theirs.tangent), 1e-300)
        agree = rel <= PEER_TOLERANCE
        print(f"{name} tangent-check {label} vs {peer}: relative difference {rel:.2g} "
              f"{'<=' if agree else '>'} {PEER_TOLERANCE:g}, "
              f"{'agree' if agree else 'DISAGREE (no figures)'}", flush=True)
        if not agree:
            return False
        if mine.tangent_pass_ms is not None:
            compare(name, "tangent", label, mine.tangent_pass_ms, peer, theirs.tangent_ms)
        compare(name, "tangent-whole", label, mine.tangent_ms, peer, theirs.tangent_ms)
    if theirs.tape_bytes:
        compare(name, "bytes", label, mine.record.trace.stat().st_size, peer, theirs.tape_bytes,
                "B")
    return True


def build_irtrace(bin_dir):
    """Brings irtrace's tools up to date when bin_dir is a CMake build's."""
    build = bin_dir.parent
    if (build / "CMakeCache.txt").exists():
        subprocess.run(["cmake", "--build", str(build), "--target", "irt-trace", "irt-grad",
                        "irt-check", "irt-record-bench", "irt-grad-bench"], check=True,
                       stdout=subprocess.DEVNULL)
    missing = [t for t in ("irt-trace", "irt-grad", "irt-check") if not (bin_dir / t).exists()]
    if missing:
        sys.exit(f"grad_bench: {', '.join(missing)} not in {bin_dir}: build irtrace first (README)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=str(ROOT / "build-release" / "bin"))
    ap.add_argument("--work", default=str(ROOT / "build-bench" / "grad"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--only", default="W1,W2,W3,W4,W5")
    ap.add_argument("--peers", default="adolc,torch,torch-openblas",
                    help="peers to run, or 'none'")
    ap.add_argument("--adolc-w4", action="store_true",
                    help="run ADOL-C on W4 as well (scalar level: seconds and ~1 GB of tape)")
    ap.add_argument("--python", default="/usr/bin/python3",
                    help="the interpreter python3-torch is installed for")
    ap.add_argument("--peers-build", default=str(ROOT / "build-bench" / "peers"))
    ap.add_argument("--check", action="store_true", help="verification lines only")
    ap.add_argument("--quick", action="store_true", help="small sizes (no reference figures)")
    ap.add_argument("--inputs-only", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--verify", help=argparse.SUPPRESS)
    ap.add_argument("--value", type=float, help=argparse.SUPPRESS)
    ap.add_argument("--grads", help=argparse.SUPPRESS)
    ap.add_argument("--compare", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.verify:
        grads = [read_npy(f) for f in args.grads.split(",")]
        print(json.dumps(verify(args.verify, args.value, grads, False)))
        return
    if args.compare:
        print(json.dumps(max_relative_difference(args.compare[0].split(","),
                                                 args.compare[1].split(","))))
        return
    ctx = Context(pathlib.Path(args.bin), pathlib.Path(args.work), max(1, args.runs), args.quick,
                  args.check)
    ctx.work.mkdir(parents=True, exist_ok=True)
    if args.inputs_only:
        for name in args.only.split(","):
            prepare(name, ctx.work, args.quick)
        return
    peers = {}  # name -> (command, working directory, workloads, environment or None)
    if not args.check:
        build_irtrace(ctx.bin)
        wanted = [] if args.peers == "none" else args.peers.split(",")
        for peer in wanted:
            if peer not in ("adolc", "torch", "torch-openblas"):
                sys.exit(f"grad_bench: unknown peer '{peer}' (adolc, torch, torch-openblas)")
        if "adolc" in wanted:
            program = adolc_program(ctx, pathlib.Path(args.peers_build))
            if program:
                tapes = ctx.work / "adolc-tapes"  # ADOL-C writes its tape files here
                tapes.mkdir(exist_ok=True)
                # W4 at scalar level is 52 M ADOL-C operations; its peer is PyTorch.
                # W5 (tensor level, vectors of 14) has no ADOL-C version.
                only = ("W1", "W2", "W3", "W4") if args.adolc_w4 else ("W1", "W2", "W3")
                peers["adolc"] = ([str(program)], tapes, only, None)
        if "torch" in wanted or "torch-openblas" in wanted:
            try:
                importable = subprocess.run([args.python, "-c", "import torch"],
                                            capture_output=True).returncode == 0
            except OSError:
                importable = False
            if not importable:
                print(f"# torch: skipped, {args.python} cannot import torch "
                      "(apt-get install python3-torch)", flush=True)
            else:
                torch_cmd = [args.python, str(HERE / "peers" / "torch_peer.py")]
                if "torch" in wanted:
                    peers["torch"] = (torch_cmd, None, ("W1", "W2", "W3", "W4", "W5"), None)
                if "torch-openblas" in wanted and not (OPENBLAS_DIR / "libblas.so.3").exists():
                    print(f"# torch-openblas: skipped, no {OPENBLAS_DIR}/libblas.so.3 "
                          "(apt-get install libopenblas0-pthread)", flush=True)
                elif "torch-openblas" in wanted:
                    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", LD_LIBRARY_PATH=":".join(
                        filter(None, [str(OPENBLAS_DIR), os.environ.get("LD_LIBRARY_PATH")])))
                    peers["torch-openblas"] = (torch_cmd, None, ("W4", "W5"), env)
    # The inputs are written by a child process, so that this one stays small:
    # a forked child's peak resident set counts the parent's pages until exec.
    subprocess.run([sys.executable, __file__, "--inputs-only", "--work", str(ctx.work), "--only",
                    args.only] + (["--quick"] if args.quick else []), check=True)
    failed = disagree = 0
    for name in args.only.split(","):
        mine = []
        for label, produce in PRODUCERS:
            recorded = produce(name, ctx)
            if recorded is None:
                continue
            result, bad = differentiate(name, label, recorded, ctx)
            failed += bad
            mine.append((label, result))
        for peer, (cmd, cwd, workloads, env) in peers.items():
            if name not in workloads:
                continue
            theirs = run_peer(peer, cmd, name, ctx, cwd, env)
            for label, result in mine:
                disagree += 0 if compare_peer(name, label, result, peer, theirs) else 1
    if failed:
        sys.exit(f"grad_bench: {failed} figures differ from the reference")
    if disagree:
        sys.exit(f"grad_bench: {disagree} peer gradients disagree with irtrace's")


if __name__ == "__main__":
    main()
