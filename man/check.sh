#!/usr/bin/env bash
# Checks the man pages against the built tools:
#  - every man/*.1 passes `mandoc -Tlint -W warning` (style notes aside);
#  - where ronn is installed, every man/*.1 is what man/build.sh makes of its
#    source (the generated pages are committed: edit the .md, then run
#    man/build.sh);
#  - every long option in a tool's --help appears in its page, and the help
#    ends with "See TOOL(1).";
#  - every example in the pages' EXAMPLES sections prints what the page says
#    (man/build.sh --examples BIN_DIR rewrites them);
#  - every irt-* tool in BIN_DIR has a page;
#  - irtrace-python(1) is checked against `python3 -m irtrace trace --help`
#    of the Python package built next to BIN_DIR (BIN_DIR/../python), run
#    by Debian's /usr/bin/python3, when the build has it;
#  - the pages of section 7 (irt-ops(7)) pass the same lint and are up to date.
#
#   man/check.sh BIN_DIR
set -euo pipefail

if (($# != 1)); then
  echo "usage: man/check.sh BIN_DIR" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
bin=$(cd "$1" && pwd)
failed=0
checked=0
fail() {
  echo "man/check.sh: $*" >&2
  failed=$((failed + 1))
}

have_ronn=0
command -v ronn >/dev/null && have_ronn=1
((have_ronn)) || echo "man/check.sh: ronn is not installed: not checking that the pages are up to date" >&2

for md in "$here"/*.1.md; do
  page=${md%.md}
  tool=$(basename "$page" .1)
  checked=$((checked + 1))
  if [[ ! -f $page ]]; then
    fail "$tool: man/$tool.1 is missing (run man/build.sh)"
    continue
  fi
  if ! lint=$(mandoc -Tlint -W warning "$page" 2>&1) || [[ -n $lint ]]; then
    fail "$tool: mandoc -Tlint:"$'\n'"$lint"
  fi
  if ((have_ronn)) && ! diff -u "$page" <("$here/build.sh" --stdout "$md") >/dev/null; then
    fail "$tool: man/$tool.1 is out of date with man/$tool.1.md (run man/build.sh)"
  fi
  if [[ $tool == irtrace-python ]]; then
    if [[ ! -d $bin/../python/irtrace ]]; then
      echo "man/check.sh: $tool: the Python package is not built: not checking its options" >&2
      continue
    fi
    help=$(PYTHONPATH=$bin/../python /usr/bin/python3 -m irtrace trace --help)
  elif [[ -x $bin/$tool ]]; then
    help=$("$bin/$tool" --help)
  fi
  if [[ $tool == irtrace-python || -x $bin/$tool ]]; then
    for opt in $(grep -oE -- '--[a-z][a-z0-9-]*' <<<"$help" | sort -u); do
      grep -qF -- "\`$opt\`" "$md" || fail "$tool: $opt is in --help but not in man/$tool.1.md"
    done
    [[ $(tail -n 1 <<<"$help") == "See $tool(1)." ]] || fail "$tool: --help does not end with 'See $tool(1).'"
    python3 "$here/examples.py" --bin "$bin" "$md" || fail "$tool: examples differ (man/build.sh --examples $1 rewrites them)"
  else
    fail "$tool: $bin/$tool is not built"
  fi
done
# Pages of other sections (irt-ops(7)): lint and up to date.
for md in "$here"/*.7.md; do
  page=${md%.md}
  name=$(basename "$page")
  checked=$((checked + 1))
  [[ -f $page ]] || { fail "$name is missing (run man/build.sh)"; continue; }
  if ! lint=$(mandoc -Tlint -W warning "$page" 2>&1) || [[ -n $lint ]]; then
    fail "$name: mandoc -Tlint:"$'\n'"$lint"
  fi
  if ((have_ronn)) && ! diff -u "$page" <("$here/build.sh" --stdout "$md") >/dev/null; then
    fail "$name is out of date with $name.md (run man/build.sh)"
  fi
done
for exe in "$bin"/irt-*; do
  [[ -x $exe ]] || continue
  tool=$(basename "$exe")
  [[ -f $here/$tool.1.md ]] || fail "$tool has no man page (man/$tool.1.md)"
done
echo "man pages: $checked checked, $failed problems"
((failed == 0))
