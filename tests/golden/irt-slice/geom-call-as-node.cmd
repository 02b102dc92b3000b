# a nested call as the start: one node without --through-calls, its result with it
irt-trace testdata/ir/geom.ir geom 1 0.5 --rand-values 0.9,0.7,0.1 --tag-random -o geom.fb
irt-slice -b @8 --list geom.fb
irt-slice -b @8 geom.fb | irt-print
irt-slice -b @8 --through-calls --list geom.fb
