# --levels 2: the root's children, the nested call as one node
irt-trace testdata/ir/geom.ir geom 1 0.5 --rand-values 0.9,0.7,0.1 --tag-random -o geom.fb
irt-dot --levels 2 geom.fb > g.dot && cat g.dot && python3 golden/svgcheck.py g.dot
