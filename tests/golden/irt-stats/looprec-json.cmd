irt-trace testdata/ir/looprec.ir looprec 2.0 3 | irt-stats --json | jq .
