#!/usr/bin/env python3
"""irt-grad on N tensor operations in one call body: time per N.

The program is a loop whose every iteration applies two tensor operations
to a small Float64 vector (y = sin(y) + x), so all 2 x iterations tensor
nodes sit in the body of one call. Every node takes the value path of the
sweep (its result is a tensor), so the time per node must not grow with
the body's length: the figures show whether it does. Nothing is asserted
(the machine is shared); read the `per_op` column across the sizes.

A second program reads a tensor of N elements that it made (y = x * 2.0,
x a vector argument) element by element in a loop of N iterations
(s += y[i] * y[i]): every getindex reads the same tensor, which the
tools must not decode once per element (tensor-elements-<N>); a third
reads it with Python's 0-based getitem, whose adjoint rule adds each
element's adjoint into zeros the size of the tensor (tensor-items-<N>),
which the sweep must add in place, and the backward trace (--emit-trace)
must write as element adjoints, not as those zeros (N^2 values).

A fourth passes its vector argument of N elements to a call in each of N
iterations, the call reading one element (tensor-calls-<N>, the pattern of
an objective over a data array written with a helper function): a chunk
stores the vector once, and no tool may copy it, or an adjoint of its
size, per call. Its annotated trace (--annotate) holds an adjoint of that
size per call by design, N^2 values: it is timed only up to N = 1000.

Figures, one per line, as bench/run.py prints them:

    tensor-body-<N> <figure> <value> <unit>
    tensor-elements-<N> <figure> <value> <unit>
    tensor-items-<N> <figure> <value> <unit>

Times are whole processes (wall time, start to reap), the median of --runs
runs; `reverse_sweep` and `reverse_forward_pass` are irt-grad -v's
in-process phases. Besides the reverse sweep, the forward mode, the two
writers of irt-grad (--emit-trace, --annotate) and irt-replay's evaluation
of the same body are timed (`--modes`).

Usage: bench/tensor_body_bench.py [--bin build-release/bin] [--work DIR]
                                  [--runs N] [--sizes 1000,10000,100000]
                                  [--modes reverse,forward,emit,annotate,replay]
"""
import argparse
import pathlib
import re
import time

from benchlib import emit, run, write_npy_f64

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent

# tbody(x, n): y = x; repeat n times: y = sin(y) + x; sum(y)
PROGRAM = """\
# N tensor operations in one call body (bench/tensor_body_bench.py).
function tbody
1: (%1, %2, %3)
  br 2 (0, %2)
2: (%4, %5)
  %6 = %4 < %3
  br 4 unless %6
  br 3
3:
  %7 = Main.sin(%5)
  %8 = %7 + %2
  %9 = %4 + 1
  br 2 (%9, %8)
4:
  %10 = Main.sum(%5)
  return %10
end
"""


