# what depends on x: the forward slice, listed and as a trace (the loop counter's
# values it uses become constants)
irt-trace testdata/ir/h.ir h 2.0 2 -o h.fb
irt-slice --forward @2 --list h.fb
irt-slice --forward @2 h.fb | irt-print
