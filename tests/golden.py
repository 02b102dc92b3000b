#!/usr/bin/env python3
"""Golden tests for the irt-* tools.

Each case is tests/golden/<tool>/<case>.cmd: a bash command line run in a
fresh temporary directory that holds a symlink `testdata` to the repository's
testdata/, with the built tools first on PATH, NO_COLOR=1 and LC_ALL=C.
Its stdout, stderr and exit status are compared with <case>.stdout,
<case>.stderr and <case>.status (a missing file means: empty, empty, 0).
IRT_UPDATE_GOLDEN=1 rewrites the expected files instead; review them like code.
"""
import argparse
import concurrent.futures
import difflib
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile


def run_case(cmd_file, args):
    case = cmd_file.with_suffix("")
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
            p = subprocess.run(["bash", "-c", script], cwd=tmp, env=env, capture_output=True,
                               timeout=args.timeout, stdin=subprocess.DEVNULL)
            got = {"stdout": p.stdout, "stderr": p.stderr, "status": f"{p.returncode}\n".encode()}
        except subprocess.TimeoutExpired:
            return case, [f"timed out after {args.timeout} s"]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
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
    return case, problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--build", default="")
    ap.add_argument("--timeout", type=int, default=120)
    ap.add_argument("--filter", default="", help="run cases whose path contains this")
    args = ap.parse_args()
    cases = sorted(pathlib.Path(args.root, "tests", "golden").glob("*/*.cmd"))
    cases = [c for c in cases if args.filter in str(c)]
    failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as ex:
        for case, problems in ex.map(lambda c: run_case(c, args), cases):
            name = f"{case.parent.name}/{case.name}"
            if problems:
                failed += 1
                print(f"FAIL {name}")
                for p in problems:
                    print(p)
            else:
                print(f"ok   {name}")
    print(f"{len(cases) - failed} passed, {failed} failed")
    return 1 if failed or not cases else 0


if __name__ == "__main__":
    sys.exit(main())
