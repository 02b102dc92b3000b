# --levels 1: the call itself as one node
irt-trace testdata/ir/looprec.ir looprec 2.0 2 -o lr.fb
irt-dot --levels 1 lr.fb > g.dot && cat g.dot && python3 golden/svgcheck.py g.dot
irt-dot --levels 1 --node @28 lr.fb > g.dot && cat g.dot && python3 golden/svgcheck.py g.dot
