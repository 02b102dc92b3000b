# golden: release-only
# (The Python package is built in the release build only.)
# irt-replay on a Python trace: h(2.0, 3) replayed at x = 3.0 re-evaluates
# the nodes that depend on x and keeps the recorded path; it equals the
# trace irtrace.track records for h(3.0, 3) but for the arguments noted in
# the trace's metadata.
. golden/common.sh
py 'irtrace.track(seed.h, 2.0, 3, out="h.fb"); irtrace.track(seed.h, 3.0, 3, out="fresh.fb")'
irt-replay -v --set @2=3.0 -o h3.fb h.fb
irt-print h3.fb | sed -n "1p;/return/p"
irt-check h3.fb | grep -v ^bytes
irt-diff --ignore-meta args h3.fb fresh.fb; echo "exit $?"
