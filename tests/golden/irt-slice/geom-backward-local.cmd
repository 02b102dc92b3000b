# within the root call only: the nested geom call is one node
irt-trace testdata/ir/geom.ir geom 1 0.5 --rand-values 0.9,0.7,0.1 --tag-random -o geom.fb
irt-slice -b @9 --list geom.fb
irt-slice -b @9 geom.fb | irt-print
