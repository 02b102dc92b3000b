# the seed's h: data edges, dashed control edges from each jump, conditions dashed
irt-trace testdata/ir/h.ir h 2.0 2 -o h.fb
irt-dot h.fb > g.dot && cat g.dot && python3 golden/svgcheck.py g.dot
