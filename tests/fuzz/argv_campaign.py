#!/usr/bin/env python3
"""Wrong-argument campaign: every irtrace tool under random command lines.

Reads each tool's options from its --help, then runs N command lines, each
a tool with up to four of its options (with a value where one is taken: a
well-formed one for its type most of the time, else a hostile one) and
its operands (mostly well-formed ones, so that the options act, then up to
two more), the values drawn from a pool of hostile ones: huge and negative
numbers, NaN, empty strings, node paths that do not exist or go 300 levels
deep, @FILE values naming devices and directories, a 5,000-byte string,
literals of every kind, and two small valid traces. Each run gets a private
working directory (removed after it), a time limit and a file-size limit,
and is classified:

  ok        exit 0 (irt-diff: 0 or 1; irt-replay: 3, a divergence)
  error     exit 1 or 2, every stderr line 'TOOL: ...'
  messy     such an exit with a stderr line without the tool's prefix
  crash     a signal, another exit status, or a sanitizer report
  hang      the time limit
  disk      the file-size limit

It prints the classes per tool and exits 1 if any run was messy, crashed,
hung or filled the disk, printing those command lines.

  tests/fuzz/argv_campaign.py --bin build-release/bin --runs 300 --seed 1
"""

import argparse
import os
import pathlib
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[2]
FAILING = {"messy", "crash", "hang", "disk"}
FILE_LIMIT = 64 << 20
TIME_LIMIT = 60

VALUES = [
    "0", "-1", "1", "2", "3", "-0", "2.5", "1e308", "nan", "inf", "",
    "99999999999999999999", "18446744073709551615", "4294967296", "-9223372036854775808",
    "@", "@0", "@1", "@2", "@3", "@99999", "@-1", "@0x10", "@@", "@2@3", " @2",
    "@2/@3", "@4/@2", "@9/@5/@1", "@" + "2/@" * 300 + "2",
    "@2=1.5", "@2=-0.0", "@2=", "=", "@1=1", "@2=true", "@3=[1.0, 2.0]",
    "@2=@/dev/null", "@2=@/dev/zero", "@2=@.", "@2=@h.fb",
    "1,2", "@2,@3", "@2,", ",", "0.5,0.5",
    "[1.0 2.0; 3.0]", "Float32[1.5]", "(1, 2.0)", '"s"', "fill(1.0)",
    "abc", "*", "adjoint", "always", "never", "forward", "reverse",
    "/nonexistent/x", "/dev/null", "/dev/zero", ".", "-", "--", "-x",
    "h.fb", "m.fb", "h.fb.zst", "x" * 5000,
]
OPERANDS = VALUES + ["h.fb", "m.fb", "h.fb", "h.ir", "h", "0.5", "4"]
# What a tool needs besides its operands, added to most runs.
REQUIRED_OF = {
    "irt-replay": lambda rng: ["--set", rng.choice(["@2=1.5", "@3=0.25", "@2=2"])],
    "irt-export": lambda rng: [rng.choice(["--jsonl", "--python", "--c", "--speedscope",
                                           "--chrome-trace"])],
    "irt-slice": lambda rng: [rng.choice(["-b", "-F"]), rng.choice(["@", "@2", "@3", "@5"])],
}
# Well-formed operands, drawn for most runs.
OPERANDS_OF = {
    "irt-trace": lambda rng: ["h.ir", "h", rng.choice(["0.5", "2", "-1.5", "nan", "1e308"]),
                              rng.choice(["4", "0", "-3", "100"])],
    "irt-diff": lambda rng: [rng.choice(["h.fb", "m.fb"]), rng.choice(["h.fb", "m.fb"])],
}


# Well-formed values by the type name --help gives an option.
GOOD = {
    "N": ["0", "1", "2", "3", "10"], "X": ["0", "1e-9", "0.5"], "PATH": ["@", "@2", "@3", "@4/@2"],
    "@PATH=VALUE": ["@2=1.5", "@3=0.25"], "@N=VALUE": ["@2=1.0"], "@N,...": ["@2", "@2,@3"],
    "VALUE": ["1.0", "2.5"], "FILE": ["out.fb", "out.txt"], "KEY": ["adjoint", "random", "*"],
    "PREFIX": ["g"], "NAME": ["h"], "V1,V2,...": ["0.5,0.25"],
}


