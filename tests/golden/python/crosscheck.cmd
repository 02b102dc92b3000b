# golden: release-only
# (The Python package is built in the release build only.)
# The IR the adapter stores for a program of standard operations re-runs
# under irt-trace to the same trace: nested conditional expressions, a
# while with `and`/`or`, continue in a for, recursion. irt-diff finds only
# the producers and the trace metadata different.
. golden/common.sh
py 'import cross
open("cross.ir", "w").write("".join(irtrace.ir(f) for f in (cross.clip, cross.bump, cross.fact)))
irtrace.track(cross.bump, 0.7, 6, out="b.fb")
irtrace.track(cross.fact, 6, out="f.fb")'
sed 's/^# .*cross.py:/# cross.py:/' cross.ir
irt-trace cross.ir bump 0.7 6 -o tb.fb
irt-diff tb.fb b.fb | sed 1,2d
irt-trace cross.ir fact 6 -o tf.fb
irt-diff tf.fb f.fb | sed 1,2d
