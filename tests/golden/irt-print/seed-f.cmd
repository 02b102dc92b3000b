# printlevels(track(f, 1.0), 2) of the seed README
irt-trace testdata/ir/f.ir f 1.0 | irt-print --levels 2
