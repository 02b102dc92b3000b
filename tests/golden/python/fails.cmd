# golden: release-only
# (The Python package is built in the release build only.)
# An exception two calls deep (fails -> g1 -> g2; math.log(-1.0) raises
# ValueError): it reaches the caller unchanged, and the trace is complete
# and valid, an Error node closing each open call, status = "failed".
. golden/common.sh
py '
try:
    irtrace.track(seed.fails, 0.9, out="x.fb")
except ValueError as e:
    print("ValueError:", e)'
irt-check x.fb | grep -v ^bytes
irt-print x.fb | sed "s|$PWD/||"
irt-print --json x.fb | jq -c .meta | sed "s|$PWD/||"
