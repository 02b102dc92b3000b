#!/usr/bin/env python3
"""Checks the hand-kept lists of tools against the built irt-* binaries.

Two places name every tool, and nothing else would notice one left out
when a tool is added (the bash completion is generated from the built
tools, and tests/completion_test.py checks it):
  - README.md: the table under "## Tools";
  - tests/golden/terminal/stdin-terminal.cmd: the `for tool in ...` loop of
    tools checked for refusing a terminal on standard input, plus the tools
    named in a line `# irt-x is not here: <why>`.
Each must name exactly the irt-* executables in --bin. Exits 1 and says
what differs otherwise.

  tests/tool_lists.py --bin BUILD/bin --root SOURCE_DIR
"""
import argparse
import os
import pathlib
import re
import sys


def built_tools(bin_dir):
    return {p.name for p in pathlib.Path(bin_dir).glob("irt-*")
            if p.is_file() and os.access(p, os.X_OK)}


def readme_tools(root):
    text = (root / "README.md").read_text()
    m = re.search(r"^## Tools\n(.*?)(?=^## )", text, re.M | re.S)
    if not m:
        return set()
    return set(re.findall(r"^\| `(irt-[a-z0-9-]+)` \|", m.group(1), re.M))


def terminal_tools(root):
    text = (root / "tests" / "golden" / "terminal" / "stdin-terminal.cmd").read_text()
    names = set()
    for m in re.finditer(r"^for tool in (.*); do$", text, re.M):
        names.update(m.group(1).split())
    names.update(re.findall(r"^# (irt-[a-z0-9-]+) is not here:", text, re.M))
    return names


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--root", required=True)
    args = ap.parse_args()
    root = pathlib.Path(args.root)
    tools = built_tools(args.bin)
    if not tools:
        print(f"tool_lists.py: no irt-* executables in {args.bin}", file=sys.stderr)
        return 1
    lists = {
        "README.md (## Tools table)": readme_tools(root),
        "tests/golden/terminal/stdin-terminal.cmd": terminal_tools(root),
    }
    failed = 0
    for where, names in lists.items():
        missing, extra = sorted(tools - names), sorted(names - tools)
        if missing:
            print(f"tool_lists.py: {where} lacks {' '.join(missing)}", file=sys.stderr)
        if extra:
            print(f"tool_lists.py: {where} names {' '.join(extra)}, which is not built",
                  file=sys.stderr)
        failed += bool(missing or extra)
    print(f"tool lists: {len(tools)} tools, {len(lists)} lists, {failed} out of step")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