# A tensor made in the body (y = x * 2.0) and read element by element in n
# iterations (s += y[i] * y[i]); `read` sets %9 to the element of counter %5.
ELEMENT_LOOP = """\
# A tensor made in the body and read element by element (bench/tensor_body_bench.py).
function {name}
1: (%1, %2, %3)
  %4 = %2 * 2.0
  br 2 (1, 0.0)
2: (%5, %6)
  %7 = %5 <= %3
  br 4 unless %7
  br 3
3:
{read}
  %10 = %9 * %9
  %11 = %6 + %10
  %12 = %5 + 1
  br 2 (%12, %11)
4:
  return %6
end
"""
# The vector passed to a call per iteration, which reads one element.
CALLS = """\
# A vector passed to a call per iteration (bench/tensor_body_bench.py).
function sq
1: (%1, %2, %3)
  %4 = Main.getindex(%2, %3)
  %5 = %4 * %4
  return %5
end

function calls
1: (%1, %2, %3)
  br 2 (1, 0.0)
2: (%4, %5)
  %6 = %4 <= %3
  br 4 unless %6
  br 3
3:
  %7 = sq(%2, %4)
  %8 = %5 + %7
  %9 = %4 + 1
  br 2 (%9, %8)
4:
  return %5
end
"""
# Julia's 1-based getindex, and Python's 0-based getitem.
ELEMENTS = ELEMENT_LOOP.format(name="elems", read="  %9 = Main.getindex(%4, %5)")
ITEMS = ELEMENT_LOOP.format(name="items", read="  %8 = %5 - 1\n  %9 = Main.getitem(%4, %8)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=str(ROOT / "build-release" / "bin"))
    ap.add_argument("--work", default=str(ROOT / "build-bench" / "tensor_body"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--sizes", default="1000,10000,100000",
                    help="numbers of tensor operations (two per iteration)")
    ap.add_argument("--modes", default="reverse,forward,emit,annotate,replay,print,diff,export",
                    help="what to time: reverse (the sweep), forward (forward mode), emit "
                         "(--emit-trace), annotate (--annotate), replay (irt-replay --set @2=[...]), "
                         "print (irt-print), diff (irt-diff of the trace and the replay), export "
                         "(irt-export --python)")
    args = ap.parse_args()
    bin_dir = pathlib.Path(args.bin)
    work = pathlib.Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    ir = work / "tbody.ir"
    ir.write_text(PROGRAM)
    ir_elements = work / "elems.ir"
    ir_elements.write_text(ELEMENTS)
    ir_items = work / "items.ir"
    ir_items.write_text(ITEMS)
    ir_calls = work / "calls.ir"
    ir_calls.write_text(CALLS)
    x = work / "x.npy"
    write_npy_f64(x, [0.1 * (i + 1) for i in range(8)])
    cases = []
    for n in (int(s) for s in args.sizes.split(",")):
        cases.append((f"tensor-body-{n}", n, [str(ir), "tbody", f"@{x}", str(n // 2)],
                      "@2=[" + ", ".join(["0.25"] * 8) + "]"))
    for n in (int(s) for s in args.sizes.split(",")):
        xn, xn2 = work / f"xe_{n}.npy", work / f"xe2_{n}.npy"
        write_npy_f64(xn, [0.001 * (i % 100) for i in range(n)])
        write_npy_f64(xn2, [0.002 * (i % 100) for i in range(n)])
        cases.append((f"tensor-elements-{n}", n, [str(ir_elements), "elems", f"@{xn}", str(n)],
                      f"@2=@{xn2}"))
        cases.append((f"tensor-items-{n}", n, [str(ir_items), "items", f"@{xn}", str(n)],
                      f"@2=@{xn2}"))
        cases.append((f"tensor-calls-{n}", n, [str(ir_calls), "calls", f"@{xn}", str(n)],
                      f"@2=@{xn2}"))
    for name, n, trace_args, change in cases:
        trace = work / f"{name}.fb"
        run([str(bin_dir / "irt-trace"), *trace_args, "-o", str(trace)])
        out = work / "out.fb"
        replayed = work / "replayed.fb"
        if "diff" in args.modes.split(","):
            run([str(bin_dir / "irt-replay"), "--set", change, "-o", str(replayed), str(trace)])
        grad = [str(bin_dir / "irt-grad"), "-v", "--max-elements", "1"]
        commands = {
            "reverse": grad + ["--json", str(trace)],
            "forward": grad + ["--json", "--mode", "forward", "--tangent", "@2=1.0", str(trace)],
            "emit": grad + ["--emit-trace", "-o", str(out), str(trace)],
            "annotate": grad + ["--annotate", "-o", str(out), str(trace)],
            "replay": [str(bin_dir / "irt-replay"), "--set", change, "-o", str(out), str(trace)],
            "print": [str(bin_dir / "irt-print"), "-o", str(out), str(trace)],
            # Exit status 1: the traces differ.
            "diff": [str(bin_dir / "irt-diff"), "-o", str(out), str(trace), str(replayed)],
            "export": [str(bin_dir / "irt-export"), "--python", "-o", str(out), str(trace)],
        }
        for mode in args.modes.split(","):
            if mode == "annotate" and name.startswith("tensor-calls-") and n > 1000:
                continue  # N^2 values written (see above)
            results = []
            for _ in range(args.runs):
                # Each run writes a fresh file: replacing the last one would
                # time the freeing of its pages too.
                out.unlink(missing_ok=True)
                results.append(run(commands[mode], who="tensor_body_bench",
                                   ok=(0, 1) if mode == "diff" else (0,)))
            out.unlink(missing_ok=True)
            results.sort(key=lambda r: r[0])
            t, _, err = results[len(results) // 2]
            emit(name, f"{mode}_time", t * 1e3, "ms")
            emit(name, f"{mode}_per_op", t * 1e6 / n, "us")
            m = re.search(r"forward pass ([\d.]+) ms, sweep ([\d.]+) ms", err)
            if m and mode == "reverse":
                emit(name, "reverse_forward_pass", float(m.group(1)), "ms")
                emit(name, "reverse_sweep", float(m.group(2)), "ms")

if __name__ == "__main__":
    main()
