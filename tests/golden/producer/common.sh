# Sourced by the producer/*.cmd cases. The same program is traced twice: by
# irt-trace from testdata/ir (into t/) and by irt-test-producer, the test
# producer that writes through TraceWriter only, without IR text (into p/).
# Both files have the same name, so that messages naming the file agree.
P="${IRT_BUILD:?the producer cases need golden.py --build}/tests/irt-test-producer"

trace_both() {  # FUNCTION ARGS...: t/FUNCTION.irt and p/FUNCTION.irt
  mkdir -p t p
  irt-trace -o "t/$1.irt" "testdata/ir/$1.ir" "$@" || echo "irt-trace: exit $?"
  "$P" -o "p/$1.irt" "$@" || echo "irt-test-producer: exit $?"
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

# Runs the snippet on the producer's trace only: its output and messages,
# then its exit status.
show() {  # SNIPPET
  (cd p && eval "$1" 2>&1; echo "exit $?")
}
