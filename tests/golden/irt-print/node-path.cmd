# a subtree by path: the nested call @8 of geom, two levels
irt-trace --rand-values 0.9,0.8,0.1 testdata/ir/geom.ir geom 1 0.5 > g.fb
irt-print --node @8 --levels 2 g.fb
echo ---
irt-print --node @8/@5 g.fb
