# --json is one document jq can query
irt-trace testdata/ir/h.ir h 2.0 2 > h.fb
irt-print --json h.fb | jq -c '.root.value, (.root.children | length), .root.children[9]'
irt-print --json --levels 1 h.fb | jq -c '{format, producer, nodes, complete, meta}'
