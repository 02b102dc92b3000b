# Sourced by the record/*.cmd cases. The seed's programs written in C++
# with irt/record.h (adapters/cpp/examples/seed.h) are recorded by
# irt-record-seed into p/; irt-trace traces the equivalent IR of
# testdata/ir/cpp/ into t/. Both files have the same name.
R="${IRT_BUILD:?the record cases need golden.py --build}/tests/irt-record-seed"

record() {  # PROGRAM ARGS...: p/PROGRAM.irt
  mkdir -p p
  "$R" "$@" -o "p/$1.irt" || echo "irt-record-seed: exit $?"
}

. "${IRT_SOURCE:?the golden cases need golden.py}/tests/golden/compare.sh"
