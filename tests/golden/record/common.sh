# Sourced by the record/*.cmd cases. The seed's programs written in C++
# with irt/record.h (adapters/cpp/examples/seed.h) are recorded by
# irt-record-seed into p/; irt-trace traces the equivalent IR of
# testdata/ir/cpp/ into t/. Both files have the same name.
R="${IRT_BUILD:?the record cases need golden.py --build}/tests/irt-record-seed"

record() {  # PROGRAM ARGS...: p/PROGRAM.irt
  mkdir -p p
  "$R" "$@" -o "p/$1.irt" || echo "irt-record-seed: exit $?"
}

# Runs the shell snippet in t/ and in p/; says "same" when its output, its
# messages and its exit status agree on both traces, else shows the diff.
same() {  # SNIPPET
  if diff <(cd t && eval "$1" 2>&1; echo "exit $?") \
          <(cd p && eval "$1" 2>&1; echo "exit $?") > same.diff; then
    echo "same: $1"
  else
    echo "differ: $1"
    cat same.diff
  fi
}

# Runs the snippet on the C++ trace only: its output and messages, then
# its exit status.
show() {  # SNIPPET
  (cd p && eval "$1" 2>&1; echo "exit $?")
}
