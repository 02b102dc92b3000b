irt-trace --rand-values 0.9,0.3 -o g.fb testdata/ir/geom.ir geom 1 0.5
irt-replay --set @8=2 -o out.fb g.fb
