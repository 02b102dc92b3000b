#!/usr/bin/env python3
"""Hostile-input campaign: every irtrace tool over mutated trace files.

Generates N inputs from the fuzzer's seed corpus (tests/fuzz/corpus/) and the
trace files under testdata/ with the structure-aware mutator (the
`trace_mutate` command built from tests/fuzz/trace_mutator.cc), runs every
tool on each under a time limit, an address-space limit (not under the
sanitizers, whose shadow memory needs more) and a file-size limit, in a
private TMPDIR whose size is checked after each run, and classifies each run:

  ok          exit 0 (irt-diff: 0 or 1)
  error       exit 1 or 2 (irt-replay: 3, a divergence) with exactly one
              stderr line 'TOOL: error: ...'
  messy       such an exit with other stderr (several lines, no prefix)
  crash       a signal, a higher exit status, or a sanitizer report
  hang        the time limit
  memory      killed at the address-space limit, or bad_alloc
  disk        the file-size limit, or TMPDIR/outputs over the disk limit
  lenient     exit 0 on an input irt-check refuses (one checker)
  strict      irt-print or irt-stats refuses an input irt-check accepts

It prints a table of the classes per command and exits 1 if any run crashed,
hung, blew up, or disagreed with irt-check. With --keep DIR, the input of each such run is saved there
with the command that failed on it.

  tests/fuzz/campaign.py --bin build-release/bin --inputs 200 --seed 1 --jobs 2
"""

import argparse
import concurrent.futures
import os
import pathlib
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading

ROOT = pathlib.Path(__file__).resolve().parents[2]

CLASSES = ["ok", "error", "messy", "lenient", "strict", "crash", "hang", "memory", "disk"]
# One checker: a tool must refuse what irt-check refuses ("lenient" if it
# succeeds instead), and the tools that only read and show a trace must take
# what irt-check accepts ("strict" if they refuse it).
FAILING = {"lenient", "strict", "crash", "hang", "memory", "disk"}
READERS = {"print", "print-json", "stats"}

# (label, tool, arguments before the input); "{in}" is the input, "{b}" a
# second input for irt-diff, "{out}" an output file in the private directory.
COMMANDS = [
    ("check", "irt-check", ["{in}"]),
    ("print", "irt-print", ["{in}"]),
    ("print-json", "irt-print", ["--json", "{in}"]),
    ("stats", "irt-stats", ["{in}"]),
    ("dot", "irt-dot", ["{in}"]),
    ("slice", "irt-slice", ["-b", "@", "-t", "-c", "{in}"]),
    ("grad", "irt-grad", ["{in}"]),
    ("grad-fwd", "irt-grad", ["--mode", "forward", "--tangent", "@2=1", "{in}"]),
    ("replay", "irt-replay", ["--set", "@2=2.5", "-o", "{out}", "{in}"]),
    ("diff", "irt-diff", ["{b}", "{in}"]),
    ("convert", "irt-convert", ["--format", "1", "-o", "{out}", "{in}"]),
]

# The largest exit status that reports an error; irt-replay exits with 3
# when the change makes the recorded execution diverge.
ERROR_STATUS = {"irt-replay": 3}

SANITIZER_TEXT = ("AddressSanitizer", "LeakSanitizer", "UndefinedBehaviorSanitizer",
                  "runtime error:", "MemorySanitizer", "ThreadSanitizer")
MEMORY_TEXT = ("bad_alloc", "out of memory", "Cannot allocate memory", "std::length_error")


def seeds():
    found = []
    for d in (ROOT / "tests" / "fuzz" / "corpus", ROOT / "tests" / "fuzz" / "regressions",
              ROOT / "testdata"):
        for p in sorted(d.rglob("*")):
            if p.is_file() and p.suffix in (".fb", ".irt", ".zst"):
                found.append(p)
    return found


def dir_bytes(d):
    total = 0
    for dirpath, _, files in os.walk(d):
        for f in files:
            try:
                total += os.lstat(os.path.join(dirpath, f)).st_size
            except OSError:
                pass
    return total


