# the last draw decided which return ran at the deepest level, hence the result
irt-trace testdata/ir/geom.ir geom 1 0.5 --rand-values 0.9,0.7,0.1 --tag-random -o geom.fb
irt-slice -F @8/@8/@4 --through-calls --control --list geom.fb
irt-slice -F @8/@8/@4 -t -c geom.fb | irt-print
