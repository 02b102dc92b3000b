irt-trace testdata/ir/h.ir h 2.0 2 -o h.fb
irt-slice -b @27 h.fb
