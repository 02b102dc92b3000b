# β changed: both comparisons are evaluated again, the draws are kept
irt-trace --rand-values 0.9,0.3 -o g.fb testdata/ir/geom.ir geom 1 0.5
irt-replay -v --set @3=0.35 g.fb | irt-print --no-meta
