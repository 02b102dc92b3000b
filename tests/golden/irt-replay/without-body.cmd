# a call recorded without its body cannot be evaluated again
irt-trace --max-depth 2 --rand-values 0.9,0.3 -o g.fb testdata/ir/geom.ir geom 1 0.5
irt-replay --set @2=5 -o out.fb g.fb
