# Sourced by the hostile/*.cmd cases: runs every tool that reads a trace on
# one file and prints each one's exit status; their messages go to stderr.
every_tool() {  # FILE
  local f=$1 t
  for t in "irt-check" "irt-print" "irt-print --json" "irt-stats" "irt-dot" \
    "irt-slice -b @" "irt-grad" "irt-grad --mode forward --tangent @2=1" \
    "irt-replay --set @2=1" "irt-export --jsonl" "irt-export --speedscope" \
    "irt-export --python" "irt-convert" "irt-convert --format 1"; do
    $t "$f" > /dev/null
    echo "$t: exit $?"
  done
  irt-diff "$f" "$f" > /dev/null
  echo "irt-diff: exit $?"
}
