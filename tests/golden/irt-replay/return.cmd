irt-trace -o h.fb testdata/ir/h.ir h 2.0 2
irt-replay --set @26=1.0 -o out.fb h.fb
