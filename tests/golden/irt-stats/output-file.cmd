# -o FILE and a trace read from a pipe: the same report
irt-trace -o f.fb testdata/ir/f.ir f 1.0
irt-stats --json -o s.json f.fb
irt-trace testdata/ir/f.ir f 1.0 | irt-stats --json - | cmp - s.json && echo same
jq -r '.nodes, .calls' s.json
