irt-trace testdata/ir/h.ir h 2.0 2 | irt-stats
