# the output may be the input; a pipe works too
irt-trace -o h.fb testdata/ir/h.ir h 2.0 2
irt-replay --set @2=0.5 -o h.fb h.fb
irt-print --levels 1 h.fb
irt-trace testdata/ir/h.ir h 2.0 2 | irt-replay --set @2=4.0 | irt-print --levels 1