def is_sanitized(bindir):
    try:
        data = (bindir / "irt-check").read_bytes()
    except OSError:
        return False
    return b"__asan_init" in data or b"AddressSanitizer" in data


class Campaign:
    def __init__(self, args):
        self.args = args
        self.bindir = pathlib.Path(args.bin).resolve()
        self.mutate = self.bindir / "trace_mutate"
        self.sanitized = args.sanitized or is_sanitized(self.bindir)
        self.counts = {label: {c: 0 for c in CLASSES} for label, _, _ in COMMANDS}
        self.failures = []
        self.lock = threading.Lock()
        self.runs = 0

    def set_limits(self):
        """The limits of every run, set on this process and inherited: a
        preexec_fn would make each start a fork() of Python instead of a
        vfork(), 11 ms more per run."""
        if not self.sanitized:
            lim = self.args.mem_mb << 20
            resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
        lim = self.args.disk_mb << 20
        resource.setrlimit(resource.RLIMIT_FSIZE, (lim, lim))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    def run_tool(self, label, tool, argv, work, inp, other):
        out = work / "out.bin"
        cmd = [str(self.bindir / tool)] + [
            a.replace("{in}", str(inp)).replace("{b}", str(other)).replace("{out}", str(out))
            for a in argv]
        tmp = work / "tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        env = dict(os.environ, TMPDIR=str(tmp), NO_COLOR="1", LC_ALL="C")
        stdout_path = work / "stdout"
        with open(stdout_path, "wb") as so:
            p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=so, stderr=subprocess.PIPE,
                                 env=env, cwd=work, start_new_session=True)
            try:
                _, err = p.communicate(timeout=self.args.timeout)
                hung = False
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                _, err = p.communicate()
                hung = True
        used = dir_bytes(tmp) + stdout_path.stat().st_size
        if out.exists():
            used += out.stat().st_size
        for f in (out, stdout_path):
            f.unlink(missing_ok=True)
        shutil.rmtree(tmp, ignore_errors=True)
        text = err.decode("utf-8", "replace")
        rc = p.returncode
        if hung:
            cls = "hang"
        elif any(s in text for s in SANITIZER_TEXT):
            cls = "crash"
        elif rc == -signal.SIGXFSZ or used > self.args.disk_mb << 20:
            cls = "disk"
        elif any(s in text for s in MEMORY_TEXT) or (rc == -signal.SIGKILL):
            cls = "memory"
        elif rc < 0 or rc > ERROR_STATUS.get(tool, 2):
            cls = "crash"
        elif rc == 0 or (tool == "irt-diff" and rc == 1 and not text):
            cls = "ok"
        else:
            lines = text.splitlines()
            if len(lines) == 1 and lines[0].startswith(tool + ": error: "):
                cls = "error"
            else:
                cls = "messy"
        return cls, cmd, rc, text

    def one(self, n, seed_files, keep):
        rng = random.Random(self.args.seed * 1000003 + n)
        work = pathlib.Path(tempfile.mkdtemp(prefix=f"in{n}-", dir=self.scratch))
        try:
            # Most inputs start from a valid trace, so that mutations reach
            # the analyses behind the checks.
            pool = self.valid if self.valid and rng.random() < 0.8 else seed_files
            base = rng.choice(pool)
            inp = work / "input.fb"
            cur = base
            for step in range(1 + (rng.random() < 0.3) + (rng.random() < 0.1)):
                nxt = work / f"m{step}.fb"
                r = subprocess.run([str(self.mutate), str(rng.getrandbits(63)), str(cur), str(nxt),
                                    str(self.args.max_bytes)], capture_output=True)
                if r.returncode != 0:
                    raise RuntimeError(f"trace_mutate failed on {cur}: {r.stderr.decode()}")
                cur = nxt
            shutil.copyfile(cur, inp)
            results = []
            for label, tool, argv in COMMANDS:
                cls, cmd, rc, text = self.run_tool(label, tool, argv, work, inp, base)
                results.append((label, cls, cmd, rc, text))
            check_ok = results[0][1] == "ok"
            results = [(label,
                        "lenient" if not check_ok and cls == "ok" else
                        "strict" if check_ok and label in READERS and cls == "error" else cls,
                        cmd, rc, text) for label, cls, cmd, rc, text in results]
            with self.lock:
                for label, cls, cmd, rc, text in results:
                    self.runs += 1
                    self.counts[label][cls] += 1
                    if cls in FAILING or (cls == "messy" and self.args.verbose):
                        name = f"{cls}-{label}-s{self.args.seed}-n{n}.fb"
                        if keep and cls in FAILING:
                            shutil.copyfile(inp, keep / name)
                            shutil.copyfile(base, keep / (name + ".b"))
                        shown = [c.replace(str(inp), "INPUT").replace(str(base), str(base))
                                 for c in cmd]
                        self.failures.append((cls, label, name, rc, " ".join(shown),
                                              text.strip().splitlines()[:3]))
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def run(self):
        if not self.mutate.exists():
            sys.exit(f"campaign.py: error: no {self.mutate} (build the tests)")
        seed_files = seeds()
        if not seed_files:
            sys.exit("campaign.py: error: no seed traces found")
        self.valid = [p for p in seed_files
                      if subprocess.run([str(self.bindir / "irt-check"), "-q", str(p)],
                                        capture_output=True, timeout=60).returncode == 0]
        keep = pathlib.Path(self.args.keep).resolve() if self.args.keep else None
        if keep:
            keep.mkdir(parents=True, exist_ok=True)
        self.scratch = tempfile.mkdtemp(prefix="irt-campaign-")
        self.set_limits()
        try:
            with concurrent.futures.ThreadPoolExecutor(self.args.jobs) as ex:
                futures = [ex.submit(self.one, n, seed_files, keep)
                           for n in range(self.args.inputs)]
                for f in concurrent.futures.as_completed(futures):
                    f.result()
        finally:
            shutil.rmtree(self.scratch, ignore_errors=True)
        self.report()
        return 1 if any(c in FAILING for c, *_ in self.failures) else 0

    def report(self):
        print(f"inputs tried: {self.args.inputs} (seed {self.args.seed}), runs: {self.runs}, "
              f"limits: {self.args.timeout}s, "
              f"{'no address-space limit (sanitized)' if self.sanitized else f'{self.args.mem_mb} MiB address space'}, "
              f"{self.args.disk_mb} MiB disk")
        width = max(len(label) for label, _, _ in COMMANDS)
        print(f"{'command':<{width}} " + " ".join(f"{c:>7}" for c in CLASSES))
        for label, _, _ in COMMANDS:
            print(f"{label:<{width}} " + " ".join(f"{self.counts[label][c]:>7}" for c in CLASSES))
        total = {c: sum(self.counts[label][c] for label, _, _ in COMMANDS) for c in CLASSES}
        print(f"{'total':<{width}} " + " ".join(f"{total[c]:>7}" for c in CLASSES))
        for cls, label, name, rc, cmd, lines in sorted(self.failures):
            print(f"\n{cls}: {label} (status {rc}) on {name}\n  {cmd}")
            for line in lines:
                print(f"  | {line[:200]}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default=str(ROOT / "build-release" / "bin"),
                    help="directory of the tools and trace_mutate")
    ap.add_argument("--inputs", type=int, default=200, help="mutated inputs to try")
    ap.add_argument("--seed", type=int, default=1, help="seed of the campaign")
    ap.add_argument("--jobs", type=int, default=2, help="inputs run in parallel")
    ap.add_argument("--keep", help="save the inputs of failing runs in this directory")
    ap.add_argument("--timeout", type=float, default=10, help="seconds per run")
    ap.add_argument("--mem-mb", type=int, default=4096, help="address-space limit per run")
    ap.add_argument("--disk-mb", type=int, default=256, help="file-size and TMPDIR limit per run")
    ap.add_argument("--max-bytes", type=int, default=1 << 20, help="largest mutated input")
    ap.add_argument("--sanitized", action="store_true",
                    help="the tools are built with the sanitizers (no address-space limit)")
    ap.add_argument("-v", "--verbose", action="store_true", help="list messy errors too")
    args = ap.parse_args()
    sys.exit(Campaign(args).run())


if __name__ == "__main__":
    main()
