# a trace against its copy annotated by irt-grad: metadata only
irt-trace -o h.fb testdata/ir/h.ir h 2.0 2
irt-grad --annotate -o h-adj.fb h.fb
irt-diff --context 0 h.fb h-adj.fb; echo "exit $?"
irt-diff --stat h.fb h-adj.fb | grep -E 'values|metadata|same|different'
irt-diff --ignore-meta adjoint h.fb h-adj.fb; echo "exit $?"
