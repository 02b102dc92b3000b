# a trace against itself: no output, exit 0, in every format
irt-trace --seed 3 -o g.fb testdata/ir/geom.ir geom 1 0.5
irt-diff g.fb g.fb; echo "exit $?"
irt-diff --stat g.fb g.fb
irt-diff --json g.fb g.fb | jq -c '.same, .summary.matched'
