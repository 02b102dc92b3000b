# a subtree: the recursive call at @28; references to the root's arguments
# become dashed stand-ins
irt-trace testdata/ir/looprec.ir looprec 2.0 2 -o lr.fb
irt-dot --node @28 --levels 2 lr.fb > g.dot && cat g.dot && python3 golden/svgcheck.py g.dot
