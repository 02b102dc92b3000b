# golden: release-only
# (The Python package is built in the release build only.)
# geom(n, beta) = rand() < beta ? n : geom(n + 1, beta) in Python with
# random.random(): recursion as nested calls. With the draws replayed by
# irt-trace --rand-values, the seed's testdata/ir/geom.ir prints the same.
. golden/common.sh
py 'random.seed(2); irtrace.track(seed.geom, 1, 0.5, out="g.fb")'
irt-print g.fb
vals=$(irt-print --json g.fb | jq -r '[.. | objects | select(.op == "rand") | .value | tostring] | join(",")')
irt-trace --rand-values "$vals" testdata/ir/geom.ir geom 1 0.5 -o t.fb
diff <(irt-print t.fb) <(irt-print g.fb) && echo "same listing as irt-trace"
irt-check g.fb | grep -v ^bytes
