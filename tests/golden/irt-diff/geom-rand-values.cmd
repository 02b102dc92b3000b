# geom(1, 0.5) with two lists of draws: the second draw crosses β the other
# way, so the second run recurses once more
irt-trace --rand-values 0.9,0.3 -o a.fb testdata/ir/geom.ir geom 1 0.5
irt-trace --rand-values 0.9,0.8,0.1 -o b.fb testdata/ir/geom.ir geom 1 0.5
irt-diff a.fb b.fb
