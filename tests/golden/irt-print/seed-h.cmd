# printlevels(track(h, 2.0, 2), 2) of the seed README
irt-trace testdata/ir/h.ir h 2.0 2 | irt-print --levels 2
