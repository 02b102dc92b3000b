# a jump has no value: slicing it needs --control
irt-trace testdata/ir/h.ir h 2.0 2 -o h.fb
irt-slice -b @25 h.fb
