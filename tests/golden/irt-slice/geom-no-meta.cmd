# --list --no-meta drops the random = "uniform" tags
irt-trace testdata/ir/geom.ir geom 1 0.5 --rand-values 0.9,0.7,0.1 --tag-random -o geom.fb
irt-slice -b @5 --list --no-meta geom.fb
