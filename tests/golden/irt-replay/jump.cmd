irt-trace -o h.fb testdata/ir/h.ir h 2.0 2
irt-replay --set @5=1 -o out.fb h.fb
