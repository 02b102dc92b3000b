irt-trace -o h2.fb testdata/ir/h.ir h 2.0 2
irt-trace -o h3.fb testdata/ir/h.ir h 2.0 3
irt-diff --stat h2.fb h3.fb
