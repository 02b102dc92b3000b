# the same two runs the other way round: the extra call is now in a only
irt-trace --rand-values 0.9,0.3 -o a.fb testdata/ir/geom.ir geom 1 0.5
irt-trace --rand-values 0.9,0.8,0.1 -o b.fb testdata/ir/geom.ir geom 1 0.5
irt-diff --context 1 b.fb a.fb
