#!/usr/bin/env python3
"""Renders a DOT file with Graphviz (dot -Tsvg) and checks the drawing.

Usage: svgcheck.py FILE.dot

Passes silently when dot exits 0 without diagnostics and every line of every
label in FILE.dot (nodes, clusters, the graph) appears as a text element of
the SVG. Otherwise prints what is wrong on stderr and exits 1, which makes
the golden case that ran it fail.
"""
import html
import re
import subprocess
import sys


def dot_labels(text):
    """The label strings of a DOT file, DOT escapes undone, split in lines."""
    lines = []
    for m in re.finditer(r'label="((?:[^"\\]|\\.)*)"', text):
        raw = m.group(1)
        if raw == "\\N":
            continue
        out, i = [], 0
        line = ""
        while i < len(raw):
            c = raw[i]
            if c == "\\" and i + 1 < len(raw):
                n = raw[i + 1]
                if n == "n":
                    out.append(line)
                    line = ""
                else:
                    line += n
                i += 2
                continue
            line += c
            i += 1
        out.append(line)
        lines.extend(l.strip() for l in out if l.strip())
    return lines


def main():
    path = sys.argv[1]
    text = open(path, encoding="utf-8").read()
    p = subprocess.run(["dot", "-Tsvg", path], capture_output=True)
    problems = []
    if p.returncode != 0:
        problems.append(f"dot -Tsvg exited {p.returncode}")
    if p.stderr.strip():
        problems.append("dot said: " + p.stderr.decode(errors="replace").strip())
    svg = p.stdout.decode("utf-8", errors="replace")
    texts = {html.unescape(t).strip() for t in re.findall(r"<text[^>]*>(.*?)</text>", svg, re.S)}
    want = dot_labels(text)
    if not want:
        problems.append("no labels in the DOT file")
    missing = [w for w in want if w not in texts]
    if missing:
        problems.append(f"{len(missing)} label lines missing from the SVG, e.g. {missing[:3]}")
    for msg in problems:
        print(f"svgcheck: {path}: {msg}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
