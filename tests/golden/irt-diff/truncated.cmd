# a trace cut short is trouble (exit 2), not a difference
irt-trace -o a.fb testdata/ir/h.ir h 2.0 2
head -c 500 a.fb > cut.fb
irt-diff a.fb cut.fb
