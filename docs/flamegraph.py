#!/usr/bin/env python3
"""Draws a flame graph (SVG) from a speedscope file, such as
`irt-export --speedscope` writes: each call is a box as wide as its share of
the profile (for irt-export, its node count), stacked on its caller, the
root at the bottom. Standard library only.

    irt-export --speedscope t.fb | docs/flamegraph.py [--max-depth N] > t.svg

Only the first profile of the file is drawn (an evented one). Boxes
narrower than --min-width pixels are left out, and levels deeper than
--max-depth are summarized in the title, so a 10^6-call recursion still
makes a small picture.
"""
import argparse
import hashlib
import html
import json
import sys

ROW = 17  # pixels per level
CHAR = 6.6  # width of a label character at font-size 11, roughly


def colour(name):
    """A warm colour derived from the frame's name (stable across runs)."""
    h = hashlib.sha1(name.encode()).digest()
    return f"rgb({205 + h[0] % 50},{80 + h[1] % 130},{40 + h[2] % 40})"


def spans(profile, frames, max_depth, keep):
    """The (depth, start, end, frame name) of every call above max_depth
    for which keep(start, end) holds, by an explicit stack, and the
    deepest level seen."""
    stack = []
    out = []
    deepest = 0
    for ev in profile["events"]:
        if ev["type"] == "O":
            stack.append((ev["frame"], ev["at"]))
            deepest = max(deepest, len(stack))
        elif ev["type"] == "C":
            if not stack or stack[-1][0] != ev["frame"]:
                raise ValueError(f"a close event for frame {ev['frame']} that is not open")
            frame, start = stack.pop()
            depth = len(stack)
            if depth < max_depth and keep(start, ev["at"]):
                out.append((depth, start, ev["at"], frames[frame]["name"]))
        else:
            raise ValueError(f"unknown event type {ev['type']!r}")
    if stack:
        raise ValueError(f"{len(stack)} calls are never closed")
    return out, deepest


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file", nargs="?", default="-", help="speedscope file (default: stdin)")
    ap.add_argument("--width", type=int, default=1000, help="picture width in pixels")
    ap.add_argument("--max-depth", type=int, default=40, help="levels drawn (default 40)")
    ap.add_argument("--min-width", type=float, default=0.5, help="narrowest box drawn, pixels")
    ap.add_argument("--title", help="title (default: the profile's name)")
    a = ap.parse_args()
    try:
        with (sys.stdin if a.file == "-" else open(a.file, encoding="utf-8")) as f:
            doc = json.load(f)
        frames = doc["shared"]["frames"]
        profile = doc["profiles"][0]
        if profile.get("type") != "evented":
            raise ValueError(f"profile type {profile.get('type')!r}: only evented profiles are drawn")
        lo, hi = profile["startValue"], profile["endValue"]
        scale = (a.width - 20) / max(hi - lo, 1)
        boxes, deepest = spans(profile, frames, a.max_depth,
                               lambda s, e: (e - s) * scale >= a.min_width)
    except KeyError as e:
        print(f"flamegraph.py: {a.file}: not a speedscope file (no {e})", file=sys.stderr)
        return 1
    except (OSError, ValueError, IndexError, TypeError) as e:
        print(f"flamegraph.py: {a.file}: {e}", file=sys.stderr)
        return 1
    levels = min(deepest, a.max_depth)
    height = (levels + 2) * ROW + 20
    title = a.title or profile.get("name", "")
    unit = profile.get("unit", "none")
    what = "nodes" if unit == "none" else unit
    note = f"{hi - lo} {what}, {deepest} levels"
    if deepest > a.max_depth:
        note += f" (the first {a.max_depth} drawn)"
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{a.width}" height="{height}" '
           f'font-family="monospace" font-size="11">',
           f'<rect width="100%" height="100%" fill="#fdfaf4"/>',
           f'<text x="10" y="16" font-size="13">{html.escape(title)} — {note}</text>']
    for depth, s, e, name in sorted(boxes):
        x = 10 + (s - lo) * scale
        w = (e - s) * scale
        y = height - 10 - (depth + 1) * ROW
        tip = html.escape(f"{name}: {e - s} {what} ({100.0 * (e - s) / max(hi - lo, 1):.1f}%)")
        out.append(f'<g><title>{tip}</title><rect x="{x:.2f}" y="{y}" width="{w:.2f}" '
                   f'height="{ROW - 1}" fill="{colour(name)}" rx="2"/>')
        fit = int((w - 6) / CHAR)
        if fit >= 3:
            label = name if len(name) <= fit else name[:fit - 2] + ".."
            out.append(f'<text x="{x + 3:.2f}" y="{y + ROW - 5}">{html.escape(label)}</text>')
        out.append("</g>")
    out.append("</svg>")
    sys.stdout.write("\n".join(out) + "\n")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:
        sys.exit(0)
