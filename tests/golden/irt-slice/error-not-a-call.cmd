irt-trace testdata/ir/h.ir h 2.0 2 -o h.fb
irt-slice -b @4/@1 h.fb
