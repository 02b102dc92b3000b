#!/usr/bin/env python3
"""Golden tests for the irt-* tools.

Each case is tests/golden/<tool>/<case>.cmd: a bash command line run in a
fresh temporary directory that holds a symlink `testdata` to the repository's
testdata/, with the built tools first on PATH, NO_COLOR=1 and LC_ALL=C.
Its stdout, stderr and exit status are compared with <case>.stdout,
<case>.stderr and <case>.status (a missing file means: empty, empty, 0).
IRT_UPDATE_GOLDEN=1 rewrites the expected files instead; review them like code.

A case runs in a process group of its own, and the whole group is killed when
the case ends or exceeds --timeout, so no process outlives its case. A case
whose first lines include the comment `# golden: release-only` works at a scale
that a sanitizer build would take minutes over (10^7 nodes, 10^6-deep
recursions), or checks what a sanitizer does not see at twice the cost there
(the exported code's values, compiled or run); it is skipped when the runner
is given --sanitized. Each case's time is reported, and the slowest ones are
listed at the end.

Under --sanitized the tools run without LeakSanitizer's exit check, which
costs each of their thousands of processes 25-40 ms (a quarter of the
golden cases' time under ASan); leaks are checked by the unit tests, the
hostile-input campaign (every tool on mutated traces) and the fuzzer.
"""
import argparse
import concurrent.futures
import difflib
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import tempfile
import time


RELEASE_ONLY = "# golden: release-only"


def is_release_only(cmd_file):
    head = cmd_file.read_text().splitlines()[:5]
    return any(line.strip() == RELEASE_ONLY for line in head)


def kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_script(script, cwd, env, timeout):
    """Runs bash in a new session; kills its whole process group at the end.

    Output goes to files, not pipes, so a background process that a case
    leaves behind cannot hold the case open: it is killed with the group."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(["bash", "-c", script], cwd=cwd, env=env,
                                stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                start_new_session=True)
        try:
            proc.wait(timeout=timeout)
        finally:
            kill_group(proc)
            proc.wait()
        out.seek(0)
        err.seek(0)
        return proc.returncode, out.read(), err.read()


def run_case(cmd_file, args):
    case = cmd_file.with_suffix("")
    if args.sanitized and is_release_only(cmd_file):
        return case, None, 0.0
    start = time.monotonic()
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="irt-golden-"))
    try:
        (tmp / "testdata").symlink_to(pathlib.Path(args.root) / "testdata")
        (tmp / "golden").symlink_to(cmd_file.parent)
        env = dict(os.environ)
        env.update(PATH=args.bin + os.pathsep + env.get("PATH", ""), NO_COLOR="1", LC_ALL="C",
                   TMPDIR=str(tmp), IRT_BUILD=args.build, IRT_SOURCE=args.root)
        env.pop("TERM", None)
        script = "set -o pipefail\n" + cmd_file.read_text()
        try:
            code, out, err = run_script(script, tmp, env, args.timeout)
            got = {"stdout": out, "stderr": err, "status": f"{code}\n".encode()}
        except subprocess.TimeoutExpired:
            return case, [f"timed out after {args.timeout} s; its processes were killed"], \
                time.monotonic() - start
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    took = time.monotonic() - start
    problems = []
    for key in ("stdout", "stderr", "status"):
        path = case.with_suffix("." + key)
        default = b"0\n" if key == "status" else b""
        want = path.read_bytes() if path.exists() else default
        if got[key] == want:
            continue
        if os.environ.get("IRT_UPDATE_GOLDEN") == "1":
            if got[key] == default:
                path.unlink(missing_ok=True)
            else:
                path.write_bytes(got[key])
            continue
        diff = difflib.unified_diff(want.decode(errors="replace").splitlines(),
                                    got[key].decode(errors="replace").splitlines(),
                                    f"{path.name} (expected)", f"{path.name} (actual)", lineterm="")
        problems.append("\n".join(list(diff)[:60]))
    return case, problems, took


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--build", default="")
    ap.add_argument("--timeout", type=int, default=300,
                    help="seconds a case may take (default 300: a wide margin over its usual)")
    ap.add_argument("--sanitized", action="store_true",
                    help="a sanitizer build: skip the release-only (scale) cases")
    ap.add_argument("--filter", default="", help="run cases whose tool/case.cmd contains this")
    args = ap.parse_args()
    # Cases run in their own directories: paths given relative to here must not move.
    args.bin, args.root = os.path.abspath(args.bin), os.path.abspath(args.root)
    args.build = os.path.abspath(args.build) if args.build else ""
    if args.sanitized:
        # The last setting of a sanitizer flag wins.
        opts = [o for o in os.environ.get("ASAN_OPTIONS", "").split(":") if o]
        os.environ["ASAN_OPTIONS"] = ":".join(opts + ["detect_leaks=0"])
    cases = sorted(pathlib.Path(args.root, "tests", "golden").glob("*/*.cmd"))
    # Matched against "tool/case.cmd" only: the checkout's own path (say
    # /work/wt-producer) must not make a filter match every case.
    cases = [c for c in cases if args.filter in f"{c.parent.name}/{c.name}"]
    failed = skipped = 0
    times = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as ex:
        for case, problems, took in ex.map(lambda c: run_case(c, args), cases):
            name = f"{case.parent.name}/{case.name}"
            if problems is None:
                skipped += 1
                print(f"skip {name} (release-only)", flush=True)
                continue
            times.append((took, name))
            if problems:
                failed += 1
                print(f"FAIL {name} ({took:.1f} s)")
                for p in problems:
                    print(p)
            else:
                print(f"ok   {name} ({took:.1f} s)", flush=True)
    slowest = sorted(times, reverse=True)[:5]
    print("slowest: " + ", ".join(f"{n} {t:.1f} s" for t, n in slowest))
    print(f"{len(cases) - failed - skipped} passed, {failed} failed, {skipped} skipped")
    return 1 if failed or len(cases) == skipped else 0


if __name__ == "__main__":
    sys.exit(main())
