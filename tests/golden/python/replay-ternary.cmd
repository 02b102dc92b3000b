# golden: release-only
# (The Python package is built in the release build only.)
# relu_sum(xs, w) sums x * w if x * w > 0.0 else 0.0 over a list: each
# `if else` is a branch to a join block. Replayed at w = 3.0 the same
# branches are taken (the result equals a fresh recording); at w = -1.0
# the first one would not be, and irt-replay refuses.
. golden/common.sh
py 'irtrace.track(seed.relu_sum, [1.0, -2.0, 0.5], 2.0, out="r.fb")
irtrace.track(seed.relu_sum, [1.0, -2.0, 0.5], 3.0, out="fresh.fb")'
irt-print r.fb | sed -n '1,/goto §4/p'
irt-replay -v --set @3=3.0 -o r3.fb r.fb; echo "exit $?"
irt-diff --ignore-meta args r3.fb fresh.fb; echo "exit $?"
irt-replay --set @3=-1.0 -o out.fb r.fb; echo "exit $?"
