# forward from the first draw: data only, then with control (the draw decided the rest)
irt-trace testdata/ir/geom.ir geom 1 0.5 --rand-values 0.9,0.7,0.1 --tag-random -o geom.fb
irt-slice -F @4 --list geom.fb
irt-slice -F @4 --control --list geom.fb
irt-slice -F @4 --through-calls --control --list geom.fb
