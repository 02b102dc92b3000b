# adjoints written onto the trace by irt-grad, shown with --show-meta
irt-trace testdata/ir/h.ir h 2.0 2 -o h.fb
irt-grad --annotate h.fb -o a.fb
irt-dot --show-meta adjoint a.fb > g.dot && cat g.dot && python3 golden/svgcheck.py g.dot
