#!/usr/bin/env bash
# Regenerates the committed roff pages man/*.1 from their ronn sources
# man/*.1.md. With --examples BIN_DIR it first reruns every example in the
# sources' EXAMPLES sections with the tools in BIN_DIR and rewrites their
# output, so the examples stay real. The page date and version are fixed
# here (not today's date) so that regenerating an unchanged page is a no-op.
#
#   man/build.sh [--examples BIN_DIR] [PAGE.1.md...]
#   man/build.sh --stdout PAGE.1.md      print one page's roff
set -euo pipefail

# Bump with each release whose pages change.
MAN_DATE=2026-11-22

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
version=$(sed -nE 's/^project\(irtrace VERSION ([0-9.]+).*/\1/p' "$root/CMakeLists.txt")

render() {
  ronn --roff --pipe --manual="irtrace manual" --organization="irtrace $version" "$1" |
    sed -E 's/^(\.TH "[^"]*" "[^"]*" )"[^"]*"/\1"'"$MAN_DATE"'"/'
}

if [[ ${1:-} == --stdout ]]; then
  render "$2"
  exit 0
fi
bin=
if [[ ${1:-} == --examples ]]; then
  bin=$2
  shift 2
fi
pages=("$@")
if ((${#pages[@]} == 0)); then pages=("$here"/*.1.md "$here"/*.7.md); fi
command -v ronn >/dev/null || { echo "man/build.sh: ronn is not installed (apt-get install ronn)" >&2; exit 1; }
for md in "${pages[@]}"; do
  if [[ -n $bin ]]; then python3 "$here/examples.py" --bin "$bin" --update "$md"; fi
  render "$md" >"${md%.md}.tmp"
  mv "${md%.md}.tmp" "${md%.md}"
  echo "wrote ${md%.md}"
done
