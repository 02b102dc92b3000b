# --json: raw, then checked with jq
irt-trace testdata/ir/h.ir h 2.0 2 | irt-grad --json
irt-trace testdata/ir/h.ir h 2.0 2 | irt-grad --json | jq -r ".derivatives[0].derivative"
