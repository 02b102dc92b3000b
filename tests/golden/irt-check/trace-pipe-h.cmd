irt-trace testdata/ir/h.ir h 2.0 3 | irt-check
