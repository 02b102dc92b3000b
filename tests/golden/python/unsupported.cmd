# golden: release-only
# (The Python package is built in the release build only.)
# Unsupported syntax is refused before the function runs, with
# file:line:col, the construct and a hint; no trace is written.
. golden/common.sh
py 'irtrace.track(seed.unsupported, 2.0, out="u.fb")' 2>&1 | tail -5 | sed "s|$PWD/||; s|$IRT_SOURCE/||"
test -e u.fb || echo "no trace written"
