make_bad_traces bad-identifier bad-identifier.fb && irt-print bad-identifier.fb