def tool_options(binary):
    """(option, its well-formed values, or None if it takes none) for each
    option of the tool's --help."""
    out = subprocess.run([binary, "--help"], capture_output=True, text=True).stdout
    opts = []
    for line in out.splitlines():
        m = re.match(r"\s+(?:-\w,)?(--[\w-]+)(?:\s+(\S+))?", line)
        if not m or m.group(1) in ("--help", "--version"):
            continue
        kind = m.group(2)
        if kind is None or kind in ("REQUIRED", "Excludes:"):
            opts.append((m.group(1), None))
        elif ":{" in kind:  # WHEN:{auto,always,never}
            opts.append((m.group(1), kind.split(":{")[1].rstrip("}").split(",")))
        else:
            opts.append((m.group(1), GOOD.get(kind, ["1"])))
    return opts


def classify(tool, status, stderr):
    if "Sanitizer" in stderr or "runtime error:" in stderr:
        return "crash"
    ok = {0} | ({1} if tool == "irt-diff" else set()) | ({3} if tool == "irt-replay" else set())
    if status in ok:
        return "ok"
    if status in (1, 2):
        lines = [l for l in stderr.splitlines() if l]
        return "error" if all(l.startswith(tool + ":") for l in lines) else "messy"
    return "crash"


def limit_files():
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_LIMIT, FILE_LIMIT))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", required=True, type=pathlib.Path)
    ap.add_argument("--runs", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    args.bin = args.bin.resolve()
    rng = random.Random(args.seed)
    tools = {t.name: tool_options(t) for t in sorted(args.bin.glob("irt-*")) if os.access(t, os.X_OK)}
    if not tools:
        sys.exit("argv_campaign: no irt-* tools in %s" % args.bin)
    with tempfile.TemporaryDirectory(prefix="irt-argv-") as tmp:
        base = pathlib.Path(tmp)
        h_ir = ROOT / "testdata" / "ir" / "h.ir"
        traces = base / "traces"
        traces.mkdir()
        shutil.copy(h_ir, traces / "h.ir")
        subprocess.run([args.bin / "irt-trace", "-o", traces / "h.fb", h_ir, "h", "0.5", "4"], check=True)
        subprocess.run([args.bin / "irt-trace", "-o", traces / "m.fb", ROOT / "testdata" / "ir" / "mlp.ir",
                        "mlp", "[0.5 -1.0 0.25 2.0; 1.0 0.5 -0.5 0.1; 0.3 0.2 0.1 -1.0]",
                        "[0.1, -0.2, 0.3]", "[1.5, -0.5, 0.25, 2.0]"], check=True)
        counts = {t: {} for t in tools}
        failures = []
        for i in range(args.runs):
            tool = rng.choice(sorted(tools))
            argv = [str(args.bin / tool)]
            for _ in range(rng.randint(0, 4)):
                if not tools[tool]:
                    break
                opt, good = rng.choice(tools[tool])
                argv.append(opt)
                if good is not None and rng.random() < 0.6:
                    argv.append(rng.choice(good))
                elif good is not None or rng.random() < 0.1:
                    argv.append(rng.choice(VALUES))
            if rng.random() < 0.7:  # mostly what the tool wants, so that the options act
                argv += REQUIRED_OF[tool](rng) if tool in REQUIRED_OF else []
                argv += OPERANDS_OF[tool](rng) if tool in OPERANDS_OF else [rng.choice(["h.fb", "m.fb"])]
            argv += [rng.choice(OPERANDS) for _ in range(rng.choice([0, 0, 0, 1, 2]))]
            work = base / ("run%d" % i)
            shutil.copytree(traces, work)
            try:
                p = subprocess.run(argv, cwd=work, capture_output=True, stdin=subprocess.DEVNULL,
                                   timeout=TIME_LIMIT, preexec_fn=limit_files)
                stderr = p.stderr.decode("utf-8", "replace")
                cls = "disk" if p.returncode == -25 else classify(tool, p.returncode, stderr)  # SIGXFSZ
            except subprocess.TimeoutExpired:
                cls, stderr = "hang", ""
            shutil.rmtree(work, ignore_errors=True)
            counts[tool][cls] = counts[tool].get(cls, 0) + 1
            if cls in FAILING:
                shown = " ".join(a if len(a) < 80 else a[:40] + "...(%d bytes)" % len(a) for a in argv[1:])
                failures.append("%s: %s %s\n  %s" % (cls, tool, shown, stderr.strip()[-400:]))
    for tool in sorted(counts):
        print("%-12s %s" % (tool, "  ".join("%s %d" % kv for kv in sorted(counts[tool].items()))))
    for f in failures:
        print(f)
    print("argv_campaign: %d runs, %d failing" % (args.runs, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
