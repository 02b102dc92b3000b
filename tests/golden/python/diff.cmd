# golden: release-only
# (The Python package is built in the release build only.)
# irt-diff between two Python runs of h with different arguments:
# h(2.0, 2) against h(2.0, 3) is one more loop iteration, inserted, and
# the first divergence is the loop test that changed.
. golden/common.sh
py 'irtrace.track(seed.h, 2.0, 2, out="h2.fb"); irtrace.track(seed.h, 2.0, 3, out="h3.fb")'
irt-diff h2.fb h3.fb; echo "exit $?"
irt-diff --stat h2.fb h3.fb; echo "exit $?"
