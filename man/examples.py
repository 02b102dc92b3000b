#!/usr/bin/env python3
"""Runs the examples of ronn man page sources and compares their output.

An example is an indented code block in the EXAMPLES section whose lines
starting with "$ " are commands; the lines after a command, up to the next
command or the end of the block, are its expected output (standard output
and standard error together). A page's commands run in order, in one fresh
temporary directory holding a `testdata` symlink to the repository's
testdata/, with the built tools first on PATH, NO_COLOR=1 and LC_ALL=C.
--update rewrites the expected output in the source instead.
"""
import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile


def blocks(lines):
    """Yields (start, end) line ranges of the EXAMPLES section's command blocks."""
    in_examples = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("## "):
            in_examples = line.strip() == "## EXAMPLES"
        if in_examples and line.startswith("    $ "):
            j = i
            while j < len(lines) and lines[j].startswith("    "):
                j += 1
            yield i, j
            i = j
        else:
            i += 1


def run_page(md, bin_dir, root, update):
    lines = md.read_text().split("\n")
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="irt-man-"))
    (tmp / "testdata").symlink_to(root / "testdata")
    env = dict(os.environ)
    env.update(PATH=str(bin_dir) + os.pathsep + env.get("PATH", ""), NO_COLOR="1", LC_ALL="C",
               TMPDIR=str(tmp))
    env.pop("TERM", None)
    # The Python package built next to the tools (irtrace-python(1)) runs
    # with the interpreter it is built for, Debian's, as `python3`.
    pkg = bin_dir.parent / "python"
    if (pkg / "irtrace").is_dir() and os.path.exists("/usr/bin/python3"):
        shim = tmp / ".python-bin"
        shim.mkdir()
        (shim / "python3").symlink_to("/usr/bin/python3")
        env.update(PATH=str(shim) + os.pathsep + env["PATH"], PYTHONPATH=str(pkg))
    out_lines, problems, last = [], [], 0
    try:
        for start, end in blocks(lines):
            out_lines += lines[last:start]
            i = start
            while i < end:
                cmd = lines[i][6:]
                j = i + 1
                while j < end and not lines[j].startswith("    $ "):
                    j += 1
                want = [l[4:] for l in lines[i + 1:j]]
                p = subprocess.run(["bash", "-c", "set -o pipefail\n" + cmd], cwd=tmp, env=env,
                                   stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, timeout=120)
                got = p.stdout.decode(errors="replace").rstrip("\n")
                got = got.split("\n") if got else []
                if got != want:
                    problems.append(f"{md.name}:{i + 1}: `{cmd}`\n  expected: {want}\n  actual:   {got}")
                out_lines.append(lines[i])
                out_lines += ["    " + l if l else "" for l in got]
                i = j
            last = end
        out_lines += lines[last:]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if update and problems:
        md.write_text("\n".join(out_lines))
        print(f"updated the examples of {md}")
        return []
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", required=True, help="directory of the built tools")
    ap.add_argument("--update", action="store_true", help="rewrite the expected output")
    ap.add_argument("pages", nargs="+", type=pathlib.Path)
    args = ap.parse_args()
    root = pathlib.Path(__file__).resolve().parent.parent
    bin_dir = pathlib.Path(args.bin).resolve()
    problems = []
    for md in args.pages:
        problems += run_page(md.resolve(), bin_dir, root, args.update)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
