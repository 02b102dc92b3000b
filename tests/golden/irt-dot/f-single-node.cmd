# --node on a plain node: that node and stand-ins for what it references
irt-trace testdata/ir/f.ir f 1.0 -o f.fb
irt-dot --node @4 f.fb > g.dot && cat g.dot && python3 golden/svgcheck.py g.dot
