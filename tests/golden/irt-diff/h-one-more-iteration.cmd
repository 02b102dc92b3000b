# h(2.0, 2) against h(2.0, 3): one more loop iteration, inserted, not a
# cascade of changes
irt-trace -o h2.fb testdata/ir/h.ir h 2.0 2
irt-trace -o h3.fb testdata/ir/h.ir h 2.0 3
irt-diff h2.fb h3.fb
