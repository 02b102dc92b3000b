# --prefix writes the nodes before the divergence, as an unfinished trace
irt-trace --rand-values 0.9,0.3 -o g.fb testdata/ir/geom.ir geom 1 0.5
irt-replay --prefix --set @8/@4=0.8 -o prefix.fb g.fb; echo "exit $?"
irt-print prefix.fb
irt-print --partial prefix.fb
irt-check prefix.fb
