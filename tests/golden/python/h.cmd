# golden: release-only
# (The Python package is built in the release build only.)
# The seed's h loop in Python: block arguments (i, r) at the loop header,
# the condition of each branch. `r = 0.0` is a literal operand where the
# seed's IR has %4 = zero(x), so the trace equals irt-trace's trace of
# testdata/ir/cpp/h.ir (the same program with that literal), not of h.ir;
# irt-diff finds only the producers and metadata different.
. golden/common.sh
py 'print(irtrace.ir(seed.h).split("\n", 1)[1], end=""); irtrace.track(seed.h, 2.0, 2, out="h.fb")'
irt-print --levels 2 h.fb
irt-trace testdata/ir/cpp/h.ir h 2.0 2 -o t.fb
irt-diff t.fb h.fb | sed 1,2d
irt-check h.fb | grep -v ^bytes
irt-grad h.fb
