# --through-calls: the result's data path down the recursion (n + 1 at each level)
irt-trace testdata/ir/geom.ir geom 1 0.5 --rand-values 0.9,0.7,0.1 --tag-random -o geom.fb
irt-slice -b @9 --through-calls --list geom.fb
irt-slice -b @9 --through-calls geom.fb | irt-print
