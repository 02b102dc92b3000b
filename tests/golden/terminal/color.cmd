# Diagnostics are coloured on a terminal, unless NO_COLOR is set, TERM is dumb
# or --color=never; --color=always colours them anywhere.
T="python3 $IRT_SOURCE/tests/golden/onterminal.py --stderr --"
irt-trace -o h.fb testdata/ir/h.ir h 2.0 2
env -u NO_COLOR TERM=xterm $T irt-slice -b @99 h.fb
env -u NO_COLOR TERM=xterm $T irt-stats nope.fb
env -u NO_COLOR TERM=xterm $T irt-dot --node @99 h.fb
NO_COLOR=1 TERM=xterm $T irt-slice -b @99 h.fb
env -u NO_COLOR TERM=dumb $T irt-slice -b @99 h.fb
env -u NO_COLOR TERM=xterm $T irt-slice --color=never -b @99 h.fb
irt-slice --color=always -b @99 h.fb 2>&1 | sed "s/\x1b/\\\\e/g"; echo "status ${PIPESTATUS[0]}"
