# with control too: every draw that decided the result, the last one through the
# branch br 2 unless %5 that was not taken at the deepest level
irt-trace testdata/ir/geom.ir geom 1 0.5 --rand-values 0.9,0.7,0.1 --tag-random -o geom.fb
irt-slice -b @9 --through-calls --control --list geom.fb
irt-slice -b @9 -t -c geom.fb | irt-print
