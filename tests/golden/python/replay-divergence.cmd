# golden: release-only
# (The Python package is built in the release build only.)
# irt-replay --set on a Python trace refuses a change that would take
# another path: one more iteration of h's while loop (n = 4), and a first
# draw of random.random() in geom that now falls below beta. Moving the
# last draw without changing the path, as an MCMC move does, is a replay.
. golden/common.sh
py 'irtrace.track(seed.h, 2.0, 3, out="h.fb")'
irt-replay --set @3=4 -o out.fb h.fb; echo "exit $?"
test -e out.fb || echo "no output written"
py 'random.seed(2); irtrace.track(seed.geom, 1, 0.5, out="g.fb")'
irt-replay --set @4=0.1 -o out.fb g.fb; echo "exit $?"
test -e out.fb || echo "no output written"
irt-replay -v --set @8/@8/@4=0.2 -o moved.fb g.fb; echo "exit $?"
irt-diff g.fb moved.fb > d.txt; echo "exit $?"
sed 1,2d d.txt
