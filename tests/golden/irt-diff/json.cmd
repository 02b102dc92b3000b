irt-trace --rand-values 0.9,0.3 -o a.fb testdata/ir/geom.ir geom 1 0.5
irt-trace --rand-values 0.9,0.8,0.1 -o b.fb testdata/ir/geom.ir geom 1 0.5
irt-diff --json a.fb b.fb > d.json; echo "exit $?"
jq -c '.same, .divergence, .summary, .trace_meta' d.json
jq -c '.changes[] | [.change, .a.path, .b.path, .b.nodes]' d.json
