# the trace on a pipe, the slice to a pipe
irt-trace testdata/ir/h.ir h 2.0 2 | irt-slice -b @19 | irt-print
