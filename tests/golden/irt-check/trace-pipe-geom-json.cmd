irt-trace testdata/ir/geom.ir geom 1 0.5 | irt-check --json
