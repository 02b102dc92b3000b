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

. "${IRT_SOURCE:?the golden cases need golden.py}/tests/golden/compare.sh"
