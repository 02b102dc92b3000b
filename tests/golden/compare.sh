# Sourced by the common.sh of golden folders that compare a second
# producer's traces (in p/) with irt-trace's traces of the same programs
# (in t/); both files of a pair have the same name, so that messages
# naming the file agree.

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

# Runs the snippet on the second producer's trace only: its output and
# messages, then its exit status.
show() {  # SNIPPET
  (cd p && eval "$1" 2>&1; echo "exit $?")
}
