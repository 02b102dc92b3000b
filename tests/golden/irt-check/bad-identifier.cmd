make_bad_traces bad-identifier bad-identifier.fb && irt-check bad-identifier.fb
