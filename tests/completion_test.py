#!/usr/bin/env python3
"""Checks the generated bash completion against the built tools.

Every irt-* executable in --bin (the tools that tools/CMakeLists.txt builds,
one per tools/irt-* folder of --root) must be completed by the file: bash
sources it, and for each tool `complete -p` names a function, and asking
that function to complete "TOOL --" must give exactly the long options that
the tool's --help lists, read here with a pattern of its own (every
"--name" that starts an entry of the Options section). It also checks what
a value and a trace argument complete to: --color's three words and, in a
directory with a.fb, b.fb.zst and notes.txt, the two traces.

  tests/completion_test.py --bin BUILD/bin --root SOURCE_DIR --completion FILE
"""
import argparse
import os
import pathlib
import re
import subprocess
import sys
import tempfile

# Bash: completes the words given as arguments (the last one being typed)
# the way readline would, and prints each candidate on a line of its own.
DRIVER = r"""
source "$1" || exit 3
shift
complete -p "$1" >/dev/null 2>&1 || { echo "NOT COMPLETED"; exit 0; }
func=$(complete -p "$1" | sed -n 's/.*-F \([^ ]*\) .*/\1/p')
COMP_WORDS=("$@")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
COMP_LINE="$*"
COMP_POINT=${#COMP_LINE}
COMPREPLY=()
"$func" "$1" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\n' "${COMPREPLY[@]}"
"""


def built_tools(bin_dir):
    return sorted(p.name for p in pathlib.Path(bin_dir).glob("irt-*")
                  if p.is_file() and os.access(p, os.X_OK))


def help_long_options(tool_path):
    text = subprocess.run([tool_path, "--help"], capture_output=True, text=True,
                          check=True).stdout
    options = text.split("\nOptions:\n", 1)[1].split("\n\n", 1)[0]
    return set(re.findall(r"^  (?:-\w,)?(--[a-z][a-z0-9-]*)", options, re.M))


def complete(completion, words, cwd):
    run = subprocess.run(["bash", "-c", DRIVER, "driver", completion] + words, cwd=cwd,
                         capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"bash failed ({run.returncode}): {run.stderr.strip()}")
    return [w for w in run.stdout.splitlines() if w]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--root", required=True)
    ap.add_argument("--completion", required=True)
    args = ap.parse_args()
    tools = built_tools(args.bin)
    sources = sorted(p.name for p in pathlib.Path(args.root, "tools").glob("irt-*")
                     if p.is_dir())
    problems = []
    if not tools:
        problems.append(f"no irt-* executables in {args.bin}")
    if tools != sources:
        problems.append(f"built tools {tools} are not the tools/irt-* folders {sources}")
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("a.fb", "b.fb.zst", "notes.txt"):
            pathlib.Path(tmp, name).write_text("")
        options = 0
        for tool in tools:
            want = help_long_options(os.path.join(args.bin, tool))
            got = complete(args.completion, [tool, "--"], tmp)
            if got == ["NOT COMPLETED"]:
                problems.append(f"{tool}: not completed at all")
                continue
            if set(got) != want:
                problems.append(f"{tool}: completes {sorted(set(got) - want)} that --help does "
                                f"not list, lacks {sorted(want - set(got))}")
            options += len(want)
            colors = complete(args.completion, [tool, "--color", ""], tmp)
            if sorted(colors) != ["always", "auto", "never"]:
                problems.append(f"{tool}: '--color ' completes {colors}")
        # A trace argument: the traces in the directory, not the other file.
        for words in (["irt-print", ""], ["irt-diff", "a.fb", ""]):
            if words[0] in tools:
                got = sorted(complete(args.completion, words, tmp))
                if got != ["a.fb", "b.fb.zst"]:
                    problems.append(f"'{' '.join(words)}' completes {got}, not the two traces")
    for p in problems:
        print(f"completion_test.py: {p}", file=sys.stderr)
    print(f"completion: {len(tools)} tools, {options} long options, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
