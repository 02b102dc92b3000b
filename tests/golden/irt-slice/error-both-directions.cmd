irt-trace testdata/ir/h.ir h 2.0 2 -o h.fb
irt-slice -b @26 -F @2 h.fb
