# golden: release-only
# (The Python package is built in the release build only.)
# irt-dot on Python traces: f(x) = sin(x) + x as a graph (Graphviz draws
# it with every label), and h's loop, data edges and dashed control edges,
# drawn exactly as irt-trace's trace of the same program
# (testdata/ir/cpp/h.ir, see h.cmd).
. golden/common.sh
py 'irtrace.track(seed.f, 1.0, out="f.fb"); irtrace.track(seed.h, 2.0, 2, out="h.fb")'
irt-dot f.fb | tee f.dot
python3 golden/../irt-dot/svgcheck.py f.dot
irt-dot h.fb > h.dot && python3 golden/../irt-dot/svgcheck.py h.dot
grep -c -- "->" h.dot
grep -c "dashed" h.dot
irt-trace testdata/ir/cpp/h.ir h 2.0 2 -o t.fb
diff <(irt-dot t.fb) h.dot && echo "same graph as irt-trace's"
