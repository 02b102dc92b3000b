#!/usr/bin/env bash
# Regenerates the pictures in docs/images/ from real runs of the tools:
#   h.svg               the seed's h(2.0, 2), whole
#   geom-slice.svg      the backward slice of geom's result across calls
#                       with control dependences, drawn as a trace
#   geom-highlight.svg  the same slice highlighted in the whole geom trace
#   fib-flame.svg       fib(12)'s calls as a flame graph (irt-export
#                       --speedscope drawn by docs/flamegraph.py)
# Rendering needs Graphviz's dot(1). The output only changes when the
# tools' output or the Graphviz version does.
#
#   docs/regen-images.sh BIN_DIR
set -euo pipefail

if (($# != 1)); then
  echo "usage: docs/regen-images.sh BIN_DIR" >&2
  exit 2
fi
bin=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
out=$here/images
mkdir -p "$out"
command -v dot >/dev/null || { echo "docs/regen-images.sh: dot is not installed (apt-get install graphviz)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export PATH=$bin:$PATH LC_ALL=C

irt-trace -o "$work/h.fb" "$root/testdata/ir/h.ir" h 2.0 2
irt-trace --rand-values 0.9,0.7,0.1 -o "$work/geom.fb" "$root/testdata/ir/geom.ir" geom 1 0.5

irt-trace -o "$work/fib.fb" "$root/testdata/ir/fib.ir" fib 12

irt-dot "$work/h.fb" | dot -Tsvg >"$out/h.svg"
irt-slice -b @9 --through-calls --control "$work/geom.fb" | irt-dot | dot -Tsvg >"$out/geom-slice.svg"
irt-dot --highlight-slice @9 --through-calls --control "$work/geom.fb" | dot -Tsvg >"$out/geom-highlight.svg"
irt-export --speedscope "$work/fib.fb" |
  python3 "$here/flamegraph.py" --title "fib(12): each call as wide as its nodes" >"$out/fib-flame.svg"
ls -l "$out"/*.svg | awk '{print "wrote " $NF " (" $5 " bytes)"}'
