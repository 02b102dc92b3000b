# the slice of the result across calls with control: every draw that decided it
irt-trace testdata/ir/geom.ir geom 1 0.5 --rand-values 0.9,0.7,0.1 --tag-random -o geom.fb
irt-dot --highlight-slice @9 --through-calls --control geom.fb > g.dot && cat g.dot && python3 golden/svgcheck.py g.dot
