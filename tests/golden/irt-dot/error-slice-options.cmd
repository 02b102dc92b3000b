irt-trace testdata/ir/h.ir h 2.0 2 -o h.fb
irt-dot --forward h.fb
